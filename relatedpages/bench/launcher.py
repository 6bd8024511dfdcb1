"""The benchmarks' launcher: a child process's wall time, CPU time and peak memory.

Linux carries a process's peak RSS into its children (fork copies the memory map's
high-water mark and exec keeps it in ``ru_maxrss``), so a task forked from a benchmark would
report at least the benchmark's own peak; forked from a fresh ``python -I -S`` running
:data:`LAUNCHER` it reports at least the launcher's (~8 MB, below any Python task).

    python -I -S -c "$LAUNCHER" REPORT COMMAND ARGS…

runs COMMAND with the launcher's stdin and stdout, reaps it with ``wait4``, writes
``seconds cpu_seconds maxrss_kb exit_code`` to REPORT and exits with COMMAND's status.
``scripts/bench_chain.py`` times each stage of the chain with it; ``scripts/bench_scale.py``
gives it to Hadoop's tasks as their ``python_bin``, one report per task attempt.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = """\
import os, sys, time
report, args = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(args[0], args)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
code = os.waitstatus_to_exitcode(status)
with open(report, "w") as handle:
    handle.write(f"{seconds} {usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {code}\\n")
sys.exit(code if code >= 0 else 128 - code)
"""


def write_python_launcher(work: Path, reports: Path) -> Path:
    """The tasks' ``python_bin``: this interpreter under the benchmarks' launcher
    (``relatedpages.bench.launcher``), which reports the Python process's own peak RSS
    in a file named after the task attempt (Hadoop Streaming puts the job configuration in
    the task's environment, dots as underscores).  Hadoop's memory counter covers the whole
    container: the task JVM, whose shuffle buffers grow with the input up to its heap's
    limit, and the Python process together.  The cluster is this machine, so the reports
    land in a local folder.  Made once."""
    launcher = work / "python-rss"
    if not launcher.exists():
        reports.mkdir(parents=True, exist_ok=True)
        script = work / "launcher.py"
        script.write_text(LAUNCHER)
        report = f'{reports}/${{mapreduce_task_attempt_id:-unknown}}.$$'
        launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S {script} "{report}" '
                            f'{sys.executable} "$@"\n')
        launcher.chmod(0o755)
    return launcher


@dataclass(frozen=True)
class PythonUsage:
    """A task's Python processes: the largest peak RSS (KB) and their CPU time (seconds)."""

    peak_kb: int
    cpu_seconds: float


def read_python_reports(reports: Path) -> dict[str, PythonUsage]:
    """Per task id, its Python processes' usage (a streaming task starts two: mrjob's
    short check, then the mapper or reducer): the peak of the largest and, of the attempt
    that used the most, the CPU summed (Hadoop's counters are its successful attempt's).
    The reports read are removed, so each run reads only its own."""
    attempts: dict[str, tuple[int, float]] = {}
    for report in reports.glob("attempt_*"):
        attempt = report.name.split(".", 1)[0]  # attempt_<cluster>_<job>_<m|r>_<n>_<try>
        fields = report.read_text().split()  # seconds cpu_seconds maxrss_kb exit_code
        report.unlink()
        if len(fields) != 4 or not fields[2].isdigit():
            continue
        try:
            cpu = float(fields[1])
        except ValueError:
            continue
        peak, total = attempts.get(attempt, (0, 0.0))
        attempts[attempt] = (max(peak, int(fields[2])), total + cpu)
    usage: dict[str, PythonUsage] = {}
    for attempt, (peak, cpu) in attempts.items():
        task = "task_" + attempt.removeprefix("attempt_").rsplit("_", 1)[0]
        known = usage.get(task, PythonUsage(0, 0.0))
        usage[task] = PythonUsage(max(known.peak_kb, peak), max(known.cpu_seconds, cpu))
    return usage
