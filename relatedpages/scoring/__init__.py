"""How pages are related: block co-citation's similarity (``similarity``), its in-memory
oracle (``reference``), traditional co-citation (``cocitation``), the fallback that fills
short lists (``fallback``) and the chain's options and presets (``options``)."""
