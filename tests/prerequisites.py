"""A missing prerequisite (the shared data, a JDK, Maven): skip locally, fail in CI; and the
one setting that scales every timeout in the tests (:func:`guard`)."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import NoReturn

import pytest

#: Multiplies every timeout in the tests; raise it on a slow or busy machine (README, "Tests").
TIMEOUT_SCALE_VAR = "RELATEDPAGES_TEST_TIMEOUT_SCALE"
#: The factor without the setting: a step's timeout is about what it takes on an idle CI machine
#: times this, so a machine busy with other work is slower without failing.
DEFAULT_TIMEOUT_SCALE = 3.0

#: scripts/hadoop-setup's (and scripts/minicluster's) exit status for a missing JDK or Maven.
SETUP_MISSING_PREREQUISITE = 3


def missing_prerequisite(message: str, must_run: str) -> NoReturn:
    """Skip with ``message``; with ``CI=true`` fail instead (``must_run``: which tests)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: {must_run} must run)")
    pytest.skip(message)


def timeout_scale() -> float:
    """The factor of :func:`guard`: ``RELATEDPAGES_TEST_TIMEOUT_SCALE``, else 3."""
    text = os.environ.get(TIMEOUT_SCALE_VAR, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_SCALE
    try:
        scale = float(text)
    except ValueError:
        scale = float("nan")
    if not scale > 0 or scale == float("inf"):
        raise pytest.UsageError(f"{TIMEOUT_SCALE_VAR}={text!r}: expected a positive number "
                                f"(e.g. 10 on a slow machine)")
    return scale


def guard(seconds: float) -> float:
    """A timeout against a hang, not a measurement: ``seconds`` (about what the step takes on
    an idle CI machine) times :func:`timeout_scale`."""
    return seconds * timeout_scale()


def run_hadoop_script(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run a Hadoop set-up script; a missing JDK or Maven skips (fails in CI)."""
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=guard(900))
    if done.returncode == SETUP_MISSING_PREREQUISITE:
        missing_prerequisite(f"Hadoop prerequisites missing: {done.stderr.strip()}",
                             "the Hadoop tests")
    assert done.returncode == 0, done.stderr[-3000:]
    return done
