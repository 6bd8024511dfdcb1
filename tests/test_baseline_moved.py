"""Spertus's moved-page finder (paper 002 §2.4) on two hand-made crawls, scored by hand."""
from __future__ import annotations

import pytest

from relatedpages.baselines.moved import (
    MovedAnswer,
    MovedParams,
    MovedReason,
    anchor_similarity,
    moved,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph

OLD = "http://univ.example/smith/"
NEW = "http://smith.example/"


def u(name: str) -> str:
    return f"http://{name}.example/"


def crawl(pages) -> LinkGraph:
    """``[(url, [(href, anchor), …]), …]`` -> a URL graph with anchors."""
    return LinkGraph.from_pages(
        [(url, [(href, anchor, 0) for href, anchor in links]) for url, links in pages],
        key_kind=KeyKind.URL,
    )


OLD_CRAWL = crawl([
    (u("p1"), [(u("a"), "A"), (OLD, "Jane Smith's home page"), (u("b"), "B")]),
    (u("p2"), [(OLD, "Smith home"), (u("c"), "C")]),
    (u("p3"), [(u("d"), "D"), (OLD, "papers")]),
    (u("p4"), [(OLD, "Smith")]),  # not fetched again in the new crawl
    (OLD, [(u("a"), "A")]),
    (u("e"), [(u("h"), "old link")]),
])
NEW_CRAWL = crawl([
    # the old link's slot, same anchor: anchor 1 + position 1 = 2
    (u("p1"), [(u("a"), "A"), (NEW, "Jane Smith's home page"), (u("b"), "B")]),
    # same slot (page start, then c), anchor {smith, home} vs {jane, smith}: 1/3 + 1
    (u("p2"), [(NEW, "Jane Smith"), (u("c"), "C")]),
    # the old URL still linked: not a candidate; e: after d as before, anchor "papers":
    # 1 + 0.5;  f: at the page's end as before, anchor "Smith home" vs "papers": 0 + 0.5
    (u("p3"), [(OLD, "old"), (u("d"), "D"), (u("e"), "papers"), (u("f"), "Smith home")]),
    # NEW's own link has no word in common with any old anchor: no evidence
    (NEW, [(NEW + "pubs", "publications"), (NEW, "self")]),
    # reached from p3 by the blurb word "papers" (hop 2): g's anchor equals p2's old anchor,
    # 0.5 * 1; h was linked from e before: not new
    (u("e"), [(u("g"), "Smith home"), (u("h"), "Smith home")]),
])


def summary(answer: MovedAnswer) -> list[tuple[str, float, int]]:
    return [(c.url, round(c.score, 6), c.parents) for c in answer.candidates]


def test_candidates_by_hand():
    answer = moved(OLD_CRAWL, NEW_CRAWL, OLD)
    assert answer.reason is None
    assert (answer.url, answer.parents, answer.recrawled_parents) == (OLD, 4, 3)
    assert summary(answer) == [
        (NEW, round(2 + 1 / 3 + 1, 6), 2),
        (u("e"), 1.5, 1),
        (u("f"), 0.5, 1),  # ties with g: by URL
        (u("g"), 0.5, 1),
    ]


def test_evidence_explains_the_score():
    answer = moved(OLD_CRAWL, NEW_CRAWL, OLD)
    first = answer.candidates[0]
    assert [(e.parent, e.hop, e.anchor_similarity, e.position, e.score) for e in first.evidence] == [
        (u("p1"), 1, 1.0, 1.0, 2.0),
        (u("p2"), 1, pytest.approx(1 / 3), 1.0, pytest.approx(4 / 3)),
    ]
    assert first.evidence[1].old_anchor == "Smith home" and first.evidence[1].anchor == "Jane Smith"
    [via_e] = answer.candidates[3].evidence
    assert (via_e.parent, via_e.page, via_e.hop, via_e.old_anchor) == (u("p3"), u("e"), 2, "Smith home")


def test_one_hop_only():
    answer = moved(OLD_CRAWL, NEW_CRAWL, OLD, MovedParams(max_hops=1))
    assert [c.url for c in answer.candidates] == [NEW, u("e"), u("f")]


def test_weights_and_limit():
    anchors_only = moved(OLD_CRAWL, NEW_CRAWL, OLD, MovedParams(position_weight=0, max_candidates=2))
    # position ignored: NEW 1 + 1/3, e 1, g 0.5 (f had only position evidence)
    assert summary(anchors_only) == [(NEW, round(4 / 3, 6), 2), (u("e"), 1.0, 1)]
    full = moved(OLD_CRAWL, NEW_CRAWL, OLD, MovedParams(position_weight=0))
    assert summary(full)[2:] == [(u("g"), 0.5, 1)]


def test_query_url_is_normalised():
    answer = moved(OLD_CRAWL, NEW_CRAWL, "HTTP://UNIV.example:80/smith/")
    assert answer.url == OLD and answer.candidates[0].url == NEW


def test_reasons():
    assert moved(OLD_CRAWL, NEW_CRAWL, "http://nowhere.example/").reason is MovedReason.UNKNOWN_URL
    assert moved(OLD_CRAWL, NEW_CRAWL, u("p1")).reason is MovedReason.NOT_GONE
    # p4 is gone, and nothing linked to it
    assert moved(OLD_CRAWL, NEW_CRAWL, u("p4")).reason is MovedReason.NO_PARENTS
    only_p4 = crawl([(u("p4"), [(OLD, "Smith")])])
    answer = moved(only_p4, NEW_CRAWL, OLD)
    assert (answer.reason, answer.parents, answer.recrawled_parents) == (
        MovedReason.PARENTS_NOT_RECRAWLED, 1, 0
    )
    # the parent is back, but only with its old links
    same = crawl([(u("p2"), [(OLD, "Smith home"), (u("c"), "C")])])
    unchanged = crawl([(u("p2"), [(u("c"), "C")])])
    answer = moved(same, unchanged, OLD)
    assert (answer.reason, answer.recrawled_parents, answer.candidates) == (MovedReason.NO_EVIDENCE, 1, ())


def test_old_url_still_linked_but_not_fetched_is_gone():
    # the new crawl knows OLD only as a link target (p3 still links to it)
    assert NEW_CRAWL.id_of(OLD) is not None
    assert moved(OLD_CRAWL, NEW_CRAWL, OLD).reason is None


def test_parent_repeating_a_link_is_one_voice():
    old = crawl([(u("p"), [(OLD, "Smith"), (u("x"), "X"), (OLD, "Smith")])])
    new = crawl([(u("p"), [(NEW, "Smith"), (u("x"), "X"), (NEW, "Smith")])])
    [candidate] = moved(old, new, OLD).candidates
    # each new link fills one old slot exactly: best 1 + 1, counted once
    assert (candidate.url, candidate.score, candidate.parents) == (NEW, 2.0, 1)


def test_anchor_similarity():
    assert anchor_similarity("Smith home", "home of Smith") == pytest.approx(2 / 3)
    assert anchor_similarity("...", "Smith") == 0.0


@pytest.mark.parametrize("kwargs", [
    {"anchor_weight": -1}, {"anchor_weight": 0, "position_weight": 0}, {"max_hops": 0},
    {"hop_decay": 0}, {"hop_decay": 1.5}, {"max_parents": 0}, {"max_candidates": 0},
])
def test_params_validated(kwargs):
    with pytest.raises(ValueError):
        MovedParams(**kwargs)
