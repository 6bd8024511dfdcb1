"""Tests for relatedpages.scoring.similarity and its parameters: Eq. 5-13, one hand-worked
case per rule."""
from __future__ import annotations

import doctest
import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handmade import Link, link
from relatedpages.scoring import parameters, similarity
from relatedpages.scoring.parameters import (
    EVIDENCE_DEFAULT,
    LAMBDA_DEFAULT,
    M_DEFAULT,
    N_DEFAULT,
    R_DEFAULT,
    T_DEFAULT,
    SimilarityParams,
)
from relatedpages.scoring.similarity import (
    score_from_micro,
    ROUND_DIGITS,
    PagePair,
    anchor_key,
    anchor_similarity,
    block_similarity,
    directed_score,
    domain_similarity,
    in_counts,
    page_pairs,
    proximity,
    rank_key,
    top_evidence,
    top_related,
    total_similarity,
)


E = math.exp(-1)  # 0.36787944117144233


@pytest.mark.parametrize("module", [similarity, parameters], ids=lambda module: module.__name__)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- parameters ---------------------------------------------------------------------


def test_defaults_are_the_papers() -> None:
    assert (LAMBDA_DEFAULT, R_DEFAULT, N_DEFAULT, M_DEFAULT, T_DEFAULT) == (8, 9, 10.0, 15, 4.0)
    assert EVIDENCE_DEFAULT == 3 and ROUND_DIGITS == 6
    params = SimilarityParams()
    assert (params.lam, params.r, params.n, params.m, params.t, params.evidence) == (8, 9, 10.0, 15, 4.0, 3)


def test_params_numbers_become_floats() -> None:
    params = SimilarityParams(n=10, t=4)
    assert isinstance(params.n, float) and isinstance(params.t, float)
    assert params == SimilarityParams()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lam": -1},
        {"r": 0},
        {"m": 0},
        {"evidence": -1},
        {"n": 0.0},
        {"n": -1.0},
        {"n": math.inf},
        {"t": -0.5},
        {"t": math.nan},
        {"r": 2.0},
        {"lam": True},
        {"n": "10"},
    ],
)
def test_params_reject_impossible_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SimilarityParams(**kwargs)  # type: ignore[arg-type]


def test_params_accept_edge_values() -> None:
    params = SimilarityParams(lam=0, r=1, m=1, t=0.0, evidence=0, n=0.5)
    assert params.t == 0.0


# --- Eq. 5: proximity ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("i", "j", "expected"),
    [
        (0, 0, 1.0),
        (0, 1, 1.0),
        (0, 8, 1.0),  # |i-j| = 8 = lambda: still a near neighbour
        (3, 11, 1.0),
        (11, 3, 1.0),
        (0, 9, math.exp(-0.5)),  # (9 - 8) / 2 = 0.5
        (0, 10, E),  # (10 - 8) / 2 = 1 -> e^-1 = 0.367879...
        (10, 0, E),  # symmetric
        (5, 17, math.exp(-2)),  # |5-17| = 12 -> (12 - 8) / 2 = 2
    ],
)
def test_proximity(i: int, j: int, expected: float) -> None:
    assert proximity(i, j, 8) == expected


def test_proximity_lambda_zero_and_negative() -> None:
    assert proximity(4, 4, 0) == 1.0
    assert proximity(4, 5, 0) == math.exp(-0.5)  # (1 - 0) / 2
    with pytest.raises(ValueError):
        proximity(0, 1, -1)


# --- Eq. 6: anchor similarity -------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ({"cheap", "flight"}, {"flight", "hotel"}, 1 / 3),  # |{flight}| / |{cheap, flight, hotel}|
        ({"news"}, {"news"}, 1.0),
        ({"a", "b", "c", "d"}, {"a", "b"}, 0.5),  # 2 / 4
        ({"python"}, {"perl"}, 0.0),
        (set(), {"perl"}, 0.0),
        (set(), set(), 0.0),  # no words at all: no evidence of similarity, not 0/0
    ],
)
def test_anchor_similarity_is_jaccard(a: set[str], b: set[str], expected: float) -> None:
    assert anchor_similarity(frozenset(a), frozenset(b)) == expected
    assert anchor_similarity(frozenset(b), frozenset(a)) == expected


# --- Eq. 7: block similarity --------------------------------------------------------


def test_block_similarity_is_proximity_times_one_plus_anchor() -> None:
    ab, bc = frozenset({"a", "b"}), frozenset({"b", "c"})
    # P = 1 (|0-3| <= 8), A = 1/3 -> S_b = 1 * 4/3
    assert block_similarity(0, 3, ab, bc, 8) == 1 + 1 / 3
    # P = e^-1 (|0-10| = 10), A = 1/3 -> S_b = 0.367879 * 1.333333 = 0.490506
    assert block_similarity(0, 10, ab, bc, 8) == E * (1 + 1 / 3)
    assert round(block_similarity(0, 10, ab, bc, 8), 6) == 0.490506
    # identical anchors, near: S_b = 1 * (1 + 1) = 2, the maximum
    assert block_similarity(2, 1, ab, ab, 8) == 2.0
    # disjoint anchors, near: S_b = 1 * (1 + 0) = 1
    assert block_similarity(2, 1, ab, frozenset({"z"}), 8) == 1.0


def test_anchor_key_is_the_sorted_word_set() -> None:
    assert anchor_key(frozenset({"zoo", "apple", "mango"})) == "apple mango zoo"
    assert anchor_key(frozenset()) == ""
    assert anchor_key(frozenset({"b", "a"})) == anchor_key(frozenset({"a", "b"}))


# --- Eq. 8 / Definition 1: page pairs -----------------------------------------------

A1 = "http://a.com/1"
A2 = "http://a.com/2"
B1 = "http://b.com/1"
C1 = "http://c.com/1"


def test_page_pairs_one_block() -> None:
    block = [link(B1, 0, "beta"), link(A1, 1, "alpha"), link(C1, 10, "alpha", "gamma")]
    pairs = page_pairs("hub.org", [block], 8)
    assert pairs == [
        # (B1, A1): p1 < p2 puts A1 first, its anchor becomes anchor1; P = 1, A = 0 -> 1.0
        PagePair(A1, B1, "hub.org", "alpha", "beta", 1.0),
        # (B1, C1): |0-10| = 10 -> P = e^-1; A = 0 -> 0.367879
        PagePair(B1, C1, "hub.org", "beta", "alpha gamma", 0.367879),
        # (A1, C1): |1-10| = 9 -> P = e^-0.5 = 0.606531; A = |{alpha}|/|{alpha, gamma}| = 1/2
        #   -> S = 0.606531 * 1.5 = 0.909796
        PagePair(A1, C1, "hub.org", "alpha", "alpha gamma", 0.909796),
    ]


def test_page_pairs_only_between_different_sites() -> None:
    block = [link(A1, 0, "x"), link(A2, 1, "y"), link(B1, 2, "z")]
    pairs = page_pairs("hub.org", [block], 8)
    # {A1, A2} share the site a.com: no pair (paper, "Generating related pairs")
    assert [(p.p1, p.p2) for p in pairs] == [(A1, B1), (A2, B1)]


def test_page_pairs_first_block_rule() -> None:
    first = [link(A1, 0, "alpha"), link(B1, 10, "beta")]  # P = e^-1, A = 0 -> 0.367879
    second = [link(B1, 0, "gamma"), link(A1, 1, "alpha")]  # P = 1 -> would give 1.0
    pairs = page_pairs("hub.org", [first, second], 8)
    # the page contributes once, from its FIRST block (not the best one), with that
    # block's anchors: B1's anchor is "beta", not "gamma"
    assert pairs == [PagePair(A1, B1, "hub.org", "alpha", "beta", 0.367879)]
    # the other block order gives the other block's values
    assert page_pairs("hub.org", [second, first], 8) == [
        PagePair(A1, B1, "hub.org", "alpha", "gamma", 1.0)
    ]


def test_page_pairs_use_segmented_positions_not_filtered_indices() -> None:
    # the links between pos 0 and pos 10 were removed by the filters: still |0-10| = 10
    block = [link(A1, 0, "x"), link(B1, 10, "y")]
    assert page_pairs("hub.org", [block], 8)[0].s == round(E, 6) == 0.367879


def test_page_pairs_round_s_p() -> None:
    # P = 1, A = 1/3 -> S = 1.3333333333333333 stored as 1.333333 (ROUND_DIGITS = 6)
    block = [link(A1, 0, "a", "b"), link(B1, 1, "b", "c")]
    assert page_pairs("hub.org", [block], 8)[0].s == 1.333333


def test_page_pairs_drop_pairs_whose_rounded_similarity_is_zero() -> None:
    # |0-80| = 80 -> P = e^-36 = 2.3e-16 -> S_p rounds to 0.0: Eq. 9 keeps S_p > 0 only.
    far = [link(A1, 0, "x"), link(B1, 80, "y")]
    near = [link(A1, 0, "x"), link(B1, 1, "y")]
    assert page_pairs("hub.org", [far], 8) == []
    # ... and the first block still decides: a later near block does not revive it
    assert page_pairs("hub.org", [far, near], 8) == []


def test_page_pairs_repeated_url_in_block_first_occurrence_wins() -> None:
    # singleton filter switched off: A1 twice; the pair is made at (A1@0, B1@12) first
    block = [link(A1, 0, "x"), link(B1, 12, "y"), link(A1, 13, "z")]
    pairs = page_pairs("hub.org", [block], 8)
    # |0-12| = 12 -> P = e^-2 = 0.135335, A = 0
    assert pairs == [PagePair(A1, B1, "hub.org", "x", "y", 0.135335)]


def _definition_1(blocks: list[list[Link]], lam: int, *, distant_pairs: bool,
                  max_distance: int) -> list[tuple[str, str, str, str, float]]:
    """Definition 1 and Eq. 5-9 read plainly: every two links of a block, in link order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for block in blocks:
        for i, j in itertools.combinations(range(len(block)), 2):
            a, b = block[i], block[j]
            if a.site == b.site or a.url == b.url:
                continue
            if max_distance and abs(a.pos - b.pos) > max_distance:
                continue
            low, high = (a, b) if a.url < b.url else (b, a)
            if (low.url, high.url) in seen:
                continue
            seen.add((low.url, high.url))
            distance = abs(a.pos - b.pos)
            p = 1.0 if distance <= lam else math.exp(-(distance - lam) / 2)  # Eq. 5
            union = low.words | high.words
            jaccard = len(low.words & high.words) / len(union) if union else 0.0  # Eq. 6
            s = round(p * (1.0 + jaccard), ROUND_DIGITS)  # Eq. 7
            if distant_pairs:
                s = max(s, 10.0**-ROUND_DIGITS)
            if s > 0.0:
                out.append((low.url, high.url, " ".join(sorted(low.words)),
                            " ".join(sorted(high.words)), s))
    return out


_urls = st.sampled_from([A1, A2, B1, C1, "http://d.com/", "http://e.com/x"])
_link = st.builds(link, _urls, st.integers(0, 150),
                  *[st.sampled_from(["", "news", "cheap", "flight"])] * 2)


@given(blocks=st.lists(st.lists(_link, max_size=9) | st.lists(_link, max_size=9).map(
           lambda block: sorted(block, key=lambda one: one.pos)), max_size=4),
       max_distance=st.sampled_from([0, 5, 60]), distant_pairs=st.booleans())
def test_page_pairs_are_definition_1_in_any_link_order(blocks: list[list[Link]],
                                                         max_distance: int,
                                                         distant_pairs: bool) -> None:
    # blocks in position order (as segmented) or not; the window cuts either the same way
    pairs = page_pairs("hub.org", blocks, 8, distant_pairs=distant_pairs,
                       max_distance=max_distance)
    assert [(p.p1, p.p2, p.anchor1, p.anchor2, p.s) for p in pairs] == _definition_1(
        blocks, 8, distant_pairs=distant_pairs, max_distance=max_distance)


def test_page_pairs_window_keeps_only_links_within_it() -> None:
    block = [link(A1, 0, "x"), link(B1, 3, "y"), link(C1, 70, "z"), link("http://d.com/", 72, "w")]
    pairs = page_pairs("hub.org", [block], 8, distant_pairs=True, max_distance=60)
    assert [(p.p1, p.p2) for p in pairs] == [(A1, B1), (C1, "http://d.com/")]
    shuffled = [block[2], block[0], block[3], block[1]]  # out of position order
    assert sorted((p.p1, p.p2) for p in page_pairs(
        "hub.org", [shuffled], 8, distant_pairs=True, max_distance=60)) == [
        (A1, B1), (C1, "http://d.com/")]


def test_page_pairs_empty_input() -> None:
    assert page_pairs("hub.org", [], 8) == []
    assert page_pairs("hub.org", [[], [link(A1, 0, "x")]], 8) == []


# --- in_p (Eq. 13) ------------------------------------------------------------------


def test_in_counts_per_block_and_distinct_page() -> None:
    blocks = [
        [link(A1, 0, "x"), link(B1, 1, "y"), link(A1, 2, "z")],  # A1 twice: counts once
        [link(A1, 0, "x")],  # a lone link forms no pair but its block still counts
        [link(B1, 0, "y"), link(C1, 1, "w")],
    ]
    assert in_counts(blocks) == {A1: 2, B1: 2, C1: 1}
    assert in_counts([]) == {}


# --- Eq. 12: domain similarity ------------------------------------------------------


def test_domain_similarity_r_cap() -> None:
    # 10 citing pages of one site, same anchor of p2: nine S_p = 1 and one e^-1.
    # Only the top r = 9 count: 9 * 1 = 9.0 (not 9.367879)
    values = [round(E, 6)] + [1.0] * 9
    assert domain_similarity({"beta": values}, 9, 10.0) == 9.0
    # the top values are taken after sorting descending, whatever the input order
    assert domain_similarity({"beta": [0.5, 2.0, 1.0]}, 2, 10.0) == 3.0  # 2.0 + 1.0


def test_domain_similarity_n_cap() -> None:
    # 6 pages with S_p = 2 -> 12, capped at N = 10
    assert domain_similarity({"beta": [2.0] * 6}, 9, 10.0) == 10.0
    assert domain_similarity({"beta": [2.0] * 4}, 9, 10.0) == 8.0  # below the cap


def test_domain_similarity_anchor_groups_each_capped_at_r() -> None:
    # anchors "beta" and "gamma" of p2 in one site: each group keeps its own top r = 2
    groups = {"beta": [1.0, 1.0, 1.0], "gamma": [2.0, 0.5, 1.5]}
    # beta: 1 + 1 = 2; gamma: 2 + 1.5 = 3.5; total 5.5
    assert domain_similarity(groups, 2, 10.0) == 5.5
    # one merged group would have given 2 + 1.5 = 3.5
    assert domain_similarity({"all": groups["beta"] + groups["gamma"]}, 2, 10.0) == 3.5
    # and the N cap applies to the sum over groups, not per group
    assert domain_similarity(groups, 2, 5.0) == 5.0


def test_domain_similarity_rounds_and_ignores_input_order() -> None:
    groups = {"b": [0.1, 0.2, 0.3], "a": [0.7, 0.1]}
    # naive left-to-right 0.1 + 0.2 + 0.3 + 0.7 + 0.1 = 1.4000000000000001; fsum: 1.4
    assert domain_similarity(groups, 9, 10.0) == 1.4
    for order in itertools.permutations(groups["b"]):
        assert domain_similarity({"a": groups["a"], "b": list(order)}, 9, 10.0) == 1.4
    assert domain_similarity({"b": groups["b"], "a": groups["a"]}, 9, 10.0) == 1.4


def test_domain_similarity_rejects_r_zero() -> None:
    with pytest.raises(ValueError):
        domain_similarity({"a": [1.0]}, 0, 10.0)


# --- Eq. 13: total similarity --------------------------------------------------------


def test_total_similarity_in_degree_damping() -> None:
    # in = 1: 1 + ln 1 = 1, no damping
    assert total_similarity({"a.com": 1.5, "b.com": 2.0}, 1) == 3.5
    # in = 3: 3.5 / (1 + ln 3) = 3.5 / 2.098612 = 1.6677688 -> 1.667769
    assert total_similarity({"a.com": 1.5, "b.com": 2.0}, 3) == 1.667769
    # in = 10: 9 / (1 + 2.302585) = 2.725138
    assert total_similarity({"hub.org": 9.0}, 10) == 2.725138


def test_total_similarity_rejects_zero_in_degree() -> None:
    with pytest.raises(ValueError):
        total_similarity({"a.com": 1.0}, 0)


def test_threshold_compares_the_rounded_total() -> None:
    # 1 + ln 2 = 1.6931471805599454.
    # 6.772588 / 1.693147 = 3.99999957...: rounds to 4.000000 -> exactly T, included
    at_t = total_similarity({"a.com": 6.772588}, 2)
    assert at_t == 4.0
    # 6.772587 / 1.693147 = 3.99999898...: rounds to 3.999999 -> just below T, excluded
    below = total_similarity({"a.com": 6.772587}, 2)
    assert below == 3.999999
    assert top_related([("http://x.com/", at_t, []), ("http://y.com/", below, [])], 15, 4.0) == [
        ["http://x.com/", 4.0, []]
    ]


# --- evidence, ranking ---------------------------------------------------------------


def test_top_evidence_ds_descending_ties_by_site() -> None:
    ds = {"d.org": 0.367879, "c.org": 1.0, "b.org": 2.0, "a.org": 1.0}
    assert top_evidence(ds, 3) == [["b.org", 2.0], ["a.org", 1.0], ["c.org", 1.0]]
    assert top_evidence(ds, 0) == []
    assert len(top_evidence(ds, 10)) == 4


def test_top_related_threshold_m_and_ties_by_url() -> None:
    candidates: list[tuple[str, float, list[list[object]]]] = [
        ("http://z.com/", 5.0, []),
        ("http://b.com/", 4.5, []),
        ("http://a.com/", 4.5, []),  # tie with b.com: URL ascending puts a.com first
        ("http://c.com/", 4.0, []),  # exactly T: included
        ("http://d.com/", 3.999999, []),  # just below T: excluded
    ]
    assert [e[0] for e in top_related(candidates, 15, 4.0)] == [
        "http://z.com/",
        "http://a.com/",
        "http://b.com/",
        "http://c.com/",
    ]
    assert [e[0] for e in top_related(candidates, 2, 4.0)] == ["http://z.com/", "http://a.com/"]
    assert top_related([], 15, 4.0) == []
    assert rank_key("http://a.com/", 4.5) < rank_key("http://b.com/", 4.5) < rank_key("http://0.com/", 4.0)


def test_directed_score_combines_eq_12_and_13() -> None:
    params = SimilarityParams(r=2, n=3.0, evidence=2)
    sims = {
        # hub.org: beta group 2 + 1.5 (r = 2 drops 1.0), gamma 1.0 -> 4.5 -> N = 3.0
        "hub.org": {"beta": [1.0, 2.0, 1.5], "gamma": [1.0]},
        # blog.net: 0.367879
        "blog.net": {"beta": [0.367879]},
        # news.com: 1.333333 + 1.0 = 2.333333
        "news.com": {"delta": [1.333333, 1.0]},
    }
    ts, evidence = directed_score(sims, 4, params)
    # (3.0 + 0.367879 + 2.333333) / (1 + ln 4) = 5.701212 / 2.386294 = 2.3891487 -> 2.389149
    assert ts == 2.389149
    assert evidence == [["hub.org", 3.0], ["news.com", 2.333333]]


def test_page_pairs_measure_the_overlap_of_two_descriptions_only_when_asked() -> None:
    """The default preset's description term: Eq. 6's Jaccard on the links' context words
    (segmenter.sections.Link ``text``), per pair; 0.0 without ``describe`` (paper preset)."""
    from filters.links import FilteredLink

    def described(url: str, pos: int, *context: str) -> FilteredLink:
        return FilteredLink(url, url.split("/")[2], "x", frozenset(), pos, frozenset(context))

    block = [described(A1, 0, "http", "client"), described(B1, 1, "http", "server"),
             described("http://c.org/", 2)]
    pairs = page_pairs("hub.org", [block], 8, describe=True)
    assert [(p.p1, p.p2, p.context) for p in pairs] == [
        (A1, B1, round(1 / 3, 6)), (A1, "http://c.org/", 0.0), (B1, "http://c.org/", 0.0)]
    assert {p.context for p in page_pairs("hub.org", [block], 8)} == {0.0}
    # the score: DESCRIPTION_WEIGHT per unit of overlap, summed over the citing sites
    params = parameters.preset_params("default")
    plain = score_from_micro(2_000_000, 1_000_000, 2, 1, params)
    assert score_from_micro(2_000_000, 1_000_000, 2, 1, params, context_micro=500_000) == round(
        plain + similarity.DESCRIPTION_WEIGHT * 0.5, 6)
    assert score_from_micro(2_000_000, 1_000_000, 2, 1, parameters.SimilarityParams(),
                            context_micro=500_000) == 2.0  # the paper's TS has no such term
