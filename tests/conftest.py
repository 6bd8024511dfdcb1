"""Shared fixtures: the real corpora beside the repository.

Tests that need ``../shared/data`` skip when it is missing, except in CI
(``CI=true``), where a missing data set fails the run.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from relatedpages.corpus.shared_data import shared_data_dir
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


# --------------------------------------------------------------------------------------
# Hypothesis: one profile per run (tests/hypothesis_profiles.py)

from tests import hypothesis_profiles  # noqa: E402

_PROFILE = hypothesis_profiles.load_profile()
_BUDGET = hypothesis_profiles.FuzzBudget(None)


def pytest_configure(config: pytest.Config) -> None:
    global _BUDGET
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
