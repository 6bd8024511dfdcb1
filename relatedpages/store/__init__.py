"""What is written and read: the related-pages database (``db`` reads it, ``dbopen``
opens one generation of it, ``dbbuild`` writes it, ``dbformat`` holds its names and
manifest), the link index (``linkindex``; ``edgelist`` imports an edge list into one,
``linkload`` loads one) and its in-memory graph (``linkgraph``), and the chain's record
formats (``chain``)."""
