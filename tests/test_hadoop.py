"""The four jobs on Apache Hadoop (local job runner, jars from Maven Central): same output
as ``-r inline`` on the same real pages, counters back from Hadoop, code shipped to the
tasks the way a cluster needs it.

Each job runs as its command line does (``python -m jobs.X -r hadoop --conf-path
conf/mrjob.conf``) in its own temporary folder: Hadoop's local runner links the shipped
archives (``DIRS``) into the working folder and skips names that already exist, so running
from the repository would quietly use the repository's packages.  The tasks run under
``python3 -S`` with only the virtualenv's site-packages on ``PYTHONPATH``: no ``.pth``
file is read, so the editable install of the repository is invisible to them and they can
import only what was shipped.  Two reducers, so Sort1 (``SORT_VALUES``: partition on the
key, sort on key and value) runs under Hadoop's own partitioner and comparator.

Slow (a JVM per ``hadoop`` command): about a minute for the file on 2 cores.  Skipped
without a JDK 17 or Maven, except in CI (``CI=true``), where that fails.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from tests.prerequisites import guard, run_hadoop_script

pytestmark = [pytest.mark.hadoop, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
HADOOP_HOME = REPO / "hadoop"
CONF = REPO / "conf" / "mrjob.conf"
HUB_PAGES = 8
AEB_PAGES = 4
RELATED_T = "1"  # low enough that a dozen pages give thousands of output lines (3229)
COCITATION_MIN_DEGREE = "1"  # likewise (4623 lines; the default gives 2)
HADOOP_REDUCERS = 2  # conf/mrjob.conf
COUNTERS_HEADER = re.compile(r"^Counters: \d+$")
HADOOP_FRAMEWORK_GROUP = "Map-Reduce Framework"


@pytest.fixture(scope="session")
def hadoop_home() -> Path:
    """scripts/hadoop-setup, run once (idempotent: about a second when already done)."""
    run_hadoop_script([str(REPO / "scripts" / "hadoop-setup")])
    return HADOOP_HOME


@pytest.fixture(scope="session")
def small_warcs(shared_data, tmp_path_factory) -> list[Path]:
    """Two small crawl files (two map tasks): the first pages of awesomehub and of aeb."""
    folder = tmp_path_factory.mktemp("warcs")
    return [
        _head_of_warc(shared_data("awesomehub/awesomehub.warc.gz"), folder / "hub.warc.gz",
                      HUB_PAGES),
        _head_of_warc(shared_data("web/aeb-pages.warc.gz"), folder / "aeb.warc.gz", AEB_PAGES),
    ]


@pytest.fixture(scope="session")
def segments(small_warcs, tmp_path_factory) -> Path:
    """The segment records of the small crawl (inline), input of related and cocitation."""
    folder = tmp_path_factory.mktemp("segments")
    lines, _ = run_cli("segment", "inline", small_warcs, folder)
    path = folder / "segments.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _head_of_warc(source: Path, target: Path, records: int) -> Path:
    with source.open("rb") as inp, target.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for ordinal, record in enumerate(ArchiveIterator(inp)):
            if ordinal == records:
                break
            writer.write_record(record)
    return target


def job_env() -> dict[str, str]:
    """hadoop/env.sh's environment, without the repository on PYTHONPATH."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    env["HADOOP_HOME"] = str(HADOOP_HOME)
    # the jobs' own temporary files (mrjob's wrapper locks, task scratch) stay in hadoop/tmp
    (HADOOP_HOME / "tmp" / "python").mkdir(parents=True, exist_ok=True)
    env["TMPDIR"] = str(HADOOP_HOME / "tmp" / "python")
    env["PATH"] = os.pathsep.join(
        [str(HADOOP_HOME / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")]
    )
    return env


def run_cli(job: str, runner: str, inputs: list[Path], folder: Path, *job_args: str,
            reducers: int = HADOOP_REDUCERS) -> tuple[list[bytes], dict[str, dict[str, int]]]:
    """``python -m jobs.<job> -r <runner>`` with ``folder`` as working folder: the sorted
    output lines and the counters it printed, summed over steps."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"out-{runner}"
    args = [sys.executable, "-m", f"jobs.{job}", "-r", runner, *job_args]
    if runner == "hadoop":
        args += [
            "--conf-path", str(CONF),
            "--hadoop-tmp-dir", (folder / "hadoop-fs").as_uri(),
            "--jobconf", f"hadoop.tmp.dir={folder / 'hadoop-local'}",
            # The tasks see shipped code only (module docstring): site-packages and nothing
            # else on PYTHONPATH, as on a node that sets its own.  mrjob's wrapper runs
            # `export PYTHONPATH=mrjob.zip:$PYTHONPATH`, and Python resolves the symlinked
            # job script, so sys.path[0] is Hadoop's cache folder: the DIRS reach the
            # tasks only because each job puts its working folder on sys.path itself.
            "--python-bin", "python3 -S",
            "--cmdenv", f"PYTHONPATH={sysconfig.get_paths()['purelib']}",
        ]
        output_uri = out.as_uri()
    else:
        args.append("--no-conf")
        output_uri = str(out)
    args += [*map(str, inputs), "-o", output_uri]
    proc = subprocess.run(args, cwd=folder, env=job_env(), capture_output=True, text=True,
                          timeout=guard(600))
    log = proc.stderr
    (folder / f"{runner}.log").write_text(log, encoding="utf-8")
    assert proc.returncode == 0, log[-4000:]
    parts = sorted(out.glob("part-*"))
    if runner == "hadoop":
        assert len(parts) == reducers, [p.name for p in parts]
    lines = sorted(line for part in parts for line in part.read_bytes().splitlines(True))
    return lines, printed_counters(log)


def printed_counters(log: str) -> dict[str, dict[str, int]]:
    """The ``Counters: N`` blocks mrjob prints after each step, summed into group → name."""
    total: dict[str, dict[str, int]] = {}
    group = None
    in_block = False
    for line in log.splitlines():
        if COUNTERS_HEADER.match(line):
            in_block = True
        elif in_block and line.startswith("\t\t"):
            name, _, value = line.strip().rpartition("=")
            assert group is not None
            total.setdefault(group, {})
            total[group][name] = total[group].get(name, 0) + int(value)
        elif in_block and line.startswith("\t"):
            group = line.strip()
        else:
            in_block = False
    return total


def assert_same_as_inline(job: str, inputs: list[Path], tmp_path: Path, *job_args: str
                          ) -> dict[str, dict[str, int]]:
    inline_lines, inline_counters = run_cli(job, "inline", inputs, tmp_path / "inline",
                                            *job_args)
    hadoop_lines, hadoop_counters = run_cli(job, "hadoop", inputs, tmp_path / "hadoop",
                                            *job_args)
    assert inline_lines, f"{job}: empty output proves nothing"
    assert hadoop_lines == inline_lines
    # Hadoop's own counters came back (the local runner's log, parsed by mrjob) ...
    assert hadoop_counters[HADOOP_FRAMEWORK_GROUP]["Reduce output records"] > 0
    # ... and the job's counters, all of them, equal the inline run's
    assert inline_counters
    assert {group: hadoop_counters.get(group) for group in inline_counters} == inline_counters
    return hadoop_counters


def test_segment_on_hadoop_matches_inline(hadoop_home, small_warcs, tmp_path):
    counters = assert_same_as_inline("segment", small_warcs, tmp_path)
    assert counters["segment"]["pages_written"] == HUB_PAGES + AEB_PAGES
    assert counters[HADOOP_FRAMEWORK_GROUP]["Map input records"] == len(small_warcs)


def test_related_on_hadoop_matches_inline(hadoop_home, segments, tmp_path):
    # Two steps; Sort1 (SORT_VALUES) under Hadoop's KeyFieldBasedPartitioner and comparator
    counters = assert_same_as_inline("related", [segments], tmp_path, "--t", RELATED_T)
    assert counters["related"]["pages_with_related"] > 0


def test_hadoop_places_keys_as_key_skew_predicts_and_a_hot_key_plan_changes_nothing(
        hadoop_home, segments, tmp_path):
    # the chain with a hot-key plan, 7 reducers: each output key is in the part file of the
    # reducer relatedpages.bench.key_skew.partition gives it (Hadoop's own
    # KeyFieldBasedPartitioner placed it), and the output equals the plain inline chain's
    from relatedpages.bench.key_skew import (
        default_chain_params, key_loads, read_segment_records)
    from relatedpages.store.hotkeys import partition, plan_keys, write_plan

    reducers = 7
    plan = plan_keys(key_loads(read_segment_records(segments), *default_chain_params()), 1024)
    assert sum(len(labels) > 1 for labels in plan.values()) >= 3
    write_plan(plan, tmp_path / "plan.tsv")
    inline, _ = run_cli("related", "inline", [segments], tmp_path / "inline", "--t", RELATED_T)
    split, counters = run_cli("related", "hadoop", [segments], tmp_path / "hadoop", "--t",
                              RELATED_T, "--hot-keys", str(tmp_path / "plan.tsv"),
                              "--jobconf", f"mapreduce.job.reduces={reducers}",
                              reducers=reducers)
    assert len(inline) > 1000 and split == inline
    assert counters["related"]["pages_with_related"] > 0
    placed = 0
    for number, part in enumerate(sorted((tmp_path / "hadoop" / "out-hadoop").glob("part-*"))):
        for line in part.read_bytes().splitlines():
            assert partition(json.loads(line.split(b"\t", 1)[0]), reducers) == number
            placed += 1
    assert placed == len(inline)


def test_cocitation_on_hadoop_matches_inline(hadoop_home, segments, tmp_path):
    # One step; SORT_VALUES groups each sibling's values into one run under Hadoop's sort
    counters = assert_same_as_inline("cocitation", [segments], tmp_path,
                                     "--min-degree", COCITATION_MIN_DEGREE)
    assert counters["cocitation"]["sibling_pairs"] > 0


def test_relatedpages_build_with_the_hadoop_runner(hadoop_home, tmp_path):
    """`relatedpages build --runner hadoop` takes the same path: the repository's
    conf/mrjob.conf, file:// outputs, counters back from Hadoop, and a database; with
    --hot-keys 3 the count job runs on Hadoop too, the chain on 3 reducers under its plan,
    and the database equals an inline build's without a plan."""
    from relatedpages.store.db import RelatedPagesDB

    crawl = tmp_path / "crawl.warc.gz"
    generated = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "300", "--seed", "4",
         "-o", str(crawl)], cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert generated.returncode == 0, generated.stderr
    done = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db", str(tmp_path / "db"),
         "--runner", "hadoop", "--job-arg=--t=1.0", "--log", str(tmp_path / "hadoop.log"),
         "--hot-keys", "3"],
        cwd=REPO, env=job_env(), capture_output=True, text=True, timeout=guard(900))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "pages                300" in done.stdout
    assert "(hadoop runner)" in done.stdout
    assert f"log                  {tmp_path / 'hadoop.log'}" in done.stdout
    log = (tmp_path / "hadoop.log").read_text(encoding="utf-8")
    assert HADOOP_FRAMEWORK_GROUP in log  # Hadoop's own counters came back, into the log
    # Hadoop's 1,000+ lines stay in the log: stderr has the stages' progress lines (with
    # Hadoop's map/reduce percentages and the job ids), not the driver's chatter
    assert HADOOP_FRAMEWORK_GROUP not in done.stderr
    stages = ("[", "segment: ", "hot-key count: ", "hot-key bins: ", "block: ", "fallback: ")
    assert all(line.startswith(stages) for line in done.stderr.splitlines()), done.stderr
    assert "map 100% reduce 100%" in done.stderr
    assert "Hadoop job(s) job_" in done.stderr
    manifest = json.loads((tmp_path / "db" / "manifest.json").read_text())
    assert manifest["records"] > 0
    assert manifest["parameters"]["hot_keys"]["pages_routed"] > 0
    assert "hot-key count: step 1/1" in done.stderr
    inline = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db", str(tmp_path / "db-inline"),
         "--runner", "inline", "--job-arg=--t=1.0"], cwd=REPO, capture_output=True, text=True,
        timeout=guard(900))
    assert inline.returncode == 0, inline.stderr[-3000:]
    with RelatedPagesDB(tmp_path / "db") as planned, RelatedPagesDB(tmp_path / "db-inline") as plain:
        assert list(planned.records()) == list(plain.records())


def test_linkgraph_on_hadoop_matches_inline(hadoop_home, segments, tmp_path):
    # Two steps; the connectivity server's records (out-links, in-links) per node
    counters = assert_same_as_inline("linkgraph", [segments], tmp_path)
    assert counters["linkgraph"]["nodes_written"] > 0
