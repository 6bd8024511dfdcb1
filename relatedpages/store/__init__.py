"""What is written and read: the related-pages database (``db``), the link index
(``linkindex``) and its in-memory graph (``linkgraph``), and the chain's record formats
(``chain``)."""
