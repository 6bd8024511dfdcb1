"""What a killed run leaves behind, found by the marker it wrote and removed by the next run.

A run that is killed outright (SIGKILL, a lost machine) runs no clean-up: its temporary folders,
mrjob's, its tasks' and the half-written database beside the live one stay.  Every such folder
gets a marker file when it is made (:func:`mark`): the host, the pid and the start time of the
process that owns it.  :func:`sweep` removes a folder only when its marker says its owner is
gone — never by its name alone, never a folder of a process still running (a concurrent build),
never one of another machine sharing the disk.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

#: The marker's file name, inside the folder it marks.
MARKER = ".relatedpages-owner"


@dataclass(frozen=True)
class Owner:
    """The process a folder belongs to."""

    host: str
    pid: int
    started: str  # the process's start time as the kernel counts it ("" where unknown)

    def is_gone(self) -> bool:
        """Whether the owner has ended (on another host: never known, so never gone)."""
        if self.host != socket.gethostname():
            return False
        if not _alive(self.pid):
            return True
        fields = _stat(self.pid)
        if fields and fields[0] in ("Z", "X"):
            # a zombie has ended: where no init reaps orphans (a container's first process
            # that is not an init), a killed run's process stays one and still answers kill 0
            return True
        return bool(self.started) and fields is not None and fields[19] != self.started


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after "(comm)" (field 3, the state, is [0]; field 22,
    the start time in clock ticks, is [19]); None where there is no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()


def _start_time(pid: int) -> str:
    """Field 22 of ``/proc/PID/stat`` (start time in clock ticks): a pid reused by a new
    process has another; "" where there is no /proc."""
    fields = _stat(pid)
    return fields[19] if fields else ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def me() -> Owner:
    """This process as an owner."""
    pid = os.getpid()
    return Owner(socket.gethostname(), pid, _start_time(pid))


def mark(folder: Path | str, owner: Owner | None = None) -> None:
    """Write ``folder``'s marker: it belongs to ``owner`` (this process by default)."""
    who = owner or me()
    (Path(folder) / MARKER).write_text(
        json.dumps({"host": who.host, "pid": who.pid, "started": who.started}) + "\n",
        encoding="utf-8")


def owner_of(folder: Path) -> Owner | None:
    """The owner a folder's marker names, or None (no marker, or one that does not parse:
    such a folder is not this project's to remove)."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        return Owner(str(data["host"]), int(data["pid"]), str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def sweep(places: Iterable[Path | str]) -> list[Path]:
    """Remove the folders directly inside ``places`` whose marker names an ended owner;
    returns what was removed.  A place that cannot be listed is passed over."""
    removed = []
    for place in places:
        try:
            children = sorted(Path(place).iterdir())
        except OSError:
            continue
        for child in children:
            if child.is_symlink() or not child.is_dir():
                continue
            owner = owner_of(child)
            if owner is not None and owner.is_gone():
                shutil.rmtree(child, ignore_errors=True)
                if not child.exists():
                    removed.append(child)
    return removed
