"""A missing prerequisite (the shared data, a JDK, Maven): skip locally, fail in CI."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import NoReturn

import pytest

#: scripts/hadoop-setup's (and scripts/minicluster's) exit status for a missing JDK or Maven.
SETUP_MISSING_PREREQUISITE = 3


def missing_prerequisite(message: str, must_run: str) -> NoReturn:
    """Skip with ``message``; with ``CI=true`` fail instead (``must_run``: which tests)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: {must_run} must run)")
    pytest.skip(message)


def run_hadoop_script(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run a Hadoop set-up script; a missing JDK or Maven skips (fails in CI)."""
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=900)
    if done.returncode == SETUP_MISSING_PREREQUISITE:
        missing_prerequisite(f"Hadoop prerequisites missing: {done.stderr.strip()}",
                             "the Hadoop tests")
    assert done.returncode == 0, done.stderr[-3000:]
    return done
