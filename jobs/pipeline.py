"""Run the jobs one after another: crawl → segments → related pages → database.

Used by ``relatedpages segment`` and ``relatedpages build``; kept in ``jobs/`` because
it drives mrjob runners (the library packages never import mrjob).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from mrjob.job import MRJob
from mrjob.step import StepFailedException

from jobs import progress as job_progress
from jobs import yarn
from filters.config import conf_path
from jobs.base import summed_counters
from relatedpages.store import leftovers
from relatedpages.store.db import ALGORITHMS

REPO_CONF = conf_path("mrjob.conf")  # a checkout's conf/, or an installed wheel's


class NoPages(Exception):
    """The input held no usable page: nothing to build.  ``str(error)`` lists why each
    record was dropped (the segment job's ingest counters, and its own drop counters)."""

    def __init__(self, inputs: Sequence[str], counters: dict[str, dict[str, int]]):
        from jobs.segment import INGEST_GROUP, SEGMENT_GROUP, SegmentCounter

        dropped = {SegmentCounter.PAGE_URL_UNUSABLE.value, SegmentCounter.DUPLICATE_URL.value}
        skipped = {**counters.get(INGEST_GROUP, {}),
                   **{name: count for name, count in counters.get(SEGMENT_GROUP, {}).items()
                      if name in dropped}}
        reasons = ", ".join(f"{name} {count}" for name, count in sorted(skipped.items()) if count)
        super().__init__(f"no usable page in {len(inputs)} input(s)"
                         + (f"; skipped: {reasons}" if reasons else "; the input holds no records"))
        self.skipped = skipped


def _failures() -> tuple[type[BaseException], ...]:
    from mrjob.step import StepFailedException

    from relatedpages.store.db import DatabaseError
    from relatedpages.store.hotkeys import PlanError

    return (StepFailedException, DatabaseError, OSError, NoPages, PlanError)


#: A failed step, a refused database, an I/O error, an input without pages, a count that
#: makes no plan: exit status 1.
FAILURES = _failures()


def is_remote(location: str | os.PathLike[str]) -> bool:
    """A URI of a file system other than the local one (``hdfs://``, ``s3://``, ``gs://``)."""
    text = os.fspath(location)
    return "://" in text and not text.startswith("file://")


@dataclass(frozen=True)
class JobRun:
    """One finished job: where its output is, its counters (summed over steps), its time."""

    output_dir: Path | str  # a local folder, or a remote URI (is_remote)
    counters: dict[str, dict[str, int]]
    seconds: float

    def counter(self, group: str, name: str) -> int:
        return self.counters.get(group, {}).get(name, 0)


def run_job(
    job_class: type[MRJob],
    args: Sequence[str],
    *,
    runner: str,
    output_dir: Path | str,
    collect: Path | None = None,
    label: str = "",
    inputs: Sequence[str] = (),
) -> JobRun:
    """Run one job to completion into ``output_dir``; mrjob's errors propagate.

    ``output_dir`` is a local folder or a remote URI (``hdfs://…`` on a cluster; an
    existing remote output folder is removed first, as a local one is by the caller).
    ``collect``: also copy the job's output into this local file (``hadoop fs -cat`` of
    the part files, through the runner's file system), for reading it back from a cluster.
    ``label`` and ``inputs`` name the stage and its input files in the progress lines
    (:mod:`jobs.progress`, when the CLI has enabled it).
    """
    job_args = ["-r", runner]
    if runner != "hadoop":
        job_args.append("--no-conf")  # cluster settings live in conf/mrjob.conf, for Hadoop
    elif not os.environ.get("MRJOB_CONF") and REPO_CONF.is_file():
        job_args += ["--conf-path", str(REPO_CONF)]  # mrjob looks in ~ and /etc otherwise
    # Hadoop reads a bare absolute path as hdfs:///…: local folders go as file:// URIs.
    remote = is_remote(output_dir)
    if remote:
        output = str(output_dir)
    else:
        local = Path(output_dir)
        output = local.resolve().as_uri() if runner == "hadoop" else str(local)
    args, links = _utf8_paths(args)
    job = job_class([*job_args, *args, "--output-dir", output])
    started = time.monotonic()
    ledger = yarn.LEDGER.get() if runner == "hadoop" else None  # a build's YARN applications
    with _removed(links), _ProbableCause() as causes, yarn.recorded(ledger) as submitted, \
            job.make_runner() as job_runner:
        leftovers.mark(job_runner._get_local_tmp_dir())  # mrjob's: the next run removes it
        # mrjob's scratch folder on the cluster: removed by mrjob, or by the next build
        scratch: str | None = getattr(job_runner, "_hadoop_tmp_dir", None)
        if scratch and ledger is not None:
            ledger.record_scratch(scratch)
        if remote and job_runner.fs.exists(output):
            job_runner.fs.rm(output)  # Hadoop refuses to write into an existing folder
        with job_progress.watch(label or job_class.__name__, job_runner, inputs):
            try:
                job_runner.run()
            except KeyboardInterrupt:
                submitted.stop(job_runner)  # Hadoop's client only watched it: it would run on
                # mrjob keeps a failed job's temporary folder for its logs
                # (cleanup_on_failure); an interrupted one is removed: nothing failed
                job_runner.cleanup(mode=["ALL"])
                if scratch and ledger is not None:
                    ledger.forget_scratch(scratch)
                raise
            except Exception as error:
                submitted.stop(job_runner)  # it has ended, unless its client broke first
                # a failed job's folder holds the logs its error points at: kept, not a
                # leftover for the next run to remove
                (Path(job_runner._get_local_tmp_dir()) / leftovers.MARKER).unlink(missing_ok=True)
                if isinstance(error, StepFailedException):
                    raise JobFailed(label or job_class.__name__, error, causes.first,
                                    job_runner._get_local_tmp_dir()) from error
                raise
            submitted.ended()
        counters = summed_counters(job_runner.counters())
        if collect is not None:
            with collect.open("wb") as handle:
                for chunk in job_runner.cat_output():
                    handle.write(chunk)
    if scratch and ledger is not None:  # mrjob's clean-up has removed it
        ledger.forget_scratch(scratch)
    return JobRun(output_dir, counters, time.monotonic() - started)


class JobFailed(StepFailedException):
    """A job's step failed: one line with the job, the step, the exit status, the first line
    of the cause mrjob found in the task logs, and where the logs are (mrjob's message is
    the whole streaming command, thousands of characters)."""

    def __init__(self, label: str, error: StepFailedException, cause: str, logs: str) -> None:
        super().__init__(error.reason, error.step_num, error.num_steps, error.step_desc)
        self.line = step_failure_line(label, error, cause, logs)

    def __str__(self) -> str:
        return self.line


def step_failure_line(label: str, error: StepFailedException, cause: str, logs: str) -> str:
    """The one line of a failed step.

    >>> failed = StepFailedException("Command '['hadoop', 'jar', '…']' returned non-zero "
    ...                              "exit status 1.", step_num=0, num_steps=4)
    >>> step_failure_line("block", failed, "ValueError: bad record", "/tmp/related.x")
    'block: Step 1 of 4 failed (exit status 1): ValueError: bad record (logs: /tmp/related.x)'
    >>> step_failure_line("segment", StepFailedException("disk on fire"), "", "/tmp/s")
    'segment: Step failed: disk on fire (logs: /tmp/s)'
    """
    reason = str(error.reason or "")
    status = re.search(r"returned non-zero exit status (-?\d+)", reason)
    head = str(StepFailedException(None, error.step_num, error.num_steps, error.step_desc))
    detail = f" (exit status {status.group(1)})" if status else (f": {reason[:200]}" if reason else "")
    return f"{label}: {head}{detail}{': ' + cause[:300] if cause else ''} (logs: {logs})"


class _ProbableCause(logging.Handler):
    """mrjob's "Probable cause of failure" from the task logs, kept as its first line of
    substance (the exception's last line, where Python and Java put the message)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Probable cause of failure" in text and not self.first:
            lines = [line.strip() for line in text.splitlines()[1:] if line.strip()]
            errors = [line for line in lines if re.match(r"[\w.$]+(Error|Exception)\b", line)]
            self.first = (errors[-1] if errors else lines[0] if lines else "")

    def __enter__(self) -> _ProbableCause:
        logging.getLogger("mrjob").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("mrjob").removeHandler(self)


def _utf8_paths(args: Sequence[str]) -> tuple[list[str], Path | None]:
    """``args`` with every input path that is not UTF-8 (a file name's undecodable bytes,
    as Python keeps them) replaced by a symlink to it in a temporary folder, returned
    too: mrjob writes its input manifest and Hadoop its paths as UTF-8 text.  The link keeps
    the name's suffixes, by which the job picks the input's format."""
    mapped: list[str] = []
    folder = None
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            if folder is None:
                folder = Path(tempfile.mkdtemp(prefix="relatedpages-inputs-"))
                leftovers.mark(folder)
            suffix = "".join(part for part in Path(arg).suffixes if part.isprintable()
                             and _is_utf8(part))
            link = folder / f"input-{len(mapped)}{suffix}"
            os.symlink(os.path.abspath(arg), link)
            arg = str(link)
        mapped.append(arg)
    return mapped, folder


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(name: str) -> str:
    """A file name as UTF-8 text, undecodable bytes written ``\\xe9``: for manifests and
    messages (a name's surrogate escapes cannot be written as UTF-8).

    >>> printable_path(os.fsdecode(b"caf\\xe9.warc.gz")), printable_path("ok.warc")
    ('caf\\\\xe9.warc.gz', 'ok.warc')
    """
    return os.fsencode(name).decode("utf-8", "backslashreplace") if not _is_utf8(name) else name


@contextlib.contextmanager
def _removed(folder: Path | None) -> Iterator[None]:
    try:
        yield
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def iter_output(output: Path) -> Iterator[tuple[Any, Any]]:
    """The (key, value) records of a job's output (StandardJSONProtocol lines): a folder of
    ``part-*`` files, or one file (``run_job(collect=…)``)."""
    parts = [output] if output.is_file() else sorted(output.glob("part-*"))
    for part in parts:
        with part.open("rb") as handle:
            for line in handle:
                if not line.strip():
                    continue
                key, _, value = line.rstrip(b"\n").partition(b"\t")
                yield json.loads(key), json.loads(value)


@dataclass
class BuildReport:
    """What ``relatedpages build`` prints at the end."""

    stages: list[tuple[str, float]] = field(default_factory=list)
    pages: int = 0
    blocks: int = 0
    pairs: int = 0
    pages_with_related: int = 0
    db_records: int = 0
    fallback_records: int = 0  # records answered by the fallback (page co-citation)
    filled_records: int = 0  # block records filled up to M from the fallback
    counters: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    hot_keys: "HotKeyPlan | None" = None  # the plan the chain ran under, if any


@dataclass(frozen=True)
class HotKeyPlan:
    """A hot-key plan made by the count and bins jobs (:func:`plan_hot_keys`)."""

    plan: dict[str, list[int]]
    values: int  # related 1's values counted on the sample
    count: JobRun
    bins: JobRun

    @property
    def seconds(self) -> float:
        return self.count.seconds + self.bins.seconds


def plan_hot_keys(segments: Sequence[str], reducers: int, plan_file: Path, *, runner: str,
                  work: Path | str, chain_args: Sequence[str] = (),
                  count_args: Sequence[str] = ()) -> HotKeyPlan:
    """A hot-key plan for ``reducers`` reducers, written to ``plan_file``: ``jobs.hot_keys``
    counts related 1's values per page on a sample of the ``segments`` inputs (at the chain's
    options ``chain_args``; ``count_args``: ``--sample``, ``--seed``), ``jobs.hot_key_bins``
    turns the counts and their total into each reducer's load and the heavy pages, read back here
    (an array a map task, and fewer than 64 heavy pages a reducer), and
    :func:`relatedpages.store.keyloads.plan_from_counts` packs them.  ``work``: a local
    folder or a URI of the cluster's file system, for the two outputs.  A PlanError when the
    bins do not make a plan (a bug, not data)."""
    from jobs.hot_key_bins import MRHotKeyBins
    from jobs.hot_keys import COUNT_GROUP, MRHotKeyCounts
    from relatedpages.store.hotkeys import write_plan
    from relatedpages.store.keyloads import plan_from_counts

    base = str(work).rstrip("/")
    remote = is_remote(work)
    loads, bins = f"{base}/loads", f"{base}/bins"
    if not remote:  # only the two outputs this makes: never the rest of ``work``
        for stale in (loads, bins):
            shutil.rmtree(stale, ignore_errors=True)
    counted = run_job(MRHotKeyCounts, [*chain_args, *count_args, *segments], runner=runner,
                      output_dir=loads, label="hot-key count")
    total = counted.counter(COUNT_GROUP, "values")
    collect = plan_file.with_name(plan_file.name + ".bins") if remote else None
    try:
        binned = run_job(MRHotKeyBins, ["--reducers", str(reducers), "--total", str(total),
                                        loads],
                         runner=runner, output_dir=bins, collect=collect,
                         label="hot-key bins")
        plan, values = plan_from_counts(iter_output(collect or Path(bins)), reducers, total)
    finally:
        if collect is not None:
            collect.unlink(missing_ok=True)
    write_plan(plan, plan_file)
    return HotKeyPlan(plan, values, counted, binned)


#: The fallback of block co-citation: traditional co-citation (the paper's baseline) for
#: pages without block evidence, co-cited at least once (README, "The default preset").
FALLBACK_ALGORITHM = "cocitation"
FALLBACK_JOB_ARGS = ("--min-degree", "1")


@dataclass(frozen=True)
class _WorkFolders:
    """Where a build keeps its intermediate outputs (see :func:`build`'s ``work``)."""

    root: Path  # a local folder: the work folder, or a temporary one
    keep: bool  # False: ``root`` is removed at the end
    segments: Path | str
    output: Path | str  # the second job's output
    collect: Path | None  # remote work: the second job's output copied here
    hot_key_counts: Path | str  # the hot-key count job's output (build --hot-keys)


def _temporary_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="relatedpages-build-"))
    leftovers.mark(root)
    return root


def _work_folders(work: Path | str | None, output_name: str) -> _WorkFolders:
    leftovers.sweep([tempfile.gettempdir()])  # what killed runs left (their markers say so)
    if work is not None and is_remote(work):
        base = str(work).rstrip("/")
        root = _temporary_root()  # the copied output
        return _WorkFolders(root, False, f"{base}/segments", f"{base}/{output_name}",
                            root / f"{output_name}.jsonl", f"{base}/hot-key-counts")
    root = Path(work) if work is not None else _temporary_root()
    root.mkdir(parents=True, exist_ok=True)
    for stale in (root / "segments", root / output_name):
        shutil.rmtree(stale, ignore_errors=True)
    return _WorkFolders(root, work is not None, root / "segments", root / output_name, None,
                        root / "hot-key-counts")


def _segment_stage(inputs: Sequence[str], runner: str, folders: _WorkFolders,
                   report: BuildReport | LinkBuildReport,
                   progress: Callable[[str], None]) -> None:
    """Segment the inputs; :class:`NoPages` when not one page came out."""
    from jobs.segment import MRSegment

    progress(f"[1/3] segmenting {len(inputs)} input(s) with the {runner} runner")
    segment_run = run_job(MRSegment, list(inputs), runner=runner, output_dir=folders.segments,
                          label="segment", inputs=inputs)
    report.stages.append(("segment", segment_run.seconds))
    report.counters["segment"] = segment_run.counters
    report.pages = segment_run.counter("segment", "pages_written")
    report.blocks = segment_run.counter("segment", "blocks")
    if report.pages == 0:
        raise NoPages(inputs, segment_run.counters)


def build(    inputs: Sequence[str],
    db_path: Path,
    *,
    algorithm: str = "block",
    runner: str = "local",
    work: Path | str | None = None,
    job_args: Sequence[str] = (),
    progress: Callable[[str], None] = lambda message: None,
    min_records: int = 0,
    fallback: bool = True,
    fill_to: int = 0,
    hot_keys: int = 0,
    chain_options: Sequence[str] = (),
) -> BuildReport:
    """Segmentation, the chain (block co-citation or traditional co-citation) and the
    database build.  ``work`` keeps the intermediate outputs; by default they go to a
    temporary folder removed afterwards.  On a cluster ``work`` is a URI of its file
    system (``hdfs:///user/me/relatedpages``): the jobs read and write there, and the
    chain's output is copied back (``hadoop fs -cat``) to build the local database.
    A database of fewer than ``min_records`` records is not installed (DatabaseError).
    With ``fallback`` (block co-citation only), traditional co-citation runs on the same
    segments and answers the pages block co-citation has no list for, marked as such;
    with ``fill_to`` (the chain's M) it also fills block lists shorter than that
    (:mod:`relatedpages.scoring.fallback`).  With ``hot_keys`` (block co-citation only) two
    jobs plan related 1's keys for that many reducers (:func:`plan_hot_keys`, at the chain's
    options ``chain_options``: the part of ``job_args`` the count job takes too) and the
    chain runs with that many reducers, under the plan."""
    from relatedpages.store.dbbuild import build_database

    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}: choose from {', '.join(ALGORITHMS)}")
    chain_class: type[MRJob]
    if algorithm == "block":
        from jobs.related import CHAIN_GROUP, MRRelatedPages

        chain_class, group, pairs_counter = MRRelatedPages, CHAIN_GROUP, "related_pairs"
    else:
        from jobs.cocitation import COCITATION_GROUP, MRCocitation

        chain_class, group, pairs_counter = MRCocitation, COCITATION_GROUP, "sibling_pairs"
    with_fallback = fallback and algorithm == "block"
    report = BuildReport()
    recording = yarn.record_applications(db_path, runner, progress)
    folders = _work_folders(work, "related")
    fallback_folders = _work_folders(work, "fallback") if with_fallback else None
    try:
        _segment_stage(inputs, runner, folders, report, progress)

        chain_args = list(job_args)
        if hot_keys and algorithm == "block":
            progress(f"[2/3] counting related 1's keys on a sample: a hot-key plan for "
                     f"{hot_keys} reducers")
            plan_file = folders.root / "hot-keys.tsv"
            planned = plan_hot_keys([str(folders.segments)], hot_keys, plan_file, runner=runner,
                                    work=folders.hot_key_counts, chain_args=chain_options)
            report.stages.append(("hot-key plan", planned.seconds))
            report.counters["hot keys"] = planned.count.counters
            report.counters["hot-key bins"] = planned.bins.counters
            report.hot_keys = planned
            chain_args += ["--hot-keys", str(plan_file),
                           "--jobconf", f"mapreduce.job.reduces={hot_keys}"]
        progress(f"[2/3] {algorithm} co-citation chain")
        chain_run = run_job(chain_class, [*chain_args, str(folders.segments)], runner=runner,
                            output_dir=folders.output, collect=folders.collect, label=algorithm)
        report.stages.append((algorithm, chain_run.seconds))
        report.counters[algorithm] = chain_run.counters
        report.pairs = chain_run.counter(group, pairs_counter)
        report.pages_with_related = chain_run.counter(group, "pages_with_related")
        fallback_records = None
        fill_args = ("--m", str(fill_to)) if fill_to else ()
        if fallback_folders is not None:
            from jobs.cocitation import MRCocitation

            progress(f"[2/3] fallback: {FALLBACK_ALGORITHM} for pages without block evidence"
                     + (f" and lists shorter than {fill_to}" if fill_to else ""))
            fallback_run = run_job(MRCocitation,
                                   [*FALLBACK_JOB_ARGS, *fill_args, str(folders.segments)],
                                   runner=runner, output_dir=fallback_folders.output,
                                   collect=fallback_folders.collect, label="fallback")
            report.stages.append((f"fallback {FALLBACK_ALGORITHM}", fallback_run.seconds))
            report.counters["fallback"] = fallback_run.counters
            fallback_records = iter_output(fallback_folders.collect or Path(fallback_folders.output))

        progress(f"[3/3] building the database in {db_path}")
        started = time.monotonic()
        parameters: dict[str, Any] = {"job_args": list(job_args), "runner": runner}
        if report.hot_keys is not None:
            parameters["hot_keys"] = {"reducers": hot_keys,
                                      "pages_routed": len(report.hot_keys.plan),
                                      "values_counted": report.hot_keys.values}
        if with_fallback:
            parameters["fallback"] = {"algorithm": FALLBACK_ALGORITHM,
                                      "job_args": [*FALLBACK_JOB_ARGS, *fill_args],
                                      "fill_to": fill_to}
        summary = build_database(
            iter_output(folders.collect or Path(folders.output)), db_path, algorithm=algorithm,
            parameters=parameters, source=[printable_path(name) for name in inputs],
            min_records=min_records,
            fallback=fallback_records, fallback_source=FALLBACK_ALGORITHM, fill_to=fill_to,
        )
        report.stages.append(("database", time.monotonic() - started))
        report.db_records = summary.records
        report.fallback_records = summary.fallback_records
        report.filled_records = summary.filled_records
    finally:
        yarn.end_recording(recording)
        for used in (folders, fallback_folders):
            if used is not None and not used.keep:
                shutil.rmtree(used.root, ignore_errors=True)
    return report


# -- the connectivity server's link index ------------------------------------------------


@dataclass
class LinkBuildReport:
    """What ``relatedpages linkgraph build`` prints at the end."""

    stages: list[tuple[str, float]] = field(default_factory=list)
    pages: int = 0  # pages the segmentation wrote
    blocks: int = 0
    pages_indexed: int = 0  # segment records that gave a page of the index
    links: int = 0  # out-links stored
    nodes: int = 0  # records of the job: pages and link targets
    uncrawled_nodes: int = 0  # nodes only ever seen as a link target
    db_records: int = 0
    db_bytes: int = 0
    rejected: dict[str, int] = field(default_factory=dict)  # records the database refused, by reason
    counters: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)


def build_links(
    inputs: Sequence[str],
    db_path: Path,
    *,
    runner: str = "local",
    work: Path | str | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> LinkBuildReport:
    """Segmentation, ``jobs.linkgraph`` and the link index build (the connectivity server
    of the baselines, ``relatedpages.store.linkindex``): the same shape as :func:`build`.
    ``work`` keeps the intermediate outputs (a local folder, or a URI of a cluster's file
    system, whose link records are copied back to build the local index); by default
    they go to a temporary folder removed afterwards."""
    from jobs.linkgraph import LINKGRAPH_GROUP, MRLinkGraph
    from relatedpages.store.linkgraph import KeyKind
    from relatedpages.store.linkindex import LinkEvent, build_link_index

    report = LinkBuildReport()
    recording = yarn.record_applications(db_path, runner, progress)
    folders = _work_folders(work, "links")
    try:
        _segment_stage(inputs, runner, folders, report, progress)

        progress("[2/3] link graph (out-links and in-links per page)")
        link_run = run_job(MRLinkGraph, [str(folders.segments)], runner=runner,
                           output_dir=folders.output, collect=folders.collect, label="linkgraph")
        report.stages.append(("linkgraph", link_run.seconds))
        report.counters["linkgraph"] = link_run.counters
        report.pages_indexed = link_run.counter(LINKGRAPH_GROUP, LinkEvent.PAGES.value)
        report.links = link_run.counter(LINKGRAPH_GROUP, LinkEvent.LINKS.value)
        report.nodes = link_run.counter(LINKGRAPH_GROUP, LinkEvent.NODES.value)
        report.uncrawled_nodes = link_run.counter(LINKGRAPH_GROUP, LinkEvent.UNCRAWLED_NODES.value)

        progress(f"[3/3] building the link index in {db_path}")
        started = time.monotonic()
        summary = build_link_index(
            iter_output(folders.collect or Path(folders.output)), db_path, keys=KeyKind.URL,
            source=[printable_path(name) for name in inputs],
            parameters={"runner": runner},
        )
        report.stages.append(("link index", time.monotonic() - started))
        report.db_records = summary.records
        report.db_bytes = summary.bytes
        report.rejected = {reason.value: count for reason, count in summary.rejected.items()}
    finally:
        yarn.end_recording(recording)
        if not folders.keep:
            shutil.rmtree(folders.root, ignore_errors=True)
    return report
