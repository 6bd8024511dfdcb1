#!/usr/bin/env python
"""Query time of the literature's baselines on a connectivity server (cnr-2000 by default).

    python scripts/bench_baselines.py [--edges FILE[.gz]] [--db DIR] [--rebuild]
                                      [--crawl DATA_DIR] [--anchored-links 200] [--moves 50]
                                      [--queries 200] [--seed 1] [--runs 3]
                                      [--root-sets 20] [--roots 20] [--json]

Two sections, one per way into a link index (issue 5: every method answers from both):

* **edge-list-built** (steps 1-4 below): an edge list without anchors (cnr-2000).  Runs
  unless ``--crawl`` is given alone: with ``--crawl``, only when ``--edges`` or ``--db`` is
  given too.
* **crawl-built** (``--crawl DATA_DIR``, e.g. ``../shared/data``; step 5): the real corpus
  segmented and indexed with anchors and blocks, where every method runs, the link-level
  ones (equivalent-links, moved) included.  When both sections run, the edge-list one
  runs (and is printed) first, the crawl-built one second in the same process: its
  "RSS before" holds what the first left behind, its peak RSS is its own (below).

1. **Import** (unless ``--db`` already holds a link index; ``--rebuild`` forces it): the
   edge list (default ``../shared/data/graphs/cnr-2000/cnr-2000.arcs.tsv.gz``: 325,557
   nodes, 3.2 M links) goes into a link index with
   :func:`relatedpages.store.edgelist.import_edge_list`, in a child process so that its peak
   RSS is its own.  Without ``--db`` the index is built in a temporary folder and removed
   at the end; with ``--db`` it is kept there for the next run.
2. **Load**: :func:`relatedpages.store.linkload.load_link_graph` in this process: wall time,
   RSS (``VmRSS`` of ``/proc/self/status``) before and after, the peak RSS of the load
   (``ru_maxrss`` after resetting the process's high-water mark by writing ``5`` to
   ``/proc/self/clear_refs``; where that cannot be done, ``peak_rss_reset`` is false and
   the figure is the process's peak so far) and the bytes of the graph's arrays
   (``LinkGraph.nbytes()``: CSR arrays, names and the id index excluded).
3. **Page-level methods** (every method of :mod:`relatedpages.baselines.methods`:
   companion, dh-cocitation, extended-cocitation, lli, cosine-cocitation, ppr, green and
   simrank, each with its library defaults — the papers' values): ``--queries`` nodes
   drawn without replacement, uniformly, from the nodes with in-degree >= 2 (distinct
   parents), with ``numpy.random.default_rng((seed, 0))``; all of them when fewer
   qualify.  Each query is
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

5. **Crawl-built index** (``--crawl DATA_DIR``): in a child process (its peak RSS its
   own), the corpus's segment records — ``awesomehub/awesomehub.warc.gz`` and
   ``web/{aeb,trafilatura}-pages.warc.gz``, segmented as ``jobs.segment`` does, a hub
   list's record winning over a web page of the same URL
   (:func:`relatedpages.evaluation.moved.corpus_records`) — go into a link index in the
   database format with :func:`relatedpages.store.linkindex.build_link_index_from_segments`
   (the in-memory twin of ``jobs.linkgraph``), in a temporary folder removed at the end;
   segmentation and index build are timed apart.  The index is loaded as in step 2 and
   the page-level and set-level methods are timed as in steps 3 and 4 (same options and
   seeds), then
   - **equivalent-links** (Courtenage & Williams, library defaults), per *link*:
     ``--anchored-links`` distinct crawled links ``(page, anchor, target)`` with a
     non-empty anchor, drawn uniformly without replacement with
     ``numpy.random.default_rng((seed, 2))``; one call ``equivalent_links(graph, page,
     anchor, target)`` each.  ``answered`` = links with at least one equivalent link.
   - **moved** (Spertus, library defaults), per *move*: ``--moves`` simulated moves of
     ``relatedpages eval moved`` (:func:`relatedpages.evaluation.moved.choose_moves`,
     seed ``--seed``; F = 0.5 of the parents relink): each new crawl is built by
     :func:`~relatedpages.evaluation.moved.simulate_move` untimed, then only the call
     ``moved(old, new, url)`` is timed.  ``answered`` = answers with a candidate; the
     JSON also counts the moves whose first candidate is the new location.

Targets (issue 5): Companion median <= 100 ms and dh-cocitation median <= 50 ms per query.
Dean & Henzinger reported *average* running times of 109 ms (Companion, 50 URLs) and 195 ms
(Cocitation, 58 URLs) on their 1999 connectivity server (paper 001, slide 25), hence the
mean column.  The load average at the start and the end is printed: on a shared machine
the figures are only as good as it is quiet.  ``--json`` prints one JSON object instead
of the table (progress goes to stderr either way): the edge-list section's keys at the top
level (absent when it did not run), the crawl-built section under ``"crawl"`` (null when
``--crawl`` is not given).
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
from relatedpages.baselines.equivalent import EquivalentLinks, equivalent_links  # noqa: E402
from relatedpages.baselines.hits import hits  # noqa: E402
from relatedpages.baselines.methods import PAGE_METHODS as METHODS  # noqa: E402
from relatedpages.baselines.moved import MovedAnswer, moved  # noqa: E402
from relatedpages.baselines.sfp import sfp  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from relatedpages.evaluation.moved import (  # noqa: E402
    UPDATED_DEFAULT,
    MoveCase,
    choose_moves,
    corpus_records,
    eligible_pages,
    simulate_move,
)
from relatedpages.evaluation.related import HUB_PATH, WEB_PATHS  # noqa: E402
from relatedpages.store.db import LINKS_ALGORITHM, DatabaseError  # noqa: E402
from relatedpages.store.dbopen import read_manifest  # noqa: E402
from relatedpages.store.edgelist import import_edge_list  # noqa: E402
from relatedpages.store.linkgraph import LinkGraph  # noqa: E402
from relatedpages.store.linkindex import build_link_index_from_segments  # noqa: E402
from relatedpages.store.linkload import load_link_graph  # noqa: E402

EDGES_DEFAULT = shared_data_dir() / "graphs" / "cnr-2000" / "cnr-2000.arcs.tsv.gz"
#: The crawl files of a DATA_DIR that make the crawl-built index (as ``relatedpages eval moved``).
CRAWL_FILES = (HUB_PATH, *WEB_PATHS)
ANCHORED_LINKS_DEFAULT = 200
MOVES_DEFAULT = 50
#: F of the simulated moves: the share of the moved page's parents that relink.
MOVED_UPDATED = UPDATED_DEFAULT
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
    return run_child("--child-import", f"importing {edges}", "--edges", edges, "--db", db)


def child_crawl(data_dir: Path, db: Path) -> None:
    """Segment the corpus of ``data_dir`` and build its link index at ``db``; print the
    summary as JSON (run as a child process)."""
    started = time.perf_counter()
    records = corpus_records(data_dir)
    segmented = time.perf_counter()
    summary, events = build_link_index_from_segments(
        records, db, source=[str(data_dir / path) for path in CRAWL_FILES])
    print(json.dumps({
        "segment_seconds": segmented - started,
        "index_seconds": time.perf_counter() - segmented,
        "records": len(records),
        "nodes": summary.records,
        "events": {event.value: count for event, count in events.items()},
        "db_bytes": summary.bytes,
        "peak_rss_mb": peak_rss_mb(),
    }))


def run_child(flag: str, what: str, *args: str | Path) -> dict[str, Any]:
    """Run this script with a hidden ``flag``; its JSON summary plus ``process_seconds``."""
    command = [sys.executable, str(Path(__file__).resolve()), flag, *map(str, args)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_baselines: {what} failed:\n{done.stderr[-3000:]}")
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


def reset_peak_rss() -> bool:
    """Reset the process's peak RSS to its current RSS (Linux >= 4.0); whether it was."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def load(db: Path) -> tuple[LinkGraph, dict[str, Any]]:
    reset = reset_peak_rss()
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
        "peak_rss_reset": reset,
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


def pick_anchored_links(graph: LinkGraph, count: int, seed: int) -> tuple[list[tuple[int, str, int]], int]:
    """``count`` distinct links ``(page, anchor, target)`` with a non-empty anchor (all
    when fewer), drawn without replacement in random order; and how many there are."""
    sources = np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(graph.out_offsets))
    anchored = np.flatnonzero(graph.out_anchors != 0)
    triples = np.stack([sources[anchored], graph.out_anchors[anchored].astype(np.int64),
                        graph.out_targets[anchored].astype(np.int64)], axis=1)
    if len(triples):
        triples = np.unique(triples, axis=0)  # a page linking twice under one anchor: one link
    rng = np.random.default_rng((seed, 2))
    chosen = rng.choice(len(triples), size=min(count, len(triples)), replace=False)
    return [(int(page), graph.anchor_texts[int(anchor)], int(target))
            for page, anchor, target in triples[chosen].tolist()], len(triples)


# -- timing -------------------------------------------------------------------------------


def time_calls(
    call: Callable[[Any], Any], inputs: Sequence[Any], runs: int, prepare: Callable[[Any], Any] | None = None
) -> tuple[list[Timings], list[Any], bool]:
    """Per run the timings of ``call(x)`` for every input; the last run's results; whether
    every run gave the same results.  One untimed call first.  With ``prepare``, each call
    is ``call(prepare(x))`` and ``prepare`` is not timed (it runs again in every run, so
    that its result need not be kept for every input)."""
    clock, cpu_clock = time.perf_counter_ns, time.process_time_ns

    def argument(value: Any) -> Any:
        return value if prepare is None else prepare(value)

    call(argument(inputs[0]))
    per_run: list[Timings] = []
    first: list[Any] | None = None
    same = True
    results: list[Any] = []
    for _ in range(runs):
        times: list[int] = []
        cpu_times: list[int] = []
        results = []
        for value in inputs:
            prepared = argument(value)
            cpu_started = cpu_clock()
            started = clock()
            result = call(prepared)
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


def bench_equivalent(graph: LinkGraph, links: list[tuple[int, str, int]], runs: int) -> dict[str, Any]:
    progress(f"equivalent-links: {len(links)} links x {runs} runs …")

    def ask(link: tuple[int, str, int]) -> EquivalentLinks:
        return equivalent_links(graph, *link)

    per_run, results, same = time_calls(ask, links, runs)
    reasons = Counter(result.reason.value for result in results if result.reason is not None)
    return {
        **asdict(median_of_runs(per_run)),
        "answered": sum(1 for result in results if result.links),
        "asked": len(links),
        "mean_results": statistics.fmean(len(result.links) for result in results),
        "reasons": dict(sorted(reasons.items())),
        "same_answers_every_run": same,
        "runs": [asdict(run) for run in per_run],
    }


def bench_moved(graph: LinkGraph, cases: Sequence[MoveCase], runs: int) -> dict[str, Any]:
    progress(f"moved: {len(cases)} simulated moves x {runs} runs …")

    def new_crawl(case: MoveCase) -> tuple[LinkGraph, str]:
        return simulate_move(graph, case, MOVED_UPDATED), case.url

    def ask(prepared: tuple[LinkGraph, str]) -> MovedAnswer:
        return moved(graph, prepared[0], prepared[1])

    per_run, answers, same = time_calls(ask, cases, runs, prepare=new_crawl)
    reasons = Counter(answer.reason.value for answer in answers if answer.reason is not None)
    return {
        **asdict(median_of_runs(per_run)),
        "answered": sum(1 for answer in answers if answer.candidates),
        "asked": len(cases),
        "new_location_first": sum(1 for answer, case in zip(answers, cases)
                                  if answer.candidates and answer.candidates[0].url == case.new_url),
        "mean_results": statistics.fmean(len(answer.candidates) for answer in answers),
        "reasons": dict(sorted(reasons.items())),
        "same_answers_every_run": same,
        "runs": [asdict(run) for run in per_run],
    }


def bench_graph(graph: LinkGraph, args: argparse.Namespace) -> dict[str, Any] | None:
    """Steps 3 and 4 on a loaded graph: the page-level and set-level methods; None when no
    node has enough parents to be a query."""
    queries, eligible = pick_queries(graph, args.queries, args.seed, args.min_in_degree)
    if not queries:
        return None
    root_sets, hubs = pick_root_sets(graph, args.root_sets, args.roots, args.seed)
    return {
        "queries": {"nodes": [graph.name(node) for node in queries], "eligible": eligible,
                    "min_in_degree": args.min_in_degree, "seed": args.seed, "runs": args.runs},
        "algorithms": bench_pages(graph, queries, args.runs),
        "root_sets": {"sets": [[graph.name(node) for node in roots] for roots in root_sets],
                      "asked": args.root_sets, "size": args.roots, "eligible": hubs},
        "authorities": bench_sets(graph, root_sets, args.runs) if root_sets else {},
    }


def bench_crawl(data_dir: Path, args: argparse.Namespace) -> dict[str, Any] | None:
    """Step 5: the crawl-built index of ``data_dir``, built in a temporary folder, loaded,
    and every method timed on it; None when no node has enough parents to be a query."""
    folder = Path(tempfile.mkdtemp(prefix="bench-baselines-crawl-"))
    db = folder / "links"
    try:
        progress(f"segmenting {data_dir} and building its link index in {db} …")
        built = run_child("--child-crawl", f"building the link index of {data_dir}", "--crawl", data_dir,
                          "--db", db)
        progress(f"loading {db} …")
        graph, loaded = load(db)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    section = bench_graph(graph, args)
    if section is None:
        return None
    links, anchored = pick_anchored_links(graph, args.anchored_links, args.seed)
    cases = choose_moves(graph, args.moves, args.seed) if args.moves else ()
    return {
        "data_dir": str(data_dir),
        "files": [str(data_dir / path) for path in CRAWL_FILES],
        "build": built,
        "load": loaded,
        **section,
        "anchored_links": {"links": [[graph.name(page), anchor, graph.name(target)] for page, anchor, target in links],
                           "asked": args.anchored_links, "eligible": anchored, "seed": args.seed},
        "equivalent_links": bench_equivalent(graph, links, args.runs) if links else None,
        "moves": {"urls": [[case.url, case.new_url] for case in cases], "asked": args.moves,
                  "eligible": len(eligible_pages(graph)), "updated": MOVED_UPDATED, "seed": args.seed},
        "moved": bench_moved(graph, cases, args.runs) if cases else None,
    }


# -- report -------------------------------------------------------------------------------

COLUMNS = (f"{'algorithm':<21}{'median':>9}{'p99':>9}{'mean':>9}{'max':>9}{'cpu med':>9}"
           f"{'answered':>10}{'same':>6}")


def row_line(name: str, row: dict[str, Any]) -> str:
    answered = f"{row['answered']}/{row['asked']}"
    return (f"{name:<21}{row['median_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['mean_ms']:>9.2f}"
            f"{row['max_ms']:>9.2f}{row['cpu_median_ms']:>9.2f}{answered:>10}{'yes' if row['same_answers_every_run'] else 'NO':>6}")


def print_load(loaded: dict[str, Any]) -> None:
    print(f"load_link_graph: {loaded['seconds']:.1f} s for {loaded['nodes']:,} nodes, {loaded['links']:,} links; "
          f"arrays (LinkGraph.nbytes) {loaded['arrays_mb']:.1f} MB; RSS {loaded['rss_before_mb']:.0f} MB before, "
          f"{loaded['rss_after_mb']:.0f} MB after; peak RSS "
          f"{'of the load' if loaded['peak_rss_reset'] else 'of the process'} {loaded['peak_rss_mb']:.0f} MB")


def print_methods(section: dict[str, Any]) -> None:
    """The page-level and the set-level tables of one index."""
    asked = section["queries"]
    print(f"\npage-level methods, ms per query: {len(asked['nodes'])} random nodes with in-degree >= "
          f"{asked['min_in_degree']} (of {asked['eligible']:,}; seed {asked['seed']}), "
          f"median over {asked['runs']} runs of each statistic")
    print(COLUMNS)
    for name, row in section["algorithms"].items():
        print(row_line(name, row))

    roots = section["root_sets"]
    print(f"\nset-level methods, ms per root set: {len(roots['sets'])} sets of {roots['size']} roots "
          f"(parents of a random page with >= {roots['size']} parents; {roots['eligible']:,} such pages), "
          f"median over {asked['runs']} runs")
    if section["authorities"]:
        print(COLUMNS)
        for name, row in section["authorities"].items():
            print(row_line(name, row))
    elif roots["asked"] == 0:
        print("(not run: --root-sets 0)")
    else:
        print("(not run: no page has that many parents)")


def print_edges(report: dict[str, Any]) -> None:
    print(f"bench_baselines: {report['source']}")
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
    print_load(report["load"])
    print_methods(report)
    print("\ntargets (median ms per query)")
    for target in report["targets"]:
        verdict = "met" if target["met"] else "NOT met"
        print(f"{target['algorithm']}: median {target['median_ms']:.2f} ms <= {target['target_ms']:.0f} ms: "
              f"{verdict} (Dean & Henzinger 1999: mean {target['dean_henzinger_1999_mean_ms']:.0f} ms; "
              f"here mean {target['mean_ms']:.2f} ms)")


def print_crawl(crawl: dict[str, Any]) -> None:
    built = crawl["build"]
    print(f"bench_baselines: crawl-built link index of {crawl['data_dir']} ({', '.join(CRAWL_FILES)})")
    print(f"build: {built['records']:,} segment records segmented in {built['segment_seconds']:.1f} s; "
          f"link index of {built['nodes']:,} nodes, {built['events'].get('links_indexed', 0):,} links "
          f"built in {built['index_seconds']:.1f} s ({built['process_seconds']:.1f} s with the process start); "
          f"database {built['db_bytes'] / 1e6:.1f} MB; peak RSS of the build {built['peak_rss_mb']:.0f} MB")
    print_load(crawl["load"])
    print_methods(crawl)
    runs = crawl["queries"]["runs"]
    links = crawl["anchored_links"]
    print(f"\nlink-level methods, median over {runs} runs")
    print(f"equivalent-links, ms per link: {len(links['links'])} random distinct crawled links (page, anchor, "
          f"target) with a non-empty anchor (of {links['eligible']:,}; seed {links['seed']})")
    moves = crawl["moves"]
    print(f"moved, ms per moved() call: {len(moves['urls'])} simulated moves of `eval moved` (of "
          f"{moves['eligible']:,} eligible pages; seed {moves['seed']}; F = {moves['updated']:g}; "
          f"new crawl built untimed)")
    print(COLUMNS)
    for name, row, asked, option in (("equivalent-links", crawl["equivalent_links"], links, "--anchored-links"),
                                     ("moved", crawl["moved"], moves, "--moves")):
        if row is not None:
            print(row_line(name, row))
        elif asked["asked"] == 0:
            print(f"{name:<21}(not run: {option} 0)")
        else:
            print(f"{name:<21}(not run: nothing to ask)")
    if crawl["moved"] is not None:
        print(f"moved: the new location ranked first in {crawl['moved']['new_location_first']} of "
              f"{crawl['moved']['asked']} moves")


def print_report(report: dict[str, Any]) -> None:
    print(f"machine: {report['machine']['cpus']} CPUs, python {report['machine']['python']}, "
          f"numpy {report['machine']['numpy']}; load average (1, 5, 15 min) "
          f"{report['load_average']['start']} at the start, {report['load_average']['end']} at the end")
    if "load" in report:
        print()
        print_edges(report)
    if report["crawl"] is not None:
        print()
        print_crawl(report["crawl"])


def bench_edges(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any] | None:
    """Steps 1-4 on the edge list (or the index at ``--db``); None when no node has enough
    parents to be a query."""
    edges: Path = args.edges or EDGES_DEFAULT
    temporary = args.db is None
    db: Path = Path(tempfile.mkdtemp(prefix="bench-baselines-")) / "links" if temporary else args.db
    try:
        reused = None if args.rebuild or temporary else reusable(db)
        imported = None
        if reused is None:
            if not edges.is_file():
                parser.error(f"--edges {edges}: no such file")
            progress(f"importing {edges} into {db} …")
            imported = run_import(edges, db)
        progress(f"loading {db} …")
        graph, loaded = load(db)
    finally:
        if temporary:
            shutil.rmtree(db.parent, ignore_errors=True)
    section = bench_graph(graph, args)
    if section is None:
        return None
    algorithms = section["algorithms"]
    return {
        "source": str(edges) if reused is None else ", ".join(reused["source"]),
        "db": None if temporary else str(db),
        "import": imported,
        "reused": reused,
        "load": loaded,
        **section,
        "targets": [
            {"algorithm": name, "target_ms": target, "median_ms": algorithms[name]["median_ms"],
             "mean_ms": algorithms[name]["mean_ms"], "met": algorithms[name]["target_met"],
             "dean_henzinger_1999_mean_ms": DH_1999_MEAN_MS[name]}
            for name, target in TARGETS_MS.items()
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--edges", type=Path,
                        help="edge list to import (source<TAB>target, .gz or plain). "
                             f"Default: {EDGES_DEFAULT} (not run when --crawl is given without --edges or --db)")
    parser.add_argument("--db", type=Path,
                        help="link index folder of the edge list: reused when it holds one, else built there "
                             "and kept (default: a temporary folder, removed at the end)")
    parser.add_argument("--rebuild", action="store_true", help="import even when --db holds a link index")
    parser.add_argument("--crawl", type=Path, metavar="DATA_DIR",
                        help="time every method on the crawl-built index of DATA_DIR's "
                             f"{', '.join(CRAWL_FILES)} (e.g. ../shared/data). Default: off")
    parser.add_argument("--anchored-links", type=int, default=ANCHORED_LINKS_DEFAULT,
                        help="(--crawl) query links of equivalent-links per run. Default: %(default)s")
    parser.add_argument("--moves", type=int, default=MOVES_DEFAULT,
                        help="(--crawl) simulated moves asked of moved per run. Default: %(default)s")
    parser.add_argument("--queries", type=int, default=QUERIES_DEFAULT,
                        help="query pages per run. Default: %(default)s")
    parser.add_argument("--min-in-degree", type=int, default=MIN_IN_DEGREE_DEFAULT,
                        help="query pages have at least this many parents. Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT,
                        help="seed of the query, root-set, link and move draws. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT,
                        help="runs (medians are shown). Default: %(default)s")
    parser.add_argument("--root-sets", type=int, default=ROOT_SETS_DEFAULT,
                        help="root sets for sfp and hits. Default: %(default)s")
    parser.add_argument("--roots", type=int, default=ROOTS_DEFAULT,
                        help="roots per set. Default: %(default)s")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--child-import", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-crawl", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_import:
        child_import(args.edges, args.db)
        return 0
    if args.child_crawl:
        child_crawl(args.crawl, args.db)
        return 0
    for name in ("queries", "runs", "min_in_degree", "roots"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    for name in ("root_sets", "anchored_links", "moves"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must be >= 0")
    if args.crawl is not None:
        missing = [path for path in CRAWL_FILES if not (args.crawl / path).is_file()]
        if missing:
            parser.error(f"--crawl {args.crawl}: no {', '.join(missing)}")
    run_edges = args.crawl is None or args.edges is not None or args.db is not None

    started_load = load_average()
    edges = None
    if run_edges:
        edges = bench_edges(args, parser)
        if edges is None:
            print(f"bench_baselines: no node has in-degree >= {args.min_in_degree}", file=sys.stderr)
            return 1
    crawl = None
    if args.crawl is not None:
        crawl = bench_crawl(args.crawl, args)
        if crawl is None:
            print(f"bench_baselines: no node of the crawl has in-degree >= {args.min_in_degree}", file=sys.stderr)
            return 1

    report: dict[str, Any] = {
        **(edges or {}),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__},
        "load_average": {"start": started_load, "end": load_average()},
        "crawl": crawl,
        "rss_end_mb": rss_mb().get("VmRSS"),
    }
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
