"""scripts/bench_db_format.py, a short smoke run: both formats built from one small
database's records, looked up cold and warm, side by side (figures are never asserted
here: docs/reference/database.md's come from the full run on the real pages)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from relatedpages.store.dbbuild import build_database
from tests.prerequisites import guard
from tests.test_db import make_records

REPO = Path(__file__).resolve().parent.parent


def test_a_short_run_prints_both_formats_side_by_side(tmp_path: Path) -> None:
    build_database(iter(make_records(300)), tmp_path / "source", algorithm="block", parameters={"m": 15},
                   source=["test"], partitions=8)
    done = subprocess.run([sys.executable, "scripts/bench_db_format.py", "--source", str(tmp_path / "source"),
                           "--work", str(tmp_path / "work"), "--runs", "1", "--queries", "200",
                           "--fadvise-only", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["records"] == 300 and set(report["rows"]) == {"1 (lines)", "2 (blocks)"}
    lines, blocks = report["rows"]["1 (lines)"], report["rows"]["2 (blocks)"]
    assert blocks["bytes_per_record"] < lines["bytes_per_record"]
    assert all(row[key] > 0 for row in (lines, blocks) for key in ("build_s", "cold_p99", "warm_p50"))
    assert "format 2 adds zstandard" in done.stdout and "goals: " in done.stdout
    assert not (tmp_path / "work").exists()
