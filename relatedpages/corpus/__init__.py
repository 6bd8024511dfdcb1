"""Where pages come from: crawl files read and repaired (``ingest``), the synthetic web
(``generate``) and the shared real corpora (``shared_data``)."""
