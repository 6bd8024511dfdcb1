"""Courtenage & Williams' **Equivalent Hyperlinks** (survey 002, §2.3 and §2.3.1).

A hyperlink is a mapping ``H :: (URL, Anchor) → URL``.  Given one hyperlink ``((S, a), T)``,
the procedure EH finds the hyperlinks that are "instances of the same function": links to
pages similar to T, on pages that carry an anchor similar to a.  Survey §2.3.1::

    Similar_to       = FindSimilar(T)
    Link_to          = pages linking to some t ∈ Similar_to          (FindBackLinks)
    SimilarAnchor_to = FindSimilarAnchor(a)  (pages with an anchor similar to a)
    SimilarLinks     = {t ∈ Similar_to : t ∈ Links(page(v)), v ∈ Link_to ∩ SimilarAnchor_to}

In the Napoleon example (survey Fig. 2) Similar_to = {napoleon.org, napoleonseries.org,
beyond.fr/history/kings.html}, Link_to = {A, B, C}, SimilarAnchor_to = {A, B, D}, and the
cross reference gives {A, B}.

Readings chosen where the survey is vague:

* **FindSimilar(T)** was a search engine's "similar pages" in the original; here it is a
  parameter ``similar(graph, T) -> Sequence[Scored]`` (e.g. block co-citation's database, or a
  test's table).  The default is T's Extended Co-citation answer (:mod:`extended`).  T itself
  always belongs to Similar_to with the highest score (the survey lists it first).
* **FindSimilarAnchor(a)**: anchors are compared as word sets (:class:`AnchorWords`: Porter
  stems, stop words removed) by the Jaccard coefficient of the block co-citation paper's
  Eq. 6 (:func:`relatedpages.scoring.similarity.anchor_similarity`); similar ⇔ ≥
  ``anchor_threshold`` (default 0.5: "Napoleon" ~ "Napoleon Series").  Only the anchors of
  pages in Link_to are read (the others cannot survive the cross reference).
* **Output**: the hyperlinks themselves, ``(page v, anchor, target t, score)``, one per
  distinct (v, anchor, t) — the survey returns the pages {A, B}; the links say why.  By
  default (``same_link=False``, the survey's page-level cross reference) the similar anchor
  may sit on any link of v; ``same_link=True`` requires the link to t itself to carry it.
* **The query link** ``(S, a, T)`` is part of the answer when S links to T (the example's
  result includes A); ``include_query_link=False`` drops it.
* **Score** = (similarity of t to T, divided by the largest, T = 1) × (anchor similarity: the
  link's own anchor when ``same_link``, else the best anchor on v).  Ranked best first, then
  by page, anchor and target names; at most ``max_results``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from filters.anchors import AnchorWords
from relatedpages.baselines import Scored
from relatedpages.baselines.extended import check_max_results, extended_cocitation
from relatedpages.store.linkgraph import LinkGraph
from relatedpages.scoring.similarity import anchor_similarity

#: Jaccard coefficient of anchor word sets at or above which two anchors are "similar".
ANCHOR_THRESHOLD_DEFAULT = 0.5
#: Equivalent links returned, best first.
EQUIVALENT_MAX_RESULTS_DEFAULT = 20

SimilarPages = Callable[[LinkGraph, int], Sequence[Scored]]


def similar_by_extended_cocitation(graph: LinkGraph, node: int) -> Sequence[Scored]:
    """The default FindSimilar: the Extended Co-citation answer of ``node``."""
    return extended_cocitation(graph, node).related


@dataclass(frozen=True)
class EquivalentParams:
    """FindSimilar, the anchor-similarity threshold and the cross-reference reading."""

    anchor_threshold: float = ANCHOR_THRESHOLD_DEFAULT
    same_link: bool = False
    include_query_link: bool = True
    max_results: int | None = EQUIVALENT_MAX_RESULTS_DEFAULT
    similar: SimilarPages = similar_by_extended_cocitation

    def __post_init__(self) -> None:
        value = self.anchor_threshold
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
            raise ValueError(f"anchor_threshold must be in (0, 1], got {value!r}")
        object.__setattr__(self, "anchor_threshold", float(value))
        for name in ("same_link", "include_query_link"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool")
        check_max_results(self.max_results)
        if not callable(self.similar):
            raise ValueError("similar must be callable")


class NoEquivalent(str, Enum):
    """Why an equivalent-links answer is empty."""

    NO_ANCHOR_WORDS = "no_anchor_words"  # the query anchor has no words (empty, stop words)
    NO_BACKLINKS = "no_backlinks"  # nothing links to T or to a page similar to it
    NO_CROSS_REFERENCE = "no_cross_reference"  # Link_to ∩ SimilarAnchor_to is empty


@dataclass(frozen=True)
class EquivalentLink:
    """One hyperlink equivalent to the query: ``page`` links to ``target`` under ``anchor``."""

    page: int
    anchor: str
    target: int
    score: float


@dataclass(frozen=True)
class EquivalentLinks:
    """Equivalent hyperlinks best first, or empty with a reason."""

    links: tuple[EquivalentLink, ...] = ()
    reason: NoEquivalent | None = None


_ANALYSER: list[AnchorWords] = []


def _analyser() -> AnchorWords:
    """One :class:`AnchorWords` per process, built on first use (stemmer, stop lists)."""
    if not _ANALYSER:
        _ANALYSER.append(AnchorWords())
    return _ANALYSER[0]


def equivalent_links(
    graph: LinkGraph,
    page: int,
    anchor: str,
    target: int,
    params: EquivalentParams = EquivalentParams(),
    *,
    analyser: AnchorWords | None = None,
) -> EquivalentLinks:
    """Hyperlinks equivalent to ``(page, anchor) → target`` (survey §2.3.1, procedure EH)."""
    words = analyser or _analyser()
    query_words = words.words(anchor)
    if not query_words:
        return EquivalentLinks(reason=NoEquivalent.NO_ANCHOR_WORDS)

    # Step 1: Similar_to, with T first and similarities scaled so that T scores 1.
    similar: dict[int, float] = {}
    for scored in params.similar(graph, target):
        if scored.node != target and scored.score > 0:
            similar[scored.node] = max(similar.get(scored.node, 0.0), float(scored.score))
    top = max(similar.values(), default=1.0)
    target_score = {t: s / top for t, s in similar.items()}
    target_score[target] = 1.0

    # Step 2: Link_to, the pages linking to Similar_to.
    link_to: set[int] = set()
    for t in target_score:
        link_to.update(graph.parents(t).tolist())
    if not link_to:
        return EquivalentLinks(reason=NoEquivalent.NO_BACKLINKS)

    # Steps 3-5: anchors similar to a on those pages; links to Similar_to from them.
    found: dict[tuple[int, str, int], float] = {}
    for v in sorted(link_to):
        links = list(zip(graph.children(v).tolist(), graph.anchors(v)))
        anchor_score = {text: anchor_similarity(query_words, words.words(text)) for _, text in links}
        best = max(anchor_score.values(), default=0.0)
        if best < params.anchor_threshold:
            continue  # v is not in SimilarAnchor_to
        for t, text in links:
            if t not in target_score:
                continue
            if not params.include_query_link and v == page and t == target:
                continue
            link_anchor = anchor_score[text]
            if params.same_link and link_anchor < params.anchor_threshold:
                continue
            score = target_score[t] * (link_anchor if params.same_link else best)
            key = (v, text, t)
            found[key] = max(found.get(key, 0.0), score)
    if not found:
        return EquivalentLinks(reason=NoEquivalent.NO_CROSS_REFERENCE)
    ordered = sorted(
        found.items(),
        key=lambda item: (-item[1], graph.name(item[0][0]), item[0][1], graph.name(item[0][2])),
    )
    if params.max_results is not None:
        ordered = ordered[:params.max_results]
    return EquivalentLinks(tuple(EquivalentLink(v, text, t, round(score, 9)) for (v, text, t), score in ordered))
