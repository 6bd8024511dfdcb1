"""CPU time and peak memory of a command's whole process tree, sampled from ``/proc``.

The benchmarks' launcher (:mod:`relatedpages.bench.launcher`) reads a child's resource
usage when it is reaped, which includes only the descendants that were reaped by a waiting
parent.  Spark's Python worker daemon ignores SIGCHLD, so the kernel discards its workers'
usage when they exit (and they do the Python work of a ``-r spark`` job): measured that way,
a 5,000-page run showed 12-46 s of CPU for the same work, depending on which process
happened to exit first.  :func:`run_measured` samples every process of the tree instead:

* the tree is the command and every process whose parent is in the tree, followed by pid
  (and start time, so a reused pid is a new process) even after a parent exits and the
  orphan is reparented out of the tree;
* a process's CPU time is its own ``utime + stime`` (``/proc/PID/stat``) at its last
  sample, and its peak memory its ``VmHWM`` (``/proc/PID/status``), the kernel's high-water
  mark of its resident set; a process's usage after its last sample (at most one interval)
  is missed, and so is a process that lives less than an interval (or whose parent in the
  tree does);
* sampling goes on after the command exits until the tree's last process has gone (at most
  ``linger`` seconds): Spark's daemon outlives its JVM by a moment.

Linux only (``/proc``).
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class TreeUsage:
    seconds: float  # wall time until the command exited
    cpu_seconds: float  # own CPU time of every process of the tree, summed
    peak_kb: int  # the largest VmHWM of any one process
    processes: int  # processes seen
    returncode: int
    stderr: str


def _stat(pid: int) -> tuple[int, int, float] | None:
    """(parent pid, start time in ticks, own CPU seconds) of a live process, or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
    return int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICK


def _live_stats() -> dict[int, tuple[int, int, float]]:
    """:func:`_stat` of every live process, by pid (one pass over ``/proc``)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            stats[int(entry)] = stat
    return stats


def descendants(root: int) -> set[int]:
    """``root`` and every live process below it (children, theirs, …), now."""
    stats = _live_stats()
    found = {root}
    while new := {pid for pid, (parent, _, _) in stats.items() if parent in found} - found:
        found |= new
    return found


def _peak_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run_measured(command: Sequence[str], *, cwd: Path | None = None, interval: float = 0.1,
                 linger: float = 30.0) -> TreeUsage:
    """Run ``command`` (stdout discarded, stderr kept) and measure its process tree."""
    stderr: list[str] = []
    started = time.perf_counter()
    child = subprocess.Popen(list(command), cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    pipe = child.stderr
    assert pipe is not None
    reader = threading.Thread(target=lambda: stderr.append(pipe.read()), daemon=True)
    reader.start()
    tracked: dict[int, int] = {child.pid: -1}  # pid -> start time (-1: the command, not read yet)
    cpu: dict[tuple[int, int], float] = {}
    peak: dict[tuple[int, int], int] = {}
    seconds: float | None = None
    deadline = 0.0
    while True:
        alive = _sample(tracked, cpu, peak)
        if seconds is None and child.poll() is not None:
            seconds = time.perf_counter() - started
            deadline = time.monotonic() + linger
        if seconds is not None and (not alive or time.monotonic() > deadline):
            break
        time.sleep(interval)
    reader.join(timeout=linger)
    assert seconds is not None
    return TreeUsage(seconds, sum(cpu.values()), max(peak.values(), default=0), len(cpu),
                     child.returncode, "".join(stderr))


def _sample(tracked: dict[int, int], cpu: dict[tuple[int, int], float],
            peak: dict[tuple[int, int], int]) -> bool:
    """One pass over /proc: the tree's members (the tracked processes still alive, and every
    process whose parent is a member) get their CPU time and peak updated and are tracked.
    True while any member lives (the command, or a process of its tree)."""
    stats = _live_stats()
    members = {pid for pid, start in tracked.items()
               if pid in stats and start in (-1, stats[pid][1])}
    while new := {pid for pid, (parent, _, _) in stats.items() if parent in members} - members:
        members |= new
    for pid in members:
        _, start, seconds = stats[pid]
        tracked[pid] = start
        cpu[(pid, start)] = seconds
        peak[(pid, start)] = max(peak.get((pid, start), 0), _peak_kb(pid))
    return bool(members)
