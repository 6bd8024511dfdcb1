"""relatedpages.bench.proctree: a process tree's CPU time and peak memory, including
children whose usage the kernel discards (a parent ignoring SIGCHLD, as Spark's Python
worker daemon does) and orphans that outlive their parent."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from relatedpages.bench.proctree import descendants, run_measured

from tests.prerequisites import guard

BUSY = "while time.process_time() < 0.6: pass"


def test_children_reaped_by_an_ignored_sigchld_are_counted():
    program = f"""
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps them and drops their usage
for _ in range(2):
    if os.fork() == 0:
        {BUSY}
        os._exit(0)
x = bytearray(60 * 2**20)
time.sleep(1.5)
"""
    usage = run_measured([sys.executable, "-c", program])
    assert usage.returncode == 0 and usage.processes == 3
    assert 1.0 <= usage.cpu_seconds < 2.0  # 2 x 0.6 s, less at most one interval each
    assert 60 * 1024 < usage.peak_kb < 200 * 1024
    assert usage.seconds >= 1.5


def test_an_orphan_is_followed_after_its_parent_exits_and_stderr_and_status_kept():
    program = f"""
import os, sys, time
if os.fork() == 0:
    time.sleep(2.0)  # the parent has exited: this process is reparented out of the tree
    {BUSY}
    os._exit(0)
time.sleep(0.2)
sys.stderr.write("parent done")
sys.exit(3)
"""
    usage = run_measured([sys.executable, "-c", program])
    assert usage.returncode == 3 and usage.stderr == "parent done"
    # the command's own wall time (0.2 s and its start), not the orphan's (over 2.6 s): the
    # margin holds on a busy machine
    assert usage.seconds < 2.0
    assert usage.cpu_seconds >= 0.5


def test_descendants_are_a_process_its_children_and_theirs_not_its_parent():
    # a shell, its subshell, and the subshell's sleep (``; true`` keeps it from exec'ing)
    shell = subprocess.Popen(["bash", "-c", "(sleep 30; true) & wait"])
    try:
        deadline = time.monotonic() + guard(20)
        while len(found := descendants(shell.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert shell.pid in found and len(found) == 3
        assert os.getpid() not in found
    finally:
        for pid in descendants(shell.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # ended meanwhile (the subshell, once its sleep is killed)
        shell.wait(timeout=guard(10))
