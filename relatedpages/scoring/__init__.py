"""How pages are related: the block co-citation chain's parameters and presets."""
