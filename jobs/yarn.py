"""A build's YARN applications: recorded as Hadoop's client submits them, killed when the
build is interrupted, and killed by the next build of the same database when the build that
submitted them was killed outright (the ledger: :mod:`relatedpages.store.applications`).

Hadoop's client only watches a job: killing the client, or the build around it, leaves the
application running on the cluster, and mrjob's clean-up does not kill jobs (its
``_cleanup_job`` is disabled).  ``hadoop job -kill JOB_ID`` does (Hadoop 3's ``hadoop job``
is ``mapred job``; ``scripts/hadoop-setup``'s thin launcher maps it to the same class).
"""
from __future__ import annotations

import contextvars
import logging
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from relatedpages.store.applications import Ledger, job_id

#: Hadoop's client line for a submitted job, as mrjob logs it.
SUBMITTED = re.compile(r"Submitted application (application_\d+_\d+)")
#: The logger mrjob passes Hadoop's client lines to (``mrjob.logs.step``).
STEP_LOGGER = "mrjob.logs.step"
#: Seconds a ``hadoop job -kill`` may take: a JVM, and the job's end (Hadoop waits up to
#: 10 s for the application master before it asks the ResourceManager).
KILL_TIMEOUT = 120.0


class KillOutcome(Enum):
    """What ``hadoop job -kill`` did."""

    KILLED = "killed"  # it ran, and was killed
    ENDED = "ended"  # it had finished, failed or been killed, or the cluster does not know it
    UNKNOWN = "unknown"  # no answer (the cluster unreachable, the command missing): try again later


def kill_outcome(stdout: str) -> KillOutcome:
    """The outcome ``hadoop job -kill``'s output states (org.apache.hadoop.mapreduce.tools.CLI).

    >>> kill_outcome("Killed job job_1_0002\\n").value
    'killed'
    >>> kill_outcome("Could not kill the job job_1_0002, as it has already succeeded.\\n").value
    'ended'
    >>> kill_outcome("Could not find job job_1_0002\\n").value
    'ended'
    >>> kill_outcome("").value
    'unknown'
    """
    if re.search(r"^Killed job ", stdout, re.M):
        return KillOutcome.KILLED
    if re.search(r"already (succeeded|failed|been killed)|^Could not find job ", stdout, re.M):
        return KillOutcome.ENDED
    return KillOutcome.UNKNOWN


def kill(hadoop_bin: Sequence[str], application: str) -> KillOutcome:
    """Kill ``application`` (a YARN application id) with ``hadoop job -kill``."""
    try:
        done = subprocess.run([*hadoop_bin, "job", "-kill", job_id(application)],
                              capture_output=True, text=True, timeout=KILL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        logging.getLogger(__name__).warning("hadoop job -kill %s: %s", application, error)
        return KillOutcome.UNKNOWN
    outcome = kill_outcome(done.stdout)
    if outcome is KillOutcome.UNKNOWN:
        logging.getLogger(__name__).warning("hadoop job -kill %s: exit status %s: %s",
                                            application, done.returncode,
                                            (done.stdout + done.stderr).strip()[-500:])
    return outcome


@dataclass
class Submitted:
    """The applications a job's steps have submitted so far, oldest first, each recorded in
    ``ledger`` at once (nothing is recorded without one: not on a cluster)."""

    ledger: Ledger | None
    applications: list[str] = field(default_factory=list)

    def add(self, application: str) -> None:
        if self.ledger is not None:
            for earlier in self.applications:  # the steps run one after another
                self.ledger.forget(earlier)
            self.ledger.record(application)
        self.applications.append(application)

    def ended(self) -> None:
        """The job has ended (its client saw each step end): nothing of it runs."""
        if self.ledger is not None:
            for application in self.applications:
                self.ledger.forget(application)

    def stop(self, job_runner: Any) -> None:
        """The job's applications that may still run (its client interrupted, or broken):
        killed with the runner's ``hadoop``, and forgotten once they cannot run; one
        without an answer stays recorded, for the next build to kill."""
        if self.ledger is None:
            return
        for application in self.applications:
            if application in self.ledger.applications:
                if kill(job_runner.get_hadoop_bin(), application) is not KillOutcome.UNKNOWN:
                    self.ledger.forget(application)


class _Watcher(logging.Filter):
    """Adds each application Hadoop's client reports submitted; lets through only what the
    logger showed before the watch (the watch may lower its level to see them)."""

    def __init__(self, submitted: Submitted, shown: int) -> None:
        super().__init__()
        self._submitted, self._shown = submitted, shown

    def filter(self, record: logging.LogRecord) -> bool:
        match = SUBMITTED.search(record.getMessage())
        if match:
            self._submitted.add(match.group(1))
        return record.levelno >= self._shown


@contextmanager
def recorded(ledger: Ledger | None) -> Iterator[Submitted]:
    """Inside, every application Hadoop's client submits is recorded in ``ledger`` as soon
    as the client reports it (mrjob logs the client's lines as they come)."""
    submitted = Submitted(ledger)
    if ledger is None:
        yield submitted
        return
    logger = logging.getLogger(STEP_LOGGER)
    level, shown = logger.level, logger.getEffectiveLevel()
    watcher = _Watcher(submitted, shown)
    if shown > logging.INFO:  # the client's lines are INFO records: make them, drop them
        logger.setLevel(logging.INFO)
    logger.addFilter(watcher)
    try:
        yield submitted
    finally:
        logger.removeFilter(watcher)
        logger.setLevel(level)


def remove_scratch(hadoop_bin: Sequence[str], uri: str) -> bool:
    """Remove a job's scratch folder (``hadoop fs -rm -r -f -skipTrash``); whether it is
    gone (a folder already gone counts)."""
    try:
        done = subprocess.run([*hadoop_bin, "fs", "-rm", "-r", "-f", "-skipTrash", uri],
                              capture_output=True, text=True, timeout=KILL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        logging.getLogger(__name__).warning("hadoop fs -rm %s: %s", uri, error)
        return False
    if done.returncode != 0:
        logging.getLogger(__name__).warning("hadoop fs -rm %s: exit status %s: %s", uri, done.returncode,
                                            (done.stdout + done.stderr).strip()[-500:])
    return done.returncode == 0


def stop_orphans(hadoop_bin: Sequence[str], ledger: Ledger,
                 say: Callable[[str], None]) -> list[tuple[str, KillOutcome]]:
    """Kill what builds of this database that have ended left recorded (killed outright:
    they could not stop their applications themselves), then remove their jobs' scratch
    folders once none of their applications can run; says what it did, or could not."""
    done = []
    for left in ledger.orphans():
        ended = []
        for application in left.applications:
            outcome = kill(hadoop_bin, application)
            done.append((application, outcome))
            if outcome is KillOutcome.KILLED:
                say(f"killed YARN application {application}: a build of this database that "
                    f"ended without stopping it (pid {left.owner.pid}) left it running")
            elif outcome is KillOutcome.UNKNOWN:
                say(f"could not kill YARN application {application}, left running by an ended "
                    f"build of this database (pid {left.owner.pid}): the next build tries again")
            if outcome is not KillOutcome.UNKNOWN:
                ended.append(application)
        removed = []
        if len(ended) == len(left.applications):  # nothing of that run can still use them
            for uri in left.scratch:
                if remove_scratch(hadoop_bin, uri):
                    removed.append(uri)
                    say(f"removed {uri}: the scratch folder of a job of a build of this database "
                        f"that ended without removing it (pid {left.owner.pid})")
                else:
                    say(f"could not remove {uri}, left by an ended build of this database "
                        f"(pid {left.owner.pid}): the next build tries again")
        ledger.release(left, tuple(ended), tuple(removed))
    return done


#: The ledger ``jobs.pipeline.run_job`` records a build's applications in, on a cluster
#: (set by :func:`record_applications` for ``build`` and ``build_links``).
LEDGER: contextvars.ContextVar[Ledger | None] = contextvars.ContextVar("ledger", default=None)


def record_applications(db_path: Path, runner: str, progress: Callable[[str], None]
                        ) -> contextvars.Token[Ledger | None] | None:
    """With the hadoop runner: first kill what earlier builds of the database at
    ``db_path``, killed outright, left running (by the ids they recorded), then have
    ``run_job`` record this build's applications as it submits them, in the same ledger,
    until :func:`end_recording` of the token returned."""
    if runner != "hadoop":
        return None
    from mrjob.fs.hadoop import HadoopFilesystem

    ledger = Ledger(Path(db_path))
    if ledger.orphans():
        stop_orphans(HadoopFilesystem().get_hadoop_bin(), ledger, progress)
    return LEDGER.set(ledger)


def end_recording(token: contextvars.Token[Ledger | None] | None) -> None:
    if token is not None:
        LEDGER.reset(token)
