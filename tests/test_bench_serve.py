"""scripts/bench_serve.py, a short load smoke run (issue 12, item 5): wrk against a real
``relatedpages serve`` on loopback with the database rebuilt halfway, on a small generated
crawl; it must finish with zero errors and the swap seen (rates are never asserted here:
the README's figures come from the full 60 s run)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_short_load_run_has_no_error_and_sees_the_swap(tmp_path: Path) -> None:
    if shutil.which("wrk") is None:
        from tests.prerequisites import missing_prerequisite

        missing_prerequisite("wrk is not installed (scripts/test installs it as root)", "the load smoke run")
    crawl = tmp_path / "crawl.warc.gz"
    subprocess.run([sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "300", "-o", str(crawl)],
                   cwd=REPO, check=True, capture_output=True, timeout=guard(300))
    done = subprocess.run([sys.executable, "scripts/bench_serve.py", "--duration", "6", "--connections", "8",
                           "--db", str(tmp_path / "db"), "--crawl", str(crawl), "--queries", "2000", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(600))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["errors"] == 0 and report["rate"] > 0 and report["in_process_rate"] > 0
    assert [run["swaps_seen"] for run in report["runs"]] == [1]
    assert "lookups/s" in done.stdout and "goal (" in done.stdout
