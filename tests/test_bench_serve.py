"""The load benchmarks' short forms, on a small generated crawl (rates are never asserted
here: docs/guides/serving.md's and docs/guides/faults.md's figures come from the full runs):

* scripts/bench_serve.py (issue 12, item 5; issue 45, item 2): wrk against a real
  ``relatedpages serve`` on loopback, each server in turn (gunicorn, granian), with another
  database generation swapped in halfway; zero errors and the swap seen by every worker of
  both, beside the library's own rate;
* scripts/bench_soak.py (issue 44, item 5): ``relatedpages serve`` under wrk for 21 s with a
  rebuilt generation swapped in every 4 s, after a warm-up; no request may fail, every worker
  must swap in every generation, and the server's memory must stay within the goal."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 generated pages, once wrk is known to be installed."""
    if shutil.which("wrk") is None:
        from tests.prerequisites import missing_prerequisite

        missing_prerequisite("wrk is not installed (scripts/test installs it as root)", "the load runs")
    crawl = tmp_path_factory.mktemp("load") / "crawl.warc.gz"
    subprocess.run([sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "300", "-o", str(crawl)],
                   cwd=REPO, check=True, capture_output=True, timeout=guard(300))
    return crawl


def _run(script: str, crawl: Path, tmp_path: Path, *options: str) -> tuple[Any, dict[str, Any]]:
    """A load script's short form on ``crawl`` (8 connections, 2,000 URLs, its database in
    ``tmp_path``): the finished process, which must have succeeded, and its JSON report."""
    done = subprocess.run([sys.executable, script, *options, "--connections", "8",
                           "--db", str(tmp_path / "db"), "--crawl", str(crawl), "--queries", "2000",
                           "--json"], cwd=REPO, capture_output=True, text=True, timeout=guard(600))
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads(done.stdout.strip().splitlines()[-1])


def test_a_short_load_run_has_no_error_and_sees_the_swap(crawl: Path, tmp_path: Path) -> None:
    done, report = _run("scripts/bench_serve.py", crawl, tmp_path, "--duration", "3", "--runs", "1",
                        "--library-seconds", "1")
    assert set(report["servers"]) == {"gunicorn", "granian"}
    for server, row in report["servers"].items():
        assert row["errors"] == 0 and row["rate"] > 0, server
        assert row["swaps_seen"] == [2], server  # both workers swapped the new generation in
    assert report["library_rate"] > 0 and report["spliced_rate"] > 0
    assert "gunicorn + Flask" in done.stdout and "granian + RSGI front" in done.stdout
    assert "lookups/s" in done.stdout and "goal (" in done.stdout


def test_a_short_soak_fails_no_request_and_stays_flat(crawl: Path, tmp_path: Path) -> None:
    done, report = _run("scripts/bench_soak.py", crawl, tmp_path, "--minutes", "0.35", "--swap-every", "4",
                        "--warmup", "8")
    assert report["requests"] > 1000 and report["failed"] == 0, done.stdout
    assert report["swaps"] >= 5 and report["swaps_seen"] == 2 * report["swaps"], done.stdout
    assert report["met"], done.stdout
    assert "goal (0 failed, every swap seen" in done.stdout
