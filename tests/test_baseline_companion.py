"""Dean & Henzinger's Companion (relatedpages.baselines.companion): hand-worked vicinity
graphs, near-duplicates, Bharat–Henzinger weights, weighted HITS, stoplist and properties."""
from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relatedpages.baselines import NoAnswer
from relatedpages.baselines import companion as module
from relatedpages.baselines import stoplist as stoplist_module
from relatedpages.baselines.companion import (
    CompanionParams,
    bharat_henzinger_weights,
    companion,
    companion_run,
    forward_nodes,
    near_duplicate_groups,
    sample_parents,
    sibling_windows,
    vicinity_graph,
    weighted_hits,
)
from relatedpages.baselines.stoplist import (
    STOPLIST_PATH_DEFAULT,
    Stoplist,
    builtin_stoplist,
    query_stops,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph

NO_STOP = CompanionParams(stoplist=Stoplist())


def id_graph(pages: dict[str, list[str]]) -> LinkGraph:
    return LinkGraph.from_edges((source, target) for source, targets in pages.items()
                                for target in targets)


def names(graph: LinkGraph, nodes) -> list[str]:
    return [graph.name(int(n)) for n in nodes]


def related_names(graph: LinkGraph, answer) -> list[str]:
    return [graph.name(s.node) for s in answer.related]


# -- step 1: the vicinity graph ------------------------------------------------------------


def window(links: list[str], per_parent: int = 8, stoplist: Stoplist = Stoplist()) -> list[str]:
    graph = id_graph({"p": links})
    u = graph.id_of("u")
    assert u is not None
    stops = stoplist.nodes_in(graph)
    siblings, segment = sibling_windows(graph, graph.parents(u), u, per_parent, stops)
    assert set(segment.tolist()) <= {0}
    return names(graph, siblings)


def test_window_is_four_links_above_and_four_below_the_link_to_u():
    links = ["a1", "a2", "a3", "a4", "a5", "u", "b1", "b2", "b3", "b4", "b5"]
    assert window(links) == ["a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4"]


def test_window_is_not_refilled_near_the_start_of_the_page():
    links = ["a1", "u", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"]
    assert window(links) == ["a1", "b1", "b2", "b3", "b4"]


def test_parent_with_at_most_bf_other_links_gives_them_all():
    links = ["a1", "a2", "a3", "a4", "a5", "u", "b1", "b2", "b3"]  # 8 links besides u
    assert window(links) == ["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3"]


def test_window_is_around_the_first_link_to_u_and_skips_other_links_to_u():
    links = ["a1", "a2", "a3", "a4", "a5", "u", "b1", "u", "b2", "b3", "b4", "b5"]
    assert window(links) == ["a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4"]


def test_stoplisted_links_take_no_window_slot():
    links = ["a1", "a2", "a3", "a4", "a5", "S", "u", "b1", "b2", "b3", "b4", "b5"]
    assert window(links, stoplist=Stoplist(("S",))) == ["a2", "a3", "a4", "a5",
                                                         "b1", "b2", "b3", "b4"]


def test_odd_bf_takes_floor_half_before_and_ceil_half_after():
    links = ["a1", "a2", "u", "b1", "b2", "b3"]
    assert window(links, per_parent=3) == ["a2", "b1", "b2"]


def test_repeated_sibling_takes_two_slots():
    links = ["a1", "a2", "a3", "x", "x", "u", "b1", "b2", "b3", "b4", "b5"]
    # 4 link slots before u: a2, a3, x, x; 4 after: b1..b4
    assert window(links) == ["a2", "a3", "x", "x", "b1", "b2", "b3", "b4"]


def test_parents_sample_is_deterministic_and_at_most_b():
    graph = id_graph({f"p{i}": ["u"] for i in range(30)} | {"u": ["u"]})
    u = graph.id_of("u")
    all_parents = sample_parents(graph, u, 2000, 0)
    # all 30, in ascending node order (p0..p29 were numbered first); the self-loop is not u's parent
    assert names(graph, all_parents) == [f"p{i}" for i in range(30)]
    sample = sample_parents(graph, u, 7, 0)
    assert len(sample) == 7 and list(sample) == sorted(sample)
    assert set(sample.tolist()) <= set(all_parents.tolist())
    assert sample.tolist() == sample_parents(graph, u, 7, 0).tolist()
    assert any(sample_parents(graph, u, 7, seed).tolist() != sample.tolist() for seed in (1, 2, 3))


def test_go_forward_takes_first_f_distinct_children_and_top_indegree_coparents():
    graph = id_graph({
        "u": ["c1", "c1", "u", "c2", "c3"],
        "q1": ["c1"], "q2": ["c1"], "q3": ["c1"],
        "x": ["q2"], "y": ["q2", "q3"], "z": ["q3"],  # in-degrees: q1 0, q2 2, q3 2
    })
    u = graph.id_of("u")
    children, coparents = forward_nodes(graph, u, max_children=2, per_child=2)
    assert names(graph, children) == ["c1", "c2"]
    # c1's parents other than u: q1 (in-degree 0), q2 (2), q3 (2): the two highest → q2, q3
    assert names(graph, coparents) == ["q2", "q3"]


def test_vicinity_graph_nodes_and_edges_by_hand():
    graph = id_graph({
        "p": ["a", "u", "b"],
        "u": ["c"],
        "q": ["c", "d"],
        "a": ["b"],
        "d": ["a"],
        "far": ["p"],  # a grandparent: not in the vicinity
    })
    u = graph.id_of("u")
    vicinity = vicinity_graph(graph, u, NO_STOP)
    assert sorted(names(graph, vicinity.nodes)) == ["a", "b", "c", "p", "q", "u"]
    edges = {(graph.name(int(vicinity.nodes[s])), graph.name(int(vicinity.nodes[t])))
             for s, t in zip(vicinity.edge_sources, vicinity.edge_targets)}
    # q → d leaves the vicinity (d is neither sibling nor co-parent)
    assert edges == {("p", "a"), ("p", "u"), ("p", "b"), ("u", "c"), ("q", "c"), ("a", "b")}


# -- step 2: near-duplicates -----------------------------------------------------------------


def groups(sets: list[list[int]], m: int, overlap: float = 0.95) -> list[int]:
    sources = np.array([i for i, s in enumerate(sets) for _ in sorted(s)], dtype=np.int32)
    targets = np.array([t for s in sets for t in sorted(s)], dtype=np.int32)
    return near_duplicate_groups(sources, targets, m, 10, overlap).tolist()


def test_near_duplicates_need_more_than_ten_links_and_95_percent_in_common():
    base = list(range(100, 120))  # 20 links
    sets = [
        base,  # 0
        base,  # 1: identical to 0
        base[:19] + [200],  # 2: 19 of 20 in common with 0 = 95 % → merged
        base[:18] + [200, 201],  # 3: 18/20 with 0 (no), 19/20 with 2 (yes) → merged via 2
        list(range(300, 310)),  # 4: ten links ...
        list(range(300, 310)),  # 5: ... identical, but not *more than* ten: not merged
        base[:17] + [400, 401, 402],  # 6: 17/20 with 0, 18/20 with 3: not merged
        list(range(100, 111)),  # 7: 11 links, all in 0 — but 11 < 0.95 · 20: not merged
    ]
    label = groups(sets, 500)
    assert label[0] == label[1] == label[2] == label[3]
    assert len({label[0], label[4], label[5], label[6], label[7]}) == 5
    assert label[100:120] == list(range(100, 120))  # pages without out-links stay alone


def test_near_duplicates_small_sets_boundary():
    eleven = list(range(50, 61))
    # 11 links: 95 % of 11 = 10.45 → all 11 must be shared; one different link splits them
    assert len(set(groups([eleven, eleven[:10] + [99]], 100)[:2])) == 2
    assert len(set(groups([eleven, list(eleven)], 100)[:2])) == 1
    assert len(set(groups([eleven, eleven[:10] + [99]], 100, overlap=0.9)[:2])) == 1


def test_mirrored_authority_is_merged_and_shown_once():
    links = [f"t{i}" for i in range(12)]
    graph = id_graph({
        "p1": ["m1", "u", "m2", "x"], "p2": ["m1", "u", "m2", "x"], "p3": ["m2", "u", "x"],
        "m1": links, "m2": links,  # mirrors: 12 identical links each
        **{t: [] for t in links},
    })
    run = companion_run(graph, graph.id_of("u"), NO_STOP)
    got = related_names(graph, run.answer)
    # m2 has more in-links (3 vs 2): it represents the pair; m1 is never returned
    assert "m2" in got and "m1" not in got
    nodes = run.vicinity.nodes.tolist()
    assert run.representative[nodes.index(graph.id_of("m1"))] == nodes.index(graph.id_of("m2"))
    # merged node: union of the in-links: p1, p2, p3 all cite it → it ties x for first
    assert got[:2] == ["m2", "x"]


def test_mirror_of_u_is_never_returned():
    links = [f"t{i}" for i in range(11)]
    graph = id_graph({
        "p1": ["u", "u2", "x"], "p2": ["u2", "u", "x"], "u": links, "u2": links,
    })
    run = companion_run(graph, graph.id_of("u"), NO_STOP)
    got = related_names(graph, run.answer)
    assert "u2" not in got and "u" not in got
    nodes = run.vicinity.nodes.tolist()
    assert run.representative[nodes.index(graph.id_of("u2"))] == nodes.index(graph.id_of("u"))
    # the merged u (11 links to t0..t10) is the dominant hub: AᵀA has an 11×11 block of ones
    # (eigenvalue 11) against {p1, p2} × {x, u} (eigenvalue 4), so the t's take all the
    # authority, equally: ties by name, top 10
    assert got == [f"t{i}" for i in (0, 1, 10, 2, 3, 4, 5, 6, 7, 8)]


# -- step 3: Bharat–Henzinger weights ----------------------------------------------------------


def test_bharat_henzinger_weights_by_hand():
    # local nodes 0, 1 on host 10; 2 on host 11; 3, 4 on host 12
    hosts = np.array([10, 10, 11, 12, 12], dtype=np.int32)
    sources = np.array([0, 0, 1, 2], dtype=np.int32)
    targets = np.array([3, 4, 3, 3], dtype=np.int32)
    authority, hub = bharat_henzinger_weights(sources, targets, hosts)
    # authority 1/k: host 10 → page 3 twice (0→3, 1→3); host 10 → 4 once; host 11 → 3 once
    assert authority.tolist() == [0.5, 1.0, 0.5, 1.0]
    # hub 1/l: page 0 → host 12 twice (3, 4); page 1 → host 12 once; page 2 → host 12 once
    assert hub.tolist() == [0.5, 0.5, 1.0, 1.0]


def test_same_host_links_are_ignored_and_weights_damp_one_host():
    pages = [
        ("http://hub1.org/", ["http://news.com/", "http://u.com/", "http://paper.com/"]),
        ("http://hub2.net/", ["http://news.com/", "http://u.com/", "http://paper.com/"]),
        ("http://hub3.edu/", ["http://news.com/", "http://u.com/", "http://www.yahoo.com/"]),
        ("http://u.com/", ["http://u.com/about", "http://news.com/"]),
        # three pages of one host all citing spam.com: B&H weights count them as one
        ("http://farm.biz/a", ["http://spam.com/", "http://u.com/"]),
        ("http://farm.biz/b", ["http://spam.com/", "http://u.com/"]),
        ("http://farm.biz/c", ["http://spam.com/", "http://u.com/"]),
    ]
    graph = LinkGraph.from_pages([(url, [(h, "", 0) for h in links]) for url, links in pages],
                                 key_kind=KeyKind.URL)
    u = graph.id_of("http://u.com/")
    answer = companion(graph, u)  # default stoplist: www.yahoo.com is on it
    got = related_names(graph, answer)
    assert "http://www.yahoo.com/" not in got
    assert "http://u.com/about" not in got  # u → about is a same-host link: weight 0
    assert got[0] == "http://news.com/"
    # without weights spam.com (3 citing pages) would beat paper.com (2); with them the three
    # farm.biz pages give spam.com authority weight 1/3 each
    run = companion_run(graph, u)
    nodes = run.vicinity.nodes.tolist()
    score = {graph.name(n): float(run.authority[i]) for i, n in enumerate(nodes)}
    assert score["http://paper.com/"] > score["http://spam.com/"]
    no_yahoo = companion(graph, u, NO_STOP)
    assert "http://www.yahoo.com/" in related_names(graph, no_yahoo)


# -- step 4: weighted HITS -----------------------------------------------------------------------


def test_weighted_hits_converges_to_the_principal_eigenvector():
    # hubs 0, 1; authorities 2, 3: 0 → 2, 0 → 3, 1 → 2.  AᵀA on (2, 3) = [[2, 1], [1, 1]]:
    # largest eigenvalue (3 + √5)/2, eigenvector (1, (√5 - 1)/2), normalised.
    sources = np.array([0, 0, 1], dtype=np.int32)
    targets = np.array([2, 3, 2], dtype=np.int32)
    ones = np.ones(3)
    authority, hub, iterations = weighted_hits(sources, targets, ones, ones, 4)
    golden = (math.sqrt(5) - 1) / 2
    norm = math.sqrt(1 + golden ** 2)
    assert authority[2] == pytest.approx(1 / norm, abs=1e-7)
    assert authority[3] == pytest.approx(golden / norm, abs=1e-7)
    assert authority[0] == authority[1] == 0.0
    assert hub[0] > hub[1] > 0.0 and hub[2] == hub[3] == 0.0
    assert 1 < iterations < 200


def test_weighted_hits_uses_the_weights():
    # one hub, two authorities; authority weights 1 and 1/4 → authorities 4:1 after normalising
    sources = np.array([0, 0], dtype=np.int32)
    targets = np.array([1, 2], dtype=np.int32)
    authority, _, _ = weighted_hits(sources, targets, np.array([1.0, 0.25]), np.ones(2), 3)
    assert authority[1] / authority[2] == pytest.approx(4.0)


def test_companion_by_hand_eigenvector():
    graph = id_graph({"p1": ["x", "u", "y"], "p2": ["x", "u", "y"], "p3": ["x", "u", "z"]})
    run = companion_run(graph, graph.id_of("u"), NO_STOP)
    assert related_names(graph, run.answer) == ["x", "y", "z"]
    # AᵀA over (x, u, y, z), hubs p1 = {x,u,y}, p2 = {x,u,y}, p3 = {x,u,z}, by hand:
    ata = np.array([[3, 3, 2, 1], [3, 3, 2, 1], [2, 2, 2, 0], [1, 1, 0, 1]], dtype=float)
    values, vectors = np.linalg.eigh(ata)
    principal = np.abs(vectors[:, -1])
    expected = dict(zip(["x", "u", "y", "z"], principal))
    for scored in run.answer.related:
        assert scored.score == pytest.approx(expected[graph.name(scored.node)], abs=1e-6)


def test_ties_are_broken_by_name():
    graph = id_graph({"p1": ["y", "u", "x"], "p2": ["x", "u", "y"]})
    answer = companion(graph, graph.id_of("u"), NO_STOP)
    assert related_names(graph, answer) == ["x", "y"]
    assert answer.related[0].score == answer.related[1].score


def test_max_results_cuts_the_answer():
    graph = id_graph({"p1": ["a", "b", "u", "c", "d"], "p2": ["a", "u"]})
    answer = companion(graph, graph.id_of("u"), CompanionParams(stoplist=Stoplist(), max_results=2))
    assert related_names(graph, answer) == ["a", "b"]


# -- stoplist ----------------------------------------------------------------------------------


def test_stoplisted_page_never_enters_unless_u_is_on_the_stoplist():
    graph = id_graph({
        "p1": ["S", "u", "x"], "p2": ["S", "u", "x"], "p3": ["S", "u"],
        "q1": ["S", "T", "y"], "q2": ["S", "T"],
    })
    stop = CompanionParams(stoplist=Stoplist(("S", "T")))
    got = related_names(graph, companion(graph, graph.id_of("u"), stop))
    assert "S" not in got and got == ["x"]
    vicinity = vicinity_graph(graph, graph.id_of("u"), stop)
    assert graph.id_of("S") not in vicinity.nodes.tolist()
    # u = S itself: the stoplist is disabled, so T (also on it) can be returned
    on_stop = related_names(graph, companion(graph, graph.id_of("S"), stop))
    assert "T" in on_stop and "S" not in on_stop
    assert len(query_stops(graph, graph.id_of("S"), stop.stoplist)) == 0


def test_stoplist_url_and_host_entries():
    graph = LinkGraph.from_pages([
        ("http://p.org/", [("https://www.yahoo.com/", "", 0), ("http://u.org/", "", 0),
                           ("http://ads.spam.net/x", "", 0), ("http://ok.org/", "", 0)]),
    ], key_kind=KeyKind.URL)
    stoplist = Stoplist.from_lines(["# comment", "http://www.yahoo.com/", "spam.net", ""])
    stops = stoplist.nodes_in(graph)
    stopped = {graph.name(i) for i in range(len(graph))
               if stops.contains_node(graph, i)}
    assert stopped == {"https://www.yahoo.com/", "http://ads.spam.net/x"}  # scheme-insensitive


def test_stoplist_rejects_bad_entries():
    with pytest.raises(ValueError):
        Stoplist(("a b",))
    with pytest.raises(ValueError):
        Stoplist(("",))


@pytest.mark.parametrize("doctested", [module, stoplist_module], ids=lambda doctested: doctested.__name__)
def test_doctests(doctested):
    assert doctest.testmod(doctested).failed == 0


def test_shipped_stoplist_matches_builtin_copy():
    assert Stoplist.from_file(STOPLIST_PATH_DEFAULT) == builtin_stoplist()
    assert len(builtin_stoplist().entries) == 21  # "currently contains 21 URLs"
    assert CompanionParams().stoplist == builtin_stoplist()


# -- parameters and empty answers --------------------------------------------------------------


def test_params_defaults_are_the_papers_and_validate():
    params = CompanionParams()
    assert (params.max_parents, params.siblings_per_parent) == (2000, 8)
    assert (params.max_children, params.coparents_per_child) == (50, 8)
    assert (params.duplicate_min_links, params.duplicate_overlap, params.max_results) == (10, 0.95, 10)
    for bad in ({"max_parents": -1}, {"duplicate_overlap": 0.0}, {"duplicate_overlap": 1.5},
                {"hits_max_iterations": 0}, {"max_results": 0}, {"hits_tolerance": 0.0}):
        with pytest.raises(ValueError):
            CompanionParams(**bad)


def test_isolated_node_and_empty_neighbourhood():
    graph = LinkGraph.from_pages([("a", [("b", "", -1)]), ("lonely", []), ("c", [("c", "", -1)])],
                                 key_kind=KeyKind.ID)
    assert companion(graph, graph.id_of("lonely"), NO_STOP).reason is NoAnswer.NO_PARENTS
    assert companion(graph, graph.id_of("c"), NO_STOP).reason is NoAnswer.NO_PARENTS  # self-loop
    # b has a parent but the parent links only to b: nothing else qualifies
    answer = companion(graph, graph.id_of("b"), NO_STOP)
    assert answer.related == () and answer.reason is NoAnswer.EMPTY_NEIGHBOURHOOD


def test_huge_in_degree_uses_b_parents():
    graph = id_graph({f"p{i}": [f"s{i % 7}", "u", "x"] for i in range(3000)})
    run = companion_run(graph, graph.id_of("u"), CompanionParams(stoplist=Stoplist(), max_parents=100))
    assert len(run.vicinity.parents) == 100
    assert related_names(graph, run.answer)[0] == "x"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), max_size=70),
       st.integers(0, 14), st.sets(st.integers(0, 14), max_size=3))
def test_property_never_u_never_stoplisted_sorted(edges, query, stopped):
    graph = LinkGraph.from_edges([(str(a), str(b)) for a, b in edges] + [(str(query), str(query))])
    u = graph.id_of(str(query))
    stoplist = Stoplist(tuple(str(s) for s in sorted(stopped)))
    answer = companion(graph, u, CompanionParams(stoplist=stoplist, max_results=5))
    got = [s.node for s in answer.related]
    assert u not in got and len(got) == len(set(got)) <= 5
    if str(query) not in stoplist.entries:
        assert not {graph.name(n) for n in got} & set(stoplist.entries)
    keys = [(-s.score, graph.name(s.node)) for s in answer.related]
    assert keys == sorted(keys) and all(s.score > 0 for s in answer.related)
    assert (answer.reason is None) == bool(answer.related)
