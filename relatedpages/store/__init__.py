"""What is written and read: the related-pages database (``db`` reads it, ``dbbuild``
writes it, ``dbformat`` holds its names and manifest), the link index
(``linkindex``) and its in-memory graph (``linkgraph``), and the chain's record formats
(``chain``)."""
