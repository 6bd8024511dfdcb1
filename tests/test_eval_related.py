"""Related-pages evaluation on held-out hub lists (``relatedpages eval related``).

Unit tests of the scoring on hand-made examples, then a quality gate on the real data:
floors pinned a little under the measured figures (seed 1, 20 % of the 550 lists held out,
T = 1.0, min-degree 2) and the comparisons that held with a margin.
"""
from __future__ import annotations

import json
import math
import random

import pytest

from filters.anchors import AnchorWords
from filters.links import LinkFilterParams
from relatedpages import cli
from relatedpages.evaluation.forked import can_fork
from relatedpages.evaluation.measures import score_algorithms, score_related
from relatedpages.evaluation.naive import NAIVE_STRONG
from relatedpages.evaluation.related import (
    BASELINES,
    BLOCK,
    PAPER_BLOCK,
    COCITATION,
    COMPANION,
    DH_COCITATION,
    EXTENDED_COCITATION,
    LLI,
    WEIGHTED_COSINE,
    GroundTruth,
    HubList,
    HubSection,
    at_least,
    check_parameters,
    citing_pages,
    development_draw,
    evaluate,
    evaluate_index,
    hub_sections,
    load_split,
    link_graph_of,
    parse_baselines,
    run_baseline,
    run_baselines,
    select_test_pages,
    split_lists,
    DEV_HOLDOUT,
    DEV_SEED,
    TEST_SEEDS,
    Split,
)
from relatedpages.evaluation.related_report import evaluation_as_json, format_report
from relatedpages.scoring.cocitation import CocitationParams, reference_cocitation
from relatedpages.scoring.parameters import SimilarityParams
from relatedpages.scoring.reference import reference_related
from relatedpages.store.linkgraph import HostRule

# -- hub lists -------------------------------------------------------------------------

HUB_HTML = """<html><head><base href="https://github.com/me/awesome-x/"></head><body>
<p><a href="https://badge.example/">badge before any heading</a></p>
<h1>Awesome X <a href="https://awesome.re/">in the heading: not graded</a></h1>
<p>A list. <a href="https://intro.example/">intro link</a></p>
<h2>Contents</h2><ul><li><a href="#tools">Tools</a></li></ul>
<h2 id="tools">Tools</h2>
<ul><li><a href="https://a.com/">A</a> <a href="https://a.com">A again</a></li>
<li><a href="../other-repo">my other repo (same site)</a></li>
<li><a href="https://github.com/someone/tool">someone's tool</a></li>
<li><a href="javascript:void(0)">script</a> <a href="mailto:x@y.z">mail</a></li></ul>
<h3>Sub <em>tools</em></h3><ul><li><a href="HTTP://B.com:80/x/../y">B</a></li></ul>
<h2>Empty</h2><p>no links</p>
<h2>License</h2><p><a href="https://creativecommons.org/publicdomain/zero/1.0/">CC0</a></p>
</body></html>"""


def test_sections_group_links_under_the_nearest_heading():
    hub = hub_sections(HUB_HTML, "https://github.com/me/awesome-x")
    assert hub.url == "https://github.com/me/awesome-x" and hub.site == "github.com/me"
    assert [(s.heading, s.level, s.links) for s in hub.sections] == [
        ("Awesome X in the heading: not graded", 1, ("https://intro.example/",)),
        ("Tools", 2, ("https://a.com/", "https://github.com/someone/tool")),
        ("Sub tools", 3, ("http://b.com/y",)),
        ("License", 2, ("https://creativecommons.org/publicdomain/zero/1.0/",)),
    ]
    # badge before the first heading, the heading's own link, fragments, same-site links,
    # non-web schemes and the empty sections are all left out
    assert "https://badge.example/" not in hub.links
    assert "https://awesome.re/" not in hub.links
    assert len(hub.links) == 5


def test_sections_of_an_empty_document():
    assert hub_sections("", "https://github.com/me/x").sections == ()


# -- hold-out split --------------------------------------------------------------------

URLS = [f"https://github.com/owner{i}/awesome" for i in range(50)]


def test_split_holds_out_whole_lists_deterministically():
    split = split_lists(URLS, 0.2, seed=DEV_SEED)
    assert len(split.held_out) == 10 and len(split.indexed) == 40
    for seed in (DEV_SEED, 7):
        split = split_lists(URLS, 0.2, seed=seed)
        assert not set(split.held_out) & set(split.indexed)
        assert set(split.held_out) | set(split.indexed) == set(URLS)
        assert split == split_lists(list(reversed(URLS)), 0.2, seed=seed)  # input order is irrelevant
    assert split_lists(URLS, 0.2, seed=7).held_out != split_lists(URLS, 0.2, seed=8).held_out


def test_the_development_split_is_the_one_every_choice_was_made_on():
    """Seed 1 draws as it always did: sorted URLs shuffled by Random(1), the first half held
    out (the development split of the README, pinned here by its first URLs)."""
    order = sorted(URLS)
    random.Random(DEV_SEED).shuffle(order)
    for max_lists in (None, 20):
        kept = order[:max_lists] if max_lists else order
        split = split_lists(URLS, 0.5, seed=DEV_SEED, max_lists=max_lists)
        assert split == Split(tuple(kept[:len(kept) // 2]), tuple(kept[len(kept) // 2:]))
    assert split_lists(URLS, 0.5, seed=DEV_SEED).held_out[:3] == (
        "https://github.com/owner10/awesome", "https://github.com/owner22/awesome",
        "https://github.com/owner7/awesome")  # computed by the algorithm before issue 43


@pytest.mark.parametrize("holdout", [0.2, 0.5, 0.8])
def test_test_splits_never_hold_out_a_development_list(holdout):
    development = set(split_lists(URLS, DEV_HOLDOUT, seed=DEV_SEED).held_out)
    rest = len(URLS) - len(development)
    held = {}
    for seed in TEST_SEEDS:
        split = split_lists(URLS, holdout, seed=seed)
        assert not set(split.held_out) & development
        assert development <= set(split.indexed)  # the development lists are index pages
        assert len(split.held_out) == round(holdout * rest)
        assert len(split.held_out) + len(split.indexed) == len(URLS)
        held[seed] = set(split.held_out)
    assert held[2] != held[3]


def test_a_development_draw_holds_out_development_lists_and_indexes_the_test_splits_size():
    development = set(split_lists(URLS, DEV_HOLDOUT, seed=DEV_SEED).held_out)
    test_held = set().union(*(split_lists(URLS, 0.5, seed=seed).held_out for seed in TEST_SEEDS))
    draws = [development_draw(URLS, 0.5, draw) for draw in (1, 2)]
    for draw in draws:
        assert set(draw.held_out) <= development and not set(draw.held_out) & test_held
        assert len(draw.held_out) == round(0.5 * len(development))
        assert set(draw.held_out) | set(draw.indexed) == set(URLS)
        # as many lists indexed as a test split indexes
        assert len(draw.indexed) == len(split_lists(URLS, 0.5, seed=2).indexed)
    assert draws[0] != draws[1] and draws[0] == development_draw(list(reversed(URLS)), 0.5, 1)


def test_split_with_fewer_lists_holds_out_a_subset_of_the_full_draw():
    for seed in (DEV_SEED, 3):
        full = split_lists(URLS, 0.2, seed=seed)
        small = split_lists(URLS, 0.2, seed=seed, max_lists=20)
        assert len(small.held_out) == 4 and len(small.indexed) == 16
        assert set(small.held_out) <= set(full.held_out)
        assert not set(small.held_out) & set(small.indexed)


@pytest.mark.parametrize("holdout", [0.0, 1.0, -0.1, 1.5])
def test_split_rejects_impossible_fractions(holdout):
    with pytest.raises(ValueError, match="holdout"):
        split_lists(URLS, holdout, seed=1)


def test_split_always_keeps_one_list_on_each_side():
    assert len(split_lists(URLS[:3], 0.01, seed=1).held_out) == 1
    assert len(split_lists(URLS[:3], 0.99, seed=1).indexed) == 1


# -- grades and measures ---------------------------------------------------------------

#: Two held-out lists.  List 0: section A = a b c, section B = d e; list 1: section C = c x.
TRUTH = GroundTruth.from_lists([
    HubList("l0", "s0", (HubSection("A", 2, ("a", "b", "c")), HubSection("B", 2, ("d", "e")))),
    HubList("l1", "s1", (HubSection("C", 2, ("c", "x")),)),
])


def test_grades_same_section_two_same_list_one_else_zero():
    assert TRUTH.grade("a", "b") == 2
    assert TRUTH.grade("a", "d") == 1
    assert TRUTH.grade("a", "x") == 0  # x is only in the other list
    assert TRUTH.grade("a", "unknown") == 0 and TRUTH.grade("unknown", "a") == 0


def test_grade_takes_the_best_over_every_held_out_list():
    assert TRUTH.grade("c", "x") == 2  # same section in list 1
    assert TRUTH.grade("c", "d") == 1  # same list 0
    assert TRUTH.grade("x", "d") == 0


def entries(*urls: str, score: float = 1.0) -> list[list[object]]:
    return [[url, score, []] for url in urls]


def test_precision_over_returned_results_and_with_missing_as_zero():
    # "a" gets 3 results graded 2, 0, 1; "d" gets none; "e" gets 1 result graded 2
    related = {"a": entries("b", "zz", "e"), "e": entries("d")}
    scores = score_related(related, ["a", "d", "e"], TRUTH, k=15)
    assert (scores.test_pages, scores.covered, scores.results) == (3, 2, 4)
    assert scores.coverage == pytest.approx(2 / 3)
    assert scores.p_section == pytest.approx((1 / 3 + 1) / 2)
    assert scores.p_list == pytest.approx((2 / 3 + 1) / 2)
    assert scores.p_section_all == pytest.approx((1 + 1) / (15 * 3))
    assert scores.p_list_all == pytest.approx((2 + 1) / (15 * 3))


def test_rscore_averages_the_top_r_grades_with_missing_results_as_zero():
    related = {"a": entries("b", "zz", "e"), "e": entries("d")}
    scores = score_related(related, ["a", "d", "e"], TRUTH, k=15)
    # a: grades 2, 0, 1 -> R=1: 2, R=2: 1, R=3: 1, R=15: 3/15; d: 0; e: grade 2 -> 2, 1, 2/3, 2/15
    assert len(scores.rscore) == 15
    assert scores.rscore[0] == pytest.approx((2 + 0 + 2) / 3)
    assert scores.rscore[1] == pytest.approx((1 + 0 + 1) / 3)
    assert scores.rscore[2] == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert scores.rscore[14] == pytest.approx((3 / 15 + 0 + 2 / 15) / 3)
    # R = k is the two missing-as-zero precisions combined (grade 2 counts twice)
    assert scores.rscore[14] == pytest.approx(scores.p_section_all + scores.p_list_all)


def test_only_the_top_k_results_count():
    related = {"a": entries(*[f"zz{i}" for i in range(5)], "b")}
    assert score_related(related, ["a"], TRUTH, k=5).p_section == 0.0
    assert score_related(related, ["a"], TRUTH, k=6).p_section == pytest.approx(1 / 6)


def test_no_test_pages_scores_zero_without_dividing_by_zero():
    scores = score_related({}, [], TRUTH)
    assert scores.coverage == 0.0 and scores.p_section == 0.0 and scores.rscore[0] == 0.0


def test_tied_results_are_counted():
    related = {"a": [["b", 3.0, []], ["c", 2.0, []], ["d", 2.0, []], ["e", 1.0, []]]}
    assert score_related(related, ["a"], TRUTH).tied == 2


def test_the_baselines_hook_scores_any_number_of_algorithms_on_the_same_pages():
    related = {
        "perfect": {"a": entries("b", "c")},
        "noise": {"a": entries("zz")},
        "silent": {},
    }
    scores = score_algorithms(related, ["a", "d"], TRUTH, k=2)
    assert list(scores) == ["perfect", "noise", "silent"]
    assert all(s.test_pages == 2 for s in scores.values())
    assert scores["perfect"].rscore == pytest.approx((1.0, 1.0))
    assert scores["noise"].coverage == 0.5 and scores["noise"].rscore == (0.0, 0.0)
    assert scores["silent"].covered == 0


# -- test pages ------------------------------------------------------------------------


def record(url: str, site: str, *hrefs: str) -> dict[str, object]:
    return {"url": url, "site": site,
            "blocks": [[{"href": h, "anchor": h, "pos": i} for i, h in enumerate(hrefs)]]}


def test_test_pages_need_citations_from_enough_index_pages_of_other_sites():
    index = [
        record("https://p.org/1", "p.org", "https://a.com/", "https://b.com/", "https://a.com/"),
        record("https://q.org/1", "q.org", "https://a.com/", "https://q.org/own"),
        record("https://b.com/2", "b.com", "https://b.com/"),  # a site citing itself
    ]
    assert citing_pages(index) == {"https://a.com/": 2, "https://b.com/": 1}
    truth = GroundTruth.from_lists([HubList("l", "s", (
        HubSection("A", 2, ("https://a.com/", "https://b.com/", "https://c.com/")),))])
    assert select_test_pages(truth, index, 2) == ("https://a.com/",)
    assert select_test_pages(truth, index, 1) == ("https://a.com/", "https://b.com/")


# -- thresholds ------------------------------------------------------------------------


def small_corpus(seed: int) -> list[dict[str, object]]:
    """Hub-like pages: blocks of 3-12 links drawn from 40 sites, some repeated across pages."""
    rng = random.Random(seed)
    pool = [f"https://site{i}.com/" for i in range(40)]
    records: list[dict[str, object]] = []
    for p in range(30):
        blocks = []
        for _ in range(rng.randint(1, 3)):
            hrefs = rng.sample(pool[: rng.randint(12, 40)], rng.randint(3, 12))
            blocks.append([{"href": h, "anchor": f"tool {h[8:14]}", "pos": i}
                           for i, h in enumerate(hrefs)])
        records.append({"url": f"https://hub{p}.org/", "site": f"hub{p}.org", "blocks": blocks})
    return records


@pytest.mark.parametrize("seed", [1, 2])
def test_cutting_unthresholded_lists_equals_recomputing_with_the_threshold(seed):
    records = small_corpus(seed)
    words = AnchorWords()
    block_all = reference_related(records, LinkFilterParams(), SimilarityParams(t=0.0), words)
    for t in (0.5, 1.0, 1.25, 2.0, 4.0):
        direct = reference_related(records, LinkFilterParams(), SimilarityParams(t=t), words)
        assert at_least(block_all, t) == direct
    cocitation_all = reference_cocitation(records, CocitationParams(min_degree=1))
    for degree in (2, 3, 4):
        assert at_least(cocitation_all, degree) == reference_cocitation(
            records, CocitationParams(min_degree=degree))


# -- page-level baselines ------------------------------------------------------------------

#: Two index pages of two sites cite a, b and c / a, b and d in one block each.  The held-out
#: list puts a and b in one section, d in another; c is in no held-out list.  Test pages (cited
#: by >= 2 index pages): a and b.
TINY_INDEX = [
    record("https://p1.org/", "p1.org", "https://a.com/", "https://b.com/", "https://c.com/"),
    record("https://p2.org/", "p2.org", "https://a.com/", "https://b.com/", "https://d.com/"),
]
TINY_HELD_OUT = [HubList("https://github.com/x/list", "github.com/x", (
    HubSection("S1", 2, ("https://a.com/", "https://b.com/")),
    HubSection("S2", 2, ("https://d.com/",)),
))]


def test_baselines_are_scored_side_by_side_by_the_same_code_as_block_cocitation():
    evaluation = evaluate_index(TINY_INDEX, TINY_HELD_OUT, k=3, t_sweep=(), min_degree_sweep=())
    assert evaluation.test_pages == ("https://a.com/", "https://b.com/")
    assert list(evaluation.scores) == [BLOCK, PAPER_BLOCK, COCITATION, WEIGHTED_COSINE,
                                      *BASELINES]
    assert all(s.test_pages == 2 for s in evaluation.scores.values())
    truth = GroundTruth.from_lists(TINY_HELD_OUT)
    # By hand.  dh-cocitation: a's siblings are b (both parents: degree 2), c and d (one each;
    # tie by name); https://a.com/ has no shorter URL to restart with.  Companion: vicinity
    # p1 -> a b c, p2 -> a b d, every page its own site (weights 1): authorities a, b = 2/√10,
    # c, d = 1/√10 — the same order.  Grades for a: b 2 (same section), c 0, d 1 (same list).
    by_hand = {"https://a.com/": [["https://b.com/", 2.0, []], ["https://c.com/", 1.0, []],
                                  ["https://d.com/", 1.0, []]],
               "https://b.com/": [["https://a.com/", 2.0, []], ["https://c.com/", 1.0, []],
                                  ["https://d.com/", 1.0, []]]}
    dh = evaluation.scores[DH_COCITATION]
    assert dh == score_related(by_hand, evaluation.test_pages, truth, k=3)
    assert (dh.coverage, dh.p_section, dh.p_list) == (1.0, pytest.approx(1 / 3),
                                                      pytest.approx(2 / 3))
    assert dh.rscore == pytest.approx((2.0, 1.0, 1.0)) and dh.tied == 4
    companion = evaluation.scores[COMPANION]
    assert (companion.p_section, companion.p_list, companion.rscore) == (
        dh.p_section, dh.p_list, dh.rscore)
    # Extended co-citation, delta = 2: only the page both parents cite; grade 2, then nothing
    extended = evaluation.scores[EXTENDED_COCITATION]
    assert (extended.covered, extended.results, extended.p_section) == (2, 2, 1.0)
    assert extended.rscore == pytest.approx((2.0, 1.0, 2 / 3))
    assert extended.p_section_all == pytest.approx(2 / (3 * 2))
    # traditional co-citation (min-degree 2) finds the same single pair
    assert evaluation.scores[COCITATION].rscore == extended.rscore
    assert evaluation.protocol["graph_nodes"] == 6 and evaluation.protocol["graph_links"] == 6
    assert evaluation.no_answer[EXTENDED_COCITATION] == {}
    assert evaluation.parameters["baselines"][COMPANION]["max_results"] == 3
    assert evaluation.parameters["baselines"][EXTENDED_COCITATION]["delta"] == 2
    report = format_report(evaluation)
    assert "extended-cocitation: B = 2000, BF = 8, F = 50, FB = 8, delta = 2" in report
    assert "Main table, against companion: block co-citation ahead on" in report
    figures = json.loads(evaluation_as_json(evaluation))
    assert set(figures["scores"]) == {BLOCK, PAPER_BLOCK, COCITATION, WEIGHTED_COSINE,
                                      *BASELINES}
    assert figures["scores"][DH_COCITATION]["rscore"] == [2.0, 1.0, 1.0]


def test_no_baselines_leaves_the_two_algorithm_report():
    evaluation = evaluate_index(TINY_INDEX, TINY_HELD_OUT, k=3, baselines=())
    assert list(evaluation.scores) == [BLOCK, PAPER_BLOCK, COCITATION]
    assert not evaluation.url_hosts and not evaluation.no_answer
    assert "graph_nodes" not in evaluation.protocol
    assert "baselines on a link graph" not in format_report(evaluation)


#: GitHub-hosted lists citing GitHub repositories: one URL host, many sites.
GITHUB_INDEX = [
    record("https://github.com/h1/awesome", "github.com/h1", "https://github.com/o1/a",
           "https://github.com/o2/b", "https://github.com/o3/c"),
    record("https://github.com/h2/awesome", "github.com/h2", "https://github.com/o1/a",
           "https://github.com/o2/b"),
]


def test_baseline_hosts_are_sites_so_github_lists_are_not_intrinsic_links():
    site_graph = link_graph_of(GITHUB_INDEX)
    host_graph = link_graph_of(GITHUB_INDEX, HostRule.URL_HOST)
    assert len({site_graph.host(i) for i in range(len(site_graph))}) == 5
    assert len({host_graph.host(i) for i in range(len(host_graph))}) == 1
    tests = ["https://github.com/o1/a"]
    by_site = run_baseline(site_graph, EXTENDED_COCITATION, tests)
    assert by_site.related == {"https://github.com/o1/a": [["https://github.com/o2/b", 2.0, []]]}
    # with URL hosts every parent is on the query's host: intrinsic, so no page source
    by_host = run_baseline(host_graph, EXTENDED_COCITATION, tests)
    assert by_host.related == {} and by_host.no_answer == {"empty_neighbourhood": 1}
    held_out = [HubList("https://github.com/x/list", "github.com/x", (
        HubSection("S", 2, ("https://github.com/o1/a", "https://github.com/o2/b")),))]
    evaluation = evaluate_index(GITHUB_INDEX, held_out, k=2, baselines=[EXTENDED_COCITATION])
    assert evaluation.scores[EXTENDED_COCITATION].coverage == 1.0
    assert evaluation.url_hosts[EXTENDED_COCITATION].coverage == 0.0
    assert "Host view: the baselines with URL host names" in format_report(evaluation)


def test_the_forked_oracles_and_the_shared_walk_change_no_figure():
    """The block rows in a forked child (default) or in the caller, ppr and green from one
    walk or each alone: the same rows and scores."""
    index = TINY_INDEX + GITHUB_INDEX
    forked = evaluate_index(index, TINY_HELD_OUT, k=3)
    alone = evaluate_index(index, TINY_HELD_OUT, k=3, parallel=False)
    assert list(forked.related) == list(alone.related) == [BLOCK, PAPER_BLOCK, COCITATION,
                                                           WEIGHTED_COSINE, *BASELINES]
    assert forked.related == alone.related and forked.scores == alone.scores
    assert forked.url_hosts == alone.url_hosts and forked.no_answer == alone.no_answer
    assert "ppr and green (2 queries, one walk each)" in forked.seconds
    assert ("waiting for the block co-citation oracles" in forked.seconds) == can_fork()
    assert "waiting for the block co-citation oracles" not in alone.seconds
    graph, tests = link_graph_of(index), ["https://a.com/", "https://github.com/o1/a",
                                          "https://nowhere.org/"]
    runs = run_baselines(graph, BASELINES, tests, 3)
    assert runs["ppr"].walk_shared and runs["green"].walk_shared
    for name in BASELINES:
        single = run_baseline(graph, name, tests, 3)
        assert (runs[name].related, runs[name].no_answer) == (single.related, single.no_answer)


def test_run_baseline_counts_unknown_pages_as_missing():
    run = run_baseline(link_graph_of(TINY_INDEX), DH_COCITATION, ["https://nowhere.org/"])
    assert run.related == {} and run.no_answer == {"unknown_url": 1}


def test_baseline_names():
    assert parse_baselines("all") == BASELINES == (COMPANION, DH_COCITATION,
                                                   EXTENDED_COCITATION, LLI,
                                                   "cosine-cocitation", "ppr", "green", "simrank")
    assert parse_baselines(" none ") == ()
    assert parse_baselines("lli,dh-cocitation") == (LLI, DH_COCITATION)
    with pytest.raises(ValueError, match="unknown baseline 'hits'"):
        parse_baselines("lli,hits")


@pytest.mark.parametrize("bad, match", [
    ({"baselines": ["sfp"]}, "unknown baseline"),
    ({"holdout": 0.0}, "holdout"), ({"t": -1.0}, "T must"), ({"t_sweep": [math.nan]}, "T must"),
    ({"min_degree": 0}, "min-degree"), ({"min_degree_sweep": [2, 0]}, "min-degree"),
    ({"min_citing": 0}, "min_citing"), ({"max_lists": 1}, "max_lists"), ({"k": 0}, "k must"),
    ({"index_share": 0.0}, "index share"), ({"index_share": 1.5}, "index share"),
])
def test_impossible_parameters_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        check_parameters(**bad)


def test_cli_refuses_a_folder_that_is_not_the_shared_data(tmp_path, capsys):
    assert cli.main(["eval", "related", str(tmp_path)]) == cli.EXIT_USAGE
    assert "not the shared data folder" in capsys.readouterr().err


def test_cli_refuses_bad_settings_before_loading_anything(shared_data, capsys):
    data = shared_data("awesomehub").parent
    assert cli.main(["eval", "related", str(data), "--holdout", "1.2"]) == cli.EXIT_USAGE
    assert "holdout must be a fraction" in capsys.readouterr().err
    assert cli.main(["eval", "related", str(data), "--sweep-t", "1,x"]) == cli.EXIT_USAGE
    capsys.readouterr()
    assert cli.main(["eval", "related", str(data), "--baselines", "hits"]) == cli.EXIT_USAGE
    assert "--baselines: unknown baseline 'hits'" in capsys.readouterr().err
    assert cli.main(["eval", "related", str(data), "--rules", "mine"]) == cli.EXIT_USAGE
    assert "lists, nested, paper" in capsys.readouterr().err
    assert cli.main(["eval", "related", str(data), "--development-draw", "1", "--lists", "40"]
                    ) == cli.EXIT_USAGE
    assert "drop --lists" in capsys.readouterr().err


# -- the real data -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(shared_data):
    for relative in ("awesomehub/awesomehub.warc.gz", "web/aeb-pages.warc.gz",
                     "web/trafilatura-pages.warc.gz"):
        shared_data(relative)
    return shared_data("awesomehub").parent


@pytest.fixture(scope="module")
def evaluation(data_dir):
    """The default protocol: the development split (seed 1, half the lists held out), ~2 min."""
    return evaluate(data_dir)


@pytest.mark.slow
def test_a_share_of_the_index_keeps_the_test_lists_and_indexes_a_subset(data_dir):
    """--index-share: the same held-out lists, fewer indexed (a smaller share a subset of a
    larger one's), the web pages always (the segmentation is cached per process)."""
    whole = load_split(data_dir)
    half, quarter = (load_split(data_dir, index_share=share) for share in (0.5, 0.25))
    assert half.split.held_out == quarter.split.held_out == whole.split.held_out
    assert len(half.split.indexed) == round(len(whole.split.indexed) / 2)
    assert set(quarter.split.indexed) < set(half.split.indexed) < set(whole.split.indexed)
    dropped = set(whole.split.indexed) - set(half.split.indexed)
    assert {r["url"] for r in half.index_records} == {r["url"] for r in whole.index_records} - dropped
    assert not dropped & {page.url for page in half.index_sections}


@pytest.mark.slow
def test_protocol_holds_out_half_of_the_lists(evaluation):
    q = evaluation.protocol
    assert q["lists"] == 550 and q["held_out_lists"] == 275 and q["indexed_lists"] == 275
    assert q["index_records"] == q["indexed_lists"] + q["web_pages"]
    # measured: 7235 sections, 61485 links, 1021 test pages
    assert q["held_out_sections"] >= 6500 and q["held_out_links"] >= 55000
    assert q["test_pages"] >= 950
    assert len(evaluation.test_pages) == q["test_pages"]
    assert all(s.test_pages == q["test_pages"] for s in evaluation.scores.values())


@pytest.mark.slow
def test_the_product_at_its_defaults_leads_every_row_on_the_development_split(evaluation):
    """A quality gate on the split the default preset was chosen on (the README reports the
    test splits, seeds 2 and 3).  Measured, seed 1: block co-citation at its defaults
    coverage 99.9 %, P@15 9.9 % / 15.4 % (missing = 0), R-score 0.496 (1), 0.407 (3), 0.367
    (5); the naive heading co-citation 9.4 % / 15.3 %, 0.482, 0.397, 0.349; Companion
    6.6 % / 10.4 %, 0.436, 0.319, 0.268."""
    scores = evaluation.scores
    assert set(scores) == {BLOCK, PAPER_BLOCK, COCITATION, NAIVE_STRONG, WEIGHTED_COSINE,
                           *BASELINES}
    block = scores[BLOCK]
    assert block.coverage >= 0.95
    assert block.p_section_all >= 0.09 and block.p_list_all >= 0.145
    assert block.rscore[0] >= 0.46 and block.rscore[2] >= 0.38 and block.rscore[4] >= 0.34
    report = format_report(evaluation)
    assert "lead every other row? yes" in report
    # and far ahead of the paper's preset and of the paper's baseline
    paper, cocitation = scores[PAPER_BLOCK], scores[COCITATION]
    assert block.rscore[0] > 2 * paper.rscore[0] and block.p_list_all > 2 * paper.p_list_all
    assert block.rscore[4] > 4 * cocitation.rscore[4]


@pytest.mark.slow
def test_baseline_quality_floors(evaluation):
    """The page-level baselines on the same test pages (site identity as hosts).  Measured,
    seed 1: companion coverage 100 %, P@15 6.6 % / 10.4 % (missing = 0), R-score 0.436 (1),
    0.268 (5), 0.170 (15); lli coverage 98.1 %, R-score 0.270, 0.190, 0.150; dh-cocitation
    coverage 100 %, R-score 0.213 (1); extended-cocitation coverage 32.1 %."""
    scores = evaluation.scores
    companion = scores[COMPANION]
    assert companion.coverage >= 0.97
    assert companion.p_section_all >= 0.055 and companion.p_list_all >= 0.09
    assert companion.rscore[0] >= 0.38 and companion.rscore[4] >= 0.23
    lli = scores[LLI]
    assert lli.coverage >= 0.93 and lli.rscore[0] >= 0.23 and lli.rscore[14] >= 0.12
    assert scores[DH_COCITATION].coverage >= 0.97 and scores[DH_COCITATION].rscore[0] >= 0.18
    extended = scores[EXTENDED_COCITATION]
    assert extended.coverage >= 0.28 and extended.p_section >= 0.25
    # With URL host names github.com is one host: extended co-citation finds every parent
    # intrinsic, Companion drops the list-to-repository edges as same-host.
    assert evaluation.url_hosts[EXTENDED_COCITATION].coverage < 0.02
    assert companion.rscore[0] > 2 * evaluation.url_hosts[COMPANION].rscore[0]
    assert evaluation.protocol["graph_nodes"] >= 150_000
    # issue 15's methods, measured on seed 1: cosine R-score 0.276 (1), P@15 same list 9.5 %;
    # ppr 0.159 (1), 0.182 (5); green 0.025 (1), coverage 100 % (README: why it is last)
    cosine, ppr, green = (scores[name] for name in ("cosine-cocitation", "ppr", "green"))
    assert cosine.coverage >= 0.97 and cosine.rscore[0] >= 0.24 and cosine.p_list_all >= 0.08
    assert ppr.coverage >= 0.97 and ppr.rscore[4] >= 0.15
    assert green.coverage >= 0.97 and green.rscore[0] < cosine.rscore[0]


@pytest.mark.slow
def test_sensitivity_rows_cover_every_setting_on_the_same_test_pages(evaluation):
    rows = {(row.algorithm, row.value): row for row in evaluation.sweep}
    assert {value for algorithm, value in rows if algorithm == PAPER_BLOCK} >= {0.0, 1.0, 4.0}
    assert {value for algorithm, value in rows if algorithm == COCITATION} >= {1, 2, 3}
    assert rows[(PAPER_BLOCK, 1.0)].chosen and rows[(COCITATION, 2)].chosen
    assert rows[(PAPER_BLOCK, 1.0)].scores == evaluation.scores[PAPER_BLOCK]
    assert rows[(COCITATION, 2)].scores == evaluation.scores[COCITATION]
    assert rows[(PAPER_BLOCK, 0.0)].scores == evaluation.unthresholded[PAPER_BLOCK]
    # coverage can only fall as the threshold rises
    for algorithm in (PAPER_BLOCK, COCITATION):
        covers = [row.scores.covered for row in evaluation.sweep if row.algorithm == algorithm]
        assert covers == sorted(covers, reverse=True)
    # the paper's T = 4.0 leaves (almost) nothing on a corpus this small
    assert rows[(PAPER_BLOCK, 4.0)].scores.coverage < 0.01


@pytest.mark.slow
def test_report_says_who_wins_what(evaluation):
    report = format_report(evaluation)
    assert "cf. paper Fig. 10" in report and "in-memory oracles" in report
    assert "T = 1 (paper: 4.0" in report and "min-degree = 2" in report
    assert "the product at its defaults (default preset" in report
    assert "Main table: block co-citation ahead on" in report
    assert "Does block co-citation (at its defaults) lead every other row?" in report
    assert report.count("\n 15 ") == 1  # the R = 1…15 curve is printed


@pytest.mark.slow
def test_cli_prints_table_curve_and_json_and_writes_the_png(data_dir, tmp_path, capsys):
    plot, per_category = tmp_path / "rscore.png", tmp_path / "categories.png"
    status = cli.main(["eval", "related", str(data_dir), "--lists", "60", "--seed", "5",
                       "--plot", str(plot), "--plot-categories", str(per_category), "--json",
                       "--baselines", "lli,companion"])
    assert status == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "measure" in out and BLOCK in out and COCITATION in out and "R-score R = 15" in out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["protocol"]["lists"] == 60 and figures["protocol"]["held_out_lists"] == 30
    assert figures["parameters"]["paper_block"]["t"] == 1.0
    assert figures["parameters"]["block"]["score"] == "evidence"
    assert len(figures["scores"][BLOCK]["rscore"]) == 15
    assert set(figures["scores"]) == {BLOCK, PAPER_BLOCK, COCITATION, NAIVE_STRONG,
                                      WEIGHTED_COSINE, LLI, COMPANION}
    assert set(figures["url_hosts"]) == set(figures["no_answer"]) == {LLI, COMPANION}
    assert "companion: B = 2000" in out and "Host view" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    assert "Per category of the held-out lists" in out
    assert per_category.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert figures["categories"] and all(
        set(row["rscore"]) == set(figures["scores"])
        for row in figures["categories"])


@pytest.mark.slow
def test_per_category_view_of_the_development_split(evaluation, data_dir):
    """Fig. 11's shape on the hub lists: every test page in the category of its held-out
    list(s), every row scored per category by the same code.  Measured, seed 1: 14 rows
    (13 categories of >= 20 test pages and the pooled rest); the product has the best
    R-score (R = 5) in 12 of them."""
    from relatedpages.evaluation.categories import (
        CATEGORIES_PATH, OTHER, category_rows, leads, read_categories)

    categories = read_categories(data_dir / CATEGORIES_PATH)
    # 36 categories; one list has an empty category (its pages: "uncategorised")
    assert 540 <= len(categories) < 550 and len(set(categories.values())) == 36
    rows = category_rows(evaluation, categories)
    assert len(rows) >= 10 and rows[-1].category == OTHER
    assert all(row.test_pages >= 20 for row in rows)
    assert sum(row.test_pages for row in rows) >= len(evaluation.test_pages)
    assert sum(leads(row) for row in rows) >= 0.75 * len(rows)
    # a category's score is the same code on a subset: the whole is a page-weighted mean
    whole = category_rows(evaluation, dict.fromkeys(evaluation.held_out_urls, "all"), min_pages=1)
    assert len(whole) == 1 and whole[0].rscore[BLOCK] == pytest.approx(
        evaluation.scores[BLOCK].rscore[4])
