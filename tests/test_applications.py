"""The YARN applications a build records beside its database, and what the next build does
with them (relatedpages/store/applications.py, jobs/yarn.py), without a cluster: a fake
``hadoop`` answers ``job -kill`` as Hadoop's does.  On the MiniCluster:
``tests/test_minicluster.py::test_a_killed_clients_application_is_killed_by_the_next_build_and_sigterm_kills_its_own``."""
from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from jobs import yarn
from relatedpages.store import leftovers
from relatedpages.store.applications import SUFFIX, Ledger

APP = "application_1796366727231_0005"
OTHER = "application_1796366727231_0006"


def _ended_owner() -> leftovers.Owner:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return leftovers.Owner(socket.gethostname(), dead.pid, "")


def test_a_run_records_what_may_run_and_leaves_nothing_once_it_has_ended(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "db")
    ledger.record(APP)
    ledger.record(OTHER)
    files = list((tmp_path / f"db{SUFFIX}").glob("*.json"))
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    assert (data["pid"], data["applications"]) == (ledger.owner.pid, [APP, OTHER])
    ledger.forget(APP)
    ledger.forget(OTHER)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file, no folder


def test_only_an_ended_runs_applications_are_orphans(tmp_path: Path) -> None:
    db = tmp_path / "db"
    Ledger(db, _ended_owner()).record(APP)
    Ledger(db).record(OTHER)  # this process: alive
    Ledger(db, leftovers.Owner("another-host", 1, "")).record(OTHER)  # never known gone
    (tmp_path / f"db{SUFFIX}" / "garbled.json").write_text("{not json")
    (tmp_path / f"db{SUFFIX}" / "not-an-id.json").write_text(json.dumps(
        {"host": socket.gethostname(), "pid": _ended_owner().pid, "started": "",
         "applications": ["my-job"]}))
    reader = Ledger(db, leftovers.Owner(socket.gethostname(), 0, "x"))
    assert [orphan.applications for orphan in reader.orphans()] == [(APP,)]


def _fake_hadoop(tmp_path: Path, answers: dict[str, str]) -> list[str]:
    """A ``hadoop`` that answers ``job -kill JOB`` with ``answers[JOB]`` (nothing: fails)."""
    script = tmp_path / "hadoop"
    script.write_text("#!/usr/bin/env python3\nimport sys\n"
                      f"answers = {answers!r}\n"
                      "if sys.argv[1:3] != ['job', '-kill'] or sys.argv[3] not in answers:\n"
                      "    sys.exit('no cluster')\n"
                      "print(answers[sys.argv[3]])\n")
    script.chmod(0o755)
    return [str(script)]


def test_the_next_build_kills_an_ended_runs_applications_and_keeps_what_it_could_not(
        tmp_path: Path) -> None:
    db = tmp_path / "db"
    Ledger(db, _ended_owner()).record(APP)
    left = Ledger(db, _ended_owner())
    left.record(OTHER)
    hadoop = _fake_hadoop(tmp_path, {"job_1796366727231_0005": "Killed job job_1796366727231_0005"})
    said: list[str] = []
    done = yarn.stop_orphans(hadoop, Ledger(db), said.append)
    assert sorted((app, outcome.value) for app, outcome in done) == [
        (APP, "killed"), (OTHER, "unknown")]
    assert any(f"killed YARN application {APP}" in line for line in said)
    assert any(f"could not kill YARN application {OTHER}" in line for line in said)
    # the one without an answer stays for the next build; the killed one is gone
    assert [orphan.applications for orphan in Ledger(db).orphans()] == [(OTHER,)]
    hadoop = _fake_hadoop(tmp_path, {"job_1796366727231_0006":
                                     "Could not kill the job job_1796366727231_0006, as it "
                                     "has already succeeded."})
    assert [outcome.value for _, outcome in yarn.stop_orphans(hadoop, Ledger(db), said.append)] == ["ended"]
    assert not (tmp_path / f"db{SUFFIX}").exists()


@pytest.mark.parametrize("level", [logging.WARNING, logging.INFO])
def test_a_submitted_application_is_recorded_from_mrjobs_log_and_shown_as_before(
        tmp_path: Path, level: int) -> None:
    """Hadoop's client lines are INFO records of ``mrjob.logs.step``: recorded whatever the
    logger's level, and passed on only when the level showed them before."""
    step_log = logging.getLogger(yarn.STEP_LOGGER)
    before = step_log.level
    step_log.setLevel(level)
    shown: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: shown.append(record.getMessage())  # type: ignore[method-assign]
    step_log.addHandler(handler)
    try:
        ledger = Ledger(tmp_path / "db")
        with yarn.recorded(ledger) as submitted:
            step_log.info("  Submitted application %s", APP)
            assert ledger.applications == (APP,)
            step_log.info("  Submitted application %s", OTHER)  # the next step: APP has ended
            assert ledger.applications == (OTHER,)
            submitted.ended()
        assert submitted.applications == [APP, OTHER] and ledger.applications == ()
        assert step_log.level == level
        assert len(shown) == (2 if level == logging.INFO else 0)
    finally:
        step_log.removeHandler(handler)
        step_log.setLevel(before)


def test_a_stopped_job_kills_its_running_application(tmp_path: Path) -> None:
    class Runner:
        def get_hadoop_bin(self) -> list[str]:
            return _fake_hadoop(tmp_path, {"job_1796366727231_0005": "Killed job job_1796366727231_0005"})

    ledger = Ledger(tmp_path / "db")
    submitted = yarn.Submitted(ledger)
    submitted.add(APP)
    submitted.stop(Runner())
    assert ledger.applications == ()
    assert not (tmp_path / f"db{SUFFIX}").exists()


SCRATCH = "hdfs:///tmp/mrjob/related.root.20261204.101010.123456"


def test_an_ended_runs_scratch_folders_go_once_its_applications_have_ended(tmp_path: Path) -> None:
    """A killed build's jobs' scratch folders (mrjob's, on the cluster) are removed by the
    next build with ``hadoop fs -rm``, after its applications, never while one may run; a
    path not named as mrjob names a job's folder is never recorded, nor removed."""
    db = tmp_path / "db"
    left = Ledger(db, _ended_owner())
    left.record(APP)
    left.record_scratch(SCRATCH)
    left.record_scratch("hdfs:///user/root")  # not a job's folder: not recorded
    assert left.scratch == (SCRATCH,)
    calls, cluster_up = tmp_path / "calls.txt", tmp_path / "cluster-up"
    script = tmp_path / "hadoop"  # answers job -kill once the cluster is up; logs every call
    script.write_text("#!/usr/bin/env python3\nimport os, sys\n"
                      f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                      "if sys.argv[1:3] == ['job', '-kill']:\n"
                      f"    if not os.path.exists({str(cluster_up)!r}):\n"
                      "        sys.exit('no cluster')\n"
                      "    print('Killed job ' + sys.argv[3])\n")
    script.chmod(0o755)
    said: list[str] = []
    yarn.stop_orphans([str(script)], Ledger(db), said.append)  # the kill has no answer
    assert "fs" not in calls.read_text()  # its application may run: its folder stays
    assert [orphan.scratch for orphan in Ledger(db).orphans()] == [(SCRATCH,)]
    cluster_up.touch()
    yarn.stop_orphans([str(script)], Ledger(db), said.append)
    assert calls.read_text().splitlines()[-1] == f"fs -rm -r -f -skipTrash {SCRATCH}"
    assert any(line.startswith(f"removed {SCRATCH}: the scratch folder") for line in said)
    assert not (tmp_path / f"db{SUFFIX}").exists()  # nothing left to do
