"""Hou & Zhang's Extended Co-citation on hand-made graphs (answers worked out by hand)."""
from __future__ import annotations

import numpy as np
import pytest

from relatedpages.baselines import NoAnswer
from relatedpages.baselines.extended import (
    ExtendedCocitationParams,
    PageSourceParams,
    extended_cocitation,
    is_near_duplicate,
    page_source,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph


def _graph(pages: dict[str, list[str]]) -> LinkGraph:
    return LinkGraph.from_edges((source, target) for source, targets in pages.items() for target in targets)


#  p1: a u b        p2: a u c        p3: f1 a f3 f4 f5 u g1 g2 g3 g4 g5  (window: a f3..f5 g1..g4)
#  u -> c1, c2;     c1 <- u q1 q2;   c2 <- u q1 b;    z -> q2 (in-degree of q2 is 1)
HAND = {
    "p1": ["a", "u", "b"],
    "p2": ["a", "u", "c"],
    "p3": ["f1", "a", "f3", "f4", "f5", "u", "g1", "g2", "g3", "g4", "g5"],
    "u": ["c1", "c2"],
    "q1": ["c1", "c2"],
    "q2": ["c1"],
    "b": ["c2"],
    "z": ["q2"],
}


def _named(graph: LinkGraph, answer: object) -> list[tuple[str, float]]:
    return [(graph.name(s.node), s.score) for s in answer.related]  # type: ignore[attr-defined]


def test_page_source_by_hand() -> None:
    g = _graph(HAND)
    source = page_source(g, g.id_of("u"))  # type: ignore[arg-type]
    names = lambda arrays: [sorted(g.name(int(n)) for n in a) for a in arrays]  # noqa: E731
    assert names(source.parent_groups) == [["p1"], ["p2"], ["p3"]]
    # BF = 8: 4 links before and 4 after the link to u; f1 and g5 fall outside p3's window.
    assert names(source.back_sets) == [
        ["a", "b"], ["a", "c"], ["a", "f3", "f4", "f5", "g1", "g2", "g3", "g4"]
    ]
    assert names(source.child_groups) == [["c1"], ["c2"]]
    assert names(source.forward_sets) == [["q1", "q2"], ["b", "q1"]]


def test_threshold_selects_by_back_or_forward_degree() -> None:
    g = _graph(HAND)
    u = g.id_of("u")
    assert u is not None
    # b(a) = 3; f(q1) = 2; b has b = 1 and f = 1: total 2, but neither side reaches δ = 2.
    assert _named(g, extended_cocitation(g, u)) == [("a", 3.0), ("q1", 2.0)]
    everything = extended_cocitation(g, u, ExtendedCocitationParams(delta=1, max_results=None))
    assert _named(g, everything) == [
        ("a", 3.0), ("b", 2.0), ("q1", 2.0),
        ("c", 1.0), ("f3", 1.0), ("f4", 1.0), ("f5", 1.0),
        ("g1", 1.0), ("g2", 1.0), ("g3", 1.0), ("g4", 1.0), ("q2", 1.0),
    ]
    assert len(extended_cocitation(g, u, ExtendedCocitationParams(delta=1)).related) == 10


def test_fb_takes_the_parents_with_highest_in_degree() -> None:
    g = _graph(HAND)
    u = g.id_of("u")
    assert u is not None
    # FB = 1: c1 -> q2 (in-degree 1 beats q1's 0); c2 -> b (in-degree 1 beats q1's 0).
    params = ExtendedCocitationParams(co_parents=1, delta=1, max_results=None)
    source = page_source(g, u, params)
    assert [[g.name(int(n)) for n in s] for s in source.forward_sets] == [["q2"], ["b"]]
    scores = dict(_named(g, extended_cocitation(g, u, params)))
    assert "q1" not in scores and scores["q2"] == 1.0 and scores["b"] == 2.0


def test_b_and_f_limits() -> None:
    g = _graph(HAND)
    u = g.id_of("u")
    assert u is not None
    only_first_parent = ExtendedCocitationParams(parents=1, children=0, delta=1, max_results=None)
    assert _named(g, extended_cocitation(g, u, only_first_parent)) == [("a", 1.0), ("b", 1.0)]
    only_first_child = ExtendedCocitationParams(parents=0, children=1, delta=1, max_results=None)
    assert _named(g, extended_cocitation(g, u, only_first_child)) == [("q1", 1.0), ("q2", 1.0)]
    # BF = 2: one link before and one after the link to u in p3 (f5, g1).
    narrow = page_source(g, u, PageSourceParams(siblings=2))
    assert sorted(g.name(int(n)) for n in narrow.back_sets[2]) == ["f5", "g1"]


def test_near_duplicate_parents_count_once() -> None:
    links = [f"s{i}" for i in range(1, 6)] + ["u"] + [f"s{i}" for i in range(6, 12)]  # 12 links
    g = _graph({"p4": links, "p5": list(links), "p6": ["s2", "u"]})
    u = g.id_of("u")
    assert u is not None
    merged = extended_cocitation(g, u, ExtendedCocitationParams(delta=2))
    # p4 and p5 are one parent: s2 is co-cited by {p4,p5} and p6 -> 2; the others once.
    assert _named(g, merged) == [("s2", 2.0)]
    separate = extended_cocitation(g, u, ExtendedCocitationParams(delta=2, merge_near_duplicates=False))
    assert _named(g, separate)[0] == ("s2", 3.0)
    assert {name for name, _ in _named(g, separate)} == {"s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9"}


def test_near_duplicate_rule() -> None:
    base = np.arange(100, dtype=np.int32)
    assert is_near_duplicate(base, base[:95])  # 95 of 100 in common
    assert not is_near_duplicate(base, base[:94])
    assert not is_near_duplicate(base[:10], base[:10])  # not more than 10 links
    assert is_near_duplicate(base[:11], base[:11])


def test_near_duplicates_of_u_never_answer() -> None:
    common = [f"x{i}" for i in range(12)]
    g = _graph({"u": common, "mirror": list(common), "p": ["mirror", "u", "other"], "q": ["mirror", "u", "other"]})
    u = g.id_of("u")
    assert u is not None
    names = {name for name, _ in _named(g, extended_cocitation(g, u, ExtendedCocitationParams(delta=1)))}
    assert "mirror" not in names and "other" in names and "u" not in names


def _url_graph() -> LinkGraph:
    pages = [
        ("http://u.example/page", [("http://u.example/child", "", 0), ("http://c.example/", "", 0)]),
        # two parents on one host: one group
        ("http://h.example/1", [("http://u.example/page", "", 0), ("http://s.example/", "", 0)]),
        ("http://h.example/2", [("http://u.example/page", "", 0), ("http://s.example/", "", 0)]),
        # a parent on u's own host: an intrinsic link, left out
        ("http://u.example/nav", [("http://u.example/page", "", 0), ("http://s.example/", "", 0),
                                  ("http://t.example/", "", 0)]),
        ("http://k.example/", [("http://u.example/page", "", 0), ("http://t.example/", "", 0),
                               ("http://u.example/other", "", 0)]),
        ("http://m.example/", [("http://u.example/page", "", 0), ("http://t.example/", "", 0)]),
    ]
    return LinkGraph.from_pages(pages, key_kind=KeyKind.URL)


def test_intrinsic_pages_merged_or_left_out() -> None:
    g = _url_graph()
    u = g.id_of("http://u.example/page")
    assert u is not None
    source = page_source(g, u)
    assert [sorted(g.name(int(n)) for n in group) for group in source.parent_groups] == [
        ["http://h.example/1", "http://h.example/2"], ["http://k.example/"], ["http://m.example/"]
    ]
    # u.example/child is intrinsic to u: only c.example is a child.
    assert [[g.name(int(n)) for n in group] for group in source.child_groups] == [["http://c.example/"]]
    answer = extended_cocitation(g, u, ExtendedCocitationParams(delta=1, max_results=None))
    # s.example: the h.example group only (u.example/nav is intrinsic); t.example: k and m.
    assert _named(g, answer) == [("http://t.example/", 2.0), ("http://s.example/", 1.0)]


def test_empty_answers_have_reasons() -> None:
    g = _graph({"a": ["b"], "loop": ["loop"], "x": ["y"], "w": ["y"]})
    isolated = LinkGraph.from_pages([("solo", [])], key_kind=KeyKind.ID)
    assert extended_cocitation(isolated, 0).reason is NoAnswer.NO_PARENTS
    assert extended_cocitation(isolated, 0).related == ()
    a = g.id_of("a")  # no parents; its child b has no other parent: a source, but empty
    assert a is not None and extended_cocitation(g, a).reason is NoAnswer.EMPTY_NEIGHBOURHOOD
    loop = g.id_of("loop")
    assert loop is not None and extended_cocitation(g, loop).related == ()
    y = g.id_of("y")
    assert y is not None and extended_cocitation(g, y).reason is NoAnswer.EMPTY_NEIGHBOURHOOD


def test_never_returns_u_even_with_self_loops_and_duplicates() -> None:
    g = _graph({"p": ["u", "u", "a", "u"], "q": ["a", "u", "u"], "u": ["u", "a"]})
    u = g.id_of("u")
    assert u is not None
    answer = extended_cocitation(g, u, ExtendedCocitationParams(delta=1))
    assert u not in [s.node for s in answer.related]
    # b(a) = 2 (p and q: short pages give all their children); u's child a has parents p, q.
    assert _named(g, answer) == [("a", 2.0), ("p", 1.0), ("q", 1.0)]


@pytest.mark.parametrize("bad", [
    {"parents": -1}, {"siblings": 1.5}, {"delta": 0}, {"max_results": 0}, {"merge_near_duplicates": 1},
])
def test_params_are_validated(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ExtendedCocitationParams(**bad)  # type: ignore[arg-type]
