"""Shared fixtures: the real corpora beside the repository.

Tests that need ``../shared/data`` skip when it is missing, except in CI
(``CI=true``), where a missing data set fails the run.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from relatedpages.shared_data import shared_data_dir
from tests.prerequisites import missing_prerequisite


def _require(relative: str) -> Path:
    path = shared_data_dir() / relative
    if not path.exists():
        missing_prerequisite(f"shared data set missing: {path}", "data-dependent tests")
    return path


@pytest.fixture(scope="session")
def shared_data():
    """A function mapping a path relative to ``../shared/data`` to a real path."""
    return _require
