"""The user study's report: the paper's R-score curve per system (Fig. 10) and per topic
(Fig. 11), with bootstrap confidence intervals over query pages, the graders' agreement
(Cohen's kappa per pair, Fleiss' kappa over all), and the grades as CSV.

A result's grade is the mean over the graders who graded it.  A query page counts once every
one of its results has a grade.  R-score at R (as :mod:`relatedpages.evaluation.related`):
the mean grade of a system's top R results on a page, a missing result counting 0, averaged
over the pages.
"""
from __future__ import annotations

import csv
import itertools
import random
import sqlite3
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from relatedpages.study.store import GRADES, grade_rows, meta

CI_RESAMPLES = 1000
CI_SEED = 1
TABLE_R = (1, 3, 5, 10, 15)
TOPIC_R = 5


def rscore(grades_by_rank: Mapping[int, float], r: int) -> float:
    """Mean grade of ranks 1..r, missing ranks 0.

    >>> rscore({1: 2.0, 2: 1.0}, 3)
    1.0
    """
    return sum(grades_by_rank.get(rank, 0.0) for rank in range(1, r + 1)) / r


def cohen_kappa(first: Sequence[int], second: Sequence[int], categories: Sequence[int] = GRADES) -> float | None:
    """Cohen's kappa of two graders' grades of the same items (None when undefined).

    >>> round(cohen_kappa([0, 1, 2, 2, 0, 1], [0, 1, 2, 1, 0, 2]), 3)
    0.5
    >>> cohen_kappa([2, 2], [2, 2]) is None  # chance agreement is 1: undefined
    True
    """
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(a == b for a, b in zip(first, second)) / n
    expected = sum((first.count(c) / n) * (second.count(c) / n) for c in categories)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def fleiss_kappa(items: Sequence[Sequence[int]], categories: Sequence[int] = GRADES) -> float | None:
    """Fleiss' kappa of items each graded by the same number (>= 2) of graders.

    >>> round(fleiss_kappa([[0, 0, 0], [1, 1, 2], [2, 2, 2], [0, 1, 1]]), 3)  # P = 2/3, Pe = 1/3
    0.5
    >>> round(fleiss_kappa([[0, 0], [1, 1], [2, 2], [0, 2]]), 3)  # P = 3/4, Pe = 22/64
    0.619
    """
    if not items or len({len(item) for item in items}) != 1 or len(items[0]) < 2:
        return None
    raters = len(items[0])
    counts = [[item.count(c) for c in categories] for item in items]
    per_item = [(sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in counts]
    observed = sum(per_item) / len(items)
    shares = [sum(row[j] for row in counts) / (len(items) * raters) for j in range(len(categories))]
    expected = sum(p * p for p in shares)
    return None if expected == 1 else (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class StudyReport:
    name: str
    systems: list[str]
    k: int
    graders: list[str]
    queries: int  # stored
    counted: int  # fully graded
    curves: dict[str, list[float]]  # system -> R-score at R = 1..k
    intervals: dict[str, dict[int, tuple[float, float]]]  # system -> R -> 95 % CI
    topics: dict[str, dict[str, tuple[int, float]]]  # topic -> system -> (pages, R-score at TOPIC_R)
    cohen: dict[tuple[str, str], tuple[int, float | None]]  # pair -> (shared results, kappa)
    fleiss: tuple[int, float | None]  # (results graded by every grader, kappa)


def build_report(connection: sqlite3.Connection) -> StudyReport:
    info = meta(connection)
    systems, k = list(info["systems"]), int(info["k"])
    queries = connection.execute("SELECT COUNT(*) FROM queries").fetchone()[0]
    totals = dict(connection.execute("SELECT query_id, COUNT(*) FROM results GROUP BY query_id"))
    position_of = dict(connection.execute("SELECT id, position FROM queries"))
    by_result: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)
    ranks_of: dict[tuple[int, str], dict[str, int]] = {}
    topic_of: dict[int, str | None] = {}
    for grader, position, _, topic, url, grade, ranks in grade_rows(connection):
        by_result[(position, url)][grader] = grade
        ranks_of[(position, url)] = ranks
        topic_of[position] = topic
    graded_per_query: dict[int, int] = defaultdict(int)
    for position, _ in by_result:
        graded_per_query[position] += 1
    complete = sorted(position for query_id, total in totals.items()
                      if graded_per_query.get(position := position_of[query_id], 0) == total)
    per_query: dict[str, dict[int, dict[int, float]]] = {s: defaultdict(dict) for s in systems}
    for (position, url), grades in by_result.items():
        if position not in complete:
            continue
        mean = sum(grades.values()) / len(grades)
        for system, rank in ranks_of[(position, url)].items():
            per_query[system][position][rank] = mean

    def curve(system: str, pages: Sequence[int]) -> list[float]:
        if not pages:
            return [0.0] * k
        return [sum(rscore(per_query[system].get(p, {}), r) for p in pages) / len(pages) for r in range(1, k + 1)]

    curves = {system: curve(system, complete) for system in systems}
    rng = random.Random(CI_SEED)
    samples: dict[str, list[list[float]]] = {system: [] for system in systems}
    if complete:
        for _ in range(CI_RESAMPLES):
            drawn = [rng.choice(complete) for _ in complete]
            for system in systems:
                samples[system].append(curve(system, drawn))
    intervals = {system: {r: _percentiles([s[r - 1] for s in samples[system]]) for r in TABLE_R if r <= k}
                 for system in systems}
    topics: dict[str, dict[str, tuple[int, float]]] = {}
    for topic in sorted({topic_of[p] or "(no topic)" for p in complete}):
        pages = [p for p in complete if (topic_of[p] or "(no topic)") == topic]
        topics[topic] = {system: (len(pages), curve(system, pages)[min(TOPIC_R, k) - 1]) for system in systems}
    graders = sorted({name for grades in by_result.values() for name in grades})
    cohen = {}
    for a, b in itertools.combinations(graders, 2):
        shared = [(g[a], g[b]) for g in by_result.values() if a in g and b in g]
        cohen[(a, b)] = (len(shared), cohen_kappa([x for x, _ in shared], [y for _, y in shared]))
    everyone = [[g[name] for name in graders] for g in by_result.values() if len(g) == len(graders)]
    fleiss = (len(everyone), fleiss_kappa(everyone) if len(graders) >= 2 else None)
    return StudyReport(info["name"], systems, k, graders, queries, len(complete), curves, intervals,
                       topics, cohen, fleiss)


def _percentiles(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return (0.0, 0.0)
    ordered = sorted(values)
    return ordered[int(0.025 * (len(ordered) - 1))], ordered[int(0.975 * (len(ordered) - 1))]


def _kappa_text(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def format_report(report: StudyReport) -> str:
    lines = [f"Study {report.name}: {report.queries} query pages, {report.counted} fully graded; "
             f"graders: {', '.join(report.graders) or 'none yet'}",
             "grades: 0 = unrelated, 1 = somewhat related, 2 = related; a result's grade = the mean "
             "of its graders'; missing results count 0",
             "",
             f"R-score (the paper's Fig. 10), 95 % bootstrap interval over the query pages ({CI_RESAMPLES} draws)",
             f"{'R':>4}" + "".join(f"{system:>28}" for system in report.systems)]
    for r in TABLE_R:
        if r > report.k:
            continue
        cells = []
        for system in report.systems:
            low, high = report.intervals[system][r]
            cells.append(f"{report.curves[system][r - 1]:.3f} [{low:.3f}, {high:.3f}]")
        lines.append(f"{r:>4}" + "".join(f"{cell:>28}" for cell in cells))
    lines += ["", f"R-score at R = {TOPIC_R} per topic (the paper's Fig. 11)",
              f"{'topic':<24}{'pages':>6}" + "".join(f"{system:>14}" for system in report.systems)]
    for topic, scores in report.topics.items():
        pages = next(iter(scores.values()))[0]
        lines.append(f"{topic[:24]:<24}{pages:>6}" + "".join(f"{scores[s][1]:>14.3f}" for s in report.systems))
    lines += ["", "Agreement between graders"]
    for (a, b), (shared, kappa) in report.cohen.items():
        lines.append(f"  Cohen's kappa {a} / {b}: {_kappa_text(kappa)} on {shared} results graded by both")
    if len(report.graders) >= 2:
        lines.append(f"  Fleiss' kappa, all {len(report.graders)} graders: {_kappa_text(report.fleiss[1])} "
                     f"on {report.fleiss[0]} results graded by all")
    else:
        lines.append("  (fewer than two graders: no agreement to measure)")
    return "\n".join(lines)


def plot_report(report: StudyReport, curve_png: Path, topics_png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    xs = list(range(1, report.k + 1))
    for system in report.systems:
        axes.plot(xs, report.curves[system], marker="o", markersize=3, label=system)
        rs = sorted(report.intervals[system])
        axes.fill_between(rs, [report.intervals[system][r][0] for r in rs],
                          [report.intervals[system][r][1] for r in rs], alpha=0.15)
    axes.set_xlabel("R (top R results)")
    axes.set_ylabel("R-score (mean grade, 0-2)")
    axes.set_title(f"Study {report.name}: {report.counted} pages, {len(report.graders)} graders")
    axes.legend()
    figure.tight_layout()
    figure.savefig(curve_png, dpi=120)
    plt.close(figure)
    figure, axes = plt.subplots(figsize=(max(6.4, 0.9 * len(report.topics) + 2), 4.2))
    topics = list(report.topics)
    width = 0.8 / max(1, len(report.systems))
    for index, system in enumerate(report.systems):
        axes.bar([t + index * width for t in range(len(topics))],
                 [report.topics[topic][system][1] for topic in topics], width, label=system)
    axes.set_xticks([t + 0.4 - width / 2 for t in range(len(topics))], topics, rotation=30, ha="right")
    axes.set_ylabel(f"R-score at R = {TOPIC_R}")
    axes.legend()
    figure.tight_layout()
    figure.savefig(topics_png, dpi=120)
    plt.close(figure)


def export_csv(connection: sqlite3.Connection, path: Path) -> int:
    """Every grade as a CSV row (with each system's rank of the result); the row count."""
    systems = list(meta(connection)["systems"])
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["grader", "query_position", "query_url", "topic", "result_url", "grade",
                         *[f"rank_{system}" for system in systems]])
        for grader, position, query, topic, url, grade, ranks in grade_rows(connection):
            writer.writerow([grader, position, query, topic or "", url, grade,
                             *[ranks.get(system, "") for system in systems]])
            rows += 1
    return rows
