"""Kleinberg's HITS on SFP's generated graphs (paper 004 §4): hand-worked weights and filters."""
from __future__ import annotations

import math

import numpy as np
import pytest

from relatedpages.baselines.hits import (
    FILTER_THRESHOLD_DEFAULT,
    ITERATIONS_DEFAULT,
    HITSParams,
    filter_links,
    hits,
)
from relatedpages.baselines.sfp import AuthorityReason, GeneratedGraphParams
from relatedpages.store.linkgraph import KeyKind, LinkGraph

LEVEL_ONE = GeneratedGraphParams(level=1)  # only the roots' own links


def ids(g: LinkGraph, *names: str) -> list[int]:
    found = [g.id_of(name) for name in names]
    assert None not in found
    return [n for n in found if n is not None]


def weights(g: LinkGraph, scored) -> list[tuple[str, float]]:
    return [(g.name(s.node), s.score) for s in scored]


def url_graph(pages) -> LinkGraph:
    return LinkGraph.from_pages(
        [(url, [(href, "", -1) for href in links]) for url, links in pages], key_kind=KeyKind.URL
    )


def test_paper_defaults():
    # paper 004 §4: "the filter threshold is set to be 5, and the iterating turn is set to be 20"
    assert (FILTER_THRESHOLD_DEFAULT, ITERATIONS_DEFAULT) == (5, 20)
    params = HITSParams()
    assert (params.filter_threshold, params.iterations, params.drop_intrinsic) == (5, 20, True)
    assert params.generated.level == 2  # the same generated graphs as SFP


@pytest.mark.parametrize("kwargs", [{"filter_threshold": 0}, {"iterations": 0}, {"max_results": 0}])
def test_params_validated(kwargs):
    with pytest.raises(ValueError):
        HITSParams(**kwargs)


def test_principal_eigenvector_by_hand():
    # h -> a b, k -> a.  A^T A on (a, b) is [[2, 1], [1, 1]]: eigenvalue phi^2, eigenvector
    # (1, phi - 1) with phi the golden ratio; A A^T on (h, k) is the same matrix.
    g = LinkGraph.from_edges([("h", "a"), ("h", "b"), ("k", "a")])
    result = hits(g, ids(g, "h", "k"), HITSParams(generated=LEVEL_ONE))
    phi = (1 + math.sqrt(5)) / 2
    big, small = 1 / math.sqrt(1 + (phi - 1) ** 2), (phi - 1) / math.sqrt(1 + (phi - 1) ** 2)
    assert [name for name, _ in weights(g, result.authorities)] == ["a", "b"]
    assert [w for _, w in weights(g, result.authorities)] == pytest.approx([big, small], abs=1e-12)
    assert [name for name, _ in weights(g, result.hubs)] == ["h", "k"]
    assert [w for _, w in weights(g, result.hubs)] == pytest.approx([big, small], abs=1e-12)
    assert (big, small) == pytest.approx((0.850651, 0.525731), abs=1e-6)
    assert (result.pages, result.links, result.reason) == (4, 3, None)


def test_one_turn_by_hand():
    # a = (h + k, h) = (2, 1) -> (2, 1)/sqrt 5; h's hub = a + b, k's = a -> (3, 2)/sqrt 13
    g = LinkGraph.from_edges([("h", "a"), ("h", "b"), ("k", "a")])
    result = hits(g, ids(g, "h", "k"), HITSParams(generated=LEVEL_ONE, iterations=1))
    assert [w for _, w in weights(g, result.authorities)] == pytest.approx(
        [2 / math.sqrt(5), 1 / math.sqrt(5)], abs=1e-12
    )
    assert [w for _, w in weights(g, result.hubs)] == pytest.approx(
        [3 / math.sqrt(13), 2 / math.sqrt(13)], abs=1e-12
    )


FM365 = ["search", "www", "news", "stock", "mail", "people", "searchnews", "dir", "bbs", "card",
         "game", "tv"]


def test_figure_2b_twelve_equal_authorities():
    # Figure 2(b): HITS "trapped" by fm365.com — twelve pages of equal authority 0.289 = 1/sqrt 12
    fm365 = [f"http://{host}.fm365.com/" for host in FM365]
    roots = [f"http://root{i}.example/" for i in range(3)]
    g = url_graph([(root, fm365) for root in roots])
    result = hits(g, ids(g, *roots))
    assert len(result.authorities) == 10  # the paper's top ten
    assert all(round(s.score, 3) == 0.289 for s in result.authorities)
    # equal weights: ties by name
    assert [name for name, _ in weights(g, result.authorities)] == sorted(fm365)[:10]


def test_filter_threshold_keeps_five_pages_per_domain():
    # six pages of spam.example and one of other.example point to t
    spam = [f"http://spam.example/p{i}" for i in range(6)]
    other = "http://other.example/"
    g = url_graph(
        [(page, ["http://t.example/"]) for page in spam]
        + [(other, ["http://t.example/", "http://u.example/"])]
    )
    roots = ids(g, *spam, other)
    five = hits(g, roots, HITSParams(generated=LEVEL_ONE))
    assert five.links == 5 + 2  # spam.example's sixth page (largest node number) loses its link
    assert g.name(max(roots[:6])) == spam[5]
    assert spam[5] not in [name for name, _ in weights(g, five.hubs)]
    six = hits(g, roots, HITSParams(generated=LEVEL_ONE, filter_threshold=6))
    assert six.links == 6 + 2


def test_intrinsic_links_dropped_unless_asked():
    g = url_graph([("http://a.example/", ["http://a.example/x", "http://b.example/"])])
    roots = ids(g, "http://a.example/")
    dropped = hits(g, roots, HITSParams(generated=LEVEL_ONE))
    assert [name for name, _ in weights(g, dropped.authorities)] == ["http://b.example/"]
    assert dropped.authorities[0].score == pytest.approx(1.0)
    kept = hits(g, roots, HITSParams(generated=LEVEL_ONE, drop_intrinsic=False))
    assert [name for name, _ in weights(g, kept.authorities)] == [
        "http://a.example/x", "http://b.example/"
    ]
    assert [s.score for s in kept.authorities] == pytest.approx([1 / math.sqrt(2)] * 2)


def test_filter_links_directly():
    # hosts of an id graph are the nodes themselves: only per-source limits can bite
    g = LinkGraph.from_edges([("0", "9"), ("1", "9"), ("2", "9"), ("3", "8")])
    edges = np.array([[ids(g, s)[0], ids(g, t)[0]] for s, t in [("0", "9"), ("1", "9"), ("2", "9"), ("3", "8")]],
                     dtype=np.int64)
    assert filter_links(g, edges, 1, True).tolist() == edges.tolist()
    assert filter_links(g, edges[:0], 1, True).shape == (0, 2)


def test_same_generated_graphs_as_sfp():
    # Level 2: r -> a -> b; b is reached and a's link counts
    g = LinkGraph.from_edges([("r", "a"), ("a", "b"), ("b", "c")])
    result = hits(g, ids(g, "r"))
    assert result.pages == 3 and result.links == 2  # b -> c lies beyond Level 2
    assert [name for name, _ in weights(g, result.authorities)] == ["a", "b"]


def test_reasons_and_duplicates():
    g = LinkGraph.from_edges([("h", "a"), ("x", "y")])
    assert hits(g, []).reason is AuthorityReason.NO_ROOTS
    lonely = hits(g, ids(g, "a"))  # a links nowhere: its generated graph has no links
    assert lonely.reason is AuthorityReason.NO_LINKS and lonely.authorities == ()
    [h] = ids(g, "h")
    assert hits(g, [h, h]).roots == (h,)
