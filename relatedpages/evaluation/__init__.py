"""How well it works: the evaluations behind ``relatedpages eval`` (segmentation against
human blocks, related pages against held-out hub lists and generated topics, moved pages),
each reading pages from ``corpus`` and scoring with ``scoring`` and ``baselines``."""
