#!/usr/bin/env python
"""The same crawl through ``-r inline``, ``-r local`` and ``-r hadoop``: wall time, and
where Hadoop's time goes.

    python scripts/bench_runners.py [--pages 2000] [--seed 1] [--runs 3] [--yarn] [--json]

Generates a synthetic crawl (``relatedpages.corpus.generate``), then for each run and runner runs
the project's two jobs as a user would, each its own command in a fresh folder:

    python -m jobs.segment -r RUNNER crawl.warc.gz  -o segments
    python -m jobs.related -r RUNNER segments       -o related

and checks that every runner's output equals the inline run's (sorted lines): the
benchmark times the real chain or stops.  ``--yarn`` adds a fourth runner: the same
commands with ``-r hadoop`` on the MiniCluster (``scripts/minicluster``: HDFS and YARN on
loopback), inputs and outputs on ``hdfs://``.

Hadoop's time is taken apart from its own log.  Every ``hadoop`` command mrjob runs goes
through a shim that records its arguments and wall time and keeps its stderr (log4j lines
carry millisecond timestamps).  Per Hadoop job (one ``hadoop jar``), in order:

    jvm start   shim start → the first log line (JVM start, classpath scan, log set-up)
    submit      → "Running job" (job client, staging files, splits)
    map         → the last map task done (includes the Python mappers)
    sort+shuffle→ the first reducer's Python process started (merge of map outputs)
    reduce      → the last reduce task done (the Python reducers)
    finish      → the shim's end (commit, counters, JVM exit)

plus the ``hadoop fs`` commands mrjob runs around the jobs (each a JVM start of its
own: upload, mkdir, ls, rm).  Times are medians over the runs.  Prints a table; ``--json``
prints the figures as JSON as well.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.corpus.generate import SEED_DEFAULT, generate_crawl  # noqa: E402

PAGES_DEFAULT = 2_000
RUNS_DEFAULT = 3
RUNNERS = ("inline", "local", "hadoop")
YARN = "yarn"
JOBS = ("segment", "related")
HADOOP_HOME = REPO / "hadoop"
MINICLUSTER = REPO / "scripts" / "minicluster"
#: T for the chain: low enough that a synthetic crawl gives pages with related pages
#: (the default gives almost none on a few thousand generated pages)
RELATED_T = "1"
PHASES = ("jvm start", "submit", "map", "sort+shuffle", "reduce", "finish")

#: The shim put first on PATH as ``hadoop``: one JSON line per command (argv, start, end),
#: its stderr copied to a numbered log file and passed on to mrjob unchanged.
SHIM = """#!/usr/bin/env bash
set -u
LOGDIR="{logdir}"
n=$(ls "$LOGDIR" | wc -l)
log="$LOGDIR/$(printf '%05d' "$n").log"
start=$(date +%s.%N)
"{real}" "$@" 2> >(tee "$log" >&2)
status=$?
end=$(date +%s.%N)
wait
python3 -c 'import json, sys; print(json.dumps({{"argv": sys.argv[4:], "start": float(sys.argv[1]),
  "end": float(sys.argv[2]), "log": sys.argv[3]}}))' "$start" "$end" "$log" "$@" >>"$LOGDIR/commands.jsonl"
exit $status
"""

LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
RUNNING_JOB = re.compile(r"Running job: ")
# The local job runner logs every task; a YARN client only sees the progress lines.
MAP_TASK_DONE = re.compile(r"Task 'attempt_\w+_m_\d+_\d+' done")
REDUCER_STARTED = re.compile(r"PipeMapRed exec .*--reducer")
REDUCE_TASK_DONE = re.compile(r"Task 'attempt_\w+_r_\d+_\d+' done")
MAPS_AT_100 = re.compile(r" map 100% ")
REDUCES_AT_100 = re.compile(r" reduce 100%")


@dataclass
class RunnerRun:
    """One runner's wall time for the two jobs, and (Hadoop) the breakdown."""

    runner: str
    seconds: dict[str, float]
    phases: dict[str, float] = field(default_factory=dict)
    fs_commands: int = 0
    fs_seconds: float = 0.0
    jobs: int = 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=PAGES_DEFAULT, help="Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT, help="Default: %(default)s")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT, help="Default: %(default)s")
    parser.add_argument("--runners", default=",".join(RUNNERS),
                        help="comma-separated subset (inline is always run). Default: %(default)s")
    parser.add_argument("--yarn", action="store_true",
                        help="also run on the MiniCluster (started and stopped here)")
    parser.add_argument("--work", help="keep the runs in this folder (default: temporary)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    if args.pages < 1 or args.runs < 1:
        parser.error("--pages and --runs must be positive")
    chosen = ["inline", *(r for r in args.runners.split(",") if r and r != "inline")]
    unknown = set(chosen) - set(RUNNERS)
    if unknown:
        parser.error(f"unknown runner(s) {', '.join(sorted(unknown))}: choose from {', '.join(RUNNERS)}")
    runners = [*chosen, YARN] if args.yarn else chosen

    needs_hadoop = "hadoop" in runners or YARN in runners
    setup = subprocess.run([str(REPO / "scripts" / "hadoop-setup")], capture_output=True,
                           text=True) if needs_hadoop else None
    if setup is not None and setup.returncode != 0:
        print(f"bench_runners: scripts/hadoop-setup failed:\n{setup.stderr}", file=sys.stderr)
        return 1
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-runners-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        crawl = work / "crawl.warc.gz"
        generate_crawl(crawl, pages=args.pages, seed=args.seed)
        hadoop_jvm = _jvm_start(work) if needs_hadoop else None
        cluster_env = _start_cluster() if args.yarn else None
        results: dict[str, list[RunnerRun]] = {runner: [] for runner in runners}
        reference: dict[str, list[bytes]] = {}
        try:
            for run in range(args.runs):
                for runner in runners:
                    folder = work / f"run{run}-{runner}"
                    shutil.rmtree(folder, ignore_errors=True)
                    folder.mkdir()
                    outcome, outputs = _run_runner(runner, crawl, folder, cluster_env)
                    for job, lines in outputs.items():
                        if job not in reference:
                            reference[job] = lines  # inline, first run
                        elif lines != reference[job]:
                            print(f"bench_runners: {runner} output of {job} differs from inline",
                                  file=sys.stderr)
                            return 1
                    results[runner].append(outcome)
                    print(f"  run {run + 1}/{args.runs} {runner:<7} "
                          f"{sum(outcome.seconds.values()):7.1f} s", file=sys.stderr, flush=True)
        finally:
            if cluster_env is not None:
                subprocess.run([str(MINICLUSTER), "stop"], capture_output=True)
        figures = _summarise(results, args.pages, hadoop_jvm, reference)
        _print_table(figures)
        if args.json:
            print(json.dumps(figures, indent=1))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _jvm_start(work: Path) -> float:
    """Median wall time of ``hadoop version``: one JVM start with Hadoop's classpath."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([str(HADOOP_HOME / "bin" / "hadoop"), "version"], capture_output=True,
                       cwd=work, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _start_cluster() -> dict[str, str]:
    subprocess.run([str(MINICLUSTER), "start"], check=True, capture_output=True)
    exports = subprocess.run([str(MINICLUSTER), "env"], check=True, capture_output=True,
                             text=True).stdout
    env = {}
    for line in exports.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        env[name] = value.strip("'")
    return env


def _run_runner(runner: str, crawl: Path, folder: Path, cluster_env: dict[str, str] | None
                ) -> tuple[RunnerRun, dict[str, list[bytes]]]:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO)
    hadoop = runner in ("hadoop", YARN)
    logdir = folder / "hadoop-commands"
    if hadoop:
        logdir.mkdir()
        shim_dir = folder / "shim"
        shim_dir.mkdir()
        shim = shim_dir / "hadoop"
        shim.write_text(SHIM.format(logdir=logdir, real=HADOOP_HOME / "bin" / "hadoop"))
        shim.chmod(0o755)
        env["HADOOP_HOME"] = str(HADOOP_HOME)
        env["PATH"] = os.pathsep.join([str(shim_dir), str(HADOOP_HOME / "bin"),
                                       str(Path(sys.executable).parent), env.get("PATH", "")])
        if runner == YARN:
            assert cluster_env is not None
            env.update(cluster_env)
    seconds: dict[str, float] = {}
    outputs: dict[str, list[bytes]] = {}
    source = str(crawl)
    for job in JOBS:
        args = [sys.executable, "-m", f"jobs.{job}", "-r", "hadoop" if hadoop else runner]
        if runner == "hadoop":
            out = (folder / job).as_uri()
            args += ["--conf-path", str(REPO / "conf" / "mrjob.conf"),
                     "--hadoop-tmp-dir", (folder / "hadoop-fs").as_uri(),
                     "--jobconf", f"hadoop.tmp.dir={folder / 'hadoop-local'}"]
        elif runner == YARN:
            out = f"hdfs:///bench/{folder.name}/{job}"
            args += ["--conf-path", str(REPO / "conf" / "mrjob.conf"),
                     "--hadoop-tmp-dir", "hdfs:///tmp/mrjob"]
        else:
            out = str(folder / job)
            args.append("--no-conf")
        if job == "related":
            args += ["--t", RELATED_T]
        args += [source, "-o", out]
        started = time.perf_counter()
        done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
        seconds[job] = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"bench_runners: {runner} {job} failed:\n{done.stderr[-3000:]}")
        outputs[job] = _read_output(out, env)
        source = out
    outcome = RunnerRun(runner, seconds)
    if hadoop:
        _hadoop_breakdown(logdir, outcome)
    return outcome, outputs


def _read_output(out: str, env: dict[str, str]) -> list[bytes]:
    if out.startswith("hdfs://"):
        text = subprocess.run([str(HADOOP_HOME / "bin" / "hadoop"), "fs", "-cat", f"{out}/part-*"],
                              env=env, capture_output=True, check=True).stdout
        return sorted(text.splitlines(True))
    folder = Path(out.removeprefix("file://"))
    return sorted(line for part in sorted(folder.glob("part-*"))
                  for line in part.read_bytes().splitlines(True))


def _hadoop_breakdown(logdir: Path, outcome: RunnerRun) -> None:
    commands = [json.loads(line) for line in (logdir / "commands.jsonl").read_text().splitlines()]
    phases = dict.fromkeys(PHASES, 0.0)
    for command in commands:
        took = command["end"] - command["start"]
        if command["argv"][:1] == ["fs"]:
            outcome.fs_commands += 1
            outcome.fs_seconds += took
        elif command["argv"][:1] == ["jar"]:
            outcome.jobs += 1
            for name, value in _job_phases(command, Path(command["log"])).items():
                phases[name] += value
    outcome.phases = phases


def _job_phases(command: dict[str, float], log: Path) -> dict[str, float]:
    """The phases of one ``hadoop jar`` from its log's timestamps (module docstring)."""
    stamps: list[tuple[float, str]] = []
    for line in log.read_text(errors="replace").splitlines():
        found = LOG_TIME.match(line)
        if found:
            when = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            stamps.append((when, line))
    if not stamps:
        return {"finish": command["end"] - command["start"]}

    def first(pattern: re.Pattern[str], after: float) -> float | None:
        return next((when for when, line in stamps if when >= after and pattern.search(line)), None)

    def last(pattern: re.Pattern[str]) -> float | None:
        return max((when for when, line in stamps if pattern.search(line)), default=None)

    marks = [command["start"], stamps[0][0]]
    running = first(RUNNING_JOB, marks[-1]) or marks[-1]
    marks.append(running)
    maps_done = last(MAP_TASK_DONE) or first(MAPS_AT_100, running) or running
    marks.append(max(maps_done, running))
    # YARN: the reducers' start is not in the client's log; the sort is counted in reduce
    reducer_started = first(REDUCER_STARTED, marks[-1]) or marks[-1]
    marks.append(reducer_started)
    reduces_done = last(REDUCE_TASK_DONE) or first(REDUCES_AT_100, reducer_started) or reducer_started
    marks.append(max(reduces_done, reducer_started))
    marks.append(max(command["end"], marks[-1]))
    return {name: max(0.0, marks[i + 1] - marks[i]) for i, name in enumerate(PHASES)}


def _summarise(results: dict[str, list[RunnerRun]], pages: int, hadoop_jvm: float | None,
               reference: dict[str, list[bytes]]) -> dict[str, object]:
    inline_total = statistics.median(sum(r.seconds.values()) for r in results["inline"])
    runners: dict[str, object] = {}
    for runner, runs in results.items():
        total = statistics.median(sum(r.seconds.values()) for r in runs)
        entry: dict[str, object] = {
            "seconds": round(total, 2),
            "per_job": {job: round(statistics.median(r.seconds[job] for r in runs), 2) for job in JOBS},
            "vs_inline": round(total / inline_total, 2),
        }
        if runs[0].jobs:
            entry["hadoop_jobs"] = runs[0].jobs
            entry["fs_commands"] = runs[0].fs_commands
            entry["fs_seconds"] = round(statistics.median(r.fs_seconds for r in runs), 2)
            entry["phases"] = {name: round(statistics.median(r.phases[name] for r in runs), 2)
                               for name in PHASES}
        runners[runner] = entry
    return {
        "pages": pages,
        "output_lines": {job: len(lines) for job, lines in reference.items()},
        "runs": len(results["inline"]),
        "hadoop_jvm_start_seconds": None if hadoop_jvm is None else round(hadoop_jvm, 2),
        "runners": runners,
    }


def _print_table(figures: dict[str, object]) -> None:
    runners = figures["runners"]
    assert isinstance(runners, dict)
    lines = figures["output_lines"]
    assert isinstance(lines, dict)
    print(f"\n{figures['pages']} pages; output lines: segment {lines['segment']}, related "
          f"{lines['related']}; median of {figures['runs']} runs; identical output on every runner")
    print(f"\n{'runner':<8} {'segment s':>10} {'related s':>10} {'total s':>9} {'× inline':>9}")
    for runner, entry in runners.items():
        per_job = entry["per_job"]
        print(f"{runner:<8} {per_job['segment']:>10.1f} {per_job['related']:>10.1f} "
              f"{entry['seconds']:>9.1f} {entry['vs_inline']:>9.2f}")
    if figures["hadoop_jvm_start_seconds"] is not None:
        print(f"\none JVM start (hadoop version): {figures['hadoop_jvm_start_seconds']:.2f} s")
    for runner, entry in runners.items():
        if "phases" not in entry:
            continue
        print(f"\nwhere -r {'hadoop on YARN' if runner == YARN else 'hadoop (local job runner)'}"
              f" spends its {entry['seconds']:.1f} s ({entry['hadoop_jobs']} Hadoop jobs):")
        accounted = entry["fs_seconds"]
        print(f"  {'hadoop fs commands':<22} {entry['fs_seconds']:>7.1f} s  "
              f"({entry['fs_commands']} commands, a JVM each)")
        for name, value in entry["phases"].items():
            accounted += value
            print(f"  {'job ' + name:<22} {value:>7.1f} s")
        print(f"  {'mrjob and Python':<22} {entry['seconds'] - accounted:>7.1f} s  (the rest)")


if __name__ == "__main__":
    sys.exit(main())
