"""Spertus's moved-page finder on simulated moves (``relatedpages eval moved``).

The protocol on a tiny hand-made crawl whose answers are worked out by hand, the simulated
new crawl proven equal to ``LinkGraph.from_pages`` of the edited pages, then a quality gate
on the real corpus with pinned floors.
"""
from __future__ import annotations

import doctest
import json
import math
import re

import pytest

from relatedpages import cli
from relatedpages.baselines.moved import MovedReason, moved
from relatedpages.evaluation import moved as module
from relatedpages.evaluation.moved import (
    ANSWERED,
    MoveCase,
    check_fraction,
    choose_moves,
    eligible_pages,
    evaluate,
    evaluate_graph,
    evaluation_as_json,
    format_report,
    moved_url,
    run_moves,
    simulate_move,
)
from relatedpages.evaluation.related import link_graph_of
from relatedpages.store.linkgraph import KeyKind, LinkGraph

X = "https://x.example/page"
Y = "https://y.example/"
P1, P2, P3 = "https://p1.example/", "https://p2.example/", "https://p3.example/"


def u(name: str) -> str:
    return f"https://{name}.example/"


def record(url: str, *blocks: list[tuple[str, str]]) -> dict:
    """A segment record as ``jobs.segment`` writes it."""
    return {"url": url, "site": url.split("/")[2],
            "blocks": [[{"href": href, "anchor": anchor, "pos": i}
                        for i, (href, anchor) in enumerate(block)] for block in blocks]}


#: X is linked from P1, P2, P3; Y from P1 and P2; no other page is linked by two pages.
RECORDS = [
    record(P1, [(u("a"), "A"), (X, "X page"), (u("b"), "B")], [(Y, "Why")]),
    record(P2, [(X, "the X"), (u("c"), "C")], [(Y, "Y site")]),
    record(P3, [(u("d"), "D"), (X, "X")]),
    # X links to a page under an anchor equal to P1's old anchor: reached at hop 2 through
    # X' by every updated parent (0.5 each); its self-link moves with it
    record(X, [(u("about"), "X page"), (X, "top")]),
    record(Y, [(u("e"), "E")]),
]


@pytest.fixture(scope="module")
def old() -> LinkGraph:
    return link_graph_of(RECORDS)


def test_doctests():
    assert doctest.testmod(module).failed == 0


def test_moved_url_keeps_host_site_and_query():
    assert moved_url(X) == X + "/moved"
    assert moved_url("https://github.com/me/list") == "https://github.com/me/list/moved"
    assert moved_url("http://a.example/?q=1") == "http://a.example/moved?q=1"


def test_eligible_pages_are_crawled_and_linked_from_two_other_pages(old):
    # a, b, c … are linked once and not crawled; P1–P3 are crawled but nobody links to them
    assert [old.name(n) for n in eligible_pages(old)] == [X, Y]
    assert [old.name(n) for n in eligible_pages(old, 3)] == [X]


def test_a_self_link_does_not_count_as_a_parent():
    graph = link_graph_of([record(X, [(X, "me")]), record(P1, [(X, "X")])])
    assert eligible_pages(graph) == ()
    assert len(eligible_pages(graph, 1)) == 1


def test_moves_are_drawn_deterministically_with_nested_updated_parents(old):
    cases = choose_moves(old, pages=5, seed=1)
    assert sorted(c.url for c in cases) == [X, Y]  # only two are eligible
    assert choose_moves(old, pages=5, seed=1) == cases
    case = next(c for c in cases if c.url == X)
    assert case.new_url == X + "/moved" and sorted(case.parents) == [P1, P2, P3]
    assert [len(case.updated(f)) for f in (0.25, 0.5, 1.0)] == [1, 2, 3]  # round(1.5) = 2
    assert case.updated(0.25) == case.parents[:1] and case.updated(0.5) == case.parents[:2]
    assert len(choose_moves(old, pages=1, seed=1)) == 1
    with pytest.raises(ValueError, match="pages must be >= 1"):
        choose_moves(old, pages=0)


def test_a_page_whose_new_url_exists_is_not_moved():
    graph = link_graph_of(RECORDS + [record(u("z"), [(X + "/moved", "taken")])])
    assert [c.url for c in choose_moves(graph, pages=5)] == [Y]


def _view(graph: LinkGraph) -> dict[str, tuple]:
    """What ``moved`` reads, by URL: crawled, out-links with anchors and blocks, parents.
    Nodes that are neither crawled nor linked are left out (from_pages has no such nodes)."""
    view = {}
    for node in range(len(graph)):
        out = tuple((graph.name(link.target), link.anchor, link.block) for link in graph.out_links(node))
        parents = tuple(sorted(graph.name(p) for p in graph.parents(node).tolist()))
        if graph.crawled[node] or parents:
            view[graph.name(node)] = (bool(graph.crawled[node]), out, parents)
    return view


def _edited_pages(case: MoveCase, fraction: float) -> list[tuple[str, list[tuple[str, str, int]]]]:
    """The protocol's new crawl written out page by page (module docstring, step 3)."""
    updated = set(case.updated(fraction))
    pages = []
    for rec in RECORDS:
        out = [(link["href"], link["anchor"], b) for b, block in enumerate(rec["blocks"]) for link in block]
        if rec["url"] == case.url:
            pages.append((case.new_url, [(case.new_url if h == case.url else h, a, b) for h, a, b in out]))
            continue
        if rec["url"] in updated:
            out = [(case.new_url if h == case.url else h, a, b) for h, a, b in out]
        pages.append((rec["url"], out))
    return pages


@pytest.mark.parametrize("fraction", [0.25, 0.5, 1.0])
@pytest.mark.parametrize("url", [X, Y])
def test_simulated_crawl_equals_from_pages_of_the_edited_pages(old, url, fraction):
    case = next(c for c in choose_moves(old, pages=2, seed=3) if c.url == url)
    new = simulate_move(old, case, fraction)
    assert _view(new) == _view(LinkGraph.from_pages(_edited_pages(case, fraction), key_kind=KeyKind.URL))
    assert new.host(new.id_of(case.new_url)) == old.host(old.id_of(url))


def test_stale_parents_still_link_to_the_gone_page(old):
    case = MoveCase(X, X + "/moved", (P2, P1, P3))
    new = simulate_move(old, case, 0.25)  # one updated parent: P2
    gone, there = new.id_of(X), new.id_of(X + "/moved")
    assert not new.crawled[gone] and new.crawled[there]
    assert [new.name(p) for p in new.parents(gone).tolist()] == [P1, P3]
    assert [new.name(p) for p in new.parents(there).tolist()] == [P2, X + "/moved"]  # + its self-link
    p2 = new.id_of(P2)
    assert [(new.name(link.target), link.anchor, link.block) for link in new.out_links(p2)] == [
        (X + "/moved", "the X", 0), (u("c"), "C", 0), (Y, "Y site", 1)]
    assert moved(old, new, X).candidates[0].url == X + "/moved"


def test_simulating_needs_a_crawled_page(old):
    with pytest.raises(ValueError, match="not a crawled page"):
        simulate_move(old, MoveCase(u("a"), u("a") + "moved", (P1,)), 1.0)


@pytest.mark.parametrize("fraction", [1 / 3, 1.0])
def test_the_finder_answers_as_worked_out_by_hand(old, fraction):
    # X': 2 per updated parent (same anchor: 1, same slot: 1); "about" reached at hop 2
    # through X' by every updated parent (the blurb has "x"): 0.5 * Jaccard("X page", "X page")
    # = 0.5 each; so the runner-up / X' ratio is 0.5 / 2 whatever F.  Y' alone: ratio 0.
    cases = choose_moves(old, pages=2, seed=1)
    results = {r.url: r for r in run_moves(old, cases, fraction)}
    x = results[X]
    assert (x.rank, x.reason, x.candidates, x.updated, x.parents) == (1, None, 2, round(3 * fraction), 3)
    assert x.runner_up == pytest.approx(0.25)
    assert (results[Y].rank, results[Y].candidates, results[Y].runner_up) == (1, 1, 0.0)
    assert {r.control for r in results.values()} == {X, Y}
    assert all(r.control_reason is MovedReason.NOT_GONE for r in results.values())


def test_evaluation_on_the_hand_made_crawl(old):
    ev = evaluate_graph(old, pages=10, seed=1, updated=0.5)
    assert ev.protocol == {"old_nodes": len(old), "old_links": old.edges, "old_crawled": 5,
                           "eligible": 2, "moves": 2}
    s = ev.scores
    assert (s.fraction, s.moves, s.success, s.mrr, s.found) == (0.5, 2, {1: 1.0, 5: 1.0}, 1.0, 1.0)
    assert s.reasons == {ANSWERED: 2} and s.controls == {MovedReason.NOT_GONE.value: 2}
    assert (s.runner_up_median, s.runner_up_max) == (pytest.approx(0.125), pytest.approx(0.25))
    assert s.mean_updated == 1.5  # X: round(1.5) = 2, Y: round(1.0) = 1
    assert [row.fraction for row in ev.sweep] == [0.25, 0.5, 1.0]
    assert [row.mean_updated for row in ev.sweep] == [1.0, 1.5, 2.5]
    report = format_report(ev)
    assert re.search(r"success@1 +100\.0 %", report) and "control (a page that did not move): not_gone 2" in report
    figures = json.loads(evaluation_as_json(ev))
    assert figures["scores"]["success_at_1"] == 1.0 and len(figures["sweep"]) == 3


def test_a_rank_below_the_top_counts_in_mrr_and_success_at_5():
    # a simulated move always ranks X' first on these crawls: score_moves is fed results
    results = [
        module.MoveResult(X, X + "/moved", 3, 1, 2, None, 3, 1.2, Y, MovedReason.NOT_GONE, 0.01, 0.02),
        module.MoveResult(Y, Y + "moved", 2, 1, None, MovedReason.NO_EVIDENCE, 0, None, X,
                          MovedReason.NOT_GONE, 0.03, 0.02),
    ]
    s = module.score_moves(results, 0.5)
    assert s.success == {1: 0.0, 5: 0.5} and s.mrr == 0.25 and s.found == 0.5
    assert s.reasons == {ANSWERED: 1, "no_evidence": 1}
    assert (s.runner_up_median, s.runner_up_max) == (1.2, 1.2)
    assert math.isclose(s.query_ms_median, 20.0) and math.isclose(s.query_ms_p99, 30.0)


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, float("nan")])
def test_impossible_fractions_are_refused(bad):
    with pytest.raises(ValueError, match="updated fraction"):
        check_fraction(bad)


def test_one_move_needs_an_explicit_control(old):
    [case] = choose_moves(old, pages=1)
    with pytest.raises(ValueError, match="explicit control"):
        run_moves(old, [case], 0.5)
    with pytest.raises(ValueError, match="the moved page itself"):
        run_moves(old, [case], 0.5, controls=[case.url])
    [result] = run_moves(old, [case], 0.5, controls=[P1])
    assert result.rank == 1 and result.control_reason is MovedReason.NOT_GONE


def test_cli_refuses_a_folder_that_is_not_the_shared_data(tmp_path, capsys):
    assert cli.main(["eval", "moved", str(tmp_path)]) == cli.EXIT_USAGE
    assert "not the shared data folder" in capsys.readouterr().err


# -- the real data -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(shared_data):
    for relative in ("awesomehub/awesomehub.warc.gz", "web/aeb-pages.warc.gz",
                     "web/trafilatura-pages.warc.gz"):
        shared_data(relative)
    return shared_data("awesomehub").parent


@pytest.mark.parametrize("argv, message", [
    (["--pages", "1"], "--pages must be >= 2"),
    (["--updated", "0"], "--updated"),
    (["--updated", "1.5"], "--updated"),
])
def test_cli_refuses_bad_settings_before_loading_anything(data_dir, capsys, argv, message):
    assert cli.main(["eval", "moved", str(data_dir), *argv]) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def evaluation(data_dir):
    """The default moves (100 pages, seed 1, F = 0.5) without the sweep: ~30 s."""
    return evaluate(data_dir, sweep=())


@pytest.mark.slow
def test_real_protocol(evaluation):
    q = evaluation.protocol
    # measured: 1684 records, 205,620 nodes, 259,511 links; 131 eligible pages
    assert q["records"] >= 1600 and q["old_links"] >= 250_000
    assert q["eligible"] >= 120 and q["moves"] == 100
    assert [row.fraction for row in evaluation.sweep] == [0.5]


@pytest.mark.slow
def test_real_quality_floors(evaluation):
    s = evaluation.scores
    # measured (seed 1, F = 0.5): success@1 = success@5 = MRR = 100 %, every answer has
    # candidates, every control not_gone; runner-up / X' score at most ~0.5
    assert s.success[1] >= 0.97 and s.success[5] >= 0.99 and s.mrr >= 0.98
    assert s.reasons.get(ANSWERED, 0) >= 99
    assert s.controls == {MovedReason.NOT_GONE.value: 100}
    assert s.runner_up_max < 1.0


@pytest.mark.slow
def test_cli_prints_the_report_and_json(data_dir, capsys):
    assert cli.main(["eval", "moved", str(data_dir), "--pages", "3", "--json"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "success@1" in out and "Sweep over F" in out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["protocol"]["moves"] == 3
    assert [row["updated"] for row in figures["sweep"]] == [0.25, 0.5, 1.0]
    assert figures["scores"]["controls"] == {"not_gone": 3}
