"""Shared fixtures: the real corpora beside the repository.

Tests reach ``../shared/data`` through one door, the ``shared_data`` fixture: it skips when
the data is missing, except in CI (``CI=true``), where a missing data set fails the run.  A
test that does not request it sees ``RELATEDPAGES_SHARED_DATA`` pointing at a folder that does
not exist (:data:`NO_SHARED_DATA`), so a test that reads the shared data any other way fails
everywhere, also on a machine that has the data; ``scripts/test-clone-alone`` runs every
test that requests it against an empty folder and requires that they all skip.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relatedpages.corpus.shared_data import ENV_VAR, shared_data_dir
from tests.prerequisites import missing_prerequisite

#: What ``RELATEDPAGES_SHARED_DATA`` names during a test that does not request ``shared_data``.
NO_SHARED_DATA = "/nonexistent/shared-data-is-read-only-through-the-shared_data-fixture"
#: The real shared data folder, handed from the first pytest process to its xdist workers.
_REAL = "RELATEDPAGES_TESTS_SHARED_DATA"
#: Present in every copy of the shared data (``../shared/data/README.md``).
_MARKER = "README.md"


def _real_shared_data() -> Path:
    return Path(os.environ[_REAL])


def _require(relative: str) -> Path:
    path = _real_shared_data() / relative
    if not path.exists():
        missing_prerequisite(f"shared data set missing: {path}", "data-dependent tests")
    return path


@pytest.fixture(scope="session")
def shared_data():
    """A function mapping a path relative to ``../shared/data`` to a real path.

    Requesting it skips (fails in CI) unless the shared data is there, whether or not the
    test then calls it; calling it skips when that one path is missing."""
    if not (_real_shared_data() / _MARKER).is_file():
        missing_prerequisite(f"shared data missing: no {_MARKER} in {_real_shared_data()}",
                             "data-dependent tests")
    return _require


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The one door: the real folder only for a test that requests ``shared_data`` (its
    module fixtures included, since they are set up within its protocol)."""
    if "shared_data" in getattr(item, "fixturenames", ()):
        os.environ[ENV_VAR] = os.environ[_REAL]
    try:
        yield
    finally:
        os.environ[ENV_VAR] = NO_SHARED_DATA


# --------------------------------------------------------------------------------------
# Hypothesis: one profile per run (tests/hypothesis_profiles.py)

from tests import hypothesis_profiles  # noqa: E402

_PROFILE = hypothesis_profiles.load_profile()
_BUDGET = hypothesis_profiles.FuzzBudget(None)


def pytest_configure(config: pytest.Config) -> None:
    global _BUDGET
    # The real folder, once: an xdist worker (or a nested run) inherits NO_SHARED_DATA and
    # _REAL from its parent; an explicit RELATEDPAGES_SHARED_DATA (an empty folder) wins.
    if os.environ.get(ENV_VAR) != NO_SHARED_DATA or _REAL not in os.environ:
        os.environ[_REAL] = str(shared_data_dir())
    os.environ[ENV_VAR] = NO_SHARED_DATA
    config.addinivalue_line("markers", "shared_data: requests the shared_data fixture "
                                       "(scripts/test-clone-alone runs these without the data)")
    config.addinivalue_line("markers", "property: a Hypothesis property test")
    if _PROFILE == hypothesis_profiles.FUZZ_PROFILE:
        _BUDGET = hypothesis_profiles.FuzzBudget.from_environment()


def pytest_report_header(config: pytest.Config) -> str:
    scale = hypothesis_profiles.fuzz_scale() if _PROFILE == hypothesis_profiles.FUZZ_PROFILE else 1
    return f"hypothesis profile: {_PROFILE}" + (f" (examples x{scale})" if scale > 1 else "")


#: The test files with jobs on Hadoop or the MiniCluster (``@pytest.mark.hadoop``): one lane.
HADOOP_FILES = frozenset({"test_hadoop.py", "test_minicluster.py", "test_bench_scale.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    hypothesis_profiles.mark_and_scale(items, _PROFILE)
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)
    elsewhere = [item.nodeid for item in items
                 if item.get_closest_marker("hadoop") and item.path.name not in HADOOP_FILES]
    if elsewhere:
        raise pytest.UsageError(f"Hadoop tests outside tests/conftest.py's HADOOP_FILES "
                                f"(add their file there): {elsewhere[:3]}")
    items.sort(key=lambda item: item.path.name not in HADOOP_FILES)  # the Hadoop lane first


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """scripts/test's two workers (pytest-xdist): the Hadoop and MiniCluster files are one
    unit of work (they share the cluster, its ports and HDFS), handed out first; every other
    file is a unit (its module fixtures computed once) for whichever worker is free."""
    from xdist.scheduler import LoadScopeScheduling

    class Lanes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return "hadoop" if Path(file).name in HADOOP_FILES else file

    return Lanes(config, log)


def pytest_runtest_setup(item: pytest.Item) -> None:
    _BUDGET.check(item)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _BUDGET.not_run:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"fuzz: time budget spent, {len(_BUDGET.not_run)} property tests not run "
                f"(first: {_BUDGET.not_run[0]})", red=True)
