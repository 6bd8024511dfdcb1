"""Faults survived, nothing lost (issue 44): Ctrl-C and SIGTERM end a build in one line with
every temporary folder removed; a build killed outright at any stage leaves the live database
answering, and the next run removes what it left (by the marker it wrote); a database that
does not fit on its disk is one line, the live one intact; file names that are not UTF-8 work.
The table of faults in ``docs/guides/faults.md`` names these tests."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relatedpages.store import leftovers
from relatedpages.store.db import RelatedPagesDB
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
SAMPLE = "http://www.sunny-backpacking-zone.org/"  # a page of the generated web, seed 1


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "relatedpages.cli", *args]


def _env(tmpdir: Path) -> dict[str, str]:
    return dict(os.environ, TMPDIR=str(tmpdir))


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,500 generated pages: each stage of a local build lasts long enough to be hit."""
    crawl = tmp_path_factory.mktemp("web") / "crawl.warc.gz"
    subprocess.run(_command("generate", "--pages", "1500", "--seed", "1", "-o", str(crawl)),
                   check=True, capture_output=True, timeout=guard(120))
    return crawl


def _signalled(args: list[str], tmpdir: Path, stage: str, after: float, signum: int,
               group: bool = False) -> tuple[int, str]:
    """Run a command, wait until its progress prints ``stage``, then ``after`` seconds, and
    send it ``signum`` (to its process group, as a terminal's Ctrl-C does, with ``group``)."""
    process = subprocess.Popen(args, cwd=REPO, env=_env(tmpdir), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if stage in line:
            break
    else:
        pytest.fail(f"never reached {stage!r}: {''.join(seen)}")
    time.sleep(after)
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    rest = process.communicate(timeout=guard(120))[1]
    return process.returncode, "".join(seen) + rest


def _settled(folder: Path, seconds: float = 10.0) -> list[str]:
    """What is left in ``folder`` once the killed run's orphaned workers are gone."""
    deadline = time.monotonic() + guard(seconds)
    while time.monotonic() < deadline:
        left = sorted(p.name for p in folder.iterdir())
        if not left:
            return left
        time.sleep(0.5)
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("signum, stage, group, status, line", [
    (signal.SIGINT, "[1/3] segmenting", True, 130, "relatedpages: interrupted"),
    (signal.SIGTERM, "[2/3] block", False, 143, "relatedpages: terminated"),
], ids=["ctrl-c-segmenting", "sigterm-chain"])
def test_an_interrupted_build_is_one_line_and_leaves_nothing(
        web: Path, tmp_path: Path, signum: int, stage: str, group: bool, status: int,
        line: str) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    returncode, stderr = _signalled(
        _command("build", str(web), "--db", str(tmp_path / "db"), "--runner", "local"),
        scratch, stage, 1.0, signum, group)
    assert returncode == status, stderr
    assert stderr.strip().splitlines()[-1] == line
    assert "Traceback" not in stderr and "ForkPoolWorker" not in stderr, stderr
    assert _settled(scratch) == []  # ours, mrjob's and its tasks' temporary folders
    assert not (tmp_path / "db").exists()


@pytest.mark.slow
def test_a_killed_build_leaves_the_live_database_answering_and_the_next_run_cleans_up(
        web: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "live" / "db"
    build = _command("build", str(web), "--db", str(db))
    first = subprocess.run([*build, "--runner", "inline"], cwd=REPO, env=_env(scratch),
                           capture_output=True, text=True, timeout=guard(300))
    assert first.returncode == 0, first.stderr
    answer = RelatedPagesDB(db).find(SAMPLE)
    assert answer
    for stage, after, runner in (("[1/3] segmenting", 1.0, "local"), ("[2/3] block", 1.0, "local"),
                                 ("[3/3] building the database", 0.3, "inline")):
        returncode, stderr = _signalled([*build, "--runner", runner], scratch, stage, after,
                                        signal.SIGKILL)
        assert returncode == -signal.SIGKILL, stderr
        assert subprocess.run(_command("verify", "--db", str(db)), cwd=REPO,
                              capture_output=True, timeout=guard(60)).returncode == 0, stage
        assert RelatedPagesDB(db).find(SAMPLE) == answer, stage
    assert os.listdir(scratch), "the killed runs left nothing to clean: the test hit no stage"
    again = subprocess.run([*build, "--runner", "inline"], cwd=REPO, env=_env(scratch),
                           capture_output=True, text=True, timeout=guard(300))
    assert again.returncode == 0, again.stderr
    assert _settled(scratch) == []
    assert sorted(p.name for p in db.parent.iterdir()) == ["db"]
    assert RelatedPagesDB(db).find(SAMPLE) == answer


def test_the_sweep_removes_only_what_an_ended_owner_marked(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    folders = {name: tmp_path / name for name in ("ended", "running", "unmarked", "elsewhere",
                                                  "garbled")}
    for folder in folders.values():
        folder.mkdir()
        (folder / "data").write_text("x")
    leftovers.mark(folders["ended"], leftovers.Owner(socket.gethostname(), dead.pid, ""))
    leftovers.mark(folders["running"])
    leftovers.mark(folders["elsewhere"], leftovers.Owner("another-host", dead.pid, ""))
    (folders["garbled"] / leftovers.MARKER).write_text("{not json")
    (tmp_path / "a-file").write_text("x")
    assert leftovers.sweep([tmp_path, tmp_path / "missing"]) == [folders["ended"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a-file", "elsewhere", "garbled", "running", "unmarked"]


def test_a_reused_pid_is_not_its_old_owner() -> None:
    me = leftovers.me()
    assert not me.is_gone()
    if me.started:  # Linux: the start time tells a new process with the same pid apart
        assert leftovers.Owner(me.host, me.pid, str(int(me.started) - 1)).is_gone()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_zombie_owner_is_gone() -> None:
    """A killed run whose orphaned process no init reaps (a container's first process that is
    not an init) stays a zombie: it answers ``kill 0`` but has ended, and its folders go."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])  # not waited for: a zombie
    try:
        deadline = time.monotonic() + guard(10)
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child did not end"
            time.sleep(0.05)
        os.kill(child.pid, 0)  # still there for kill 0
        assert leftovers.Owner(socket.gethostname(), child.pid, "").is_gone()
    finally:
        child.wait()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"),
                    reason="mounting a small tmpfs needs root (CI runs as root)")
def test_a_database_that_does_not_fit_is_one_line_and_the_live_one_stays(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0 and os.environ.get("CI") != "true":
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    assert mounted.returncode == 0, mounted.stderr
    try:
        small, large = tmp_path / "small.warc.gz", tmp_path / "large.warc.gz"
        for crawl, pages in ((small, "200"), (large, "1500")):
            subprocess.run(_command("generate", "--pages", pages, "--seed", "1", "-o", str(crawl)),
                           check=True, capture_output=True, timeout=guard(120))
        db = disk / "db"
        first = subprocess.run(_command("build", str(small), "--db", str(db), "--runner", "inline"),
                               cwd=REPO, capture_output=True, text=True, timeout=guard(300))
        assert first.returncode == 0, first.stderr
        before = RelatedPagesDB(db).manifest.records
        full = subprocess.run(_command("build", str(large), "--db", str(db), "--runner", "inline"),
                              cwd=REPO, capture_output=True, text=True, timeout=guard(300))
        assert full.returncode == 1
        last = full.stderr.strip().splitlines()[-1]
        assert last.startswith(f"relatedpages: failed: database not written: the disk holding "
                               f"{disk} is full ("), last
        assert last.endswith(f"the database in place is unchanged ({db})")
        assert "Traceback" not in full.stderr
        assert sorted(p.name for p in disk.iterdir()) == ["db"]  # no partial build left
        assert RelatedPagesDB(db).manifest.records == before
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_works_on_every_local_runner(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9-crawl.warc.gz")
    crawl = tmp_path / name
    subprocess.run(_command("generate", "--pages", "200", "--seed", "2", "-o", str(crawl)),
                   check=True, capture_output=True, timeout=guard(120))
    records = {}
    for runner in ("inline", "local"):
        db = tmp_path / f"db-{runner}"
        done = subprocess.run(_command("build", str(crawl), "--db", str(db), "--runner", runner),
                              cwd=REPO, env=_env(tmp_path), capture_output=True, text=True,
                              timeout=guard(300))
        assert done.returncode == 0, done.stderr
        opened = RelatedPagesDB(db)
        assert opened.manifest.source == ("caf\\xe9-crawl.warc.gz",) or \
            opened.manifest.source[0].endswith("caf\\xe9-crawl.warc.gz")
        records[runner] = opened.manifest.records
    assert records["inline"] == records["local"] > 0


@pytest.mark.slow
def test_a_killed_nightly_leaves_the_live_database_answering_and_the_next_night_runs(
        web: Path, tmp_path: Path) -> None:
    """``scripts/nightly`` and its build SIGKILLed together (a gateway lost) in the
    co-citation fallback, the chain's last stage: the live database keeps answering and
    verifies, the lock is free again, and the next night builds and removes what the killed
    one left."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "live" / "db"
    nightly = [str(REPO / "scripts" / "nightly"), "--db", str(db)]
    first = subprocess.run([*nightly, "--runner", "inline", "--", str(web)], cwd=REPO, env=_env(scratch),
                           capture_output=True, text=True, timeout=guard(300))
    assert first.returncode == 0, first.stderr
    answer = RelatedPagesDB(db).find(SAMPLE)
    assert answer
    logs = set((tmp_path / "live" / "db.logs").glob("nightly-*.log"))
    time.sleep(1.1)  # the next night's log gets its own second
    killed = subprocess.Popen([*nightly, "--runner", "local", "--", str(web)], cwd=REPO, env=_env(scratch),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + guard(300)
        while True:
            new = set((tmp_path / "live" / "db.logs").glob("nightly-*.log")) - logs
            if new and "[2/3] fallback" in next(iter(new)).read_text(errors="replace"):
                break
            assert killed.poll() is None, "the night ended before its fallback"
            assert time.monotonic() < deadline, "no fallback stage"
            time.sleep(0.1)
        time.sleep(2.0)  # the fallback's job under way (it lasts about 5 s)
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=guard(30))
    assert subprocess.run(_command("verify", "--db", str(db)), cwd=REPO,
                          capture_output=True, timeout=guard(60)).returncode == 0
    assert RelatedPagesDB(db).find(SAMPLE) == answer
    assert os.listdir(scratch), "the killed night left nothing to clean: the test hit no stage"
    again = subprocess.run([*nightly, "--runner", "inline", "--", str(web)], cwd=REPO, env=_env(scratch),
                           capture_output=True, text=True, timeout=guard(300))
    assert again.returncode == 0, again.stderr  # not 75: the killed night's lock went with it
    assert _settled(scratch) == []
    assert sorted(p.name for p in db.parent.iterdir()) == ["db", "db.lock", "db.logs"]
    assert RelatedPagesDB(db).find(SAMPLE) == answer
