"""The paper's user study, repeatable (``relatedpages study``): a study stored in SQLite
(``store``: query pages, the shuffled union of the systems' results, blind; graders and
their grades), a grading web page (``app``), and the report (``report``: R-score curves per
system and per topic, agreement between graders, confidence intervals, CSV).  A web part:
nothing below ``commands/`` imports it."""
