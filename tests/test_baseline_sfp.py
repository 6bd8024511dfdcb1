"""SFP (Zhou et al., paper 004): generated graphs, authoritative pages, sites, communities.

Every expected answer below is worked out by hand from the graph drawn in the test.
"""
from __future__ import annotations

import pytest

from relatedpages.baselines.sfp import (
    MAX_LINKS_DEFAULT,
    MAX_PAGES_DEFAULT,
    LEVEL_DEFAULT,
    MIN_FREQ_DEFAULT,
    Authority,
    AuthorityReason,
    GeneratedGraphParams,
    SFPParams,
    generated_graph,
    sfp,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph


def ids(g: LinkGraph, *names: str) -> list[int]:
    found = [g.id_of(name) for name in names]
    assert None not in found
    return [n for n in found if n is not None]


def named(g: LinkGraph, nodes) -> list[str]:
    return [g.name(n) for n in nodes]


def named_edges(g: LinkGraph, edges) -> list[tuple[str, str]]:
    return [(g.name(s), g.name(t)) for s, t in edges]


# r1 -> a b r1 a   (a self-link and a repeated link)
# a  -> x y        b -> x
# r2 -> a c        c -> x z
# r3 -> x d        x -> w        d -> y
THREE_ROOTS = [
    ("r1", "a"), ("r1", "b"), ("r1", "r1"), ("r1", "a"),
    ("a", "x"), ("a", "y"), ("b", "x"),
    ("r2", "a"), ("r2", "c"), ("c", "x"), ("c", "z"),
    ("r3", "x"), ("r3", "d"), ("x", "w"), ("d", "y"),
]


def test_paper_defaults():
    # §4 and §4.1.3: Level = 2, MaxPages = 100, MaxLinks = 100, minfreq = 7
    assert (LEVEL_DEFAULT, MAX_PAGES_DEFAULT, MAX_LINKS_DEFAULT, MIN_FREQ_DEFAULT) == (2, 100, 100, 7)
    params = SFPParams()
    assert (params.generated.level, params.generated.max_pages, params.generated.max_links) == (2, 100, 100)
    assert params.min_freq == 7


@pytest.mark.parametrize("kwargs", [{"level": -1}, {"max_pages": 0}, {"max_links": 0}])
def test_generated_params_validated(kwargs):
    with pytest.raises(ValueError):
        GeneratedGraphParams(**kwargs)


@pytest.mark.parametrize("kwargs", [{"min_freq": 0}, {"max_patterns": 0}])
def test_sfp_params_validated(kwargs):
    with pytest.raises(ValueError):
        SFPParams(**kwargs)


def test_generated_graph_by_hand():
    g = LinkGraph.from_edges(THREE_ROOTS)
    [r1, r3] = ids(g, "r1", "r3")
    first = generated_graph(g, r1)
    # level 0: r1 (self-link dropped, repeated a once); level 1: a, b analysed; x, y at level 2
    assert named(g, first.vertices) == ["r1", "a", "b", "x", "y"]
    assert first.levels == (0, 1, 1, 2, 2)
    assert named_edges(g, first.edges) == [("r1", "a"), ("r1", "b"), ("a", "x"), ("a", "y"), ("b", "x")]
    assert first.analysed == 3
    third = generated_graph(g, r3)
    # x is at level 1 here, so its link to w is taken; w and y sit at level 2
    assert named(g, third.vertices) == ["r3", "x", "d", "w", "y"]
    assert named_edges(g, third.edges) == [("r3", "x"), ("r3", "d"), ("x", "w"), ("d", "y")]


def test_generated_graph_level_zero_and_one():
    g = LinkGraph.from_edges(THREE_ROOTS)
    [r1] = ids(g, "r1")
    only_root = generated_graph(g, r1, GeneratedGraphParams(level=0))
    assert named(g, only_root.vertices) == ["r1"] and only_root.edges == () and only_root.analysed == 0
    one = generated_graph(g, r1, GeneratedGraphParams(level=1))
    assert named(g, one.vertices) == ["r1", "a", "b"]
    assert named_edges(g, one.edges) == [("r1", "a"), ("r1", "b")]


def test_max_links_per_page_and_max_pages_analysed():
    # r -> l1 l2 l3; l1 -> m1; l2 -> m2
    g = LinkGraph.from_edges([("r", "l1"), ("r", "l2"), ("r", "l3"), ("l1", "m1"), ("l2", "m2")])
    [r] = ids(g, "r")
    got = generated_graph(g, r, GeneratedGraphParams(max_pages=2, max_links=2))
    # MaxLinks = 2: l3 never seen; MaxPages = 2: r and l1 analysed, l2 is a leaf
    assert named(g, got.vertices) == ["r", "l1", "l2", "m1"]
    assert named_edges(g, got.edges) == [("r", "l1"), ("r", "l2"), ("l1", "m1")]
    assert got.analysed == 2


def test_uncrawled_page_is_a_vertex_but_uses_no_page():
    # u is only a link target: its out-links are unknown, so it is not analysed
    g = LinkGraph.from_edges([("r", "u"), ("r", "l1"), ("l1", "m1")])
    [r] = ids(g, "r")
    got = generated_graph(g, r, GeneratedGraphParams(max_pages=2))
    assert named(g, got.vertices) == ["r", "u", "l1", "m1"]
    assert named_edges(g, got.edges) == [("r", "u"), ("r", "l1"), ("l1", "m1")]
    assert got.analysed == 2


def test_isolated_root_has_a_one_vertex_graph():
    g = LinkGraph.from_edges([("a", "b")])
    [b] = ids(g, "b")
    got = generated_graph(g, b)
    assert got.vertices == (b,) and got.edges == ()


def test_authorities_and_community_by_hand():
    g = LinkGraph.from_edges(THREE_ROOTS)
    roots = ids(g, "r1", "r2", "r3")
    result = sfp(g, roots, SFPParams(min_freq=2))
    # supports: x in all three graphs, y in all three, a in r1's and r2's; the rest once
    assert [(g.name(a.node), a.support) for a in result.authorities] == [("x", 3), ("y", 3), ("a", 2)]
    # frequent edges: a->x and a->y, both in r1's and r2's graphs, so together too
    [community] = result.communities
    assert named(g, community.vertices) == ["a", "x", "y"]
    assert named_edges(g, community.edges) == [("a", "x"), ("a", "y")]
    assert (community.support, community.rank) == (2, 2)
    assert result.communities_complete and result.reason is None


# p -> a; a -> b; q -> a b; b -> c; s -> b
NOT_TRANSITIVE = [("p", "a"), ("a", "b"), ("q", "a"), ("q", "b"), ("b", "c"), ("s", "b")]


def test_communities_need_the_edges_together():
    g = LinkGraph.from_edges(NOT_TRANSITIVE)
    roots = ids(g, "p", "q", "s")
    result = sfp(g, roots, SFPParams(min_freq=2))
    # generated graphs: p: p->a a->b | q: q->a q->b a->b b->c | s: s->b b->c
    # a->b is in {p, q}, b->c in {q, s}: each frequent, but together only in q's graph
    assert [(named_edges(g, c.edges), c.support) for c in result.communities] == [
        ([("a", "b")], 2),
        ([("b", "c")], 2),
    ]
    assert [(g.name(a.node), a.support) for a in result.authorities] == [("b", 3), ("a", 2), ("c", 2)]


def test_min_freq_one_gives_each_generated_graph():
    g = LinkGraph.from_edges(NOT_TRANSITIVE)
    roots = ids(g, "p", "q", "s")
    result = sfp(g, roots, SFPParams(min_freq=1))
    # every graph has an edge found nowhere else, so each whole graph is maximal
    assert [sorted(named_edges(g, c.edges)) for c in result.communities] == [
        [("a", "b"), ("b", "c"), ("q", "a"), ("q", "b")],
        [("a", "b"), ("p", "a")],
        [("b", "c"), ("s", "b")],
    ]
    assert [c.support for c in result.communities] == [1, 1, 1]


def test_capped_community_search_says_so():
    g = LinkGraph.from_edges(NOT_TRANSITIVE)
    roots = ids(g, "p", "q", "s")
    full = sfp(g, roots, SFPParams(min_freq=1)).communities
    capped = sfp(g, roots, SFPParams(min_freq=1, max_patterns=1))
    assert not capped.communities_complete
    assert set(capped.communities) < set(full)


def test_repeated_roots_count_once():
    g = LinkGraph.from_edges(THREE_ROOTS)
    [r1, r2] = ids(g, "r1", "r2")
    result = sfp(g, [r1, r1, r2], SFPParams(min_freq=2))
    assert result.roots == (r1, r2)
    # r1 and r2's graphs share a, x, y (2 each); nothing reaches 3
    assert [(g.name(a.node), a.support) for a in result.authorities] == [("a", 2), ("x", 2), ("y", 2)]


def test_reasons():
    g = LinkGraph.from_edges(THREE_ROOTS)
    assert sfp(g, []).reason is AuthorityReason.NO_ROOTS
    roots = ids(g, "r1", "r2", "r3")
    nothing = sfp(g, roots, SFPParams(min_freq=4))  # more than there are graphs
    assert nothing.reason is AuthorityReason.NOTHING_FREQUENT
    assert nothing.authorities == () and nothing.communities == () and nothing.sites == ()
    with pytest.raises(ValueError):
        type(nothing)((), authorities=(Authority(0, 1),), reason=AuthorityReason.NO_ROOTS)


# Figure 2(d) and 2(e) of paper 004: the "XML" query's page frequencies F, and the same
# result grouped by site.  2(e) lists pages beyond 2(d)'s top ten (ucc.ie 17, validator 16, …).
FIGURE_2D = {
    "http://www.w3.org/": 45,
    "http://www.w3.org/xml/": 35,
    "http://www.xml.com/": 31,
    "http://www.oasis-open.org/": 25,
    "http://www.w3.org/tr/rec-xml": 22,
    "http://www.w3.org/dom/": 22,
    "http://www.w3.org/style/css/": 21,
    "http://www.w3.org/tr/": 20,
    "http://www.w3.org/xml/query": 19,
    "http://www.xml.org/": 19,
}
FIGURE_2E_EXTRA = {
    "http://www.ucc.ie/xml/": 17,
    "http://validator.w3.org/": 16,
    "http://xml.apache.org/": 15,
    "http://www.oreilly.com/": 15,
    "http://www.oreillynet.com/": 14,
    "http://www.internet.com/sections/webdev.html": 14,
}
FIGURE_2E = [  # (site's page, F), in the figure's order; 15 and 14 are ties
    ("http://www.w3.org/", 45),
    ("http://www.xml.com/", 31),
    ("http://www.oasis-open.org/", 25),
    ("http://www.xml.org/", 19),
    ("http://www.ucc.ie/xml/", 17),
    ("http://validator.w3.org/", 16),
    ("http://xml.apache.org/", 15),
    ("http://www.oreilly.com/", 15),
    ("http://www.oreillynet.com/", 14),
    ("http://www.internet.com/sections/webdev.html", 14),
]


def figure_2_graph() -> tuple[LinkGraph, list[int]]:
    """45 root pages; root i links to every page whose F exceeds i (Level 1 is enough)."""
    frequencies = FIGURE_2D | FIGURE_2E_EXTRA
    pages = []
    for i in range(45):
        links = [(url, "", -1) for url, f in frequencies.items() if i < f]
        pages.append((f"http://root{i}.example/", links))
    g = LinkGraph.from_pages(pages, key_kind=KeyKind.URL)
    return g, ids(g, *(url for url, _ in pages))


def test_figure_2d_authorities_by_frequency():
    g, roots = figure_2_graph()
    result = sfp(g, roots, SFPParams(min_freq=19))
    got = [(g.name(a.node), a.support) for a in result.authorities]
    # Figure 2(d) exactly, except that its two ties (22 and 19) are ordered by name here
    assert [f for _, f in got] == [45, 35, 31, 25, 22, 22, 21, 20, 19, 19]
    assert dict(got) == FIGURE_2D
    assert got[4:6] == [("http://www.w3.org/dom/", 22), ("http://www.w3.org/tr/rec-xml", 22)]


def test_figure_2e_site_grouping():
    g, roots = figure_2_graph()
    result = sfp(g, roots, SFPParams(min_freq=14))
    got = [(g.name(s.best), s.support) for s in result.sites]
    # w3.org's seven pages collapse into www.w3.org/ (45); validator.w3.org is its own site
    assert [f for _, f in got] == [f for _, f in FIGURE_2E]
    assert set(got) == set(FIGURE_2E)
    w3 = result.sites[0]
    assert named(g, w3.pages) == [
        "http://www.w3.org/", "http://www.w3.org/xml/", "http://www.w3.org/dom/",
        "http://www.w3.org/tr/rec-xml", "http://www.w3.org/style/css/", "http://www.w3.org/tr/",
        "http://www.w3.org/xml/query",
    ]
    assert w3.host == "www.w3.org"
