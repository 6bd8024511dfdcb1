"""The YARN applications a build may have left running, recorded where the next build of the
same database finds them.

A build on a cluster submits one YARN application per job step, and its client only watches
it: a client killed outright (SIGKILL, a lost gateway) leaves the application running, and
mrjob's clean-up does not kill jobs.  So a build records each application as it is
submitted, in a ledger beside its database (``DB.applications/``, one file per run, named
by the run's :class:`~relatedpages.store.leftovers.Owner`), and forgets it once it has
ended.  The next build of that database kills what an ended run recorded
(:meth:`Ledger.orphans`): an application is recognised by the id its run wrote down, never
by its name (mrjob names every build's jobs alike), and never while its run still lives or
when it ran on another host.  A run records each job's scratch folder on the cluster's
file system too (mrjob's ``hadoop_tmp_dir``/``<job key>``: the job's code and files, its
steps' outputs), removed by mrjob when the job ends or is interrupted, and left when the
client is killed; the next build removes what an ended run recorded, once that run's
applications have ended (:func:`jobs.yarn.stop_orphans`).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from relatedpages.store.leftovers import Owner, me

#: YARN's application id: the ResourceManager's start time and a sequence number.
APPLICATION_ID = re.compile(r"application_(\d+)_(\d+)")
#: The ledger folder's name beside the database: ``DB`` + this.
SUFFIX = ".applications"
#: A job's scratch folder as mrjob names it: a URI whose last part is the job's key
#: (``<label>.<user>.<YYYYmmdd>.<HHMMSS>.<microseconds>``); a recorded path of another
#: shape is not this project's, and is never removed.
SCRATCH = re.compile(r"[a-z][a-z0-9+.-]*://[^\s]*/[^/\s]+\.[^/\s]+\.\d{8}\.\d{6}\.\d{6}")


def job_id(application: str) -> str:
    """The MapReduce job id of a YARN application (``hadoop job -kill`` takes it).

    >>> job_id("application_1796366727231_0005")
    'job_1796366727231_0005'
    >>> job_id("job_1_2")
    Traceback (most recent call last):
    ...
    ValueError: not a YARN application id: 'job_1_2'
    """
    match = APPLICATION_ID.fullmatch(application)
    if match is None:
        raise ValueError(f"not a YARN application id: {application!r}")
    return f"job_{match.group(1)}_{match.group(2)}"


@dataclass(frozen=True)
class Recorded:
    """What one run recorded: who it was, and its applications that may still run."""

    owner: Owner
    applications: tuple[str, ...]
    path: Path  # its ledger file
    scratch: tuple[str, ...] = ()  # its jobs' scratch folders that may be left


class Ledger:
    """The ledger of the database at ``db_path``, written as ``owner`` (this process)."""

    def __init__(self, db_path: Path, owner: Owner | None = None) -> None:
        self.folder = db_path.with_name(db_path.name + SUFFIX)
        self.owner = owner or me()
        self._mine = self.folder / f"{self.owner.pid}-{self.owner.started or 'x'}-{self.owner.host}.json"
        self._applications: list[str] = []
        self._scratch: list[str] = []

    @property
    def applications(self) -> tuple[str, ...]:
        """This run's applications that may still run."""
        return tuple(self._applications)

    @property
    def scratch(self) -> tuple[str, ...]:
        """This run's scratch folders that may be left."""
        return tuple(self._scratch)

    def record_scratch(self, uri: str) -> None:
        """Note a job's scratch folder (mrjob's, on the cluster) before the job makes it;
        a path not named as mrjob names them is not noted (nothing would remove it)."""
        if SCRATCH.fullmatch(uri) and uri not in self._scratch:
            self._scratch.append(uri)
            self._write()

    def forget_scratch(self, uri: str) -> None:
        """The job's scratch folder is gone (mrjob removed it)."""
        if uri in self._scratch:
            self._scratch.remove(uri)
            self._write()

    def record(self, application: str) -> None:
        """Note ``application`` (submitted by this run) before anything else can happen."""
        job_id(application)  # a programmer's error otherwise: ids come from APPLICATION_ID
        if application not in self._applications:
            self._applications.append(application)
            self._write()

    def forget(self, application: str) -> None:
        """``application`` has ended (or been killed): no longer this run's to stop.  With
        nothing left, the run's file goes (and the folder, when no other run has one)."""
        if application in self._applications:
            self._applications.remove(application)
            self._write()

    def _write(self) -> None:
        self._store(self._mine, self.owner, self._applications, self._scratch)

    def _store(self, path: Path, owner: Owner, applications: list[str], scratch: list[str]) -> None:
        """A run's file: its applications and scratch folders, whole or not at all whenever
        the run is killed; none left, no file (and no folder when it is empty)."""
        if not applications and not scratch:
            path.unlink(missing_ok=True)
            try:
                self.folder.rmdir()
            except OSError:
                pass  # not empty (another run's file), or never made
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps({"host": owner.host, "pid": owner.pid,
                                       "started": owner.started,
                                       "applications": applications, "scratch": scratch}) + "\n",
                           encoding="utf-8")
        os.replace(partial, path)

    def orphans(self) -> list[Recorded]:
        """What ended runs recorded (not this run's, nor a living or another host's run's);
        a file that does not parse is not this project's, and is passed over."""
        found = []
        try:
            files = sorted(self.folder.glob("*.json"))
        except OSError:
            return []
        for path in files:
            if path == self._mine:
                continue
            recorded = _read(path)
            if recorded is not None and recorded.owner.is_gone():
                found.append(recorded)
        return found

    def release(self, recorded: Recorded, ended: tuple[str, ...], removed: tuple[str, ...] = ()) -> None:
        """Another run's applications ``ended`` and scratch folders ``removed`` are gone:
        drop them from its file (the file too when nothing is left), keep the rest for a
        later run to try again."""
        self._store(recorded.path, recorded.owner,
                    [application for application in recorded.applications if application not in ended],
                    [uri for uri in recorded.scratch if uri not in removed])


def _read(path: Path) -> Recorded | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        owner = Owner(str(data["host"]), int(data["pid"]), str(data["started"]))
        applications = tuple(str(application) for application in data["applications"])
        scratch = tuple(str(uri) for uri in data.get("scratch", ()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not all(APPLICATION_ID.fullmatch(application) for application in applications) \
            or not all(SCRATCH.fullmatch(uri) for uri in scratch):
        return None
    return Recorded(owner, applications, path, scratch)
