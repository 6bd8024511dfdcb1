#!/usr/bin/env python
"""The whole pipeline on YARN at several sizes and container counts: the paper's Figs. 8 and 9.

    python scripts/bench_scale.py [--sizes 5000,10000,20000,40000] [--runs 1]
        [--maps 64] [--reduces 64] [--containers 1,2,4 --containers-pages 10000]
        [--compare-compression] [--fixed-pages 200] [--seed 1] [--out out/bench-scale] [--json]
        [--graph ../shared/data/graphs/cnr-2000/cnr-2000.arcs.tsv.gz [--spark] [--hot-keys]]

Starts the MiniCluster (``scripts/minicluster``: HDFS and YARN on loopback) unless one is
running, and stops it afterwards if it started it.  Per size it generates a crawl
(``relatedpages.corpus.generate``), splits it into ``--maps`` WARC files (a gzip member per
record, so the split is a byte copy) and puts them on HDFS.  Then, per run, it runs the
product's pipeline as a cluster gateway would, at the defaults:

    relatedpages build 'hdfs:///bench-scale/<pages>/crawl/*.warc.gz' --runner hadoop \\
        --work hdfs:///bench-scale/<pages>/run-<n> --db <out>/db-<pages>-<n>

segmenting (``--maps`` map tasks, ``--reduces`` reduce tasks, so the chain reads
``--reduces`` files with as many map tasks), the block co-citation chain, the co-citation
fallback, and the database read back from HDFS.  Cluster settings come from
``conf/mrjob.conf``, with the bench's own on top, given to the build through ``MRJOB_CONF``:
the reducer count, the job history as JSON, speculative execution off (a spare copy of a
task only competes for the same two cores here), and with ``--containers`` the number of
tasks of a job running at once (``mapreduce.job.running.{map,reduce}.limit``).

Each Hadoop job's cost is read from its job history (``relatedpages.bench.job_history``):
submit-to-finish time, CPU time of all tasks, map output and shuffle bytes, every task's peak
memory (its container's process tree: the task JVM and the Python process), and the reducer
input skew (records of the largest reducer over the mean).  ``client`` is the rest of the
wall time: the driver JVMs, mrjob's ``hadoop fs`` commands, reading the output back and
writing the database.

Before any timing counts, the first run's database is compared record for record with an
inline build of the same crawl: the benchmark measures the real pipeline or stops.
``--fixed-pages`` runs a tiny crawl once: the fixed cost of the jobs (container starts,
scheduling), shown beside the slopes.  ``--compare-compression`` runs the smallest size
again with map output compression switched the other way from ``conf/mrjob.conf``'s
(on there by default: Snappy), the database checked identical.

``--graph ARCS`` measures the block co-citation chain alone (``python -m jobs.related``) on a
real link graph instead: per size, that many pages with links sampled by ``--seed`` become
segment records, one block each (``relatedpages.corpus.graph_records``), in ``--maps`` files
on HDFS (a size above the graph's pages with links samples from the fewest disjoint copies of
it that hold it); the first size's output is compared line for line with an inline run of the chain.
With ``--spark`` the same records also go through the chain on Spark (mrjob's ``-r spark``,
pyspark's local master on this machine's cores, ``--reduces`` partitions), timed beside YARN,
its first output compared with the inline chain's too.  With ``--hot-keys`` the first size runs
again with a hot-key plan for ``--reduces`` reducers, counted on the cluster by the two jobs
``relatedpages build --hot-keys`` runs (``scripts/key_skew.py --runner hadoop``: a tenth of
the records), its output checked against the inline chain's, and related 1's reducer skew
measured beside the skew ``relatedpages.bench.key_skew`` predicts.  (The pipeline's segment job reads WARC
bytes through ``mapper_raw``, an input manifest that mrjob's Spark harness does not run.)

Prints the Fig. 8 table (time per stage by size, shuffle bytes per page, peak memory per task,
skew), the slopes and the memory ratio against issue 14's goals, the Fig. 9 table, and
writes ``fig8-time-vs-pages.png``, ``fig9-time-vs-containers.png`` and ``scale.json`` to ``--out``.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.bench.chain_cpu import machine  # noqa: E402
from relatedpages.bench.job_history import (  # noqa: E402
    HistoryError,
    JobFigures,
    TaskFigures,
    read_job_history,
)
from relatedpages.bench.launcher import (  # noqa: E402
    PythonUsage, read_python_reports, write_python_launcher)
from relatedpages.bench.proctree import run_measured  # noqa: E402
from relatedpages.bench.scale import (  # noqa: E402
    BenchShape,
    PipelineRun,
    SizeSummary,
    median_by_stage,
    printed_count,
    printed_stage_seconds,
    scale_report,
    summarise,
)
from relatedpages.corpus.generate import SEED_DEFAULT, generate_crawl  # noqa: E402
from relatedpages.corpus.warc_split import split_warc  # noqa: E402

SIZES_DEFAULT = "5000,10000,20000,40000"
MAPS_DEFAULT = REDUCES_DEFAULT = 64  # the paper's 64 map and 64 reduce pieces
RUNS_DEFAULT = 1
FIXED_PAGES_DEFAULT = 200
#: Snappy ships with Hadoop (snappy-java, no native library needed since Hadoop 3.3.1).
CODEC_DEFAULT = "org.apache.hadoop.io.compress.SnappyCodec"
HADOOP_HOME = REPO / "hadoop"
HADOOP = HADOOP_HOME / "bin" / "hadoop"
MINICLUSTER = REPO / "scripts" / "minicluster"
HDFS_ROOT = "/bench-scale"
#: Where the MiniCluster's application masters leave their job history (YARN's default
#: staging folder for the submitting user); the history server moves files to done/ later.
HISTORY = "/tmp/hadoop-yarn/staging/history"
MARKER = ".bench-scale"
#: --spark: pyspark's local master on this machine's cores (the run and its report).
SPARK_MASTER = f"local[{os.cpu_count() or 1}]"


class BenchError(RuntimeError):
    """A step failed: the message says which and shows the end of its output."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=SIZES_DEFAULT, help="pages per size, comma-separated. "
                        "Default: %(default)s")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT, help="runs per size (medians). "
                        "Default: %(default)s")
    parser.add_argument("--maps", type=int, default=MAPS_DEFAULT,
                        help="map tasks of the segment job (WARC files). Default: %(default)s")
    parser.add_argument("--reduces", type=int, default=REDUCES_DEFAULT,
                        help="reduce tasks of every job (and so map tasks of the chain). "
                        "Default: %(default)s")
    parser.add_argument("--containers", default="", help="Fig. 9: tasks running at once, "
                        "comma-separated (e.g. 1,2,4); none by default")
    parser.add_argument("--containers-pages", type=int, default=0,
                        help="the size Fig. 9 runs at. Default: the second size")
    parser.add_argument("--fixed-pages", type=int, default=FIXED_PAGES_DEFAULT,
                        help="a tiny crawl run once for the fixed cost (0: none). Default: %(default)s")
    parser.add_argument("--compare-compression", action="store_true",
                        help="run the smallest size again with map output compression "
                        "switched the other way from conf/mrjob.conf's")
    parser.add_argument("--codec", default=CODEC_DEFAULT, help="Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT)
    parser.add_argument("--out", type=Path, default=REPO / "out" / "bench-scale",
                        help="figures, JSON and the work folder. Default: out/bench-scale")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--spark", action="store_true",
                        help="with --graph: also run the chain on Spark (-r spark, local master)")
    parser.add_argument("--hot-keys", action="store_true",
                        help="with --graph: run the first size again with a hot-key plan "
                        "(jobs.related --hot-keys) and compare related 1's skew")
    parser.add_argument("--graph", type=Path, metavar="ARCS.tsv[.gz]",
                        help="the chain alone (python -m jobs.related) on segment records of "
                        "a real link graph's pages, --sizes of them sampled by --seed "
                        "(relatedpages.corpus.graph_records), e.g. "
                        "../shared/data/graphs/cnr-2000/cnr-2000.arcs.tsv.gz")
    args = parser.parse_args(argv)
    try:
        sizes = sorted({int(v) for v in args.sizes.split(",") if v.strip()})
        containers = sorted({int(v) for v in args.containers.split(",") if v.strip()})
    except ValueError:
        parser.error("--sizes and --containers take comma-separated whole numbers")
    if not sizes or min(sizes) <= 0 or args.runs < 1 or args.maps < 1 or args.reduces < 1:
        parser.error("sizes, runs, maps and reduces must be positive")
    if any(c < 1 for c in containers):
        parser.error("--containers must be positive")
    if args.graph is not None and not args.graph.is_file():
        parser.error(f"--graph: {args.graph} is not a file")
    if args.spark and args.graph is None:
        parser.error("--spark runs the chain alone: give --graph too (the segment job's "
                     "mapper_raw is not supported by mrjob's Spark harness)")
    if args.hot_keys and args.graph is None:
        parser.error("--hot-keys splits the chain's keys: give --graph too")
    if args.spark and importlib.util.find_spec("pyspark") is None:
        parser.error("--spark needs pyspark: pip install -e '.[spark]'")
    # a kill or a cron timeout stops as ^C does: KeyboardInterrupt, and _bench's cluster stop
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _bench(args, sizes, containers)
    except BenchError as error:
        print(f"bench_scale: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench_scale: interrupted", file=sys.stderr)
        return 130


def _bench(args: argparse.Namespace, sizes: list[int], containers: list[int]) -> int:
    out: Path = args.out.resolve()
    work = out / "work"
    if work.exists():  # a folder this script made before (it leaves a marker), nothing else
        if not (work / MARKER).exists():
            raise BenchError(f"{work} exists and was not made by bench_scale: choose another --out")
        shutil.rmtree(work)
    work.mkdir(parents=True)
    (work / MARKER).write_text("scratch folder of scripts/bench_scale.py, removed by its next run\n")
    started_cluster = _ensure_cluster()
    try:
        env = _client_env()
        bench = _Bench(args, env, work)
        fixed = None
        if args.graph is not None:
            bench.load_graph(args.graph)
        if args.fixed_pages:
            _say(f"fixed cost: {args.fixed_pages} pages, once")
            fixed = summarise([bench.run(args.fixed_pages, 0, None, check=False)])
        by_size: dict[int, list[PipelineRun]] = {}
        spark: dict[int, list[dict[str, float]]] = {}
        for index, pages in enumerate(sizes):
            for number in range(args.runs):
                _say(f"{pages:,} pages, run {number + 1} of {args.runs}")
                by_size.setdefault(pages, []).append(
                    bench.run(pages, 0, None, check=index == 0 and number == 0))
            for number in range(args.runs if args.spark else 0):
                _say(f"{pages:,} pages on Spark, run {number + 1} of {args.runs}")
                spark.setdefault(pages, []).append(
                    bench.run_spark(pages, check=index == 0 and number == 0))
        summaries = [summarise(by_size[pages]) for pages in sizes]
        fig9: dict[int, SizeSummary] = {}
        if containers:
            at = args.containers_pages or sizes[min(1, len(sizes) - 1)]
            for count in containers:
                runs = []
                for number in range(args.runs):
                    _say(f"Fig. 9: {at:,} pages, {count} container(s), run {number + 1}")
                    runs.append(bench.run(at, count, None, check=False))
                fig9[count] = summarise(runs)
        hot: dict[str, Any] = {}
        if args.hot_keys:
            pages = sizes[0]
            plan, hot = bench.hot_key_plan(pages)
            _say(f"hot keys: {pages:,} records, {hot['routed']:,} pages routed, "
                 f"{hot['split']:,} of them split")
            hot["runs"] = [by_size[pages][0], bench.run(pages, 0, None, check=True, plan=plan)]
        compression: dict[str, SizeSummary] = {}
        if args.compare_compression:
            pages = sizes[0]
            flipped = not bench.compresses
            _say(f"compression: {pages:,} pages, map output compression "
                 f"{'on (' + args.codec + ')' if flipped else 'off'}")
            other = [bench.run(pages, 0, flipped, check=True) for _ in range(args.runs)]
            as_configured = summarise(by_size[pages])
            compression = ({"off": as_configured, "on": summarise(other)} if flipped
                           else {"off": summarise(other), "on": as_configured})
    finally:
        if started_cluster:
            subprocess.run([str(MINICLUSTER), "stop"], capture_output=True, timeout=180)
    _report(args, out, summaries, fixed, fig9, compression,
            {pages: median_by_stage(runs) for pages, runs in spark.items()},
            len(bench.graph) if bench.graph is not None else 0, hot)
    return 0


def _say(message: str) -> None:
    print(f"bench_scale: {message}", file=sys.stderr, flush=True)


def _ensure_cluster() -> bool:
    """Start the MiniCluster unless one runs; True if this call started it."""
    if subprocess.run([str(MINICLUSTER), "status"], capture_output=True).returncode == 0:
        return False
    for attempt in (1, 2):  # once more after a failed start: it stops what it started
        _say("starting the MiniCluster" + (" again" if attempt == 2 else ""))
        done = subprocess.run([str(MINICLUSTER), "start"], capture_output=True, text=True)
        if done.returncode == 0:
            return True
        _say(f"scripts/minicluster start failed:\n{done.stderr[-2000:]}")
    raise BenchError("scripts/minicluster start failed twice (its output is above)")


def _client_env() -> dict[str, str]:
    exports = subprocess.run([str(MINICLUSTER), "env"], capture_output=True, text=True,
                             check=True).stdout
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    for line in exports.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        env[name] = value.strip("'")
    env["HADOOP_HOME"] = str(HADOOP_HOME)
    env["PATH"] = os.pathsep.join([str(HADOOP_HOME / "bin"), str(Path(sys.executable).parent),
                                   env.get("PATH", "")])
    return env


class _Bench:
    """Crawls on HDFS (made once per size) and runs of the pipeline over them."""

    def __init__(self, args: argparse.Namespace, env: dict[str, str], work: Path) -> None:
        self.args, self.env, self.work = args, env, work
        self.crawls: dict[int, Path] = {}
        self.graph: dict[int, list[int]] | None = None  # --graph: successors per page
        self.inline_digests: dict[int, str] = {}  # --graph: the inline chain's output per size
        self.count = 0
        self.reports = work / "python-peaks"
        import yaml

        self.base_conf = yaml.safe_load((REPO / "conf" / "mrjob.conf").read_text())
        jobconf = self.base_conf["runners"]["hadoop"].get("jobconf") or {}
        #: whether conf/mrjob.conf compresses the map output
        self.compresses = str(jobconf.get("mapreduce.map.output.compress", False)).lower() == "true"
        self._fs("-rm", "-r", "-f", "-skipTrash", HDFS_ROOT)

    def _fs(self, *argv: str) -> str:
        done = subprocess.run([str(HADOOP), "fs", *argv], env=self.env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise BenchError(f"hadoop fs {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
        return done.stdout

    def crawl(self, pages: int) -> Path:
        """The local crawl of ``pages`` pages, its split on HDFS (made once)."""
        if pages not in self.crawls:
            folder = self.work / f"crawl-{pages}"
            folder.mkdir()
            crawl = generate_crawl(folder / "crawl.warc.gz", pages=pages, seed=self.args.seed)
            parts = split_warc(crawl.path, self.args.maps, folder / "parts")
            self._fs("-mkdir", "-p", f"{HDFS_ROOT}/{pages}/crawl")
            self._fs("-put", "-f", *map(str, parts), f"{HDFS_ROOT}/{pages}/crawl/")
            self.crawls[pages] = crawl.path
        return self.crawls[pages]

    def conf(self, containers: int, compress: bool | None) -> Path:
        """conf/mrjob.conf's hadoop runner with the bench's settings on top."""
        conf = copy.deepcopy(self.base_conf)
        hadoop = conf["runners"]["hadoop"]
        hadoop["hadoop_tmp_dir"] = f"hdfs://{HDFS_ROOT}/tmp/mrjob"
        hadoop["python_bin"] = str(write_python_launcher(self.work, self.reports))
        jobconf = hadoop.setdefault("jobconf", {})
        jobconf.update({
            "mapreduce.job.reduces": self.args.reduces,
            "mapreduce.jobhistory.jhist.format": "json",
            "mapreduce.map.speculative": False,
            "mapreduce.reduce.speculative": False,
            "mapreduce.job.running.map.limit": containers,
            "mapreduce.job.running.reduce.limit": containers,
        })
        if compress is not None:  # None: as conf/mrjob.conf says
            jobconf["mapreduce.map.output.compress"] = compress
            if compress:
                jobconf["mapreduce.map.output.compress.codec"] = self.args.codec
        path = self.work / f"mrjob-{containers}-{compress}.conf"
        path.write_text(json.dumps(conf, indent=1))
        return path

    def load_graph(self, path: Path) -> None:
        from relatedpages.corpus.graph_records import read_successors

        _say(f"reading {path}")
        try:
            self.graph = read_successors(path)
        except (OSError, ValueError) as error:
            raise BenchError(f"--graph: {error}") from None

    def records(self, pages: int) -> Path:
        """Segment records of ``pages`` sampled pages of the graph, in ``--maps`` files on
        HDFS (made once); the local copy, one file, for the inline check."""
        from relatedpages.corpus.graph_records import (
            Tiled, graph_records, record_line, sample_sources, tile,
        )

        folder = self.work / f"records-{pages}"
        whole = folder / "records.jsonl"
        if not whole.exists():
            assert self.graph is not None
            folder.mkdir()
            graph = tile(self.graph, pages)
            if isinstance(graph, Tiled):
                _say(f"{pages:,} pages: more than the graph's {len(self.graph):,} pages with "
                     f"links; sampling from {graph.copies} disjoint copies of it")
            lines = [record_line(record) for record in
                     graph_records(graph, sample_sources(graph, pages, self.args.seed))]
            whole.write_text("".join(lines))
            parts = [folder / f"part-{n:05d}.jsonl" for n in range(self.args.maps)]
            for n, part in enumerate(parts):
                part.write_text("".join(lines[n::self.args.maps]))
            self._fs("-mkdir", "-p", f"{HDFS_ROOT}/{pages}/records")
            self._fs("-put", "-f", *map(str, parts), f"{HDFS_ROOT}/{pages}/records/")
        return whole

    def run(self, pages: int, containers: int, compress: bool | None, *, check: bool,
            plan: Path | None = None) -> PipelineRun:
        if self.args.graph is not None:
            return self.run_chain(pages, containers, compress, check=check, plan=plan)
        crawl = self.crawl(pages)
        self.count += 1
        name = f"{pages}-{self.count}"
        db = self.work / f"db-{name}"
        env = dict(self.env, MRJOB_CONF=str(self.conf(containers, compress)))
        command = [sys.executable, "-m", "relatedpages.cli", "build",
                   f"hdfs://{HDFS_ROOT}/{pages}/crawl/*.warc.gz", "--runner", "hadoop",
                   "--work", f"hdfs://{HDFS_ROOT}/{pages}/run-{self.count}", "--db", str(db),
                   "--log", str(self.work / f"build-{name}.log")]
        done, wall, jobs = self._timed(command, env, f"relatedpages build ({pages} pages)")
        database = printed_stage_seconds(done.stdout, "database")
        records = printed_count(done.stdout, "database records")
        pairs = printed_count(done.stdout, "related pairs")
        if check:
            self._check(crawl, db, pages)
        self._fs("-rm", "-r", "-f", "-skipTrash", f"{HDFS_ROOT}/{pages}/run-{self.count}")
        db_bytes = sum(f.stat().st_size for f in db.rglob("*") if f.is_file())
        shutil.rmtree(db)
        return PipelineRun(pages, wall, database, tuple(jobs), records, db_bytes, pairs)

    def run_chain(self, pages: int, containers: int, compress: bool | None, *, check: bool,
                  plan: Path | None = None) -> PipelineRun:
        """The block co-citation chain alone (``python -m jobs.related``) on graph records,
        with a hot-key plan if given."""
        records = self.records(pages)
        self.count += 1
        output = f"{HDFS_ROOT}/{pages}/chain-{self.count}"
        command = [sys.executable, "-m", "jobs.related", "-r", "hadoop",
                   "--conf-path", str(self.conf(containers, compress)),
                   *(["--hot-keys", str(plan)] if plan is not None else []),
                   f"hdfs://{HDFS_ROOT}/{pages}/records/*.jsonl", "-o", f"hdfs://{output}"]
        _, wall, jobs = self._timed(command, self.env, f"jobs.related ({pages} records)")
        if check:
            self._check_chain(records, output, pages)
        self._fs("-rm", "-r", "-f", "-skipTrash", output)
        first = next((job for job in jobs if job.name == "related 1"), None)
        pairs = 0 if first is None else sum(
            task.counters.get("MAP_OUTPUT_RECORDS", 0) for task in first.tasks if task.kind == "MAP") // 2
        return PipelineRun(pages, wall, 0.0, tuple(jobs), 0, 0, pairs)

    def hot_key_plan(self, pages: int) -> tuple[Path, dict[str, Any]]:
        """A hot-key plan for ``--reduces`` reducers, counted on the cluster by the two jobs
        ``relatedpages build --hot-keys`` runs (``scripts/key_skew.py --runner hadoop``: a
        tenth of the records on HDFS), their time and CPU from the job histories, and related
        1's reducer skew predicted without and with the plan (from all the records)."""
        from relatedpages.bench.key_skew import predicted_skew, read_segment_records
        from relatedpages.store.hotkeys import read_plan

        records = list(read_segment_records(self.records(pages)))
        self.count += 1
        path = self.work / f"hot-keys-{pages}.tsv"
        counts = f"{HDFS_ROOT}/{pages}/hot-key-counts-{self.count}"
        command = [sys.executable, str(REPO / "scripts" / "key_skew.py"),
                   "--records", f"hdfs://{HDFS_ROOT}/{pages}/records", "--plan",
                   str(self.args.reduces), "--out", str(path), "--runner", "hadoop",
                   "--seed", str(self.args.seed), "--work", f"hdfs://{counts}"]
        env = dict(self.env, MRJOB_CONF=str(self.conf(0, None)))
        _, wall, jobs = self._timed(command, env, f"the hot-key count jobs ({pages} records)")
        self._fs("-rm", "-r", "-f", "-skipTrash", counts)
        plan = read_plan(path)
        return path, {"pages": pages, "routed": len(plan),
                      "split": sum(1 for labels in plan.values() if len(labels) > 1),
                      "pieces": sum(len(labels) for labels in plan.values()),
                      "predicted": list(predicted_skew(records, self.args.reduces, plan)),
                      "plan_wall": wall, "plan_cpu": sum(job.cpu_seconds for job in jobs),
                      "plan_jobs": [job.name for job in jobs]}

    def _check_chain(self, records: Path, output: str, pages: int) -> None:
        """The cluster's chain output equals an inline run's on the same records, line for
        line (sorted: the part files' order is the reducers'); the inline run once a size."""
        if pages in self.inline_digests:
            yarn = sorted(self._fs("-cat", f"{output}/part-*").splitlines())
            if _digest(yarn) != self.inline_digests[pages]:
                raise BenchError(f"{pages} records: the YARN chain's output ({len(yarn)} lines) "
                                 "differs from the inline chain's")
            _say(f"checked: the YARN chain's output equals the inline chain's ({len(yarn):,} lines)")
            return
        inline = self.work / f"chain-inline-{pages}"
        done = subprocess.run([sys.executable, "-m", "jobs.related", "-r", "inline",
                               str(records), "-o", str(inline)], cwd=REPO,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise BenchError(f"the inline chain failed:\n{done.stderr[-3000:]}")
        local = _local_lines(inline)
        yarn = sorted(self._fs("-cat", f"{output}/part-*").splitlines())
        if not yarn or yarn != local:
            raise BenchError(f"{pages} records: the YARN chain's output ({len(yarn)} lines) "
                             f"differs from the inline chain's ({len(local)})")
        self.inline_digests[pages] = _digest(local)
        shutil.rmtree(inline)
        _say(f"checked: the YARN chain's output equals the inline chain's ({len(yarn):,} lines)")

    def run_spark(self, pages: int, *, check: bool) -> dict[str, float]:
        """The chain on Spark (mrjob's ``-r spark``: pyspark's local master on this machine's
        cores, ``--reduces`` partitions) on the same records, read as a local file: wall time,
        and the CPU time and largest peak memory of its process tree (spark-submit's JVM, the
        driver, the Python workers), sampled from /proc (``relatedpages.bench.proctree``:
        the workers' daemon ignores SIGCHLD, so reaped usage would miss them).  With
        ``check`` (the first size) its output must equal the inline chain's, which the YARN
        run's check computed."""
        records = self.records(pages)
        self.count += 1
        output = self.work / f"spark-{self.count}"
        usage = run_measured([sys.executable, "-m", "jobs.related", "-r", "spark",
                              "--spark-master", SPARK_MASTER,
                              "--jobconf", f"mapreduce.job.reduces={self.args.reduces}",
                              str(records), "-o", str(output)], cwd=REPO)
        if usage.returncode != 0:
            raise BenchError(f"jobs.related -r spark ({pages} records) failed:\n"
                             f"{usage.stderr[-3000:]}")
        if check:
            lines = _local_lines(output)
            if _digest(lines) != self.inline_digests.get(pages):
                raise BenchError(f"{pages} records: the Spark chain's output ({len(lines)} "
                                 "lines) differs from the inline chain's")
            _say(f"checked: the Spark chain's output equals the inline chain's ({len(lines):,} lines)")
        shutil.rmtree(output)
        return {"wall": usage.seconds, "cpu": usage.cpu_seconds, "peak_mb": usage.peak_kb / 1024}

    def _timed(self, command: list[str], env: dict[str, str], what: str
               ) -> tuple[subprocess.CompletedProcess[str], float, list[JobFigures]]:
        """Run a cluster client command: its result, wall time, and the figures of the jobs
        it ran (from the job histories new since it started, with each task's Python peak)."""
        before = set(self._histories())
        started = time.perf_counter()
        done = _run_group(command, cwd=REPO, env=env)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise BenchError(f"{what} failed:\n{done.stderr[-3000:]}")
        python = read_python_reports(self.reports)
        jobs = [replace(job, tasks=tuple(_with_python(task, python.get(task.task_id))
                                         for task in job.tasks))
                for job in self._read_jobs(sorted(set(self._histories()) - before))]
        return done, wall, jobs

    def _histories(self) -> list[str]:
        """The job history files on HDFS (none before the cluster's first job)."""
        done = subprocess.run([str(HADOOP), "fs", "-ls", "-R", HISTORY], env=self.env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            if "No such file or directory" in done.stderr:
                return []
            raise BenchError(f"hadoop fs -ls -R {HISTORY} failed:\n{done.stderr[-2000:]}")
        return [line.split()[-1] for line in done.stdout.splitlines() if line.endswith(".jhist")]

    def _read_jobs(self, jhists: list[str]) -> list[JobFigures]:
        """Each new job's figures, from its history and configuration (one ``-get``)."""
        if not jhists:
            raise BenchError("no job history found: were the jobs run on the MiniCluster?")
        local = self.work / f"history-{self.count}"
        local.mkdir()
        ids = [Path(path).name.split("-", 1)[0] for path in jhists]
        for attempt in range(3):
            confs = [path.rsplit("/", 1)[0] + f"/{job_id}_conf.xml"
                     for path, job_id in zip(jhists, ids)]
            try:
                self._fs("-get", "-f", *jhists, *confs, str(local))
                break
            except BenchError:  # the history server moved them to done/ meanwhile
                if attempt == 2:
                    raise
                time.sleep(2)
                current = self._histories()
                jhists = [next((p for p in current if Path(p).name.startswith(job_id + "-")), old)
                          for job_id, old in zip(ids, jhists)]
        jobs = []
        for jhist, conf in zip(jhists, confs):
            try:
                jobs.append(read_job_history((local / Path(jhist).name).read_text(),
                                             (local / Path(conf).name).read_bytes()))
            except (HistoryError, OSError) as error:
                raise BenchError(f"{jhist}: {error}") from None
        return sorted(jobs, key=lambda job: job.submit_ms)

    def _check(self, crawl: Path, db: Path, pages: int) -> None:
        """The cluster's database equals an inline build of the same crawl, record for record."""
        from relatedpages.store.db import RelatedPagesDB

        inline = self.work / f"db-inline-{pages}"
        done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", str(crawl),
                               "--runner", "inline", "--db", str(inline)], cwd=REPO,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise BenchError(f"the inline build failed:\n{done.stderr[-3000:]}")
        with RelatedPagesDB(db) as yarn, RelatedPagesDB(inline) as local:
            yarn_records, local_records = list(yarn.records()), list(local.records())
        if not yarn_records or yarn_records != local_records:
            raise BenchError(f"{pages} pages: the YARN database ({len(yarn_records)} records) "
                             f"differs from the inline build's ({len(local_records)})")
        shutil.rmtree(inline)
        _say(f"checked: the YARN database equals the inline build ({len(yarn_records):,} records)")


def _with_python(task: TaskFigures, usage: PythonUsage | None) -> TaskFigures:
    """A task's figures with its Python processes' peak memory and CPU (none measured: 0)."""
    if usage is None:
        return task
    return replace(task, python_peak_kb=usage.peak_kb,
                   python_cpu_ms=round(usage.cpu_seconds * 1000))


def _run_group(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` with the output captured, the command in a session of its own:
    interrupted (^C, SIGTERM), the whole group is killed, not only the command, so that the
    Hadoop client JVMs a build started do not go on polling a stopped cluster."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, **kwargs) as process:
        try:
            stdout, stderr = process.communicate()
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _local_lines(output: Path) -> list[str]:
    """A local job output's lines, sorted (the part files' order is the reducers')."""
    return sorted(line for part in sorted(output.glob("part-*"))
                  for line in part.read_text().splitlines())


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _report(args: argparse.Namespace, out: Path, sizes: list[SizeSummary],
            fixed: SizeSummary | None, fig9: dict[int, SizeSummary],
            compression: dict[str, SizeSummary], spark: dict[int, dict[str, float]],
            graph_pages: int, hot: dict[str, Any]) -> None:
    shape = BenchShape(args.maps, args.reduces, args.runs, args.seed, args.codec,
                       str(args.graph) if args.graph is not None else None, graph_pages,
                       SPARK_MASTER, machine())
    lines, figures = scale_report(shape, out, sizes, fixed, fig9, compression, spark, hot)
    print("\n".join(lines))
    (out / "scale.json").write_text(json.dumps(figures, indent=1))
    if args.json:
        print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    sys.exit(main())
