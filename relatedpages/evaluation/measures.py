"""The hub-list evaluation's measures of one related-pages dict on the test pages (module
doc of :mod:`relatedpages.evaluation.related`, step 8): coverage, P@k by section and by
list, the R-score curve (the paper's Fig. 10) and the ties, against the curators' ground
truth (:class:`~relatedpages.evaluation.hubs.GroundTruth`)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from relatedpages.evaluation.baseline_runs import TOP_K_DEFAULT, RelatedDict
from relatedpages.evaluation.hubs import GroundTruth
from relatedpages.evaluation.ties import tied_results


@dataclass(frozen=True)
class Scores:
    """The measures of one algorithm on the test pages (module doc, step 8)."""

    test_pages: int
    covered: int
    results: int  # results returned in all (top k of each test page)
    tied: int  # of those, results with a neighbour's score to 3 significant digits
    p_section: float  # P@k, grade 2, over covered test pages
    p_list: float  # P@k, grade >= 1, over covered test pages
    p_section_all: float  # P@k, grade 2, missing results = 0, over all test pages
    p_list_all: float  # P@k, grade >= 1, missing results = 0, over all test pages
    rscore: tuple[float, ...]  # R = 1 … k, missing results = 0, over all test pages
    scored: int = -1  # results with a numeric score (-1: all of them)
    tied_exact: int = 0  # of the tied, results with a neighbour's very score (same evidence)

    @property
    def coverage(self) -> float:
        return self.covered / self.test_pages if self.test_pages else 0.0

    @property
    def mean_results(self) -> float:
        """Results per covered test page (of at most k)."""
        return self.results / self.covered if self.covered else 0.0

    @property
    def tied_share(self) -> float | None:
        """Share of the returned results tied with the one before or after, scores rounded
        to three significant digits (issue 43: a vanishing term added to break ties does
        not separate them): their order is the tie-break, not evidence.  None when the
        results carry no scores."""
        return self._of_scored(self.tied)

    @property
    def tied_exact_share(self) -> float | None:
        """Share of the returned results with the very score of the one before or after
        (the score's own decimals): tied on the same evidence, which no weighting of it
        separates.  None when the results carry no scores."""
        return self._of_scored(self.tied_exact)

    def _of_scored(self, count: int) -> float | None:
        scored = self.results if self.scored < 0 else self.scored
        if not scored:
            return None if self.results else 0.0
        return count / scored


def score_related(
    related: RelatedDict, test_pages: Sequence[str], truth: GroundTruth, k: int = TOP_K_DEFAULT
) -> Scores:
    """Score one related-pages dict on the test pages.

    >>> from relatedpages.evaluation.hubs import HubList, HubSection
    >>> truth = GroundTruth.from_lists([HubList("l", "s", (
    ...     HubSection("A", 2, ("a", "b", "c")), HubSection("B", 2, ("d",))))])
    >>> s = score_related({"a": [["b", 3.0], ["x", 2.0], ["d", 1.0]]}, ["a", "d"], truth, k=3)
    >>> s.coverage, round(s.p_section, 3), round(s.p_list, 3), s.rscore
    (0.5, 0.333, 0.667, (1.0, 0.5, 0.5))
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    covered = results = tied = tied_exact = scored = 0
    p_section = p_list = 0.0
    section_hits = list_hits = 0
    rsums = [0.0] * k
    for target in test_pages:
        entries = list(related.get(target, ()))[:k]
        if not entries:
            continue
        top = [entry[0] for entry in entries]
        grades = [truth.grade(target, result) for result in top]
        covered += 1
        results += len(top)
        ties, with_score = tied_results(entries)
        tied += ties
        tied_exact += tied_results(entries, digits=None)[0]
        scored += with_score
        same_section = sum(1 for g in grades if g == 2)
        same_list = sum(1 for g in grades if g >= 1)
        p_section += same_section / len(top)
        p_list += same_list / len(top)
        section_hits += same_section
        list_hits += same_list
        running = 0
        for r in range(k):
            running += grades[r] if r < len(grades) else 0
            rsums[r] += running / (r + 1)
    pages = len(test_pages)
    return Scores(
        test_pages=pages,
        covered=covered,
        results=results,
        tied=tied,
        p_section=p_section / covered if covered else 0.0,
        p_list=p_list / covered if covered else 0.0,
        p_section_all=section_hits / (k * pages) if pages else 0.0,
        p_list_all=list_hits / (k * pages) if pages else 0.0,
        rscore=tuple(total / pages if pages else 0.0 for total in rsums),
        scored=-1 if scored == results else scored,
        tied_exact=tied_exact,
    )


def score_algorithms(
    related_by_algorithm: Mapping[str, RelatedDict],
    test_pages: Sequence[str],
    truth: GroundTruth,
    k: int = TOP_K_DEFAULT,
) -> dict[str, Scores]:
    """The page-level baselines hook: every algorithm scored on the same test pages."""
    return {name: score_related(related, test_pages, truth, k)
            for name, related in related_by_algorithm.items()}
