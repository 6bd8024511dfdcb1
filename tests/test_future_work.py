"""The paper's future work, measured (relatedpages.evaluation.future_work): the mirror
filter and PageRank weights of citing sites, on cases worked out by hand."""
from __future__ import annotations

import pytest

from relatedpages.evaluation.future_work import (
    block_fingerprint,
    mirror_owners,
    pagerank_weighted,
    site_pagerank,
    without_mirrors,
)


def _block(*urls: str) -> list[dict[str, object]]:
    return [{"href": url, "anchor": url.split("//")[1].split(".")[0], "pos": i}
            for i, url in enumerate(urls)]


TARGETS = [f"http://t{i}.org/" for i in range(5)]


def _corpus() -> list[dict[str, object]]:
    """t0 and t1 co-cited by three sites, two of which (b.org, m.org) hold the same block."""
    return [
        {"url": "http://b.org/list", "site": "b.org", "blocks": [_block(*TARGETS)]},
        {"url": "http://m.org/list", "site": "m.org", "blocks": [_block(*TARGETS)]},
        {"url": "http://c.org/list", "site": "c.org",
         "blocks": [_block(TARGETS[0], TARGETS[1], "http://x.org/")]},
    ]


def test_a_mirrored_block_cites_from_one_site_only():
    from filters.anchors import AnchorWords
    from relatedpages.scoring.options import preset_link_params
    from relatedpages.scoring.parameters import preset_params
    from relatedpages.scoring.reference import reference_related

    records = _corpus()
    owners = mirror_owners(records)
    assert owners == {block_fingerprint(_block(*TARGETS)): "b.org"}
    split = list(without_mirrors(records, owners))
    assert [(r["url"], r["site"], len(r["blocks"])) for r in split] == [
        ("http://b.org/list", "b.org", 1), ("http://m.org/list", "m.org", 0),
        ("http://m.org/list", "b.org", 1), ("http://c.org/list", "c.org", 1)]
    # the citing sites counted (the default preset's score adds their evidence to them)
    link, params, words = preset_link_params("default"), preset_params("default", score="sites"), AnchorWords()
    before = dict((e[0], e[1]) for e in reference_related(records, link, params, words)[TARGETS[0]])
    after = dict((e[0], e[1]) for e in reference_related(split, link, params, words)[TARGETS[0]])
    assert before[TARGETS[1]] == 3.0 and after[TARGETS[1]] == 2.0  # b.org, m.org, c.org -> b, c
    assert before[TARGETS[2]] == 2.0 and after[TARGETS[2]] == 1.0


def test_blocks_below_the_minimum_or_on_one_site_are_not_mirrors():
    records = _corpus()
    assert mirror_owners(records, min_links=6) == {}
    assert mirror_owners(records[:1] + records[2:]) == {}
    assert list(without_mirrors(records, {})) == records


def test_site_pagerank_matches_the_closed_form():
    # a -> b <- c, b dangling: x = (1-d)/3 + d*y/3 and 2x + y = 1 give y = 0.9 / (1 + 0.85*2/3)
    rank = site_pagerank([{"site": "a.org", "blocks": [_block("http://b.org/")]},
                          {"site": "c.org", "blocks": [_block("http://b.org/")]}])
    y = 0.9 / (1 + 0.85 * 2 / 3)
    assert rank["b.org"] == pytest.approx(y, abs=1e-9)
    assert rank["a.org"] == pytest.approx((1 - y) / 2, abs=1e-9) == rank["c.org"]
    cycle = site_pagerank([{"site": f"{a}.org", "blocks": [_block(f"http://{b}.org/")]}
                           for a, b in ("ab", "bc", "ca")])
    assert all(value == pytest.approx(1 / 3) for value in cycle.values())
    assert site_pagerank([]) == {}


def test_pagerank_weights_reorder_by_the_citing_sites_rank():
    lists = {"p": [["x", 2, [["s1", 1.0], ["s2", 1.0]]], ["y", 1, [["hub", 1.0]]],
                   ["z", 1, [["s3", 1.0]]]]}
    rank = {"s1": 0.01, "s2": 0.01, "s3": 0.01, "hub": 0.97}
    ranked = pagerank_weighted(lists, rank, 3)["p"]
    assert [entry[0] for entry in ranked] == ["y", "x", "z"]
    assert ranked[0][1] > ranked[1][1] > ranked[2][1]
    assert pagerank_weighted(lists, rank, 1)["p"][0][0] == "y"
