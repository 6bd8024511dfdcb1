"""Tests for relatedpages.scoring.reference: the in-memory oracle of block co-citation.

Hand-made corpora are lists of (citing page site, filtered blocks); the numbers in the
comments are worked out by hand from Eq. 5-13 (e^-1 = 0.367879, ln 2 = 0.693147,
ln 3 = 1.098612, ln 4 = 1.386294, ln 6 = 1.791759, ln 10 = 2.302585).
"""
from __future__ import annotations

import heapq
import json
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handmade import Link, link
from relatedpages.scoring.parameters import SimilarityParams
from relatedpages.scoring.reference import reference_related, related_from_filtered


Page = tuple[str, list[list[Link]]]

P1 = "http://one.com/"
P2 = "http://two.com/"
P3 = "http://two.com/other"
X = "http://x.com/"
Y = "http://y.com/"
Z = "http://z.com/"

ALL = SimilarityParams(t=0.0)  # the paper's parameters, but every pair shown


def pair_page(site: str, gap: int, words1: Sequence[str], words2: Sequence[str]) -> Page:
    """A citing page with one block: P1 at position 0 and P2 at position ``gap``."""
    return (site, [[link(P1, 0, *words1), link(P2, gap, *words2)]])


def entry(result: dict[str, list[list[Any]]], source: str, target: str) -> list[Any]:
    (found,) = [e for e in result[source] if e[0] == target]
    return found


# --- Eq. 12: the r cap ----------------------------------------------------------------


def test_r_cap_only_top_nine_of_one_site_and_anchor_count() -> None:
    # 10 pages of hub.org cite P1 ("alpha") and P2 ("beta"): nine adjacent (S_p = 1 * (1 + 0)
    # = 1) and one at distance 10 (S_p = e^-1 = 0.367879).  r = 9: DS = 9 * 1 = 9.0, not
    # 9.367879.  in_P2 = 10 blocks: TS = 9 / (1 + 2.302585) = 9 / 3.302585 = 2.725138
    pages = [pair_page("hub.org", 1, ["alpha"], ["beta"]) for _ in range(9)]
    pages.append(pair_page("hub.org", 10, ["alpha"], ["beta"]))
    result = related_from_filtered(pages, ALL)
    assert result[P1] == [[P2, 2.725138, [["hub.org", 9.0]]]]
    assert result[P2] == [[P1, 2.725138, [["hub.org", 9.0]]]]


def test_r_cap_is_per_citing_site() -> None:
    # the same 10 pages spread over two sites (5 + 5): no group reaches r = 9, all count:
    # a.org: 5 * 1 = 5; b.org: 4 * 1 + 0.367879 = 4.367879; TS = 9.367879 / 3.302585 = 2.836529
    pages = [pair_page("a.org", 1, ["alpha"], ["beta"]) for _ in range(5)]
    pages += [pair_page("b.org", 1, ["alpha"], ["beta"]) for _ in range(4)]
    pages.append(pair_page("b.org", 10, ["alpha"], ["beta"]))
    result = related_from_filtered(pages, ALL)
    assert result[P1] == [[P2, 2.836529, [["a.org", 5.0], ["b.org", 4.367879]]]]


# --- Eq. 12: the N cap ----------------------------------------------------------------


def test_n_cap_domain_similarity_at_most_ten() -> None:
    # 6 pages of hub.org, identical anchors ("same"), adjacent: S_p = 1 * (1 + 1) = 2 each;
    # 6 * 2 = 12 (r = 9 does not bite) -> min(N = 10, 12) = 10.
    # in_P2 = 6: TS = 10 / (1 + 1.791759) = 10 / 2.791759 = 3.581970
    pages = [pair_page("hub.org", 1, ["same"], ["same"]) for _ in range(6)]
    result = related_from_filtered(pages, ALL)
    assert result[P1] == [[P2, 3.58197, [["hub.org", 10.0]]]]


# --- Eq. 10-12: anchor groups -----------------------------------------------------------


def test_anchor_groups_of_p2_each_capped_at_r_and_direction_matters() -> None:
    params = SimilarityParams(r=2, t=0.0)
    # hub.org: 3 pages give P2 the anchor "beta", 3 the anchor "gamma"; P1 is always
    # "alpha"; all adjacent with disjoint anchors: S_p = 1.
    pages = [pair_page("hub.org", 1, ["alpha"], ["beta"]) for _ in range(3)]
    pages += [pair_page("hub.org", 1, ["alpha"], ["gamma"]) for _ in range(3)]
    result = related_from_filtered(pages, params)
    # P1 -> P2 groups by P2's anchor: beta 1 + 1, gamma 1 + 1 -> DS = 4;
    # in_P2 = 6: TS = 4 / 2.791759 = 1.432788
    assert result[P1] == [[P2, 1.432788, [["hub.org", 4.0]]]]
    # P2 -> P1 groups by P1's anchor: one group "alpha" of six -> top 2 -> DS = 2;
    # in_P1 = 6: TS = 2 / 2.791759 = 0.716394
    assert result[P2] == [[P1, 0.716394, [["hub.org", 2.0]]]]


def test_anchor_key_is_the_word_set_not_the_text() -> None:
    params = SimilarityParams(r=1, t=0.0)
    # {"cheap", "flight"} in two word orders is one anchor: r = 1 keeps one S_p = 1
    pages = [
        pair_page("hub.org", 1, ["x"], ["cheap", "flight"]),
        pair_page("hub.org", 1, ["x"], ["flight", "cheap"]),
    ]
    # in_P2 = 2: TS = 1 / (1 + 0.693147) = 0.590616
    assert related_from_filtered(pages, params)[P1] == [[P2, 0.590616, [["hub.org", 1.0]]]]


# --- Definition 1: first block of a page ------------------------------------------------


def test_page_contributes_once_from_its_first_block() -> None:
    blocks = [
        [link(P1, 0, "alpha"), link(P2, 10, "beta")],  # first: P = e^-1 -> S_p = 0.367879
        [link(P2, 0, "gamma"), link(P1, 1, "alpha")],  # would give 1.0: ignored
    ]
    result = related_from_filtered([("hub.org", blocks)], ALL)
    # in_P2 = 2 (both blocks contain it): TS = 0.367879 / 1.693147 = 0.217275
    assert result[P1] == [[P2, 0.217275, [["hub.org", 0.367879]]]]
    # had both blocks counted, DS would be 1.367879
    assert result[P2] == [[P1, 0.217275, [["hub.org", 0.367879]]]]


# --- pairs between different sites only -------------------------------------------------


def test_pairs_only_between_different_sites() -> None:
    # P2 and P3 are both on two.com: never related to each other
    blocks = [[link(P2, 0, "a"), link(P3, 1, "b"), link(P1, 2, "c")]]
    result = related_from_filtered([("hub.org", blocks)], ALL)
    assert result == {
        P1: [[P2, 1.0, [["hub.org", 1.0]]], [P3, 1.0, [["hub.org", 1.0]]]],
        P2: [[P1, 1.0, [["hub.org", 1.0]]]],
        P3: [[P1, 1.0, [["hub.org", 1.0]]]],
    }


def test_no_page_is_related_to_itself() -> None:
    blocks = [[link(P1, 0, "a"), link(P1, 1, "a")], [link(P1, 0, "a")]]
    assert related_from_filtered([("hub.org", blocks)], ALL) == {}


# --- Eq. 13: in-degree damping ---------------------------------------------------------


def test_in_degree_damping_counts_every_block_containing_p2() -> None:
    pages = [
        pair_page("hub.org", 1, ["alpha"], ["beta"]),  # S_p = 1
        # two more blocks contain P2 but make no pair with P1: a lone P2, and P2 beside a
        # page of its own site (no pair either)
        ("other.org", [[link(P2, 0, "beta")], [link(P2, 0, "beta"), link(P3, 1, "c")]]),
    ]
    result = related_from_filtered(pages, ALL)
    # in_P1 = 1: 1 + ln 1 = 1, no damping: TS(P2 -> P1) = 1.0
    assert result[P2] == [[P1, 1.0, [["hub.org", 1.0]]]]
    # in_P2 = 3: TS(P1 -> P2) = 1 / (1 + 1.098612) = 1 / 2.098612 = 0.476505
    assert result[P1] == [[P2, 0.476505, [["hub.org", 1.0]]]]


def test_in_degree_counts_a_block_once_even_with_a_repeated_link() -> None:
    # singleton filter off: P2 twice in one block is still one block containing P2
    blocks = [[link(P1, 0, "alpha"), link(P2, 1, "beta"), link(P2, 2, "beta")]]
    result = related_from_filtered([("hub.org", blocks)], ALL)
    assert result[P1] == [[P2, 1.0, [["hub.org", 1.0]]]]


# --- threshold T, top M ---------------------------------------------------------------


def six_sites(count: int) -> list[Page]:
    """``count`` citing sites, each one page with P1 and P2 adjacent, same anchor (S_p = 2)."""
    return [pair_page(f"hub{k}.org", 1, ["same"], ["same"]) for k in range(1, count + 1)]


def test_default_threshold_four() -> None:
    # 6 sites * 2 = 12; in_P2 = 6: TS = 12 / 2.791759 = 4.298365 >= 4.0: related.
    # Evidence: all DS = 2.0, ties by site: hub1, hub2, hub3 (EVIDENCE_DEFAULT = 3).
    evidence = [["hub1.org", 2.0], ["hub2.org", 2.0], ["hub3.org", 2.0]]
    assert related_from_filtered(six_sites(6), SimilarityParams()) == {
        P1: [[P2, 4.298365, evidence]],
        P2: [[P1, 4.298365, evidence]],
    }
    # 5 sites: 10 / (1 + ln 5) = 10 / 2.609438 = 3.832243 < 4.0: not related
    assert related_from_filtered(six_sites(5), SimilarityParams()) == {}


def test_threshold_includes_a_total_exactly_equal_to_t() -> None:
    # TS = 4.298365 (rounded, see above): t = 4.298365 keeps it, t = 4.298366 does not
    assert P1 in related_from_filtered(six_sites(6), SimilarityParams(t=4.298365))
    assert related_from_filtered(six_sites(6), SimilarityParams(t=4.298366)) == {}


def test_s_p_rounded_when_the_pair_is_made() -> None:
    # three sites, anchors {a, b} / {b, c}: S_p = 1 * (1 + 1/3) = 1.333333 (rounded) each;
    # in_P2 = 3: TS = 3.999999 / 2.098612 = 1.906021.  Unrounded S_p would give
    # 4 / 2.098612 = 1.906021 too, but the DS in the evidence shows the rounding:
    pages = [pair_page(f"hub{k}.org", 1, ["a", "b"], ["b", "c"]) for k in (1, 2, 3)]
    result = related_from_filtered(pages, ALL)
    assert result[P1] == [
        [P2, 1.906021, [["hub1.org", 1.333333], ["hub2.org", 1.333333], ["hub3.org", 1.333333]]]
    ]


def test_top_m_ties_by_url() -> None:
    # one block: P1 then Z, Y, X (block order is not URL order); all adjacent, disjoint
    # anchors, every page in one block: every TS = 1.0
    blocks = [[link(P1, 0, "p"), link(Z, 1, "z"), link(Y, 2, "y"), link(X, 3, "x")]]
    result = related_from_filtered([("hub.org", blocks)], SimilarityParams(t=0.0, m=2))
    ev = [["hub.org", 1.0]]
    assert result[P1] == [[X, 1.0, ev], [Y, 1.0, ev]]  # Z is third by URL: cut by M = 2
    assert result[Z] == [[P1, 1.0, ev], [X, 1.0, ev]]  # "http://one.com/" < "http://x.com/"


def test_best_first_then_cut_at_m() -> None:
    # P1 at 0, X at 1, Z at 9, Y at 10 (block order P1, X, Y, Z); disjoint anchors,
    # every page in one block (in = 1, no damping), so TS = P of Eq. 5:
    #   P1-X |0-1| = 1 -> 1.0;  P1-Z |0-9| = 9 -> e^-0.5 = 0.606531;  P1-Y 10 -> e^-1 = 0.367879
    #   Y-Z |10-9| = 1 -> 1.0;  Y-X |10-1| = 9 -> 0.606531
    blocks = [[link(P1, 0, "p"), link(X, 1, "x"), link(Y, 10, "y"), link(Z, 9, "z")]]
    result = related_from_filtered([("hub.org", blocks)], SimilarityParams(t=0.0, m=2))
    assert [e[:2] for e in result[P1]] == [[X, 1.0], [Z, 0.606531]]  # best first, Y cut
    # T = 0.5 drops Y -> P1 (0.367879) but keeps the other two
    result = related_from_filtered([("hub.org", blocks)], SimilarityParams(t=0.5))
    assert [e[:2] for e in result[Y]] == [[Z, 1.0], [X, 0.606531]]


# --- evidence --------------------------------------------------------------------------


def test_evidence_top_citing_sites_by_ds() -> None:
    pages = [
        pair_page("a-hub.org", 1, ["alpha"], ["beta"]),  # S_p = 1
        pair_page("b-hub.org", 1, ["same"], ["same"]),  # S_p = 2
        pair_page("c-hub.org", 1, ["alpha"], ["beta"]),  # S_p = 1 (ties a-hub: site order)
        pair_page("d-hub.org", 10, ["alpha"], ["beta"]),  # S_p = e^-1 = 0.367879
    ]
    result = related_from_filtered(pages, ALL)
    # TS = (1 + 2 + 1 + 0.367879) / (1 + ln 4) = 4.367879 / 2.386294 = 1.830402
    assert result[P1] == [
        [P2, 1.830402, [["b-hub.org", 2.0], ["a-hub.org", 1.0], ["c-hub.org", 1.0]]]
    ]
    assert related_from_filtered(pages, SimilarityParams(t=0.0, evidence=0))[P1] == [
        [P2, 1.830402, []]
    ]


def test_output_is_json_stable() -> None:
    pages = six_sites(6) + [("x.com", [[link(P1, 0, "p"), link(Y, 1, "y"), link(Z, 2, "z")]])]
    result = related_from_filtered(pages, ALL)
    assert list(result) == sorted(result)
    assert json.loads(json.dumps(result)) == result


def test_empty_corpus() -> None:
    assert related_from_filtered([], SimilarityParams()) == {}


# --- property tests ----------------------------------------------------------------------

TARGET_SITES = ("a.com", "b.org", "c.net", "d.io")
TARGETS = tuple(f"http://{site}/{k}" for site in TARGET_SITES for k in range(2))
CITING_SITES = ("hub.example", "blog.example", *TARGET_SITES)
VOCABULARY = ("x", "y", "z")


@st.composite
def blocks_of_links(draw: st.DrawFn) -> list[Link]:
    urls = draw(st.lists(st.sampled_from(TARGETS), min_size=1, max_size=5, unique=True))
    positions = sorted(draw(st.lists(st.integers(0, 24), min_size=len(urls), max_size=len(urls), unique=True)))
    return [
        Link(url, urlsplit(url).hostname or "", frozenset(draw(st.sets(st.sampled_from(VOCABULARY)))), pos)
        for url, pos in zip(urls, positions)
    ]


corpora = st.lists(
    st.tuples(st.sampled_from(CITING_SITES), st.lists(blocks_of_links(), min_size=1, max_size=3)),
    max_size=8,
)
params_strategy = st.builds(
    SimilarityParams,
    lam=st.integers(0, 4),
    r=st.integers(1, 3),
    n=st.sampled_from([1.5, 3.0, 10.0]),
    m=st.integers(1, 4),
    t=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    evidence=st.integers(0, 3),
)


def naive_related(pages: list[Page], params: SimilarityParams) -> dict[str, list[list[Any]]]:
    """A second, deliberately simple implementation: for every ordered pair of pages,
    scan every citing page for the first block holding both; exact Fraction sums."""
    urls = sorted({lnk.url for _, blocks in pages for block in blocks for lnk in block})
    in_degree = {
        u: sum(1 for _, blocks in pages for block in blocks if u in {lnk.url for lnk in block})
        for u in urls
    }
    result: dict[str, list[list[Any]]] = {}
    for source in urls:
        found = []
        for target in urls:
            if target == source:
                continue
            per_site: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
            for citing_site, blocks in pages:
                for block in blocks:
                    here = {lnk.url: lnk for lnk in block}
                    if source in here and target in here:
                        a, b = here[source], here[target]
                        if a.site != b.site:
                            gap = abs(a.pos - b.pos)
                            prox = 1.0 if gap <= params.lam else math.exp((params.lam - gap) / 2)
                            union = a.words | b.words
                            jac = Fraction(len(a.words & b.words), len(union)) if union else Fraction(0)
                            s = round(prox * (1 + float(jac)), 6)
                            if s > 0:
                                per_site[citing_site][" ".join(sorted(b.words))].append(s)
                        break  # this citing page's first block with both decides
            if not per_site:
                continue
            ds = {}
            for citing_site, groups in per_site.items():
                exact = sum(
                    (Fraction(v) for g in groups.values() for v in heapq.nlargest(params.r, g)),
                    Fraction(0),
                )
                ds[citing_site] = round(min(params.n, float(exact)), 6)
            exact_total = sum((Fraction(v) for v in ds.values()), Fraction(0))
            ts = round(float(exact_total) / (1 + math.log(in_degree[target])), 6)
            best = heapq.nsmallest(params.evidence, ((-v, d) for d, v in ds.items()))
            evidence = [[d, -neg_v] for neg_v, d in best]
            if ts >= params.t:
                found.append((-ts, target, evidence))
        if found:
            result[source] = [[target, -neg, ev] for neg, target, ev in sorted(found)[: params.m]]
    return result


PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(corpora, params_strategy, st.randoms(use_true_random=False))
def test_invariant_to_the_order_of_citing_pages(
    pages: list[Page], params: SimilarityParams, rnd: random.Random
) -> None:
    shuffled = list(pages)
    rnd.shuffle(shuffled)
    expected = related_from_filtered(pages, params)
    got = related_from_filtered(shuffled, params)
    assert json.dumps(got) == json.dumps(expected)  # byte-identical, key order included


@PROPERTY_SETTINGS
@given(corpora, params_strategy)
def test_related_lists_are_well_formed(pages: list[Page], params: SimilarityParams) -> None:
    result = related_from_filtered(pages, params)
    assert list(result) == sorted(result)
    for source, entries in result.items():
        assert 1 <= len(entries) <= params.m
        assert [(-e[1], e[0]) for e in entries] == sorted((-e[1], e[0]) for e in entries)
        assert len({e[0] for e in entries}) == len(entries)
        for target, ts, evidence in entries:
            assert target != source
            assert ts >= params.t and ts == round(ts, 6)
            assert len(evidence) <= params.evidence
            assert [(-v, d) for d, v in evidence] == sorted((-v, d) for d, v in evidence)
            for _site, ds in evidence:
                assert 0 < ds <= params.n and ds == round(ds, 6)


@PROPERTY_SETTINGS
@given(corpora, params_strategy)
def test_agrees_with_a_naive_implementation(pages: list[Page], params: SimilarityParams) -> None:
    assert related_from_filtered(pages, params) == naive_related(pages, params)


# --- from segment records, through the real filters --------------------------------------


def test_reference_related_from_segment_records() -> None:
    links = pytest.importorskip("filters.links")
    anchors = pytest.importorskip("filters.anchors")
    words = anchors.AnchorWords()

    def record(k: int) -> dict[str, Any]:
        url = f"https://www.hub{k}.com/links"
        return {
            "url": url,
            "site": f"hub{k}.com",
            "blocks": [
                [
                    {"href": "https://www.python.org/", "anchor": "Python", "pos": 0},
                    {"href": f"https://www.hub{k}.com/about", "anchor": "About us", "pos": 1},
                    {"href": "https://www.perl.org/", "anchor": "Perl", "pos": 2},
                    {"href": "https://www.perl.org/manual.pdf", "anchor": "Perl manual", "pos": 3},
                ],
                # a block of 81 links is dropped whole by the large block filter (S = 80):
                # it adds no pair and no in-degree to python.org
                [
                    {"href": f"https://site{j}.net/", "anchor": f"Site {j}", "pos": j}
                    for j in range(80)
                ]
                + [{"href": "https://www.python.org/", "anchor": "Python", "pos": 80}],
            ],
        }

    records = [record(k) for k in range(1, 7)]
    sim = SimilarityParams(t=2.0)
    result = reference_related(records, links.LinkFilterParams(), sim, words)
    # hub/about: same site as the page (common-site filter); manual.pdf: file filter.
    # Left in each of the 6 hub pages: python.org at 0 and perl.org at 2, disjoint
    # anchors: S_p = 1 * (1 + 0) = 1 per site; in = 6 blocks each:
    # TS = 6 / (1 + ln 6) = 6 / 2.791759 = 2.149182
    # the evidence names each citing site's page and the related page's anchor text there
    def evidence(anchor: str) -> list[list[Any]]:
        return [[f"hub{k}.com", 1.0, f"https://www.hub{k}.com/links", anchor] for k in (1, 2, 3)]

    assert result == {
        "https://www.perl.org/": [["https://www.python.org/", 2.149182, evidence("Python")]],
        "https://www.python.org/": [["https://www.perl.org/", 2.149182, evidence("Perl")]],
    }
    # and it is exactly the oracle applied to filter_blocks' output
    filtered = [
        (r["site"], links.filter_blocks(r["site"], r["blocks"], words, links.LinkFilterParams())[0],
         r["url"])
        for r in records
    ]
    assert related_from_filtered(filtered, sim, raw=[]) == result
    # without the citing pages' URLs, the evidence is the sites alone
    assert related_from_filtered([item[:2] for item in filtered], sim)[
        "https://www.perl.org/"][0][2] == [[f"hub{k}.com", 1.0] for k in (1, 2, 3)]
