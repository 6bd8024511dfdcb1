"""Courtenage & Williams' equivalent hyperlinks: the survey's Napoleon example (Fig. 2)."""
from __future__ import annotations

from collections.abc import Sequence

import pytest

from filters.urls import normalise_url
from relatedpages.baselines import Scored
from relatedpages.baselines.equivalent import (
    EquivalentParams,
    NoEquivalent,
    equivalent_links,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph

A, B, C, D = "http://a.example/", "http://b.example/", "http://c.example/", "http://d.example/"
NAPOLEON = "http://www.napoleon.org/"
SERIES = "http://www.napoleonseries.org/"
KINGS = "http://www.beyond.fr/history/kings.html"
IMAGES = "http://www.wijo.null/images.htm"


def _n(url: str) -> str:
    normalised = normalise_url(url)
    assert normalised is not None
    return normalised


def _napoleon(extra_c: Sequence[tuple[str, str, int]] = ()) -> LinkGraph:
    pages = [
        (A, [(NAPOLEON, "Napoleon", 0), ("http://a.example/home", "Home", 0)]),
        (B, [(SERIES, "Napoleon Series", 0), ("http://b.example/street", "Street", 0)]),
        (C, [(KINGS, "Kings of France", 0), *extra_c]),
        (D, [(IMAGES, "Napoleon", 0), ("http://d.example/street", "Street", 0)]),
    ]
    return LinkGraph.from_pages(
        [(_n(url), [(_n(h), a, b) for h, a, b in links]) for url, links in pages], key_kind=KeyKind.URL
    )


def _similar_table(graph: LinkGraph, node: int) -> Sequence[Scored]:
    """FindSimilar(www.napoleon.org) = {napoleonseries.org, beyond.fr/history/kings.html}."""
    if graph.name(node) != _n(NAPOLEON):
        return ()
    return tuple(Scored(n, 1.0) for n in (graph.id_of(SERIES), graph.id_of(KINGS)) if n is not None)


def _links(graph: LinkGraph, params: EquivalentParams) -> list[tuple[str, str, str, float]]:
    a, t = graph.id_of(A), graph.id_of(NAPOLEON)
    assert a is not None and t is not None
    answer = equivalent_links(graph, a, "Napoleon", t, params)
    return [(graph.name(x.page), x.anchor, graph.name(x.target), x.score) for x in answer.links]


def test_napoleon_example() -> None:
    g = _napoleon()
    # Link_to = {A, B, C}; SimilarAnchor_to = {A, B, D} ("Napoleon Series": Jaccard 1/2);
    # the cross reference {A, B}: their links to pages similar to www.napoleon.org.
    assert _links(g, EquivalentParams(similar=_similar_table)) == [
        (_n(A), "Napoleon", _n(NAPOLEON), 1.0),
        (_n(B), "Napoleon Series", _n(SERIES), 0.5),
    ]
    pages = {page for page, _, _, _ in _links(g, EquivalentParams(similar=_similar_table))}
    assert pages == {_n(A), _n(B)}


def test_threshold_and_query_link() -> None:
    g = _napoleon()
    strict = EquivalentParams(similar=_similar_table, anchor_threshold=0.6)
    assert [page for page, *_ in _links(g, strict)] == [_n(A)]
    without_query = EquivalentParams(similar=_similar_table, include_query_link=False)
    assert [page for page, *_ in _links(g, without_query)] == [_n(B)]


def test_page_level_versus_same_link_cross_reference() -> None:
    # C also carries a "Napoleon" anchor (to somewhere else): C joins SimilarAnchor_to, so its
    # link to kings.html is equivalent at the page level, but not when the same link must
    # carry the similar anchor.
    g = _napoleon(extra_c=[("http://c.example/bonaparte", "Napoleon", 0)])
    page_level = _links(g, EquivalentParams(similar=_similar_table))
    assert (_n(C), "Kings of France", _n(KINGS), 1.0) in page_level
    same_link = _links(g, EquivalentParams(similar=_similar_table, same_link=True))
    assert [page for page, *_ in same_link] == [_n(A), _n(B)]


def test_scores_scale_with_target_similarity() -> None:
    def graded(graph: LinkGraph, node: int) -> Sequence[Scored]:
        series, kings = graph.id_of(SERIES), graph.id_of(KINGS)
        assert series is not None and kings is not None
        return (Scored(series, 4.0), Scored(kings, 8.0))

    g = _napoleon()
    # napoleonseries.org is half as similar as the best (kings): 0.5 x anchor 0.5.
    assert _links(g, EquivalentParams(similar=graded))[1] == (_n(B), "Napoleon Series", _n(SERIES), 0.25)


def test_default_similarity_and_reasons() -> None:
    g = _napoleon()
    a, t = g.id_of(A), g.id_of(NAPOLEON)
    assert a is not None and t is not None
    # default FindSimilar (extended co-citation) finds nothing here: T alone -> the query link
    only_query = equivalent_links(g, a, "Napoleon", t)
    assert [(x.page, x.target) for x in only_query.links] == [(a, t)]
    assert equivalent_links(g, a, "the", t).reason is NoEquivalent.NO_ANCHOR_WORDS
    assert equivalent_links(g, a, "Emperor", t).reason is NoEquivalent.NO_CROSS_REFERENCE
    assert equivalent_links(g, a, "Napoleon", a).reason is NoEquivalent.NO_BACKLINKS
    assert equivalent_links(g, a, "Napoleon", t).reason is None


@pytest.mark.parametrize("bad", [{"anchor_threshold": 0.0}, {"anchor_threshold": 1.5},
                                 {"same_link": "yes"}, {"max_results": 0}, {"similar": 3}])
def test_params_are_validated(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        EquivalentParams(**bad)  # type: ignore[arg-type]
