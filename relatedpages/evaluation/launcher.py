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
    (``relatedpages.evaluation.launcher``), which reports the Python process's own peak RSS
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


def read_python_peaks(reports: Path) -> dict[str, int]:
    """Peak KB of the Python process per task id (the largest of its attempts); the reports
    read are removed, so each run reads only its own."""
    peaks: dict[str, int] = {}
    for report in reports.glob("attempt_*"):
        attempt = report.name.split(".", 1)[0]  # attempt_<cluster>_<job>_<m|r>_<n>_<try>
        task = "task_" + attempt.removeprefix("attempt_").rsplit("_", 1)[0]
        fields = report.read_text().split()  # seconds cpu_seconds maxrss_kb exit_code
        peak = int(fields[2]) if len(fields) == 4 and fields[2].isdigit() else 0
        peaks[task] = max(peaks.get(task, 0), peak)
        report.unlink()
    return peaks
