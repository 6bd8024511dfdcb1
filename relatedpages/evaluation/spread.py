"""How far the product's lead over a reference moves with the held-out lists drawn: a
cluster bootstrap over the held-out hub lists.

The held-out *lists* are the sample of ``relatedpages eval related``, not its test pages:
the pages of one list share its curator, its topic and the index pages that cite them, so
one list can carry much of a lead (on the development split one list of 275 gave 44 % of a
change's R@1 gain).  :func:`lead_spread` redraws the held-out lists with replacement
(:data:`DRAWS` times, a fixed seed), recomputes the four measures of issue 43's goal
(P@15 same section, P@15 same list, R@1, R@3; missing results = 0) for the product and the
reference on the pages of the drawn lists, and gives the relative lead's 2.5th and 97.5th
percentiles and the share of draws in which the lead reaches the goal.

A page in several held-out lists counts a fraction 1/n in each of its n lists, so that the
full draw (every list once) gives exactly the report's figures.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from relatedpages.evaluation.baseline_runs import TOP_K_DEFAULT, RelatedDict
from relatedpages.evaluation.hubs import GroundTruth

#: Resamples of the held-out lists.
DRAWS = 2000
#: The bootstrap's random seed: the same report on every run.
SEED = 0
#: The measures (issue 43's goal), in the order of ``related_report.RELATIVE_MEASURES``.
MEASURES = ("P@15 same section", "P@15 same list", "R@1", "R@3")


@dataclass(frozen=True)
class Spread:
    """The relative lead on one measure over the held-out lists drawn."""

    lead: float  # on the held-out lists as drawn (the report's figure)
    low: float  # 2.5th percentile of the draws
    high: float  # 97.5th percentile
    reaching: float  # share of draws whose lead meets the goal (>= goal; > 0 for a goal of 0)


def page_values(related: RelatedDict, pages: Sequence[str], truth: GroundTruth,
                k: int = TOP_K_DEFAULT) -> np.ndarray:
    """One row per test page, one column per :data:`MEASURES`: the page's share of the
    report's P@k same section and list (grade-2 and grade >= 1 results over k, missing = 0)
    and its R-score at R = 1 and 3 (the mean of these rows over the pages is the report's)."""
    values = np.zeros((len(pages), len(MEASURES)))
    for row, page in enumerate(pages):
        grades = [truth.grade(page, entry[0]) for entry in list(related.get(page, ()))[:k]]
        values[row] = (sum(g == 2 for g in grades) / k, sum(g >= 1 for g in grades) / k,
                       sum(grades[:1]), sum(grades[:3]) / 3)
    return values


def list_weights(pages: Sequence[str], truth: GroundTruth, lists: int) -> np.ndarray:
    """``weights[list, page]``: 1/n when the page lies in n held-out lists, one of them
    ``list``; 0 otherwise."""
    weights = np.zeros((lists, len(pages)))
    for column, page in enumerate(pages):
        held = sorted(truth.lists_of.get(page, ()))
        for index in held:
            weights[index, column] = 1.0 / len(held)
    return weights


def lead_spread(own: RelatedDict, reference: RelatedDict, pages: Sequence[str],
                truth: GroundTruth, lists: int, goal: float, k: int = TOP_K_DEFAULT,
                draws: int = DRAWS, seed: int = SEED) -> dict[str, Spread]:
    """The relative lead of ``own`` over ``reference`` on each of :data:`MEASURES`, with
    its spread over ``draws`` resamples of the ``lists`` held-out lists (module doc).

    >>> from relatedpages.evaluation.hubs import HubList, HubSection
    >>> truth = GroundTruth.from_lists([HubList(f"l{i}", "s", (HubSection("A", 2, (
    ...     f"a{i}", f"b{i}")),)) for i in range(4)])
    >>> pages = [f"a{i}" for i in range(4)]
    >>> own = {f"a{i}": [[f"b{i}", 1.0]] for i in range(4)}
    >>> reference = {"a0": [["b0", 1.0]]}  # right on one list of four
    >>> spread = lead_spread(own, reference, pages, truth, 4, 0.05, k=1)["R@1"]
    >>> spread.lead, spread.high, spread.low < spread.lead
    (3.0, inf, True)
    """
    values = {name: page_values(related, pages, truth, k)
              for name, related in (("own", own), ("reference", reference))}
    weights = list_weights(pages, truth, lists)
    # per list: its pages' weighted sums of each measure (lists x measures); a draw's mean is
    # its sum over the drawn pages' weight, the same for both: the ratio needs only the sums
    sums = {name: weights @ rows for name, rows in values.items()}
    rng = np.random.default_rng(seed)
    counts = np.stack([np.bincount(rng.integers(0, lists, lists), minlength=lists)
                       for _ in range(draws)]) if lists else np.zeros((draws, 0))
    spreads = {}
    for column, label in enumerate(MEASURES):
        whole = _lead(sums["own"][:, column].sum(), sums["reference"][:, column].sum())
        drawn = _lead(counts @ sums["own"][:, column], counts @ sums["reference"][:, column])
        # order statistics (no interpolation: a bound may be infinite)
        spreads[label] = Spread(float(whole), float(np.percentile(drawn, 2.5, method="lower")),
                                float(np.percentile(drawn, 97.5, method="higher")),
                                float(np.mean(meets(drawn, goal))))
    return spreads


def meets(lead: Any, goal: float) -> Any:
    """Whether a relative lead (a number, or an array elementwise) meets a goal: at least
    ``goal``, or any lead above 0 when the goal is 0."""
    return lead >= goal if goal > 0 else lead > 0


def _lead(own: np.ndarray | float, reference: np.ndarray | float) -> np.ndarray:
    """(own − reference) / reference elementwise; +inf where only the reference is 0, 0
    where both are (``related_report.relative_lead``)."""
    own, reference = np.asarray(own, dtype=float), np.asarray(reference, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lead = (own - reference) / reference
    lead = np.where(reference == 0, np.where(own == 0, 0.0, np.inf), lead)
    return lead


def spreads_as_dict(spreads: Mapping[str, Mapping[str, Spread]]) -> dict[str, dict[str, dict]]:
    """``{reference: {measure: {lead, low, high, reaching}}}`` (None for an infinite bound)."""
    def number(value: float) -> float | None:
        return round(value, 4) if np.isfinite(value) else None

    return {reference: {label: {"lead": number(s.lead), "low": number(s.low),
                                "high": number(s.high), "reaching": round(s.reaching, 4)}
                        for label, s in by_measure.items()}
            for reference, by_measure in spreads.items()}
