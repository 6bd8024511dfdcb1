"""The two references of the hub-list table (issue 43, item 3): the naive heading reference
in its strongest form and Marginalia's weighted site cosine, the ties line and the product's
relative lead over both."""
from __future__ import annotations

import json
import math

import pytest

from relatedpages.evaluation.measures import score_related
from relatedpages.evaluation.naive import NAIVE_STRONG, naive_heading_related, naive_section_related
from relatedpages.evaluation.related import (
    BLOCK,
    WEIGHTED_COSINE,
    HubList,
    HubSection,
    evaluate_index,
)
from relatedpages.evaluation.related_report import (
    evaluation_as_json,
    format_report,
    measures,
    reference_lines,
)
from relatedpages.evaluation.ties import significant, tied_results
from tests.test_eval_related import TINY_HELD_OUT, TINY_INDEX, TRUTH


def page(url: str, *sections: tuple[str, ...]) -> HubList:
    return HubList(url, url, tuple(HubSection(f"S{i}", 2, links) for i, links in enumerate(sections)))


# -- the naive heading reference, strongest form ----------------------------------------

Q, A, B, C = "https://q.com/", "https://a.com/", "https://b.com/", "https://c.com/"
#: q is co-cited with a, b, c once each (in l1's first section).  a is in four sections of two
#: pages, b and c in three sections of three pages; a section of 81 links (l3's second) and
#: one-link sections co-cite nothing.
PAGES = [
    page("https://l1.org/", (Q, A, B, C), (A,), (A,)),
    page("https://l2.org/", (B,), (C,)),
    page("https://l3.org/", (C,), tuple(f"https://s{i}.net/" for i in range(79)) + (Q, A)),
    page("https://l4.org/", (B,)),
]


def test_strongest_naive_ties_by_pages_not_sections():
    assert naive_heading_related(PAGES, 3)[Q] == [[B, 1, []], [C, 1, []], [A, 1, []]]
    # the old row: no size filter (the 81-link section co-cites q and a), ties by sections
    assert naive_section_related(PAGES, 3)[Q][:1] == [[A, 2, []]]


def test_strongest_naive_cuts_sections_to_2_to_80_outside_links():
    related = naive_heading_related(PAGES, 20)
    assert "https://s0.net/" not in related  # only in the 81-link section
    assert naive_heading_related(PAGES, 3, max_links=81)[Q][0] == [A, 2, []]
    assert naive_heading_related(PAGES, 3, min_links=5, max_links=80) == {}
    with pytest.raises(ValueError, match="min_links"):
        naive_heading_related(PAGES, 3, min_links=3, max_links=2)


def test_the_url_breaks_the_last_ties():
    two = [page("https://l1.org/", (Q, B, A)), page("https://l2.org/", (A, B, C))]
    # a and b: one co-citing section with q, two pages each: URL order
    assert naive_heading_related(two, 3)[Q] == [[A, 1, []], [B, 1, []]]


# -- ties ----------------------------------------------------------------------------------

def test_ties_are_counted_at_three_significant_digits():
    assert significant(0.0012345) == 0.00123 and significant(123456.0) == 123000.0
    assert tied_results([["a", 2.0001], ["b", 2.0004], ["c", 1.999], ["d", 1.5]]) == (3, 4)
    scores = score_related({"a": [["b", 1.0001, []], ["c", 1.0002, []], ["d", 0.5, []]]},
                           ["a"], TRUTH)
    assert scores.tied == 2 and scores.tied_share == pytest.approx(2 / 3)


def test_exact_ties_are_the_ties_on_the_very_score():
    # b and c tie at three digits on different evidence; d and e on the same score
    scores = score_related({"a": [["b", 1.0001, []], ["c", 1.0002, []], ["d", 0.5, []],
                                  ["e", 0.5, []], ["f", 0.25, []]]}, ["a"], TRUTH)
    assert (scores.tied, scores.tied_exact) == (4, 2)
    assert scores.tied_exact_share == pytest.approx(2 / 5)
    assert score_related({"a": [["b"], ["c"]]}, ["a"], TRUTH).tied_exact_share is None


def test_a_row_without_scores_says_n_a():
    scores = score_related({"a": [["b"], ["c"]]}, ["a"], TRUTH)
    assert scores.tied_share is None and scores.results == 2
    row = dict((label, value) for label, value, _ in measures(scores))
    assert math.isnan(row["ties (results tied with a neighbour, 3 significant digits)"])
    assert math.isnan(row["exact ties (a neighbour's very score: the same evidence)"])


# -- the rows in the report ------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny():
    sections = [page(record["url"], tuple(link["href"] for block in record["blocks"]
                                          for link in block)) for record in TINY_INDEX]
    return evaluate_index(TINY_INDEX, TINY_HELD_OUT, k=3, t_sweep=(), min_degree_sweep=(),
                          index_sections=sections, baselines=("companion",),
                          url_host_view=False)


def test_both_references_are_rows_of_the_table_and_the_json(tiny):
    assert list(tiny.scores)[:5] == [BLOCK, "block, paper preset", "co-citation", NAIVE_STRONG,
                                     WEIGHTED_COSINE]
    # p1 and p2 both link a and b: L(a) = {a.com, p1, p2}, L(b) = {b.com, p1, p2}; p1 and p2
    # weigh 1 (nothing links them), a.com and b.com 1/ln(2 + 3)
    own = 1 / math.log(5)
    assert tiny.related[WEIGHTED_COSINE]["https://a.com/"][0][:2] == [
        "https://b.com/", pytest.approx(2 / (2 + own))]
    report = format_report(tiny)
    assert "ties (results tied with a neighbour, 3 significant digits)" in report
    assert f"over {NAIVE_STRONG}: P@15 same section" in report
    assert f"over {WEIGHTED_COSINE}: P@15 same section" in report
    figures = json.loads(evaluation_as_json(tiny))
    assert set(figures["relative_lead"]) == {NAIVE_STRONG, WEIGHTED_COSINE}
    assert set(figures["relative_lead"][NAIVE_STRONG]) == {"P@15 same section",
                                                           "P@15 same list", "R@1", "R@3"}
    assert figures["scores"][WEIGHTED_COSINE]["tied_share"] is not None


def test_the_goal_line_needs_5_percent_over_naive_and_a_lead_over_the_cosine():
    own, naive, cosine = _Scores(0.106, 0.53), _Scores(0.1, 0.5), _Scores(0.104, 0.52)
    lines = reference_lines({BLOCK: own, NAIVE_STRONG: naive, WEIGHTED_COSINE: cosine})
    assert lines[0].endswith("yes"), lines
    assert "P@15 same section +6.0 %" in lines[1] and "met" in lines[1]
    lines = reference_lines({BLOCK: own, NAIVE_STRONG: _Scores(0.102, 0.5),
                             WEIGHTED_COSINE: cosine})
    assert lines[0].endswith("NO") and "NOT met" in lines[1] and "(goal > 0 %" in lines[2]
    assert reference_lines({BLOCK: own}) == []


def _Scores(p: float, r: float):
    from relatedpages.evaluation.measures import Scores

    return Scores(test_pages=1, covered=1, results=1, tied=0, p_section=p, p_list=p,
                  p_section_all=p, p_list_all=p, rscore=(r, r, r))


# -- the lead's spread over the held-out lists ----------------------------------------------

def test_the_per_page_values_average_to_the_report_figures(tiny):
    from relatedpages.evaluation.spread import page_values

    for name in (BLOCK, NAIVE_STRONG):
        scores = tiny.scores[name]
        means = page_values(tiny.related[name], tiny.test_pages, tiny.truth, k=3).mean(axis=0)
        assert list(means) == pytest.approx(
            [scores.p_section_all, scores.p_list_all, scores.rscore[0], scores.rscore[2]])
    report = format_report(tiny)
    assert "the lead's spread over the held-out lists" in report
    spread = json.loads(evaluation_as_json(tiny))["lead_spread"]
    assert spread[NAIVE_STRONG]["R@1"]["lead"] == json.loads(
        evaluation_as_json(tiny))["relative_lead"][NAIVE_STRONG]["R@1"]


def _lists(count: int):
    from relatedpages.evaluation.hubs import GroundTruth

    return GroundTruth.from_lists([page(f"l{i}", (f"a{i}", f"b{i}", f"c{i}"))
                                   for i in range(count)])


def test_a_lead_one_list_carries_is_not_sure_and_one_every_list_shares_is():
    from relatedpages.evaluation.spread import lead_spread

    truth = _lists(20)
    pages = [f"{x}{i}" for i in range(20) for x in ("a", "b")]
    # the reference: right first on each list's b page, wrong first on its a page
    reference = {**{f"a{i}": [["x", 1.0]] for i in range(20)},
                 **{f"b{i}": [[f"c{i}", 1.0]] for i in range(20)}}
    # one list carries it: the product right first on l0's a page too (R@1 42 / 40 = +5 %)
    one = {**reference, "a0": [["b0", 1.0]]}
    carried = lead_spread(one, reference, pages, truth, 20, 0.05, k=1)["R@1"]
    assert carried.lead == pytest.approx(0.05) and carried.low == 0.0
    assert 0.55 < carried.reaching < 0.75  # l0 drawn at least once: 1 - (19/20)^20 = 0.64
    # every list shares it: right first on every a page (+100 % in every draw)
    every = {**reference, **{f"a{i}": [[f"b{i}", 1.0]] for i in range(20)}}
    shared = lead_spread(every, reference, pages, truth, 20, 0.05, k=1)["R@1"]
    assert shared.lead == shared.low == shared.high == pytest.approx(1.0)
    assert shared.reaching == 1.0
