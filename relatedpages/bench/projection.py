"""The costed plan: a scale bench's measured figures per page, projected to a larger crawl.

``scripts/bench_scale.py`` writes each size's medians to ``scale.json``
(:class:`relatedpages.bench.scale.SizeSummary`): the tasks' CPU, the shuffle, what the
jobs wrote to HDFS and the database, all for a known number of crawled pages.  Issue 14's
plan (``docs/scale.md``, section 4) multiplies those figures per page by a crawl's size and
divides by a node's capacity; this module does that arithmetic, with every assumption a
named field of :class:`Assumptions`, so that the plan's tables are printed by a command
(``scripts/project_scale.py``) from the measured file rather than worked out by hand.

Units: a KB is 1,024 bytes, a GB 1,024³ and a TB 1,024⁴ (as the bench's tables); an hour
of CPU is 3,600 CPU-seconds.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Sequence

from relatedpages.bench.scale import SizeSummary, label
from relatedpages.store.dbformat import PARTITIONS

KB = 1024
TB = 1024 ** 4
GB = 1024 ** 3


class ProjectionError(ValueError):
    """A ``scale.json`` that cannot be projected (missing, not the bench's, no such size)."""


@dataclass(frozen=True)
class Assumptions:
    """What the projection assumes besides the measured figures (docs/scale.md, A1-A6)."""

    pages: float = 3.0e9  # A1: a Common Crawl month's order of magnitude (issue 14)
    node_vcpus: int = 16  # A3: a common cloud instance size
    busy: float = 0.7  # A3: the share of a node's CPU doing task work
    replication: int = 3  # A5: HDFS's default
    warc_kb: float = 30.0  # A6: input WARC per page, gzip (replace with the crawl's own)
    nodes: tuple[int, ...] = (100, 500)  # cluster sizes to give hours for
    partitions: int = PARTITIONS  # the database's partitions (the format's, today)

    def __post_init__(self) -> None:
        if not math.isfinite(self.pages) or not math.isfinite(self.warc_kb):
            raise ProjectionError("pages and the WARC size must be finite numbers")
        if self.pages <= 0 or self.node_vcpus <= 0 or not 0 < self.busy <= 1:
            raise ProjectionError("pages and vCPUs must be positive and busy in (0, 1]")
        if self.replication < 1 or self.warc_kb < 0 or self.partitions < 1:
            raise ProjectionError("replication and partitions must be at least 1, WARC size >= 0")
        if not self.nodes or any(n <= 0 for n in self.nodes):
            raise ProjectionError("node counts must be positive")


@dataclass(frozen=True)
class PerPage:
    """One measured size's cost per crawled page (what the projection multiplies)."""

    source: str  # what measured it, for the table's row
    pages: int  # the measured crawl's pages
    cpu_ms: float  # CPU time of all tasks
    python_cpu_ms: float  # of it, the tasks' Python processes' (0: not measured)
    shuffle_kb: float  # shuffle bytes (as the run compressed them)
    hdfs_kb: float  # written to HDFS by all jobs, one replica
    db_kb: float  # the database on the gateway's disk
    db_records: float  # database records per crawled page
    # per Hadoop job, in the bench's order: (stage, task CPU, of it Python's; 0: not measured)
    stage_cpu_ms: tuple[tuple[str, float, float], ...] = ()


def per_page(size: SizeSummary, source: str) -> PerPage:
    """A size's medians divided by its pages.

    >>> s = SizeSummary(pages=1000, runs=1, stages={}, cpu_seconds=12.0,
    ...                 shuffle_bytes_per_page=2048.0, map_output_bytes_per_page=0.0,
    ...                 peak_map_mb=0, peak_reduce_mb=0, python_map_mb=0, python_reduce_mb=0,
    ...                 skew_stage="", skew=1.0, records=4500, db_bytes=1024 * 18000,
    ...                 stage_cpu={"related 1": 8.0, "related 2": 4.0},
    ...                 stage_written={"related 1": 1024 * 1000.0})
    >>> p = per_page(s, "test")
    >>> (p.cpu_ms, p.shuffle_kb, p.hdfs_kb, p.db_kb, p.db_records)
    (12.0, 2.0, 1.0, 18.0, 4.5)
    """
    if size.pages <= 0:
        raise ProjectionError(f"a size of {size.pages} pages cannot be divided by")
    pages = size.pages
    python = size.python_cpu_total() or 0.0
    return PerPage(
        source=source, pages=pages,
        cpu_ms=size.cpu_seconds / pages * 1000,
        python_cpu_ms=python / pages * 1000,
        shuffle_kb=size.shuffle_bytes_per_page / KB,
        hdfs_kb=sum(size.stage_written.values()) / pages / KB,
        db_kb=size.db_bytes / pages / KB,
        db_records=size.records / pages,
        stage_cpu_ms=tuple((stage, cpu / pages * 1000,
                            size.stage_python_cpu.get(stage, 0.0) / pages * 1000)
                           for stage, cpu in size.stage_cpu.items()),
    )


def load_sizes(path: Path) -> tuple[dict[str, Any], list[SizeSummary]]:
    """A bench's ``scale.json``: its heading figures and its sizes' summaries."""
    try:
        figures = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ProjectionError(f"{path}: cannot read it ({error.strerror or error})") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ProjectionError(f"{path}: not JSON ({error})") from None
    if not isinstance(figures, dict) or not isinstance(figures.get("sizes"), list) \
            or not figures["sizes"]:
        raise ProjectionError(f"{path}: not a scale bench's scale.json (no sizes)")
    known = {f.name for f in fields(SizeSummary)}
    sizes = []
    for entry in figures["sizes"]:
        if not isinstance(entry, dict):
            raise ProjectionError(f"{path}: a size that is not an object")
        try:
            size = SizeSummary(**{k: v for k, v in entry.items() if k in known})
        except TypeError as error:
            raise ProjectionError(f"{path}: a size without a figure the projection needs "
                                  f"({error})") from None
        if not _numbers_as_projected(size):
            raise ProjectionError(f"{path}: a size whose figures are not numbers")
        sizes.append(size)
    return figures, sizes


def _numbers_as_projected(size: SizeSummary) -> bool:
    """The figures :func:`per_page` divides are numbers (JSON could hold anything)."""
    def number(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    per_stage = (size.stage_cpu, size.stage_python_cpu, size.stage_written)
    return (number(size.pages) and all(number(v) for v in (
                size.cpu_seconds, size.shuffle_bytes_per_page, size.db_bytes, size.records))
            and all(isinstance(d, dict) and all(number(v) for v in d.values()) for d in per_stage))


def pick_size(sizes: Sequence[SizeSummary], pages: int | None) -> SizeSummary:
    """The size of ``pages`` pages, or the largest (the figures least made of fixed costs)."""
    if pages is None:
        return max(sizes, key=lambda s: s.pages)
    for size in sizes:
        if size.pages == pages:
            return size
    raise ProjectionError(f"no size of {pages:,} pages (measured: "
                          + ", ".join(f"{s.pages:,}" for s in sizes) + ")")


@dataclass(frozen=True)
class ComputeRow:
    """One CPU-per-page figure scaled to the crawl."""

    source: str
    cpu_ms: float
    cpu_hours: float
    node_hours: float
    hours: tuple[tuple[int, float], ...]  # (nodes, wall hours on them)


def compute_row(source: str, cpu_ms: float, a: Assumptions) -> ComputeRow:
    """CPU = pages × CPU a page; node-hours = CPU-hours / (vCPUs × busy); hours = node-hours
    / nodes (perfect spread: the tasks outnumber the cores many times at this size).

    >>> row = compute_row("x", 13.8, Assumptions())
    >>> round(row.cpu_hours), round(row.node_hours), round(dict(row.hours)[100], 1)
    (11500, 1027, 10.3)
    """
    if cpu_ms < 0:
        raise ProjectionError(f"{source}: a negative CPU time")
    cpu_hours = a.pages * cpu_ms / 1000 / 3600
    node_hours = cpu_hours / (a.node_vcpus * a.busy)
    return ComputeRow(source, cpu_ms, cpu_hours, node_hours,
                      tuple((n, node_hours / n) for n in a.nodes))


@dataclass(frozen=True)
class Storage:
    """Bytes at the crawl's size, from one measured size."""

    warc_tb: float
    hdfs_tb: float  # all jobs' outputs, every replica (the build keeps them until it ends)
    hdfs_peak_tb: float  # the input and every output at once, every replica
    shuffle_tb: float  # on the nodes' local disks, spread over them
    db_tb: float
    partition_gb: float  # the database's size over its partitions
    partition_records: float


def storage(p: PerPage, a: Assumptions) -> Storage:
    """The crawl's bytes: the measured per-page figures times its pages."""
    def tb(kb: float) -> float:
        return kb * KB * a.pages / TB

    db_tb = tb(p.db_kb)
    return Storage(warc_tb=tb(a.warc_kb), hdfs_tb=tb(p.hdfs_kb * a.replication),
                   hdfs_peak_tb=tb((a.warc_kb + p.hdfs_kb) * a.replication),
                   shuffle_tb=tb(p.shuffle_kb), db_tb=db_tb,
                   partition_gb=db_tb * TB / GB / a.partitions,
                   partition_records=p.db_records * a.pages / a.partitions)


def _hours(value: float) -> str:
    return f"{value:,.1f} h" if value < 100 else f"{value:,.0f} h"


def _tb(value: float) -> str:
    return f"{value:,.1f} TB" if value < 100 else f"{value:,.0f} TB"


def format_projection(measured: Sequence[PerPage], extra: Sequence[tuple[str, float]],
                      a: Assumptions, records: Sequence[tuple[str, float]] = ()) -> str:
    """The plan's tables: compute (a row per measured size, then ``extra``: CPU figures per
    page measured elsewhere, by label), storage and serving from the first measured size,
    with a database row per ``records`` (bytes a record measured elsewhere, by label, times
    the first size's records a page)."""
    if not measured:
        raise ProjectionError("nothing measured to project")
    lines = [f"projected to {a.pages:,.0f} pages; nodes of {a.node_vcpus} vCPUs, "
             f"{a.busy:.0%} of their CPU doing task work; HDFS replication {a.replication}; "
             f"input WARC {a.warc_kb:g} KB a page", ""]
    lines += ["| per page | task CPU | of it, Python's | shuffle | written to HDFS "
              "(one replica) | database | records |",
              "|---|---:|---:|---:|---:|---:|---:|"]

    def python(ms: float) -> str:
        return f"{ms:.2f} ms" if ms else "not measured"

    for p in measured:
        lines.append(f"| {p.source} | {p.cpu_ms:.2f} ms | {python(p.python_cpu_ms)} | "
                     f"{p.shuffle_kb:.2f} KB | {p.hdfs_kb:.2f} KB | {p.db_kb:.2f} KB | "
                     f"{p.db_records:.2f} |")
        for stage, cpu, python_ms in p.stage_cpu_ms:
            lines.append(f"| … {label(stage)} | {cpu:.2f} ms | {python(python_ms)} | | | | |")
    rows = [compute_row(p.source, p.cpu_ms, a) for p in measured]
    rows += [compute_row(source, cpu_ms, a) for source, cpu_ms in extra]
    lines += ["", "| compute | CPU a page | CPU-hours | node-hours | "
              + " | ".join(f"{n:,} nodes" for n in a.nodes) + " |",
              "|---|---:|---:|---:|" + "---:|" * len(a.nodes)]
    for row in rows:
        lines.append(f"| {row.source} | {row.cpu_ms:.2f} ms | {row.cpu_hours:,.0f} | "
                     f"{row.node_hours:,.0f} | "
                     + " | ".join(_hours(hours) for _, hours in row.hours) + " |")
    first = measured[0]
    s = storage(first, a)
    lines += ["", f"| storage (from: {first.source}) | per page | {a.pages:,.0f} pages |",
              "|---|---:|---:|",
              f"| input WARC (assumed) | {a.warc_kb:.1f} KB | {_tb(s.warc_tb)} |",
              f"| all jobs' outputs on HDFS, {a.replication} replicas | "
              f"{first.hdfs_kb * a.replication:.1f} KB | {_tb(s.hdfs_tb)} |",
              f"| HDFS at the build's end (the input and every output, {a.replication} "
              f"replicas) | {(a.warc_kb + first.hdfs_kb) * a.replication:.1f} KB | "
              f"{_tb(s.hdfs_peak_tb)} |",
              f"| shuffle, on the nodes' local disks | {first.shuffle_kb:.1f} KB | "
              f"{_tb(s.shuffle_tb)} |",
              f"| database | {first.db_kb:.1f} KB | {_tb(s.db_tb)} |"]
    serving = [(s.partition_gb, "")]
    for source, record_bytes in records:
        kb = first.db_records * record_bytes / KB
        db_tb = kb * KB * a.pages / TB
        lines.append(f"| database, {record_bytes:,.0f} bytes a record ({source}) | {kb:.1f} KB | {_tb(db_tb)} |")
        serving.append((db_tb * TB / GB / a.partitions, f" at {record_bytes:,.0f} bytes a record"))
    lines.append("")
    lines += [f"serving{where}: {a.partitions} partitions of {gb:,.0f} GB and "
              f"{s.partition_records:,.0f} records each" for gb, where in serving]
    return "\n".join(lines)
