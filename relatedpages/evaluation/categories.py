"""Related-pages quality per topic category of the held-out hub lists: the paper's Fig. 11.

The paper reports its user study's R-score per topic of the query pages (Fig. 11).  Here a
test page's topic is the category of the held-out hub list that holds it
(``awesomehub/categories.tsv``: 36 categories of the sindresorhus/awesome taxonomy; a page
in lists of several categories counts in each).  For every row of ``relatedpages eval
related`` and every category with at least :data:`MIN_PAGES` test pages (the others are
pooled as "other categories"): the number of test pages, the average R-score at R = 5 and
P@15 same list (missing results = 0), as a table and as grouped bars (PNG).
"""
from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relatedpages.evaluation.measures import score_related
from relatedpages.evaluation.related import (
    BLOCK,
    COMPANION,
    COCITATION,
    WEIGHTED_COSINE,
    Evaluation,
    GroundTruth,
)

CATEGORIES_PATH = "awesomehub/categories.tsv"
#: Categories with fewer test pages are pooled (their averages would be noise).
MIN_PAGES = 20
OTHER = "other categories"
#: The R of the per-category R-score.
R = 5


@dataclass(frozen=True)
class CategoryRow:
    category: str
    test_pages: int
    rscore: Mapping[str, float]  # algorithm -> average R-score at R (missing = 0)
    p_list: Mapping[str, float]  # algorithm -> P@15 same list (missing = 0)


def read_categories(path: str | Path) -> dict[str, str]:
    """``{hub list URL: category}`` from ``categories.tsv`` (header ``list_url  category``);
    a list with an empty category is left out (its pages count as "uncategorised")."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        if rows.fieldnames is None or not {"list_url", "category"} <= set(rows.fieldnames):
            raise ValueError(f"{path}: expected the columns list_url and category")
        return {row["list_url"]: row["category"].strip() for row in rows
                if (row["category"] or "").strip()}


def pages_by_category(tests: Sequence[str], truth: GroundTruth, held_out: Sequence[str],
                      categories: Mapping[str, str], min_pages: int = MIN_PAGES,
                      ) -> dict[str, list[str]]:
    """Test pages grouped by the categories of the held-out lists holding them; small
    groups pooled under :data:`OTHER` (last).

    >>> from relatedpages.evaluation.related import HubList, HubSection
    >>> truth = GroundTruth.from_lists([HubList("l0", "s", (HubSection("A", 2, ("a", "b")),)),
    ...                                 HubList("l1", "s", (HubSection("B", 2, ("b", "c")),))])
    >>> pages_by_category(["a", "b", "c"], truth, ["l0", "l1"], {"l0": "X", "l1": "Y"}, 2)
    {'X': ['a', 'b'], 'Y': ['b', 'c']}
    >>> pages_by_category(["a", "b", "c"], truth, ["l0", "l1"], {"l0": "X"}, 3)
    {'other categories': ['a', 'b', 'c']}
    """
    grouped: defaultdict[str, list[str]] = defaultdict(list)
    for page in tests:
        held = {categories.get(held_out[i], "uncategorised") for i in truth.lists_of.get(page, ())}
        for category in sorted(held):
            grouped[category].append(page)
    kept = {c: pages for c, pages in sorted(grouped.items()) if len(pages) >= min_pages}
    pooled = sorted({page for c, pages in grouped.items() if c not in kept for page in pages})
    if pooled:
        kept[OTHER] = pooled
    return kept


def category_rows(evaluation: Evaluation, categories: Mapping[str, str],
                  min_pages: int = MIN_PAGES) -> list[CategoryRow]:
    """One row per category (:func:`pages_by_category`), every algorithm of the evaluation."""
    if evaluation.truth is None or not evaluation.related:
        raise ValueError("the evaluation carries no related lists (run evaluate())")
    k = int(evaluation.parameters.get("k", 15))
    groups = pages_by_category(evaluation.test_pages, evaluation.truth,
                               evaluation.held_out_urls, categories, min_pages)
    rows = []
    for category, pages in groups.items():
        scores = {name: score_related(related, pages, evaluation.truth, k)
                  for name, related in evaluation.related.items()}
        rows.append(CategoryRow(category, len(pages),
                                {name: s.rscore[R - 1] for name, s in scores.items()},
                                {name: s.p_list_all for name, s in scores.items()}))
    return rows


def leads(row: CategoryRow, name: str = BLOCK) -> bool:
    """Whether ``name`` has the best R-score of the row (ties count as leading)."""
    return row.rscore[name] >= max(row.rscore.values())


def format_categories(rows: Sequence[CategoryRow], names: Sequence[str]) -> str:
    """The per-category table: R-score at R and P@15 same list per algorithm."""
    width = max([len(row.category) for row in rows] + [10])
    head = "".join(f"{name[:18]:>20}" for name in names)
    lines = [f"Per category of the held-out lists (cf. paper Fig. 11): R-score R = {R}, "
             "missing results = 0",
             f"{'category':<{width}} {'pages':>5}{head}"]
    for row in rows:
        cells = "".join(f"{row.rscore[name]:>20.3f}" for name in names)
        lines.append(f"{row.category:<{width}} {row.test_pages:>5}{cells}")
    won = sum(leads(row) for row in rows)
    lines.append(f"{BLOCK} (defaults) has the best R-score in {won} of {len(rows)} categories")
    return "\n".join(lines)


def plot_categories(rows: Sequence[CategoryRow], names: Sequence[str], path: Path,
                    title: str = "") -> None:
    """Grouped bars: one group per category, one bar per algorithm (R-score at R)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(8.0, 0.7 * len(rows) + 2), 4.8))
    width = 0.8 / max(len(names), 1)
    for index, name in enumerate(names):
        xs = [i + (index - (len(names) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, [row.rscore[name] for row in rows], width, label=name)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{row.category} ({row.test_pages})" for row in rows], rotation=40,
                       ha="right", fontsize=8)
    ax.set_ylabel(f"average R-score, R = {R} (0-2)")
    ax.set_title(title or "R-score per category of the held-out lists (cf. paper Fig. 11)",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def default_names(evaluation: Evaluation) -> list[str]:
    """The rows the view shows: the product, the naive reference, the strongest baseline
    and traditional co-citation, those the evaluation has."""
    from relatedpages.evaluation.naive import NAIVE_STRONG

    return [name for name in (BLOCK, NAIVE_STRONG, WEIGHTED_COSINE, COMPANION, COCITATION)
            if name in evaluation.related]


def as_dict(rows: Sequence[CategoryRow]) -> list[dict[str, Any]]:
    return [{"category": row.category, "test_pages": row.test_pages,
             "rscore": {k: round(v, 4) for k, v in row.rscore.items()},
             "p_list_missing_zero": {k: round(v, 4) for k, v in row.p_list.items()}}
            for row in rows]
