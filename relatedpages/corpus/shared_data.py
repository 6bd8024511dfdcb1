"""Locate the real corpora that live beside the repository (``../shared/data``).

``RELATEDPAGES_SHARED_DATA`` wins when set; otherwise ``../shared/data`` relative to
the repository root.  The data is never copied into the repository.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "RELATEDPAGES_SHARED_DATA"
REPO_ROOT = Path(__file__).resolve().parents[2]


def shared_data_dir() -> Path:
    """Return the shared data folder (it may not exist)."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return REPO_ROOT.parent / "shared" / "data"
