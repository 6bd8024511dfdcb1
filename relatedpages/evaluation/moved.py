"""Spertus's moved-page finder on simulated moves in the real corpus (``relatedpages eval moved``).

There is no pair of real crawls of ``../shared/data`` taken at two dates, so the second crawl
is simulated from the first, one move at a time, where the answer is known.

Protocol (every choice is printed with the report):

1. **Old crawl** = the real corpus's segment records: the 550 hub lists of
   ``awesomehub/awesomehub.warc.gz`` and the pages of ``web/aeb-pages.warc.gz`` and
   ``web/trafilatura-pages.warc.gz``, segmented and cached per process by
   :func:`relatedpages.evaluation.related.load_corpus_file` (a hub list's record wins over a
   web page of the same URL, as there), as a :class:`~relatedpages.store.linkgraph.LinkGraph` with
   URL names built by :func:`relatedpages.evaluation.related.link_graph_of` (every record's
   out-links in block order with anchors, ``LinkGraph.from_pages``: what
   ``relatedpages moved --old`` reads from a crawl-built link index).
2. **Moved pages**: the *eligible* pages are the crawled pages (their out-links are known, so
   the new location can be fetched with them) linked from at least ``min_parents``
   (:data:`MIN_PARENTS_DEFAULT` = 2) distinct crawled pages other than themselves.  Sorted by
   URL, shuffled with ``random.Random(seed)``, the first ``pages`` are moved (all of them when
   fewer are eligible).  Each moved page's parents are shuffled once with
   ``random.Random(f"{seed}:{url}")``, so that the updated parents of a smaller fraction are a
   subset of those of a larger one (the sweep compares like with like).
3. **One move per new crawl** (measured: patching the old graph's arrays takes tens of
   milliseconds, so there is no need to batch moves and reason about how they interact).
   The new crawl of a move of X is the old crawl where
   - X is no longer fetched (it stays a node while a stale link points to it: "gone");
   - X' = :func:`moved_url` (X with a last path segment ``moved``: same host and site) is
     fetched with X's out-links, in X's order, anchors and blocks (X's links to itself now
     point to X');
   - the first ``max(1, round(F × p))`` of X's p shuffled parents are **updated**: every one
     of their links to X now points to X', same anchor, same position;
   - the other parents are **stale**: they still link to X, unchanged.  (Chosen over
     dropping the link: dead links linger on the real web, and a parent that changes
     nothing is the honest null case — dropping would also shift its other links' slots.)
   - every other page is fetched again, unchanged.
   :func:`simulate_move` builds it by patching the old graph's arrays (node numbers of the
   old graph kept, X' appended; X' gets X's host number); the tests prove it equal to
   ``LinkGraph.from_pages`` of the edited page list.
4. **Query**: ``moved(old, new, X)`` with the module defaults of
   :mod:`relatedpages.baselines.moved` (:class:`MovedParams`: at most 10 candidates).  The
   rank of X' among the candidates is the measure: success@1, success@5 (X' ranked 1st,
   within the top 5), MRR (1 / rank, 0 when X' is not a candidate), and the count of each
   :class:`MovedReason` when the answer is empty.  Per-query time is the ``moved`` call
   alone (median and p99); the time to build each new crawl is reported beside it.
5. **Control**: in the same new crawl, a page that did not move — the next moved page in
   the shuffled order (any other eligible page when only one is moved) — must answer
   ``not_gone``; the reasons of the controls are counted.
6. **Sweep**: the same moves with F in :data:`UPDATED_SWEEP_DEFAULT` (and the chosen F).

What this measures and what it does not: apart from the move, the new crawl is the old one,
so the only new links on an updated parent are the links to X' — this is the finder's
ceiling on real page layouts and anchors (and its speed), not its accuracy amid the churn of
a real recrawl (parents not refetched, new links beside the moved one, rewritten anchors).
"""
from __future__ import annotations

import json
import logging
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from relatedpages.baselines.moved import MovedParams, MovedReason, moved

if TYPE_CHECKING:
    from relatedpages.store.linkgraph import LinkGraph

logger = logging.getLogger(__name__)

#: Pages moved (all eligible pages when fewer; 131 are eligible on ../shared/data).
PAGES_DEFAULT = 100
SEED_DEFAULT = 1
#: F: the share of a moved page's parents that link to the new location (at least one).
UPDATED_DEFAULT = 0.5
UPDATED_SWEEP_DEFAULT = (0.25, 0.5, 1.0)
#: A moved page is linked from at least this many distinct pages other than itself.
MIN_PARENTS_DEFAULT = 2
#: The last path segment added to a moved page's URL (module docstring, step 3).
MOVED_SEGMENT = "moved"
#: success@k is reported for these k.
SUCCESS_AT = (1, 5)
#: The reason counted for an answer with candidates (not a MovedReason: nothing went wrong).
ANSWERED = "answered"


def moved_url(url: str) -> str:
    """The new location of a moved page: its URL with a last path segment ``moved`` added
    (same scheme, host, query; a site of ``github.com/<owner>`` stays that site).

    >>> moved_url("https://github.com/sindresorhus/awesome")
    'https://github.com/sindresorhus/awesome/moved'
    >>> moved_url("http://example.com/")
    'http://example.com/moved'
    >>> moved_url("https://example.com/a/b.html?id=3")
    'https://example.com/a/b.html/moved?id=3'
    """
    parts = urlsplit(url)
    path = parts.path.rstrip("/") + "/" + MOVED_SEGMENT
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


@dataclass(frozen=True)
class MoveCase:
    """A page to move: its URL, its new URL and its parents in update order (step 2)."""

    url: str
    new_url: str
    parents: tuple[str, ...]

    def updated(self, fraction: float) -> tuple[str, ...]:
        """The parents that link to the new URL: the first ``max(1, round(F × p))``.

        >>> case = MoveCase("u", "u/moved", ("a", "b", "c", "d", "e"))
        >>> [len(case.updated(f)) for f in (0.0, 0.25, 0.5, 1.0)]
        [1, 1, 2, 5]
        """
        return self.parents[: max(1, round(fraction * len(self.parents)))]


def eligible_pages(graph: LinkGraph, min_parents: int = MIN_PARENTS_DEFAULT) -> tuple[int, ...]:
    """Crawled nodes linked from at least ``min_parents`` distinct pages other than
    themselves, in URL order."""
    found = []
    for node in np.flatnonzero(graph.crawled).tolist():
        parents = graph.parents(node)
        if int(np.count_nonzero(parents != node)) >= min_parents:
            found.append(node)
    return tuple(sorted(found, key=graph.name))


def choose_moves(
    graph: LinkGraph,
    pages: int = PAGES_DEFAULT,
    seed: int = SEED_DEFAULT,
    min_parents: int = MIN_PARENTS_DEFAULT,
) -> tuple[MoveCase, ...]:
    """The moves of step 2: ``pages`` eligible pages drawn with ``Random(seed)``, each with
    its parents shuffled by ``Random(f"{seed}:{url}")``.  A page whose new URL is already a
    node of the graph is skipped (logged)."""
    if pages < 1:
        raise ValueError(f"pages must be >= 1, got {pages!r}")
    order = list(eligible_pages(graph, min_parents))
    random.Random(seed).shuffle(order)
    cases: list[MoveCase] = []
    for node in order:
        if len(cases) == pages:
            break
        url = graph.name(node)
        new_url = moved_url(url)
        if graph.id_of(new_url) is not None:
            logger.info("%s: its new URL %s is already a node; not moved", url, new_url)
            continue
        parents = sorted(graph.name(p) for p in graph.parents(node).tolist() if p != node)
        random.Random(f"{seed}:{url}").shuffle(parents)
        cases.append(MoveCase(url, new_url, tuple(parents)))
    return tuple(cases)


def simulate_move(old: LinkGraph, case: MoveCase, fraction: float) -> LinkGraph:
    """The new crawl of step 3, by patching ``old``'s arrays: X unfetched, X' appended and
    fetched with X's out-links, the updated parents' links to X retargeted to X'."""
    from relatedpages.store.linkgraph import LinkGraph

    node = old.id_of(case.url)
    if node is None or not old.crawled[node]:
        raise ValueError(f"{case.url} is not a crawled page of the old crawl")
    n = len(old)
    new = n  # X' is the last node
    targets = old.out_targets.copy()
    for parent in case.updated(fraction):
        parent_node = old.id_of(parent)
        if parent_node is None:
            raise ValueError(f"{parent} is not a page of the old crawl")
        span = targets[old.out_offsets[parent_node]:old.out_offsets[parent_node + 1]]
        span[span == node] = new  # a view: retargets in place, same anchor, same position
    start, end = int(old.out_offsets[node]), int(old.out_offsets[node + 1])
    moved_targets = targets[start:end].copy()
    moved_targets[moved_targets == node] = new  # X's links to itself move with it
    out_targets = np.concatenate([targets[:start], targets[end:], moved_targets])
    out_anchors = np.concatenate([old.out_anchors[:start], old.out_anchors[end:],
                                  old.out_anchors[start:end]])
    out_blocks = np.concatenate([old.out_blocks[:start], old.out_blocks[end:],
                                 old.out_blocks[start:end]])
    degrees = np.diff(old.out_offsets)
    degrees[node] = 0
    offsets = np.zeros(n + 2, dtype=np.int64)
    np.cumsum(np.append(degrees, end - start), out=offsets[1:])
    crawled = np.append(old.crawled, True)
    crawled[node] = False
    hosts = np.append(old.hosts, old.hosts[node]).astype(np.int32)
    return LinkGraph([*old.names, case.new_url], old.key_kind, offsets,
                     out_targets.astype(np.int32), out_anchors, out_blocks, old.anchor_texts,
                     crawled, hosts, old.host_names, old.host_rule)


# -- running and scoring -----------------------------------------------------------------


@dataclass(frozen=True)
class MoveResult:
    """One simulated move: where X' ranked, or why the answer was empty, and the control."""

    url: str
    new_url: str
    parents: int
    updated: int
    rank: int | None  # X''s rank among the candidates (1 = first); None when absent
    reason: MovedReason | None  # the answer's reason when it has no candidates
    candidates: int
    #: best other candidate's score / X''s score when X' is a candidate (0: no other); how
    #: far the runner-up is from overtaking
    runner_up: float | None
    control: str  # a page that did not move, asked in the same new crawl
    control_reason: MovedReason | None
    query_seconds: float  # the moved() call for X alone
    build_seconds: float  # building the new crawl


def run_moves(
    old: LinkGraph,
    cases: Sequence[MoveCase],
    fraction: float,
    params: MovedParams | None = None,
    controls: Sequence[str] | None = None,
) -> tuple[MoveResult, ...]:
    """Simulate each move in its own new crawl and ask ``moved`` for X and for a control.

    Controls default to the next case's URL (step 5); pass ``controls`` (one per case) when
    there is a single case."""
    check_fraction(fraction)
    params = params or MovedParams()
    if controls is None:
        if len(cases) < 2:
            raise ValueError("one move needs an explicit control page")
        controls = [cases[(i + 1) % len(cases)].url for i in range(len(cases))]
    if len(controls) != len(cases):
        raise ValueError("one control page per move")
    results = []
    for case, control in zip(cases, controls):
        if control == case.url:
            raise ValueError(f"the control of {case.url} is the moved page itself")
        started = time.perf_counter()
        new = simulate_move(old, case, fraction)
        built = time.perf_counter()
        answer = moved(old, new, case.url, params)
        asked = time.perf_counter()
        control_answer = moved(old, new, control, params)
        urls = [candidate.url for candidate in answer.candidates]
        runner_up = None
        if case.new_url in urls:
            own = answer.candidates[urls.index(case.new_url)].score
            others = [c.score for c in answer.candidates if c.url != case.new_url]
            runner_up = max(others) / own if others else 0.0
        results.append(MoveResult(
            case.url, case.new_url, len(case.parents), len(case.updated(fraction)),
            urls.index(case.new_url) + 1 if case.new_url in urls else None,
            answer.reason, len(urls), runner_up, control, control_answer.reason,
            asked - built, built - started))
    return tuple(results)


@dataclass(frozen=True)
class MoveScores:
    """The measures of one F (module docstring, step 4)."""

    fraction: float
    moves: int
    success: Mapping[int, float]  # k -> share of moves with X' in the top k
    mrr: float
    found: float  # share of moves with X' among the candidates at all
    reasons: Mapping[str, int]  # MovedReason value (or "answered") -> moves
    controls: Mapping[str, int]  # the controls' MovedReason value (or "answered") -> moves
    mean_candidates: float
    runner_up_median: float  # over moves with X' among the candidates
    runner_up_max: float
    mean_updated: float  # parents updated per move
    query_ms_median: float
    query_ms_p99: float
    build_ms_median: float


def _percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (the p99 of fewer than 100 values is the maximum).

    >>> _percentile([1.0, 2.0, 3.0, 4.0], 0.99), _percentile([3.0, 1.0, 2.0], 0.5)
    (4.0, 2.0)
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _reason(reason: MovedReason | None) -> str:
    return ANSWERED if reason is None else reason.value


def score_moves(results: Sequence[MoveResult], fraction: float) -> MoveScores:
    """success@k, MRR, reason counts and times of one F's moves."""
    moves = len(results)
    ratios = [r.runner_up for r in results if r.runner_up is not None]

    def mean(values: Iterable[float]) -> float:
        return sum(values) / moves if moves else 0.0

    return MoveScores(
        fraction=fraction,
        moves=moves,
        success={k: mean(1.0 for r in results if r.rank is not None and r.rank <= k)
                 for k in SUCCESS_AT},
        mrr=mean(1.0 / r.rank for r in results if r.rank is not None),
        found=mean(1.0 for r in results if r.rank is not None),
        reasons=dict(sorted(Counter(_reason(r.reason) for r in results).items())),
        controls=dict(sorted(Counter(_reason(r.control_reason) for r in results).items())),
        mean_candidates=mean(r.candidates for r in results),
        runner_up_median=statistics.median(ratios) if ratios else 0.0,
        runner_up_max=max(ratios, default=0.0),
        mean_updated=mean(r.updated for r in results),
        query_ms_median=1000 * statistics.median([r.query_seconds for r in results]) if moves else 0.0,
        query_ms_p99=1000 * _percentile([r.query_seconds for r in results], 0.99),
        build_ms_median=1000 * statistics.median([r.build_seconds for r in results]) if moves else 0.0,
    )


def check_fraction(fraction: float) -> None:
    """F must be a share in (0, 1].

    >>> check_fraction(0.0)
    Traceback (most recent call last):
    ...
    ValueError: the updated fraction must be in (0, 1], got 0.0
    """
    if not (math.isfinite(fraction) and 0.0 < fraction <= 1.0):
        raise ValueError(f"the updated fraction must be in (0, 1], got {fraction!r}")


# -- the evaluation ----------------------------------------------------------------------


@dataclass(frozen=True)
class MovedEvaluation:
    """The chosen F's scores, the sweep (one row per F, the chosen one included), figures."""

    parameters: Mapping[str, Any]
    protocol: Mapping[str, int]
    scores: MoveScores
    sweep: tuple[MoveScores, ...]
    seconds: Mapping[str, float]
    results: tuple[MoveResult, ...] = field(repr=False)  # the chosen F's moves


def evaluate_graph(
    old: LinkGraph,
    *,
    pages: int = PAGES_DEFAULT,
    seed: int = SEED_DEFAULT,
    updated: float = UPDATED_DEFAULT,
    sweep: Sequence[float] = UPDATED_SWEEP_DEFAULT,
    min_parents: int = MIN_PARENTS_DEFAULT,
    params: MovedParams | None = None,
) -> MovedEvaluation:
    """Steps 2–6 on a given old crawl."""
    for fraction in (updated, *sweep):
        check_fraction(fraction)
    params = params or MovedParams()
    started = time.monotonic()
    cases = choose_moves(old, pages, seed, min_parents)
    if len(cases) < 2:
        raise ValueError(f"need at least 2 eligible pages (one move, one control), got {len(cases)}")
    seconds = {"choosing the moves": time.monotonic() - started}
    rows: dict[float, tuple[MoveResult, ...]] = {}
    for fraction in sorted({*sweep, updated}):
        step = time.monotonic()
        rows[fraction] = run_moves(old, cases, fraction, params)
        seconds[f"{len(cases)} moves at F = {fraction:g}"] = time.monotonic() - step
    protocol = {"old_nodes": len(old), "old_links": old.edges,
                "old_crawled": int(old.crawled.sum()),
                "eligible": len(eligible_pages(old, min_parents)), "moves": len(cases)}
    parameters = {"pages": pages, "seed": seed, "updated": updated, "sweep": sorted(rows),
                  "min_parents": min_parents, "stale_parents": "keep the link to X",
                  "moved": asdict(params)}
    return MovedEvaluation(parameters, protocol, score_moves(rows[updated], updated),
                           tuple(score_moves(found, f) for f, found in rows.items()),
                           seconds, rows[updated])


def corpus_records(data_dir: str | Path) -> list[Mapping[str, Any]]:
    """Step 1: the segment records of the whole corpus, in URL order (cached segmentation)."""
    from relatedpages.evaluation.related import HUB_PATH, WEB_PATHS, load_corpus_file

    data = Path(data_dir)
    index: dict[str, Mapping[str, Any]] = {}
    for path in WEB_PATHS:
        index.update(load_corpus_file(str(data / path)).records)
    index.update(load_corpus_file(str(data / HUB_PATH), True).records)  # lists win
    return [index[url] for url in sorted(index)]


def evaluate(
    data_dir: str | Path,
    *,
    pages: int = PAGES_DEFAULT,
    seed: int = SEED_DEFAULT,
    updated: float = UPDATED_DEFAULT,
    sweep: Sequence[float] = UPDATED_SWEEP_DEFAULT,
    min_parents: int = MIN_PARENTS_DEFAULT,
    params: MovedParams | None = None,
) -> MovedEvaluation:
    """The whole protocol of the module docstring on ``data_dir`` (``../shared/data``)."""
    from relatedpages.evaluation.related import link_graph_of

    for fraction in (updated, *sweep):
        check_fraction(fraction)
    if pages < 1:
        raise ValueError(f"pages must be >= 1, got {pages!r}")
    started = time.monotonic()
    records = corpus_records(data_dir)
    loaded = time.monotonic()
    old = link_graph_of(records)
    built = time.monotonic()
    result = evaluate_graph(old, pages=pages, seed=seed, updated=updated, sweep=sweep,
                            min_parents=min_parents, params=params)
    seconds = {"corpus loading (segmentation cached per process)": loaded - started,
               "old crawl's link graph": built - loaded, **result.seconds,
               "total": time.monotonic() - started}
    return MovedEvaluation({"data_dir": str(data_dir), **result.parameters},
                           {"records": len(records), **result.protocol}, result.scores,
                           result.sweep, seconds, result.results)


# -- reporting ---------------------------------------------------------------------------


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "none"


def format_report(evaluation: MovedEvaluation) -> str:
    """The printed report: protocol, the chosen F's measures, the sweep, timings."""
    p, q, s = evaluation.parameters, evaluation.protocol, evaluation.scores
    lines = [
        "Moved-page finder (Spertus) on simulated moves in the real corpus",
        f"  old crawl: {q['old_crawled']} crawled pages, {q['old_nodes']} nodes, "
        f"{q['old_links']} links (the corpus's segment records; link_graph_of)",
        f"  moved pages: {q['moves']} of {q['eligible']} eligible (crawled, linked from >= "
        f"{p['min_parents']} other pages; seed {p['seed']}), one move per new crawl",
        f"  new crawl: X unfetched, X' = X + '/{MOVED_SEGMENT}' fetched with X's out-links; "
        f"max(1, round(F x parents)) parents relink to X' (same anchor and position), "
        f"the others {p['stale_parents']} (stale)",
        f"  finder: {_counts({k: v for k, v in p['moved'].items()})}",
        "",
        f"F = {s.fraction:g}: {s.moves} moves, {s.mean_updated:.2f} updated parents per move",
        *(f"  success@{k:<2} {100 * s.success[k]:6.1f} %" for k in SUCCESS_AT),
        f"  MRR         {s.mrr:8.3f}   (X' among the candidates: {100 * s.found:.1f} %)",
        f"  answers: {_counts(s.reasons)}; {s.mean_candidates:.2f} candidates per answer",
        f"  runner-up score / X' score: median {s.runner_up_median:.3f}, max {s.runner_up_max:.3f}",
        f"  control (a page that did not move): {_counts(s.controls)}",
        f"  per query: median {s.query_ms_median:.2f} ms, p99 {s.query_ms_p99:.2f} ms "
        f"(new crawl built in {s.build_ms_median:.1f} ms, median)",
        "",
        "Sweep over F (same moves; updated parents of a smaller F are a subset; "
        "2nd/1st* = the largest runner-up / X' score ratio)",
        f"{'F':>6}{'upd/mv':>8}{'s@1':>8}{'s@5':>8}{'MRR':>8}{'2nd/1st*':>9}{'med ms':>9}{'p99 ms':>9}"
        "  answers; control",
    ]
    for row in evaluation.sweep:
        lines.append(
            f"{row.fraction:>6g}{row.mean_updated:>8.2f}{100 * row.success[1]:>8.1f}"
            f"{100 * row.success[5]:>8.1f}{row.mrr:>8.3f}{row.runner_up_max:>9.3f}"
            f"{row.query_ms_median:>9.2f}"
            f"{row.query_ms_p99:>9.2f}  {_counts(row.reasons)}; {_counts(row.controls)}")
    lines += ["", "time: " + ", ".join(f"{name} {value:.1f} s"
                                       for name, value in evaluation.seconds.items())]
    return "\n".join(lines)


def scores_as_dict(scores: MoveScores) -> dict[str, Any]:
    return {
        "updated": scores.fraction,
        "moves": scores.moves,
        **{f"success_at_{k}": round(v, 4) for k, v in scores.success.items()},
        "mrr": round(scores.mrr, 4),
        "found": round(scores.found, 4),
        "reasons": dict(scores.reasons),
        "controls": dict(scores.controls),
        "mean_candidates": round(scores.mean_candidates, 3),
        "runner_up_median": round(scores.runner_up_median, 4),
        "runner_up_max": round(scores.runner_up_max, 4),
        "mean_updated": round(scores.mean_updated, 3),
        "query_ms_median": round(scores.query_ms_median, 3),
        "query_ms_p99": round(scores.query_ms_p99, 3),
        "build_ms_median": round(scores.build_ms_median, 3),
    }


def evaluation_as_json(evaluation: MovedEvaluation) -> str:
    return json.dumps(
        {
            "parameters": evaluation.parameters,
            "protocol": evaluation.protocol,
            "scores": scores_as_dict(evaluation.scores),
            "sweep": [scores_as_dict(row) for row in evaluation.sweep],
            "seconds": {name: round(value, 2) for name, value in evaluation.seconds.items()},
        },
        sort_keys=True,
        ensure_ascii=False,
    )
