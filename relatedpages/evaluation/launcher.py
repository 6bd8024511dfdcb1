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
