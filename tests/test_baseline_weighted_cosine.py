"""Marginalia's weighted site cosine (relatedpages.baselines.weighted_cosine) on hand-made graphs."""
from __future__ import annotations

import math

import pytest

from relatedpages.baselines import NoAnswer
from relatedpages.baselines.weighted_cosine import (
    WeightedCosineParams,
    site_vectors,
    site_weights,
    weighted_site_cosine,
)
from relatedpages.store.linkgraph import LinkGraph


def graph(*pages: tuple[str, tuple[str, ...]]) -> LinkGraph:
    return LinkGraph.from_pages([(url, [(href, "", 0) for href in hrefs]) for url, hrefs in pages])


def answer(g: LinkGraph, url: str, params: WeightedCosineParams | None = None
           ) -> list[tuple[str, float]]:
    return [(g.name(s.node), s.score) for s in weighted_site_cosine(g, g.id_of(url), params).related]


#: Two GitHub lists (two sites) and a blog.  list1 cites x, y, z; list2 cites x, y; the blog
#: cites z and list2; the blog's second page cites y (a site counts once).
GRAPH = graph(
    ("https://github.com/l1/awesome", ("https://x.org/", "https://y.org/", "https://z.org/")),
    ("https://github.com/l2/awesome", ("https://x.org/", "https://y.org/")),
    ("https://blog.net/a", ("https://z.org/", "https://github.com/l2/awesome")),
    ("https://blog.net/b", ("https://y.org/", "https://blog.net/a")),
)


def test_vectors_are_the_linking_sites_plus_the_own_site():
    v = site_vectors(GRAPH)
    hosts = GRAPH.host_names
    vector = {GRAPH.name(int(p)): set() for p in v.pages}
    for p, s in zip(v.pages, v.sites):
        vector[GRAPH.name(int(p))].add(hosts[int(s)])
    assert vector == {
        "https://x.org/": {"x.org", "github.com/l1", "github.com/l2"},
        "https://y.org/": {"y.org", "github.com/l1", "github.com/l2", "blog.net"},
        "https://z.org/": {"z.org", "github.com/l1", "blog.net"},
        "https://github.com/l2/awesome": {"github.com/l2", "blog.net"},
    }  # blog.net/a is linked from its own site only: no vector, like list1


def test_a_site_weighs_by_the_sites_linking_to_it():
    weights = dict(zip(GRAPH.host_names, site_weights(site_vectors(GRAPH)).tolist()))
    # github.com/l2: linked by blog.net, plus itself -> 1/ln(2 + 2); l1 and blog.net: none -> 1
    assert weights["github.com/l2"] == pytest.approx(1 / math.log(4))
    assert weights["github.com/l1"] == weights["blog.net"] == 1.0
    assert weights["y.org"] == pytest.approx(1 / math.log(2 + 4))
    assert site_weights(site_vectors(GRAPH), 0.0)[GRAPH.host_names.index("blog.net")] == 0.0


def test_scores_by_hand():
    w2, wx, wy, wz = 1 / math.log(4), 1 / math.log(5), 1 / math.log(6), 1 / math.log(5)
    x = wx + 1 + w2  # L(x) = {x, l1, l2}
    y = wy + 1 + w2 + 1  # L(y) = {y, l1, l2, blog}
    z = wz + 1 + 1  # L(z) = {z, l1, blog}
    l2 = w2 + 1  # L(l2) = {l2, blog}
    expected = [("https://y.org/", (1 + w2) / math.sqrt(x * y)),
                ("https://z.org/", 1 / math.sqrt(x * z)),
                ("https://github.com/l2/awesome", w2 / math.sqrt(x * l2))]
    got = answer(GRAPH, "https://x.org/")
    assert [url for url, _ in got] == [url for url, _ in expected]
    assert [score for _, score in got] == pytest.approx([score for _, score in expected])
    assert [round(score, 4) for _, score in got] == [0.621, 0.4035, 0.3592]


def test_pages_no_other_site_links_are_neither_asked_nor_answered():
    assert weighted_site_cosine(GRAPH, GRAPH.id_of("https://blog.net/a")).reason is NoAnswer.NO_PARENTS
    assert "https://blog.net/a" not in dict(answer(GRAPH, "https://z.org/"))


def test_marginalias_cuts():
    # |L(x)| = 3 < 10: Marginalia asks nothing of a domain so rarely linked
    assert weighted_site_cosine(GRAPH, GRAPH.id_of("https://x.org/"),
                                WeightedCosineParams.marginalia()).reason is NoAnswer.EMPTY_NEIGHBOURHOOD
    # similarity above 0.1 (plain and weighted) keeps all three here; 0.39 drops the last two
    assert len(answer(GRAPH, "https://x.org/", WeightedCosineParams(min_similarity=0.1))) == 3
    assert [url for url, _ in answer(GRAPH, "https://x.org/", WeightedCosineParams(
        min_similarity=0.39))] == ["https://y.org/"]
    with pytest.raises(ValueError):
        WeightedCosineParams(min_similarity=1.0)
