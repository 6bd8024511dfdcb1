"""A newcomer's first hour (issue 13): mistakes a user can make are one clear line and a
non-zero exit, before any work where it can be known then; nothing is left behind."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def relatedpages(*args: str, tmpdir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **({"TMPDIR": str(tmpdir)} if tmpdir else {}))
    return subprocess.run([sys.executable, "-m", "relatedpages.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=guard(300))


def test_a_folder_is_searched_for_inputs(tmp_path: Path) -> None:
    folder = tmp_path / "crawl"
    shutil.copytree(REPO / "examples" / "tiny-web", folder / "site")
    (folder / "README.txt").write_text("not an input")
    done = relatedpages("segment", str(folder), "-r", "inline", "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "pages written        4" in done.stdout


def test_a_folder_without_inputs_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    done = relatedpages("build", str(tmp_path), "--db", str(tmp_path.parent / "db-never"))
    assert done.returncode == 2
    assert done.stderr.startswith(f"relatedpages: error: {tmp_path}: a folder without input "
                                  "files (accepted: .warc.gz, .warc,")
    assert "segmenting" not in done.stderr and not (tmp_path.parent / "db-never").exists()


def test_no_usable_page_fails_with_the_skip_reasons_and_leaves_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.jsonl").write_text("not json\n{\"url\": 3}\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = relatedpages("build", str(junk), "--db", str(tmp_path / "db"), "--runner", "inline",
                        tmpdir=scratch)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("relatedpages: failed: no usable page in 1 input(s); skipped: ")
    assert "bad_json_line 1" in last and "Traceback" not in done.stderr
    assert not (tmp_path / "db").exists()
    assert list(scratch.iterdir()) == []  # the build's temporary folders are gone


def test_a_bad_db_target_is_refused_before_any_work(tmp_path: Path) -> None:
    crawl = tmp_path / "crawl"
    shutil.copytree(REPO / "examples" / "tiny-web", crawl)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for target, message in (
        (crawl / "db", f"--db {crawl / 'db'} is inside the input folder {crawl}"),
        (afile, f"--db {afile} is a file, not a database folder"),
        (afile / "db", f"--db {afile / 'db'}: cannot write there ({afile}: not a directory)"),
        # issue 44: found by trying, not from modes (root passes every mode check)
        (Path("/proc/no-such-process/db"),
         "--db /proc/no-such-process/db: cannot write there (/proc/no-such-process: no such file"),
    ):
        done = relatedpages("build", str(crawl), "--db", str(target))
        assert done.returncode == 2, target
        assert done.stderr.startswith(f"relatedpages: error: {message}"), done.stderr
        assert "segmenting" not in done.stderr
    assert afile.read_text() == "x" and not (crawl / "db").exists()


def test_a_job_argument_typo_is_one_line_before_any_work(tmp_path: Path) -> None:
    for extra, message in (
        (["--job-arg=--tt=1"], "job arguments --tt=1: unrecognized arguments: --tt=1"),
        (["--algorithm", "cocitation", "--job-arg=--min-degree=0"],
         "job arguments --min-degree=0: min_degree must be >= 1, got 0"),
        (["--job-arg=--t=abc"], "job arguments --t=abc: argument --t: invalid float value: 'abc'"),
    ):
        done = relatedpages("build", "examples/tiny-web", "--db", str(tmp_path / "db"), *extra)
        assert done.returncode == 2, extra
        assert done.stderr.strip() == f"relatedpages: error: {message}"
    assert not (tmp_path / "db").exists()


def test_hadoop_without_its_environment_says_what_to_do(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items()
           if name not in ("HADOOP_HOME", "MRJOB_CONF", "HADOOP_CONF_DIR")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    for command in (["build", "examples/tiny-web", "--db", str(tmp_path / "db"), "--runner", "hadoop"],
                    ["segment", "examples/tiny-web/urls.tsv", "-r", "hadoop"]):
        done = subprocess.run([sys.executable, "-m", "relatedpages.cli", *command], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=guard(120))
        assert done.returncode == 2, command
        assert done.stderr.strip().startswith(
            "relatedpages: error: --runner hadoop: no `hadoop` command on PATH and HADOOP_HOME "
            "is not set. Run scripts/hadoop-setup once, then `source hadoop/env.sh`")
        assert "Traceback" not in done.stderr


def test_generate_makes_the_output_folder(tmp_path: Path) -> None:
    """`relatedpages generate -o out/web.warc.gz` in a fresh checkout (no out/ yet): the
    README's study commands failed on it."""
    done = relatedpages("generate", "--pages", "20", "-o", str(tmp_path / "new" / "web.warc.gz"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "new" / "web.warc.gz").is_file()
