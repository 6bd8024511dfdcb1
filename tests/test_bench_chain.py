"""scripts/bench_chain.py: on a tiny crawl it runs the chain stage by stage, checks it
against the job, and prints the tables and verdicts (timings are never asserted)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def test_bench_chain_prints_the_table_on_a_tiny_crawl(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_chain.py"), "--base-pages", "300",
         "--runs", "1", "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=guard(120), cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "equals run_job(MRRelatedPages)" in result.stderr
    out = result.stdout
    for heading in ("wall time, s", "CPU time (user + system), s", "peak RSS, MB"):
        assert heading in out
    header = next(line for line in out.splitlines()
                  if line.startswith("size") and "Mapper1" in line)
    assert header.split() == ["size", "Segment*", "Mapper1", "Sort1", "Reducer1", "Sort2",
                              "Reducer2", "Sort3", "Reducer3", "Sort4", "Reducer4", "chain"]
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines()
            if line.split()[:1] in (["1x"], ["2x"], ["4x"]) and "." not in line.split()[1]}
    assert [rows[label][0] for label in ("1x", "2x", "4x")] == ["300", "600", "1200"]
    assert all(int(rows[label][1]) == int(rows[label][0]) for label in rows)  # one record a page
    assert "time ratio 4x/1x = " in out and "(linear = 4.0)" in out
    assert "Reducer1 peak memory 4x/1x = " in out and "(flat = 1.0)" in out
    assert "Reducer2 peak memory 4x/1x = " in out
    assert "Reducer4 peak memory 4x/1x = " in out  # the site fallback's steps (default preset)
    # the work folder was given: the stage outputs are kept there
    assert (tmp_path / "4x" / "related" / "part-00000").exists()
