"""Progress on long work (issue 13, item 4): a live line per stage on a terminal, plain
periodic lines otherwise, with pages/s from the tasks' own counters as they run."""
from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path


from jobs import progress
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def _build(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", *args], cwd=REPO,
                          text=True, timeout=guard(600), **kwargs)  # type: ignore[call-overload]


def test_task_stderr_is_read_incrementally_across_partial_lines(tmp_path: Path) -> None:
    class Runner:  # what _TaskFiles reads of mrjob's simulated runners
        def _task_stderr_path(self) -> None: ...

        def _get_local_tmp_dir(self) -> str:
            return str(tmp_path)

    stderr = tmp_path / "step" / "000" / "mapper" / "00000" / "stderr"
    stderr.parent.mkdir(parents=True)
    files, seen = progress._TaskFiles(Runner()), progress.Observed()
    stderr.write_bytes(b"reporter:counter:segment,pages_segmented,1\nreporter:counter:segm")
    files.poll(seen)
    assert seen.counter("segment", "pages_segmented") == 1
    with stderr.open("ab") as handle:
        handle.write(b"ent,pages_segmented,1\nreporter:status:read /x.warc.gz\n")
    files.poll(seen)
    assert seen.counter("segment", "pages_segmented") == 2
    assert seen.files_read == ["/x.warc.gz"]


def test_plain_lines_when_not_a_terminal(tmp_path: Path, shared_data) -> None:
    """cron: plain lines at the interval, pages growing, and an ETA once the first of two
    input files is read; no terminal control characters."""
    data = shared_data("web")
    env = {**os.environ, progress.INTERVAL_VARIABLE: "0.5"}
    done = _build([str(data / "aeb-pages.warc.gz"), str(data / "trafilatura-pages.warc.gz"),
                   "--db", str(tmp_path / "db"), "--runner", "inline"],
                  env=env, capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    segment_lines = [line for line in done.stderr.splitlines() if line.startswith("segment: ")]
    pages = [int(m.group(1).replace(",", "")) for line in segment_lines
             if (m := re.search(r"([\d,]+) pages \([\d.,]+ pages/s\)", line))]
    assert len(pages) >= 3 and pages == sorted(pages) and pages[-1] == 1134, segment_lines
    assert any("ETA" in line for line in segment_lines), segment_lines
    assert segment_lines[-1].startswith("segment: step 1/1, 1,134 pages") and "100% done" in segment_lines[-1]
    # the chain's last step was reached (4 steps with the default preset's site fallback)
    assert any(re.match(r"block: step (\d)/\1\b", line) for line in done.stderr.splitlines())
    assert "\r" not in done.stderr and "\x1b" not in done.stderr
    assert "No configs specified" not in done.stderr


def test_a_live_line_on_a_terminal(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    try:
        crawl = REPO / "examples" / "tiny-web" / "urls.tsv"
        done = _build([str(crawl), "--db", str(tmp_path / "db"), "--runner", "inline"],
                      stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert done.returncode == 0, shown[-2000:]
    assert "\r\x1b[K" in shown  # redrawn in place
    assert re.search(r"segment: [^\r\n]*pages/s", shown), shown


def test_a_command_s_progress_ends_with_it(tmp_path: Path, capsys) -> None:
    """``relatedpages.cli.main`` called in one process (a test, a notebook): the stream a
    command showed progress on may be closed once it returns, so nothing of its progress
    may outlive it (in CI a later job wrote to pytest's closed capture and died)."""
    import logging

    from relatedpages import cli

    mrjob_logger = logging.getLogger("mrjob")
    before = (mrjob_logger.level, mrjob_logger.propagate, list(mrjob_logger.handlers))
    crawl = REPO / "examples" / "tiny-web" / "urls.tsv"
    assert cli.main(["segment", str(crawl), "-r", "inline", "-o", str(tmp_path / "seg")]) == cli.EXIT_OK
    assert "segment: step 1/1, 4 pages (" in capsys.readouterr().err  # it was shown
    assert not progress.enabled()
    assert (mrjob_logger.level, mrjob_logger.propagate, list(mrjob_logger.handlers)) == before
    # a failing command too
    assert cli.main(["segment", str(tmp_path / "none.warc.gz"), "-r", "inline"]) == cli.EXIT_USAGE
    assert not progress.enabled()
