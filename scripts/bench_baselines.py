#!/usr/bin/env python
"""Query time of the literature's baselines on a connectivity server (cnr-2000 by default).

    python scripts/bench_baselines.py [--edges FILE[.gz]] [--db DIR] [--rebuild]
                                      [--queries 200] [--seed 1] [--runs 3]
                                      [--root-sets 20] [--roots 20] [--json]

1. **Import** (unless ``--db`` already holds a link index; ``--rebuild`` forces it): the
   edge list (default ``../shared/data/graphs/cnr-2000/cnr-2000.arcs.tsv.gz``: 325,557
   nodes, 3.2 M links) goes into a link index with
   :func:`relatedpages.linkindex.import_edge_list`, in a child process so that its peak
   RSS is its own.  Without ``--db`` the index is built in a temporary folder and removed
   at the end; with ``--db`` it is kept there for the next run.
2. **Load**: :func:`relatedpages.linkindex.load_link_graph` in this process: wall time,
   RSS (``VmRSS`` of ``/proc/self/status``) before and after, the process's peak RSS
   (``ru_maxrss``: the load's peak, nothing bigger ran before it) and the bytes of the
   graph's arrays (``LinkGraph.nbytes()``: CSR arrays, names and the id index excluded).
3. **Page-level methods** (companion, dh-cocitation, extended-cocitation, lli, each with
   its library defaults — the papers' values): ``--queries`` nodes drawn without
   replacement, uniformly, from the nodes with in-degree >= 2 (distinct parents), with
   ``numpy.random.default_rng((seed, 0))``; all of them when fewer qualify.  Each query is
   one call ``method(graph, node)`` timed with ``time.perf_counter_ns``; one untimed call
   per method first (one-time work such as reading the stoplist is not a query's cost).
   Per run: median, p99 (nearest rank: the smallest time >= 99 % of the times; with 200
   queries the 198th of 200), mean and max, and the median CPU time of the process
   (``time.process_time_ns``, every thread: close to the wall median on a quiet machine,
   below it when other processes take the CPUs); the table shows the median of each over
   ``--runs`` runs (every run asks the same queries in the same order).  ``answered`` =
   queries with at least one related page; ``same`` = every run gave identical answers.
4. **Set-level methods** (sfp, hits), reported separately, per *root set*: ``--root-sets``
   sets of ``--roots`` roots.  Zhou et al.'s roots are one query's search results, pages
   on one topic that share links; the stand-in here is ``--roots`` parents of a random
   page with at least that many parents (``numpy.random.default_rng((seed, 1))``).
   Random unrelated roots share nothing, so SFP would find nothing frequent and the
   timing would say nothing.  ``answered`` = sets with at least one authority.

Targets (issue 5): Companion median <= 100 ms and dh-cocitation median <= 50 ms per query.
Dean & Henzinger reported *average* running times of 109 ms (Companion, 50 URLs) and 195 ms
(Cocitation, 58 URLs) on their 1999 connectivity server (paper 001, slide 25), hence the
mean column.  The load average at the start and the end is printed: on a shared machine
the figures are only as good as it is quiet.  ``--json`` prints one JSON object instead
of the table (progress goes to stderr either way).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from relatedpages.baselines import Answer  # noqa: E402
from relatedpages.baselines.hits import hits  # noqa: E402
from relatedpages.baselines.methods import PAGE_METHODS as METHODS  # noqa: E402
from relatedpages.baselines.sfp import sfp  # noqa: E402
from relatedpages.db import LINKS_ALGORITHM, DatabaseError, read_manifest  # noqa: E402
from relatedpages.linkgraph import LinkGraph  # noqa: E402
from relatedpages.linkindex import import_edge_list, load_link_graph  # noqa: E402
from relatedpages.shared_data import shared_data_dir  # noqa: E402

EDGES_DEFAULT = shared_data_dir() / "graphs" / "cnr-2000" / "cnr-2000.arcs.tsv.gz"
QUERIES_DEFAULT = 200
SEED_DEFAULT = 1
RUNS_DEFAULT = 3
MIN_IN_DEGREE_DEFAULT = 2
ROOT_SETS_DEFAULT = 20
ROOTS_DEFAULT = 20
P99 = 0.99

PageMethod = Callable[[LinkGraph, int], Answer]
SetMethod = Callable[[LinkGraph, Sequence[int]], Any]

#: The page-level methods, in table order (their library defaults are the papers' values).
def _with_defaults(method: Any) -> PageMethod:
    params = method.params()  # built once, not per timed call
    return lambda graph, node: method.answer(graph, node, params)


PAGE_METHODS: dict[str, PageMethod] = {name: _with_defaults(m) for name, m in METHODS.items()}
SET_METHODS: dict[str, SetMethod] = {"sfp": sfp, "hits": hits}
#: Issue 5's targets, median ms per query.
TARGETS_MS = {"companion": 100.0, "dh-cocitation": 50.0}
#: Dean & Henzinger's average running times (paper 001, slide 25), ms per query.
DH_1999_MEAN_MS = {"companion": 109.0, "dh-cocitation": 195.0}


@dataclass(frozen=True)
class Timings:
    """Summary of one run's per-call times, milliseconds: wall time, and the median CPU
    time of the process (all its threads) for comparison on a busy machine."""

    median_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float
    cpu_median_ms: float


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The q-quantile by nearest rank: the smallest value >= a share q of the values.

    >>> nearest_rank([1.0, 2.0, 3.0, 4.0], 0.5), nearest_rank(list(map(float, range(1, 201))), 0.99)
    (2.0, 198.0)
    """
    if not ordered:
        raise ValueError("no values")
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def summarise(nanoseconds: Sequence[int], cpu_nanoseconds: Sequence[int]) -> Timings:
    ordered = sorted(value / 1e6 for value in nanoseconds)
    return Timings(statistics.median(ordered), nearest_rank(ordered, P99), statistics.fmean(ordered),
                   ordered[-1], statistics.median(value / 1e6 for value in cpu_nanoseconds))


def median_of_runs(runs: Sequence[Timings]) -> Timings:
    return Timings(*(statistics.median(getattr(run, field.name) for run in runs) for field in fields(Timings)))


def rss_mb() -> dict[str, float]:
    """VmRSS and VmHWM of this process (MB), from /proc/self/status when there is one."""
    found: dict[str, float] = {}
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, value = line.split(":", 1)
                found[name] = int(value.split()[0]) / 1024
    return found


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def load_average() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return []


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- import (child process) and load ------------------------------------------------------


def child_import(edges: Path, db: Path) -> None:
    """Import ``edges`` into ``db``; print the summary as JSON (run as a child process)."""
    summary = import_edge_list(edges, db, keys="auto")
    print(json.dumps({
        "seconds": summary.seconds,
        "keys": summary.keys.value,
        "lines": summary.lines,
        "edges": summary.edges,
        "nodes": summary.nodes,
        "skipped": {reason.value: count for reason, count in summary.skipped.items()},
        "db_bytes": summary.database.bytes,
        "peak_rss_mb": peak_rss_mb(),
    }))


def run_import(edges: Path, db: Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child-import",
               "--edges", str(edges), "--db", str(db)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_baselines: importing {edges} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    result["process_seconds"] = time.perf_counter() - started  # with interpreter start, imports
    return result


def reusable(db: Path) -> dict[str, Any] | None:
    """The manifest of the link index at ``db`` (as JSON facts), None when there is none;
    exits when ``db`` holds something else."""
    try:
        manifest = read_manifest(db)
    except DatabaseError:
        if db.exists() and any(db.iterdir()):
            raise SystemExit(f"bench_baselines: {db} is neither empty nor a link index") from None
        return None
    if manifest.algorithm != LINKS_ALGORITHM:
        raise SystemExit(f"bench_baselines: {db} is a {manifest.algorithm!r} database, not a link index")
    return {"source": list(manifest.source), "built_at": manifest.built_at, "records": manifest.records,
            "db_bytes": manifest.bytes}


def load(db: Path) -> tuple[LinkGraph, dict[str, Any]]:
    before = rss_mb()
    started = time.perf_counter()
    graph = load_link_graph(db)
    seconds = time.perf_counter() - started
    after = rss_mb()
    return graph, {
        "seconds": seconds,
        "nodes": len(graph),
        "links": graph.edges,
        "keys": graph.key_kind.value,
        "arrays_mb": graph.nbytes() / 2**20,
        "rss_before_mb": before.get("VmRSS"),
        "rss_after_mb": after.get("VmRSS"),
        "peak_rss_mb": peak_rss_mb(),
    }


# -- what is asked ------------------------------------------------------------------------


def pick_queries(graph: LinkGraph, count: int, seed: int, min_in_degree: int) -> tuple[list[int], int]:
    """``count`` nodes with in-degree >= ``min_in_degree`` (all when fewer), drawn without
    replacement in random order; and how many nodes qualified."""
    eligible = np.flatnonzero(np.diff(graph.in_offsets) >= min_in_degree)
    rng = np.random.default_rng((seed, 0))
    chosen = rng.choice(eligible, size=min(count, len(eligible)), replace=False)
    return [int(node) for node in chosen], len(eligible)


def pick_root_sets(graph: LinkGraph, sets: int, roots: int, seed: int) -> tuple[list[list[int]], int]:
    """``sets`` root sets: each ``roots`` parents (ascending) of a distinct random page with
    at least ``roots`` parents; and how many pages qualified."""
    hubs = np.flatnonzero(np.diff(graph.in_offsets) >= roots)
    rng = np.random.default_rng((seed, 1))
    chosen = rng.choice(hubs, size=min(sets, len(hubs)), replace=False)
    return [sorted(int(p) for p in rng.choice(graph.parents(int(hub)), size=roots, replace=False))
            for hub in chosen], len(hubs)


# -- timing -------------------------------------------------------------------------------


def time_calls(call: Callable[[Any], Any], inputs: Sequence[Any], runs: int) -> tuple[list[Timings], list[Any], bool]:
    """Per run the timings of ``call(x)`` for every input; the last run's results; whether
    every run gave the same results.  One untimed call first."""
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns
    call(inputs[0])
    per_run: list[Timings] = []
    first: list[Any] | None = None
    same = True
    results: list[Any] = []
    for _ in range(runs):
        times: list[int] = []
        cpu_times: list[int] = []
        results = []
        for value in inputs:
            cpu_started = cpu_clock()
            started = clock()
            result = call(value)
            times.append(clock() - started)
            cpu_times.append(cpu_clock() - cpu_started)
            results.append(result)
        per_run.append(summarise(times, cpu_times))
        if first is None:
            first = results
        else:
            same = same and results == first
    return per_run, results, same


def bench_pages(graph: LinkGraph, queries: list[int], runs: int) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for name, method in PAGE_METHODS.items():
        progress(f"{name}: {len(queries)} queries x {runs} runs …")
        per_run, answers, same = time_calls(partial(method, graph), queries, runs)
        reasons = Counter(answer.reason.value for answer in answers if answer.reason is not None)
        timings = median_of_runs(per_run)
        target = TARGETS_MS.get(name)
        rows[name] = {
            **asdict(timings),
            "answered": sum(1 for answer in answers if answer.related),
            "asked": len(queries),
            "mean_results": statistics.fmean(len(answer.related) for answer in answers),
            "reasons": dict(sorted(reasons.items())),
            "same_answers_every_run": same,
            "runs": [asdict(run) for run in per_run],
            "target_median_ms": target,
            "target_met": None if target is None else timings.median_ms <= target,
            "dean_henzinger_1999_mean_ms": DH_1999_MEAN_MS.get(name),
        }
    return rows


def bench_sets(graph: LinkGraph, root_sets: list[list[int]], runs: int) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for name, method in SET_METHODS.items():
        progress(f"{name}: {len(root_sets)} root sets x {runs} runs …")
        per_run, results, same = time_calls(partial(method, graph), root_sets, runs)
        reasons = Counter(result.reason.value for result in results if result.reason is not None)
        rows[name] = {
            **asdict(median_of_runs(per_run)),
            "answered": sum(1 for result in results if result.authorities),
            "asked": len(root_sets),
            "mean_results": statistics.fmean(len(result.authorities) for result in results),
            "reasons": dict(sorted(reasons.items())),
            "same_answers_every_run": same,
            "runs": [asdict(run) for run in per_run],
        }
    return rows


# -- report -------------------------------------------------------------------------------

COLUMNS = (f"{'algorithm':<21}{'median':>9}{'p99':>9}{'mean':>9}{'max':>9}{'cpu med':>9}"
           f"{'answered':>10}{'same':>6}")


def row_line(name: str, row: dict[str, Any]) -> str:
    answered = f"{row['answered']}/{row['asked']}"
    return (f"{name:<21}{row['median_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['mean_ms']:>9.2f}"
            f"{row['max_ms']:>9.2f}{row['cpu_median_ms']:>9.2f}{answered:>10}{'yes' if row['same_answers_every_run'] else 'NO':>6}")


def print_report(report: dict[str, Any]) -> None:
    print(f"bench_baselines: {report['source']}")
    print(f"machine: {report['machine']['cpus']} CPUs, python {report['machine']['python']}, "
          f"numpy {report['machine']['numpy']}; load average (1, 5, 15 min) "
          f"{report['load_average']['start']} at the start, {report['load_average']['end']} at the end")
    imported = report["import"]
    if imported is None:
        reused = report["reused"]
        print(f"import: not measured; reused {report['db']} ({reused['records']:,} records, "
              f"{reused['db_bytes'] / 1e6:.1f} MB, built {reused['built_at']} from {', '.join(reused['source'])})")
    else:
        skipped = sum(imported["skipped"].values())
        print(f"import: {imported['edges']:,} links, {imported['nodes']:,} nodes ({imported['keys']} keys, "
              f"{skipped:,} lines skipped) in {imported['seconds']:.1f} s "
              f"({imported['process_seconds']:.1f} s with the process start); "
              f"database {imported['db_bytes'] / 1e6:.1f} MB; peak RSS of the import {imported['peak_rss_mb']:.0f} MB")
    loaded = report["load"]
    print(f"load_link_graph: {loaded['seconds']:.1f} s for {loaded['nodes']:,} nodes, {loaded['links']:,} links; "
          f"arrays (LinkGraph.nbytes) {loaded['arrays_mb']:.1f} MB; RSS {loaded['rss_before_mb']:.0f} MB before, "
          f"{loaded['rss_after_mb']:.0f} MB after; peak RSS {loaded['peak_rss_mb']:.0f} MB")

    asked = report["queries"]
    print(f"\npage-level methods, ms per query: {len(asked['nodes'])} random nodes with in-degree >= "
          f"{asked['min_in_degree']} (of {asked['eligible']:,}; seed {asked['seed']}), "
          f"median over {asked['runs']} runs of each statistic")
    print(COLUMNS)
    for name, row in report["algorithms"].items():
        print(row_line(name, row))

    roots = report["root_sets"]
    print(f"\nset-level methods, ms per root set: {len(roots['sets'])} sets of {roots['size']} roots "
          f"(parents of a random page with >= {roots['size']} parents; {roots['eligible']:,} such pages), "
          f"median over {asked['runs']} runs")
    if report["authorities"]:
        print(COLUMNS)
        for name, row in report["authorities"].items():
            print(row_line(name, row))
    elif roots["asked"] == 0:
        print("(not run: --root-sets 0)")
    else:
        print("(not run: no page has that many parents)")

    print("\ntargets (median ms per query)")
    for target in report["targets"]:
        verdict = "met" if target["met"] else "NOT met"
        print(f"{target['algorithm']}: median {target['median_ms']:.2f} ms <= {target['target_ms']:.0f} ms: "
              f"{verdict} (Dean & Henzinger 1999: mean {target['dean_henzinger_1999_mean_ms']:.0f} ms; "
              f"here mean {target['mean_ms']:.2f} ms)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--edges", type=Path, default=EDGES_DEFAULT,
                        help="edge list to import (source<TAB>target, .gz or plain). Default: %(default)s")
    parser.add_argument("--db", type=Path,
                        help="link index folder: reused when it holds one, else built there and kept "
                             "(default: a temporary folder, removed at the end)")
    parser.add_argument("--rebuild", action="store_true", help="import even when --db holds a link index")
    parser.add_argument("--queries", type=int, default=QUERIES_DEFAULT,
                        help="query pages per run. Default: %(default)s")
    parser.add_argument("--min-in-degree", type=int, default=MIN_IN_DEGREE_DEFAULT,
                        help="query pages have at least this many parents. Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT,
                        help="seed of the query and root-set draws. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT,
                        help="runs (medians are shown). Default: %(default)s")
    parser.add_argument("--root-sets", type=int, default=ROOT_SETS_DEFAULT,
                        help="root sets for sfp and hits. Default: %(default)s")
    parser.add_argument("--roots", type=int, default=ROOTS_DEFAULT,
                        help="roots per set. Default: %(default)s")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--child-import", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_import:
        child_import(args.edges, args.db)
        return 0
    for name in ("queries", "runs", "min_in_degree", "roots"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.root_sets < 0:
        parser.error("--root-sets must be >= 0")

    started_load = load_average()
    temporary = args.db is None
    db: Path = Path(tempfile.mkdtemp(prefix="bench-baselines-")) / "links" if temporary else args.db
    try:
        reused = None if args.rebuild or temporary else reusable(db)
        imported = None
        if reused is None:
            if not args.edges.is_file():
                parser.error(f"--edges {args.edges}: no such file")
            progress(f"importing {args.edges} into {db} …")
            imported = run_import(args.edges, db)
        progress(f"loading {db} …")
        graph, loaded = load(db)
        queries, eligible = pick_queries(graph, args.queries, args.seed, args.min_in_degree)
        if not queries:
            print(f"bench_baselines: no node has in-degree >= {args.min_in_degree}", file=sys.stderr)
            return 1
        root_sets, hubs = pick_root_sets(graph, args.root_sets, args.roots, args.seed)
        algorithms = bench_pages(graph, queries, args.runs)
        authorities = bench_sets(graph, root_sets, args.runs) if root_sets else {}
    finally:
        if temporary:
            shutil.rmtree(db.parent, ignore_errors=True)

    report: dict[str, Any] = {
        "source": str(args.edges) if reused is None else ", ".join(reused["source"]),
        "db": None if temporary else str(db),
        "import": imported,
        "reused": reused,
        "load": loaded,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
        "load_average": {"start": started_load, "end": load_average()},
        "queries": {"nodes": [graph.name(node) for node in queries], "eligible": eligible,
                    "min_in_degree": args.min_in_degree, "seed": args.seed, "runs": args.runs},
        "algorithms": algorithms,
        "root_sets": {"sets": [[graph.name(node) for node in roots] for roots in root_sets],
                      "asked": args.root_sets, "size": args.roots, "eligible": hubs},
        "authorities": authorities,
        "targets": [
            {"algorithm": name, "target_ms": target, "median_ms": algorithms[name]["median_ms"],
             "mean_ms": algorithms[name]["mean_ms"], "met": algorithms[name]["target_met"],
             "dean_henzinger_1999_mean_ms": DH_1999_MEAN_MS[name]}
            for name, target in TARGETS_MS.items()
        ],
        "rss_end_mb": rss_mb().get("VmRSS"),
    }
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
