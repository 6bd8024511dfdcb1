"""Dean & Henzinger's query-time Cocitation (relatedpages.baselines.dh_cocitation):
hand-worked degrees, BF windows, the URL-chopping restart, and properties."""
from __future__ import annotations

import doctest

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relatedpages.baselines import NoAnswer
from relatedpages.baselines import dh_cocitation as module
from relatedpages.baselines.dh_cocitation import (
    CocitationDegree,
    DHCocitationParams,
    chopped_urls,
    dh_cocitation,
    dh_cocitation_run,
)
from relatedpages.baselines.stoplist import Stoplist
from relatedpages.store.linkgraph import KeyKind, LinkGraph


def id_graph(pages: dict[str, list[str]]) -> LinkGraph:
    return LinkGraph.from_edges((source, target) for source, targets in pages.items()
                                for target in targets)


def url_graph(pages: dict[str, list[str]]) -> LinkGraph:
    return LinkGraph.from_pages([(url, [(h, "", 0) for h in links]) for url, links in pages.items()],
                                key_kind=KeyKind.URL)


def ranked(graph: LinkGraph, answer) -> list[tuple[str, float]]:
    return [(graph.name(s.node), s.score) for s in answer.related]


HAND = {
    "p1": ["a", "b", "u", "c"],
    "p2": ["a", "u", "d"],
    "p3": ["a", "c", "u"],
    "q": ["a", "c", "b", "d"],  # not a parent of u: its co-citations do not count
    # p4 links to a far from u (outside the BF window) — counts for "common parents" only
    "p4": ["a", "s1", "s2", "s3", "s4", "s5", "u", "t1", "t2", "t3", "t4", "t5"],
}


def test_degrees_by_hand_common_parents():
    graph = id_graph(HAND)
    answer = dh_cocitation(graph, graph.id_of("u"))
    # S = {a, b, c, d} ∪ p4's window {s2..s5, t1..t4}; a is cited by p1, p2, p3, p4 → 4
    # (p4 links to a outside its window, but a is a common parent all the same); c: p1, p3
    assert ranked(graph, answer) == [
        ("a", 4.0), ("c", 2.0), ("b", 1.0), ("d", 1.0), ("s2", 1.0), ("s3", 1.0), ("s4", 1.0),
        ("s5", 1.0), ("t1", 1.0), ("t2", 1.0),
    ]
    assert answer.reason is None


def test_degrees_by_hand_in_window():
    graph = id_graph(HAND)
    params = DHCocitationParams(degree=CocitationDegree.IN_WINDOW, max_results=3)
    # p4's window does not contain a: a is counted for p1, p2, p3 only
    assert ranked(graph, dh_cocitation(graph, graph.id_of("u"), params)) == [
        ("a", 3.0), ("c", 2.0), ("b", 1.0)]


def test_sibling_outside_every_window_is_not_a_candidate():
    graph = id_graph(HAND)
    got = [name for name, _ in ranked(graph, dh_cocitation(graph, graph.id_of("u"),
                                                            DHCocitationParams(max_results=50)))]
    assert "s1" not in got and "t5" not in got and "u" not in got
    assert len(got) == 12


def test_b_limits_the_parents_used():
    graph = id_graph({f"p{i}": ["x", "u"] for i in range(50)} | {"p0": ["x", "u", "y"]})
    run = dh_cocitation_run(graph, graph.id_of("u"), DHCocitationParams(max_parents=10))
    assert run.attempts[0].parents == 10
    assert ranked(graph, run.answer)[0] == ("x", 10.0)


def test_self_loops_and_duplicate_links():
    graph = id_graph({"p1": ["u", "u", "x", "x"], "p2": ["x", "u"], "u": ["u", "x"]})
    # u's self-loop does not make u its own parent; p1 linking x twice counts once
    assert ranked(graph, dh_cocitation(graph, graph.id_of("u"))) == [("x", 2.0)]


def test_no_parents_and_empty_neighbourhood():
    graph = LinkGraph.from_pages([("lonely", []), ("p", [("only", "", -1)])], key_kind=KeyKind.ID)
    assert dh_cocitation(graph, graph.id_of("lonely")).reason is NoAnswer.NO_PARENTS
    answer = dh_cocitation(graph, graph.id_of("only"))
    assert answer.related == () and answer.reason is NoAnswer.EMPTY_NEIGHBOURHOOD


def test_optional_stoplist():
    graph = id_graph({"p1": ["S", "u", "x"], "p2": ["S", "u", "x"]})
    assert [n for n, _ in ranked(graph, dh_cocitation(graph, graph.id_of("u")))] == ["S", "x"]
    params = DHCocitationParams(stoplist=Stoplist(("S",)))
    assert [n for n, _ in ranked(graph, dh_cocitation(graph, graph.id_of("u"), params))] == ["x"]


# -- the URL-chopping restart ----------------------------------------------------------------


def restart_graph() -> LinkGraph:
    x = "http://a.com/X/"
    return url_graph({
        # u = a.com/X/Y/Z: parents h0, h1, h2 → s0 (1), s1 (2), a.com/X/ (2), s2 (2), s3 (1)
        "http://h0.org/": ["http://a.com/X/Y/Z", "http://s0.org/"],
        "http://h1.org/": ["http://s1.org/", x, "http://s2.org/", "http://a.com/X/Y/Z"],
        "http://h2.org/": ["http://s1.org/", x, "http://s2.org/", "http://a.com/X/Y/Z",
                           "http://s3.org/"],
        # a.com/X/: parents h1..h4 → s1, s2, u, s4, s5 (2 each), s3 (1)
        "http://h3.org/": ["http://s4.org/", x, "http://s5.org/"],
        "http://h4.org/": ["http://s4.org/", x, "http://s5.org/"],
        "http://a.com/": [],
    })


def test_restart_with_chopped_url_when_too_few_siblings_are_cocited():
    graph = restart_graph()
    u = graph.id_of("http://a.com/X/Y/Z")
    params = DHCocitationParams(restart_min_siblings=4)
    run = dh_cocitation_run(graph, u, params)
    # u has 3 siblings co-cited twice (< 4); a.com/X/Y/ and a.com/X/Y are not nodes
    # (skipped); a.com/X/ has 5: it answers
    assert graph.name(run.answered_by) == "http://a.com/X/"
    assert [graph.name(a.node) for a in run.attempts] == ["http://a.com/X/Y/Z", "http://a.com/X/"]
    assert [a.well_cocited(2) for a in run.attempts] == [3, 5]
    # u is co-cited with a.com/X/ twice, but u is never returned
    assert ranked(graph, run.answer) == [
        ("http://s1.org/", 2.0), ("http://s2.org/", 2.0), ("http://s4.org/", 2.0),
        ("http://s5.org/", 2.0), ("http://s3.org/", 1.0)]


def test_no_restart_when_enough_or_disabled_or_id_graph():
    graph = restart_graph()
    u = graph.id_of("http://a.com/X/Y/Z")
    enough = dh_cocitation_run(graph, u, DHCocitationParams(restart_min_siblings=3))
    assert enough.answered_by == u and len(enough.attempts) == 1
    disabled = dh_cocitation_run(graph, u, DHCocitationParams(chop_urls=False))
    assert disabled.answered_by == u and len(disabled.attempts) == 1
    ids = id_graph({"h": ["1/2/3", "x"], "k": ["1/2/", "y"]})
    run = dh_cocitation_run(ids, ids.id_of("1/2/3"))
    assert len(run.attempts) == 1 and ranked(ids, run.answer) == [("x", 1.0)]


def test_when_no_chop_is_enough_the_best_attempt_answers():
    graph = restart_graph()
    u = graph.id_of("http://a.com/X/Y/Z")
    # nobody reaches 15: u has 3 siblings co-cited twice, a.com/X/ 5, a.com/ (no parents) 0
    run = dh_cocitation_run(graph, u)
    assert [graph.name(a.node) for a in run.attempts] == [
        "http://a.com/X/Y/Z", "http://a.com/X/", "http://a.com/"]
    assert graph.name(run.answered_by) == "http://a.com/X/"
    # with a threshold nobody meets at all (0 each), ties go to the most specific: u
    tie = dh_cocitation_run(graph, u, DHCocitationParams(restart_min_degree=3))
    assert tie.answered_by == u
    assert ranked(graph, tie.answer) == [
        ("http://a.com/X/", 2.0), ("http://s1.org/", 2.0), ("http://s2.org/", 2.0),
        ("http://s0.org/", 1.0), ("http://s3.org/", 1.0)]


def test_chopped_urls_doctests():
    assert doctest.testmod(module).failed == 0
    assert chopped_urls("http://a.com/X/Y/Z?q=1") == [
        "http://a.com/X/Y/Z", "http://a.com/X/Y/", "http://a.com/X/Y", "http://a.com/X/",
        "http://a.com/X", "http://a.com/"]


def test_params_defaults_and_validation():
    params = DHCocitationParams()
    assert (params.max_parents, params.siblings_per_parent, params.max_results) == (2000, 8, 10)
    assert (params.restart_min_siblings, params.restart_min_degree) == (15, 2)
    assert params.stoplist == Stoplist()
    for bad in ({"max_parents": -1}, {"max_results": 0}, {"degree": "common-parents"}):
        with pytest.raises(ValueError):
            DHCocitationParams(**bad)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=60),
       st.integers(0, 12))
def test_property_degrees_are_true_common_parents(edges, query):
    graph = LinkGraph.from_edges([(str(a), str(b)) for a, b in edges] + [(str(query), str(query))])
    u = graph.id_of(str(query))
    answer = dh_cocitation(graph, u, DHCocitationParams(max_results=50))
    parents_u = set(graph.parents(u).tolist()) - {u}
    for scored in answer.related:
        assert scored.node != u
        # B = 2000 ≥ every in-degree here: the degree is exactly |parents(u) ∩ parents(s)|
        assert scored.score == len(parents_u & set(graph.parents(scored.node).tolist()))
    keys = [(-s.score, graph.name(s.node)) for s in answer.related]
    assert keys == sorted(keys)
    assert (answer.reason is None) == bool(answer.related)
