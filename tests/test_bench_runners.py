"""scripts/bench_runners.py: the runner comparison's table and JSON, and the breakdown of a
Hadoop job's time from its log (timings are never asserted)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "bench_runners.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_runners", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_bench_runners_prints_the_table_and_json(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--pages", "40", "--runs", "1", "--runners", "inline",
         "--work", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=guard(300), cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "identical output on every runner" in out
    header = next(line for line in out.splitlines() if line.startswith("runner"))
    assert header.split() == ["runner", "segment", "s", "related", "s", "total", "s", "×", "inline"]
    figures = json.loads(out[out.index("\n{"):])
    assert figures["pages"] == 40
    assert figures["output_lines"]["segment"] == 40  # one record a page
    assert figures["runners"]["inline"]["vs_inline"] == 1.0
    assert figures["hadoop_jvm_start_seconds"] is None  # no Hadoop runner asked for
    assert (tmp_path / "run0-inline" / "related").is_dir()  # --work keeps the runs


def test_unknown_runner_is_a_usage_error(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--runners", "inline,spark"],
                            capture_output=True, text=True, timeout=guard(60), cwd=REPO)
    assert result.returncode == 2
    assert "unknown runner(s) spark" in result.stderr


LOCAL_JOB_LOG = """\
2026-11-21 12:59:19,671 INFO mapreduce.JobSubmitter: number of splits:2
2026-11-21 12:59:20,815 INFO mapreduce.Job: Running job: job_local540676746_0001
2026-11-21 12:59:20,862 INFO mapred.LocalJobRunner: Starting task: attempt_local540676746_0001_m_000000_0
2026-11-21 12:59:24,124 INFO mapred.Task: Task 'attempt_local540676746_0001_m_000000_0' done.
2026-11-21 12:59:25,133 INFO mapred.Task: Task 'attempt_local540676746_0001_m_000001_0' done.
2026-11-21 12:59:26,000 INFO streaming.PipeMapRed: PipeMapRed exec [/bin/sh, -x, setup-wrapper.sh, python3, related.py, --step-num=0, --reducer]
2026-11-21 12:59:29,500 INFO mapred.Task: Task 'attempt_local540676746_0001_r_000000_0' done.
2026-11-21 12:59:30,000 INFO mapred.Task: Task 'attempt_local540676746_0001_r_000001_0' done.
2026-11-21 12:59:30,500 INFO mapreduce.Job:  map 100% reduce 100%
"""


def test_job_phases_from_a_local_runner_log(tmp_path):
    bench = load_script()
    log = tmp_path / "job.log"
    log.write_text(LOCAL_JOB_LOG)
    first = bench.datetime.strptime("2026-11-21 12:59:19,671", "%Y-%m-%d %H:%M:%S,%f").timestamp()
    command = {"start": first - 1.5, "end": first + 12.0}
    phases = bench._job_phases(command, log)
    assert list(phases) == list(bench.PHASES)
    expected = {"jvm start": 1.5, "submit": 1.144, "map": 4.318, "sort+shuffle": 0.867,
                "reduce": 4.0, "finish": 12.0 - 10.329}
    for name, seconds in expected.items():
        assert abs(phases[name] - seconds) < 0.01, (name, phases[name])
    assert abs(sum(phases.values()) - 13.5) < 0.01  # the phases tile the command's time


def test_job_phases_from_a_yarn_client_log(tmp_path):
    """A YARN client sees progress lines only: maps end at "map 100%", reduces (with the
    sort) at "reduce 100%"."""
    bench = load_script()
    log = tmp_path / "job.log"
    log.write_text(
        "2026-11-21 13:00:00,000 INFO mapreduce.Job: Running job: job_1_0001\n"
        "2026-11-21 13:00:10,000 INFO mapreduce.Job:  map 50% reduce 0%\n"
        "2026-11-21 13:00:20,000 INFO mapreduce.Job:  map 100% reduce 0%\n"
        "2026-11-21 13:00:35,000 INFO mapreduce.Job:  map 100% reduce 100%\n"
    )
    start = bench.datetime.strptime("2026-11-21 13:00:00,000", "%Y-%m-%d %H:%M:%S,%f").timestamp()
    phases = bench._job_phases({"start": start - 2, "end": start + 40}, log)
    assert round(phases["map"]) == 20
    assert phases["sort+shuffle"] == 0.0
    assert round(phases["reduce"]) == 15
    assert round(phases["finish"]) == 5
