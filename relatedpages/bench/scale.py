"""Scale figures: runs of the pipeline on a cluster summarised as the paper's Figs. 8 and 9.

``scripts/bench_scale.py`` runs the whole pipeline (segment, the block co-citation chain, the
co-citation fallback, the database) on YARN at several input sizes and container counts, and
reads each Hadoop job's cost from its job history (:mod:`relatedpages.bench.job_history`).
This module holds what is computed from those runs, with no cluster involved: per-stage
medians, the log-log slope of time against pages (the paper's claim: linear, Fig. 8), the
memory ratio (the paper's claim: constant memory per task), the tables and the two figures.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from relatedpages.bench.job_history import JobFigures

#: The pipeline's stages in order; a Hadoop job's stage is ``<script> <step>``.
STAGE_ORDER = ("segment", "related", "cocitation")
#: Not a Hadoop job: what the run's wall time holds besides its jobs (driver JVMs, ``hadoop
#: fs`` commands, mrjob, reading the output back and writing the database).
CLIENT = "client"
TOTAL = "total"


@dataclass(frozen=True)
class PipelineRun:
    """One run of the pipeline: its size, its shape, its wall time and its Hadoop jobs."""

    pages: int
    wall_seconds: float
    database_seconds: float
    jobs: tuple[JobFigures, ...]
    records: int = 0  # database records
    db_bytes: int = 0  # the database's size on disk
    pairs: int = 0  # related pairs Mapper1 emitted (the chain's intermediate values / 2)

    def stage_seconds(self) -> dict[str, float]:
        """Seconds per Hadoop job (submit to finish), then the client's share, then the total."""
        seconds = {job.name: job.seconds for job in self.jobs}
        seconds[CLIENT] = max(0.0, self.wall_seconds - sum(seconds.values()))
        seconds[TOTAL] = self.wall_seconds
        return seconds

    @property
    def cpu_seconds(self) -> float:
        return sum(job.cpu_seconds for job in self.jobs)

    @property
    def shuffle_bytes(self) -> int:
        return sum(job.shuffle_bytes for job in self.jobs)

    @property
    def map_output_bytes(self) -> int:
        return sum(job.map_output_bytes for job in self.jobs)

    def peak_mb(self, kind: str) -> float:
        """The largest peak memory of any task of ``kind`` (MAP or REDUCE) in the run."""
        return max((job.peak_mb(kind) for job in self.jobs), default=0.0)

    def python_peak_mb(self, kind: str) -> float:
        """The largest peak memory of the Python process of any task of ``kind``."""
        return max((job.python_peak_mb(kind) for job in self.jobs), default=0.0)

    def worst_skew(self) -> tuple[str, float]:
        """The job with the most uneven reducer input, and its max/mean."""
        skews = [(job.name, job.reduce_skew()) for job in self.jobs]
        return max(skews, key=lambda item: item[1], default=("", 0.0))


def stage_key(stage: str) -> tuple[int, int, str]:
    """Pipeline order: segment, related 1…, cocitation 1…, then client and total."""
    script, _, step = stage.partition(" ")
    if stage == CLIENT:
        return (len(STAGE_ORDER), 0, stage)
    if stage == TOTAL:
        return (len(STAGE_ORDER) + 1, 0, stage)
    order = STAGE_ORDER.index(script) if script in STAGE_ORDER else len(STAGE_ORDER)
    return (order, int(step) if step.isdigit() else 0, stage)


def label(stage: str) -> str:
    """How a stage reads in the table: ``cocitation 1`` is the fallback's first step."""
    script, _, step = stage.partition(" ")
    return f"fallback {step}" if script == "cocitation" else stage


def median_by_stage(figures: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The median of each stage's figure over repeated runs (one mapping per run), in
    pipeline order."""
    collected: dict[str, list[float]] = defaultdict(list)
    for run in figures:
        for stage, value in run.items():
            collected[stage].append(value)
    return {stage: statistics.median(values)
            for stage, values in sorted(collected.items(), key=lambda kv: stage_key(kv[0]))}


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log y against log x (1.0: linear; needs two distinct x)."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len({x for x, _ in points}) < 2:
        raise ValueError("a slope needs positive figures at two sizes at least")
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x, _ in points)
    return num / den


@dataclass
class SizeSummary:
    """The medians of the runs of one size (Fig. 8's points and the table's row)."""

    pages: int
    runs: int
    stages: dict[str, float]
    cpu_seconds: float
    shuffle_bytes_per_page: float
    map_output_bytes_per_page: float
    peak_map_mb: float
    peak_reduce_mb: float
    python_map_mb: float
    python_reduce_mb: float
    skew_stage: str
    skew: float
    records: int
    db_bytes: int = 0
    pairs_per_page: float = 0.0
    # per Hadoop job (stage): CPU seconds of its tasks, shuffle bytes, bytes written to HDFS
    stage_cpu: dict[str, float] = field(default_factory=dict)
    stage_python_cpu: dict[str, float] = field(default_factory=dict)  # of it, Python's
    stage_shuffle: dict[str, float] = field(default_factory=dict)
    stage_written: dict[str, float] = field(default_factory=dict)

    def python_cpu_total(self) -> float | None:
        """The tasks' Python processes' CPU over every job, or None unless every job's was
        measured (the launcher's count)."""
        if not self.stage_cpu or not all(self.stage_python_cpu.get(stage) for stage in self.stage_cpu):
            return None
        return sum(self.stage_python_cpu[stage] for stage in self.stage_cpu)


def summarise(runs: Sequence[PipelineRun]) -> SizeSummary:
    """Medians over repeated runs of one size and shape."""
    if not runs:
        raise ValueError("no runs to summarise")
    pages = runs[0].pages
    skews = [run.worst_skew() for run in runs]
    worst = max(skews, key=lambda item: item[1])

    def per_stage(figure: str) -> dict[str, float]:
        return median_by_stage({job.name: float(getattr(job, figure)) for job in run.jobs}
                               for run in runs)

    return SizeSummary(
        pages=pages,
        runs=len(runs),
        stages=median_by_stage(run.stage_seconds() for run in runs),
        cpu_seconds=statistics.median(run.cpu_seconds for run in runs),
        shuffle_bytes_per_page=statistics.median(run.shuffle_bytes for run in runs) / max(pages, 1),
        map_output_bytes_per_page=statistics.median(run.map_output_bytes for run in runs) / max(pages, 1),
        peak_map_mb=statistics.median(run.peak_mb("MAP") for run in runs),
        peak_reduce_mb=statistics.median(run.peak_mb("REDUCE") for run in runs),
        python_map_mb=statistics.median(run.python_peak_mb("MAP") for run in runs),
        python_reduce_mb=statistics.median(run.python_peak_mb("REDUCE") for run in runs),
        skew_stage=worst[0],
        skew=statistics.median(skew for _, skew in skews),
        records=runs[0].records,
        db_bytes=runs[0].db_bytes,
        pairs_per_page=runs[0].pairs / max(pages, 1),
        stage_cpu=per_stage("cpu_seconds"),
        stage_python_cpu=per_stage("python_cpu_seconds"),
        stage_shuffle=per_stage("shuffle_bytes"),
        stage_written=per_stage("written_bytes"),
    )


def format_fig8_table(sizes: Sequence[SizeSummary]) -> str:
    """Time per stage (rows) by input size (columns), then the cost figures."""
    stages = sorted({stage for size in sizes for stage in size.stages}, key=stage_key)
    header = "| | " + " | ".join(f"{size.pages:,} pages" for size in sizes) + " |"
    lines = [header, "|---|" + "---:|" * len(sizes)]
    for stage in stages:
        cells = " | ".join(f"{size.stages.get(stage, 0.0):.1f} s" for size in sizes)
        lines.append(f"| {label(stage)} | {cells} |")
    rows: list[tuple[str, Iterable[str]]] = [
        ("CPU time of all tasks", (f"{s.cpu_seconds:.0f} s" for s in sizes)),
        ("CPU time of the tasks' Python processes (the launcher's count)",
         (_seconds(sum(s.stage_python_cpu.values())) for s in sizes)),
        ("map output bytes per page", (f"{s.map_output_bytes_per_page / 1024:.1f} KB" for s in sizes)),
        ("shuffle bytes per page", (f"{s.shuffle_bytes_per_page / 1024:.1f} KB" for s in sizes)),
        ("peak memory of a map task (container)", (f"{s.peak_map_mb:.0f} MB" for s in sizes)),
        ("peak memory of a reduce task (container)", (f"{s.peak_reduce_mb:.0f} MB" for s in sizes)),
        ("… of its Python mapper", (_mb(s.python_map_mb) for s in sizes)),
        ("… of its Python reducer", (_mb(s.python_reduce_mb) for s in sizes)),
        ("reducer input skew (max/mean)", (f"{s.skew:.2f} ({label(s.skew_stage)})" for s in sizes)),
        ("related pairs per page (Mapper1)", (f"{s.pairs_per_page:,.0f}" for s in sizes)),
        # --graph: the chain alone writes no database, so no row of zeros
        *([("database records", (f"{s.records:,}" for s in sizes))]
          if any(s.records for s in sizes) else []),
        ("runs (median of)", (str(s.runs) for s in sizes)),
    ]
    for name, row in rows:
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def _mb(value: float) -> str:
    return f"{value:.0f} MB" if value else "not measured"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value else "not measured"


def format_per_page_table(size: SizeSummary) -> str:
    """Per page, by stage, at one size: CPU, shuffle and output, the figures a projection
    to a larger crawl multiplies (docs/scale.md).  The tasks' CPU is split into their
    Python processes' (the launcher's count) and the share of it, the rest being the task
    JVMs' (Hadoop's sort, merge and streaming I/O, start-up)."""
    pages = max(size.pages, 1)

    def python(cpu: float, python_cpu: float | None) -> str:
        if not python_cpu:
            return "not measured"
        return f"{python_cpu / pages * 1000:.2f} ms ({python_cpu / cpu:.0%})" if cpu else \
            f"{python_cpu / pages * 1000:.2f} ms"

    lines = [f"| stage ({size.pages:,} pages) | task CPU per page | of it, the Python "
             "processes' | shuffle per page | written to HDFS per page |",
             "|---|---:|---:|---:|---:|"]
    for stage, cpu in size.stage_cpu.items():
        lines.append(f"| {label(stage)} | {cpu / pages * 1000:.2f} ms | "
                     f"{python(cpu, size.stage_python_cpu.get(stage))} | "
                     f"{size.stage_shuffle.get(stage, 0) / pages / 1024:.2f} KB | "
                     f"{size.stage_written.get(stage, 0) / pages / 1024:.2f} KB |")
    all_python = size.python_cpu_total()
    lines.append(f"| all jobs | {size.cpu_seconds / pages * 1000:.2f} ms | "
                 f"{python(size.cpu_seconds, all_python)} | "
                 f"{size.shuffle_bytes_per_page / 1024:.2f} KB | "
                 f"{sum(size.stage_written.values()) / pages / 1024:.2f} KB |")
    if size.db_bytes:
        lines.append(f"| database ({size.records:,} records) | | | | "
                     f"{size.db_bytes / pages / 1024:.2f} KB (local disk) |")
    return "\n".join(lines)


def format_spark_table(sizes: Sequence[SizeSummary],
                       spark: Mapping[int, Mapping[str, float]]) -> str:
    """The chain on Spark beside YARN, per size (``spark``: page count → median ``wall``,
    ``cpu`` seconds and ``peak_mb``), and the slopes of Spark's time against pages."""
    lines = ["| | " + " | ".join(f"{s.pages:,}" for s in sizes) + " |",
             "|---|" + "---:|" * len(sizes)]
    rows = [("YARN (MiniCluster) wall time", [f"{s.stages['total']:.1f} s" for s in sizes]),
            ("Spark (local) wall time", [f"{spark[s.pages]['wall']:.1f} s" for s in sizes]),
            ("YARN task CPU", [f"{s.cpu_seconds:.0f} s" for s in sizes]),
            ("Spark CPU (JVM and Python workers)", [f"{spark[s.pages]['cpu']:.0f} s" for s in sizes]),
            ("Spark peak RSS, largest process", [f"{spark[s.pages]['peak_mb']:.0f} MB" for s in sizes])]
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    if len(sizes) > 1:
        xs = [s.pages for s in sizes]
        lines.append("slope of Spark's time against pages (log-log): wall "
                     f"{loglog_slope(xs, [spark[x]['wall'] for x in xs]):.2f}, CPU "
                     f"{loglog_slope(xs, [spark[x]['cpu'] for x in xs]):.2f}")
    return "\n".join(lines)


def format_hot_keys_table(without: PipelineRun, with_plan: PipelineRun,
                          predicted: Sequence[float], plan_cost: Sequence[float] = ()) -> str:
    """Related 1 without and with a hot-key plan (the same records), the skew that
    ``relatedpages.bench.key_skew`` predicted for each (``predicted``: without, with),
    and what counting the plan cost (``plan_cost``: the count jobs' wall and CPU seconds)."""
    def first(run: PipelineRun) -> JobFigures:
        return next(job for job in run.jobs if job.name == "related 1")

    def records(job: JobFigures) -> int:
        return sum(t.counters.get("REDUCE_INPUT_RECORDS", 0) for t in job.tasks if t.kind == "REDUCE")

    jobs = [first(without), first(with_plan)]
    rows = [("related 1, submit to finish", [f"{job.seconds:.1f} s" for job in jobs]),
            ("… its reduce phase (last map to last reducer)",
             [f"{job.reduce_seconds():.1f} s" for job in jobs]),
            ("… its reducer input skew, measured (max/mean)", [f"{job.reduce_skew():.2f}" for job in jobs]),
            ("… predicted from the keys (key_skew)", [f"{value:.2f}" for value in predicted]),
            ("… its reducers' input records", [f"{records(job):,}" for job in jobs]),
            ("the chain, wall time", [f"{run.wall_seconds:.1f} s" for run in (without, with_plan)]),
            ("CPU time of all tasks", [f"{run.cpu_seconds:.0f} s" for run in (without, with_plan)])]
    if plan_cost:
        wall, cpu = plan_cost
        rows += [("the plan's two count jobs, wall time", ["—", f"{wall:.1f} s"]),
                 ("… their tasks' CPU time", ["—", f"{cpu:.0f} s"])]
    return "\n".join(["| | without a plan | with the plan |", "|---|---:|---:|"]
                     + [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows])


def format_fig9_table(fig9: Mapping[int, SizeSummary]) -> str:
    """Fig. 9: time per stage by the number of a job's tasks running at once."""
    stages = sorted({s for summary in fig9.values() for s in summary.stages}, key=stage_key)
    lines = ["| | " + " | ".join(f"{c} container{'s' if c > 1 else ''}" for c in sorted(fig9)) + " |",
             "|---|" + "---:|" * len(fig9)]
    for stage in stages:
        lines.append(f"| {label(stage)} | "
                     + " | ".join(f"{fig9[c].stages.get(stage, 0.0):.1f} s" for c in sorted(fig9)) + " |")
    return "\n".join(lines)


def format_compression_table(off: SizeSummary, on: SizeSummary) -> str:
    """The same size with map output compression off and on."""
    return "\n".join([
        "| | off | on |", "|---|---:|---:|",
        f"| shuffle bytes per page | {off.shuffle_bytes_per_page / 1024:.1f} KB | "
        f"{on.shuffle_bytes_per_page / 1024:.1f} KB |",
        f"| wall time | {off.stages['total']:.1f} s | {on.stages['total']:.1f} s |",
        f"| CPU time of all tasks | {off.cpu_seconds:.0f} s | {on.cpu_seconds:.0f} s |"])


def verdicts(sizes: Sequence[SizeSummary], fixed: SizeSummary | None = None) -> list[str]:
    """Issue 14's goals: slope of time against pages ≤ 1.1, reduce memory ratio ≤ 1.2."""
    if len(sizes) < 2:
        return ["one size: no slope"]
    pages = [s.pages for s in sizes]
    out = []
    wall = loglog_slope(pages, [s.stages[TOTAL] for s in sizes])
    cpu = loglog_slope(pages, [s.cpu_seconds for s in sizes])
    out.append(f"slope of wall time against pages (log-log): {wall:.2f}  (goal <= 1.1)")
    out.append(f"slope of task CPU time against pages: {cpu:.2f}")
    if fixed is not None:
        parts = []
        if all(s.stages[TOTAL] > fixed.stages[TOTAL] for s in sizes):
            wall_above = [s.stages[TOTAL] - fixed.stages[TOTAL] for s in sizes]
            parts.append(f"wall {loglog_slope(pages, wall_above):.2f}")
        else:
            parts.append("wall: not above it at every size")
        if all(s.cpu_seconds > fixed.cpu_seconds for s in sizes):
            cpu_above = [s.cpu_seconds - fixed.cpu_seconds for s in sizes]
            parts.append(f"CPU {loglog_slope(pages, cpu_above):.2f}")
        out.append(f"the same above the fixed cost of a {fixed.pages}-page run "
                   f"({fixed.stages[TOTAL]:.0f} s, {fixed.cpu_seconds:.0f} s CPU): "
                   + ", ".join(parts))
    if all(s.pairs_per_page > 0 for s in sizes):
        pairs = [s.pairs_per_page * s.pages for s in sizes]
        out.append(f"slope of related pairs (Mapper1's output) against pages: "
                   f"{loglog_slope(pages, pairs):.2f}; related 1's CPU per pair: "
                   + " / ".join(f"{s.stage_cpu.get('related 1', 0.0) / p * 1e6:.0f}"
                                for s, p in zip(sizes, pairs)) + " µs"
                   + ("; its Python processes (the launcher's count): "
                      + " / ".join(f"{s.stage_python_cpu.get('related 1', 0.0) / p * 1e6:.0f}"
                                   for s, p in zip(sizes, pairs)) + " µs"
                      if all(s.stage_python_cpu.get("related 1") for s in sizes) else ""))
    for stage in sorted({st for s in sizes for st in s.stages} - {CLIENT, TOTAL}, key=stage_key):
        values = [s.stages.get(stage, 0.0) for s in sizes]
        if all(v > 0 for v in values):
            out.append(f"  slope of {label(stage)}: {loglog_slope(pages, values):.2f}")
    small, large = sizes[0], sizes[-1]
    if small.python_reduce_mb:
        ratio = large.python_reduce_mb / small.python_reduce_mb
        out.append(f"Python reducer peak memory, {large.pages:,} / {small.pages:,} pages: "
                   f"{ratio:.2f}  (goal <= 1.2)")
    if small.peak_reduce_mb:
        ratio = large.peak_reduce_mb / small.peak_reduce_mb
        out.append(f"reduce container peak memory (JVM + Python), {large.pages:,} / "
                   f"{small.pages:,} pages: {ratio:.2f}")
    return out


def _plot_stages(ax: Any, xs: Sequence[int], figures: Sequence[Mapping[str, float]]) -> None:
    """One line per stage (figures: one mapping stage → value per x), the total in bold."""
    for stage in sorted({stage for f in figures for stage in f}, key=stage_key):
        style: dict[str, Any] = {"linewidth": 2.5, "color": "black"} if stage == TOTAL else {}
        ax.plot(xs, [f.get(stage, 0.0) for f in figures], marker="o", label=label(stage), **style)


def plot_fig8(sizes: Sequence[SizeSummary], path: Path) -> None:
    """Fig. 8: wall time against pages per stage and in total (left), and the tasks' CPU
    time per stage (right: the work, without the waits of scheduling), log-log, each with a
    linear reference through the total's first point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pages = [size.pages for size in sizes]
    fig, (wall_ax, cpu_ax) = plt.subplots(1, 2, figsize=(12, 5))
    panels = ((wall_ax, [s.stages for s in sizes], "wall seconds (median)", "Time"),
              (cpu_ax, [{**s.stage_cpu, TOTAL: s.cpu_seconds} for s in sizes],
               "task CPU seconds (median)", "CPU time of the tasks"))
    for ax, figures, ylabel, title in panels:
        _plot_stages(ax, pages, figures)
        first = figures[0].get(TOTAL, 0.0)
        if len(pages) >= 2 and first > 0:
            ax.plot(pages, [first * p / pages[0] for p in pages], linestyle=":", color="grey",
                    label="linear (from the first total)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("pages")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} against input size (cf. paper Fig. 8)", fontsize=10)
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_fig9(by_containers: Mapping[int, SizeSummary], path: Path) -> None:
    """Fig. 9: time against the number of containers running at once, at one size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = sorted(by_containers)
    fig, ax = plt.subplots(figsize=(8, 5))
    _plot_stages(ax, counts, [by_containers[c].stages for c in counts])
    pages = next(iter(by_containers.values())).pages if by_containers else 0
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set_xlabel("containers running at once (map and reduce tasks each)")
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"Time against containers, {pages:,} pages (cf. paper Fig. 9)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def printed_stage_seconds(stdout: str, stage: str) -> float:
    """A stage's seconds from ``relatedpages build``'s printed ``time <stage> … <s> s`` line
    (0.0 when the build printed none).

    >>> printed_stage_seconds("  time segment    12.5 s\\n  time database   3.25 s", "database")
    3.25
    """
    for line in stdout.splitlines():
        if line.strip().startswith(f"time {stage}"):
            return float(line.split()[-2])
    return 0.0


def printed_count(stdout: str, name: str) -> int:
    """A count from ``relatedpages build``'s printed summary (``<name>  <count> …``; 0 if absent).

    >>> printed_count("  database records   1234 (pages with a list)", "database records")
    1234
    """
    for line in stdout.splitlines():
        if line.strip().startswith(name):
            return int(line.split()[len(name.split())])
    return 0


@dataclass(frozen=True)
class BenchShape:
    """How a scale bench ran: what its report's headings and ``scale.json`` say."""

    maps: int
    reduces: int
    runs: int
    seed: int
    codec: str
    graph: str | None = None  # --graph's arcs file (the chain alone), or the whole pipeline
    graph_pages: int = 0  # the graph's pages with links
    spark_master: str = ""
    machine: str = ""  # the CPU the figures were measured on (chain_cpu.machine)


def scale_report(shape: BenchShape, out: Path, sizes: Sequence[SizeSummary],
                 fixed: SizeSummary | None, fig9: Mapping[int, SizeSummary],
                 compression: Mapping[str, SizeSummary],
                 spark: Mapping[int, Mapping[str, float]],
                 hot: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The bench's printed report (lines) and its figures as JSON values (``scale.json``);
    Figs. 8 and 9 are drawn into ``out``."""
    graph_name = Path(shape.graph).name if shape.graph is not None else ""
    what = ("the pipeline" if shape.graph is None
            else f"the block co-citation chain alone on {graph_name}'s pages (seed {shape.seed}"
                 + (f"; sizes above its {shape.graph_pages:,} pages with links from disjoint "
                    "copies of it)" if any(size.pages > shape.graph_pages for size in sizes)
                    else ")"))
    lines = [f"machine: {shape.machine}"] if shape.machine else []
    lines += [f"Fig. 8: {what} at the defaults on YARN (MiniCluster), {shape.maps} map files, "
              f"{shape.reduces} reducers per job, median of {shape.runs}",
              format_fig8_table(sizes), ""]
    verdict_lines = verdicts(sizes, fixed)
    lines += verdict_lines
    plot_fig8(sizes, out / "fig8-time-vs-pages.png")
    lines.append(f"figure: {out / 'fig8-time-vs-pages.png'}")
    if spark:
        lines += ["", f"The chain on Spark (-r spark, {shape.spark_master}, {shape.reduces} "
                      f"partitions) beside YARN, median of {shape.runs}",
                  format_spark_table(sizes, spark)]
    lines += ["", format_per_page_table(sizes[-1])]
    if fig9:
        pages = next(iter(fig9.values())).pages
        plot_fig9(fig9, out / "fig9-time-vs-containers.png")
        lines += ["", f"Fig. 9: {pages:,} pages, tasks of a job running at once",
                  format_fig9_table(fig9), f"figure: {out / 'fig9-time-vs-containers.png'}"]
    if compression:
        off, on = compression["off"], compression["on"]
        lines += ["", f"Map output compression, {off.pages:,} pages ({shape.codec}); "
                      "same database", format_compression_table(off, on)]
    if hot:
        lines += ["", f"Hot keys: {hot['pages']:,} records, {shape.reduces} reducers, a plan "
                      f"routing {hot['routed']:,} pages ({hot['split']:,} split; "
                      f"{hot['pieces']:,} keys); same output",
                  format_hot_keys_table(hot["runs"][0], hot["runs"][1], hot["predicted"],
                                        [hot["plan_wall"], hot["plan_cpu"]] if "plan_wall" in hot else [])]
    figures: dict[str, Any] = {
        "maps": shape.maps, "reduces": shape.reduces, "runs": shape.runs, "seed": shape.seed,
        "graph": shape.graph, "machine": shape.machine,
        "sizes": [asdict(s) for s in sizes], "fixed": asdict(fixed) if fixed else None,
        "containers": {str(c): asdict(s) for c, s in fig9.items()},
        "compression": {k: asdict(s) for k, s in compression.items()},
        "spark": {str(pages): dict(figures) for pages, figures in spark.items()},
        "hot_keys": {**{k: v for k, v in hot.items() if k != "runs"},
                     "runs": [asdict(run) for run in hot["runs"]]} if hot else {},
        "verdicts": verdict_lines,
    }
    return lines, figures
