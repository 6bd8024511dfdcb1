"""scripts/nightly: build and swap in, one run at a time, a log per run, the old database kept
when a night fails.  (With ``--runner hadoop`` and an HDFS work folder: tests/test_minicluster.py.)"""
from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from relatedpages.store.db import RelatedPagesDB
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
NIGHTLY = REPO / "scripts" / "nightly"
EX_TEMPFAIL = 75


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("crawl") / "crawl.warc.gz"
    done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "200",
                           "--seed", "3", "-o", str(path)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return path


def nightly(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NIGHTLY), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=guard(600))


def test_a_night_builds_the_database_and_logs_it(crawl, tmp_path):
    db = tmp_path / "db"
    done = nightly("--runner", "inline", "--db", str(db), str(crawl), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("nightly: ") and " ok: " in line and "(inline runner;" in line
    with RelatedPagesDB(db) as database:
        records = len(database)
    assert f"ok: {records} records in {db}" in line
    logs = sorted((tmp_path / "db.logs").glob("nightly-*.log"))
    assert len(logs) == 1
    assert "database records" in logs[0].read_text()


def test_a_failed_night_leaves_the_old_database(crawl, tmp_path):
    db = tmp_path / "db"
    assert nightly("--runner", "inline", "--db", str(db), str(crawl), cwd=tmp_path).returncode == 0
    before = (db / "manifest.json").read_bytes()
    done = nightly("--runner", "inline", "--db", str(db), str(tmp_path / "missing.warc.gz"),
                   cwd=tmp_path)
    assert done.returncode == 1
    assert "FAILED" in done.stderr and "unchanged" in done.stderr
    assert (db / "manifest.json").read_bytes() == before
    with RelatedPagesDB(db) as database:
        assert len(database) > 0


def test_a_collapsed_night_is_not_swapped_in(crawl, tmp_path):
    db = tmp_path / "db"
    assert nightly("--runner", "inline", "--db", str(db), str(crawl), cwd=tmp_path).returncode == 0
    before = (db / "manifest.json").read_bytes()
    small = tmp_path / "small.warc.gz"  # last night's crawler broke: 20 pages, not 200
    subprocess.run([sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "20",
                    "--seed", "3", "-o", str(small)], check=True, capture_output=True, cwd=REPO)
    done = nightly("--runner", "inline", "--db", str(db), str(small), cwd=tmp_path)
    assert done.returncode == 1
    assert "FAILED" in done.stderr and "collapsed database not installed" in done.stderr
    assert (db / "manifest.json").read_bytes() == before
    # the ratio is a flag: 0 accepts any size
    done = nightly("--runner", "inline", "--min-ratio", "0", "--db", str(db), str(small),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (db / "manifest.json").read_bytes() != before


def test_one_night_at_a_time(crawl, tmp_path):
    db = tmp_path / "db"
    with open(tmp_path / "db.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a run in progress
        done = nightly("--runner", "inline", "--db", str(db), str(crawl), cwd=tmp_path)
    assert done.returncode == EX_TEMPFAIL
    assert "another run holds" in done.stderr
    assert not db.exists()


@pytest.mark.parametrize("args", [(), ("--db",), ("--db", "x"), ("--runner", "spark", "--db", "x", "in")])
def test_usage_errors(args, tmp_path):
    done = nightly(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert "usage:" in done.stderr
