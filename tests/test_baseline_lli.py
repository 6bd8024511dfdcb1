"""Hou & Zhang's Latent Linkage Information on hand-made graphs (SVDs worked out by hand)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relatedpages.baselines import NoAnswer
from relatedpages.baselines.lli import (
    LLIParams,
    choose_rank,
    latent_similarity,
    lli,
    rank_tolerance,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph


def _graph(pages: dict[str, list[str]]) -> LinkGraph:
    return LinkGraph.from_edges((source, target) for source, targets in pages.items() for target in targets)


def _scores(graph: LinkGraph, node: int, params: LLIParams) -> dict[str, float]:
    return {graph.name(s.node): s.score for s in lli(graph, node, params).related}


# Back side:  P1: a u b   P2: a u b   P3: u c
#   A (rows a, b, c; columns P1 P2 P3) = [[1 1 0], [1 1 0], [0 0 1]]  ->  σ = 2, 1
BACK = {"P1": ["a", "u", "b"], "P2": ["a", "u", "b"], "P3": ["u", "c"]}


def test_back_side_rank_one() -> None:
    g = _graph(BACK)
    u = g.id_of("u")
    assert u is not None
    # (2 - 1) / 2 = 0.5 >= ε = 0.5 -> k = 1: a, b lie on the first axis (cosine 1), c is 0.
    params = LLIParams(epsilon=0.5, delta=0.01, max_results=None)
    assert _scores(g, u, params) == {"a": 1.0, "b": 1.0}
    # ranked by cosine, ties by name
    assert [g.name(s.node) for s in lli(g, u, params).related] == ["a", "b"]


def test_back_side_rank_two_by_hand() -> None:
    g = _graph(BACK)
    u = g.id_of("u")
    assert u is not None
    # ε = 0.6: k = 1 fails (0.5), k = 2 = r (σ_3 = 0).  R_a = (√2, 0), R_c = (0, 1);
    # u' = 1ᵀ V_2 Σ_2 = (√2 · 2, 1 · 1):  cos a = 4 / (√2 · 3),  cos c = 1 / 3.
    params = LLIParams(epsilon=0.6, delta=0.0, max_results=None)
    scores = _scores(g, u, params)
    assert scores["a"] == pytest.approx(2 * math.sqrt(2) / 3, abs=1e-9)
    assert scores["b"] == scores["a"]
    assert scores["c"] == pytest.approx(1 / 3, abs=1e-9)
    # Without the survey's extra Σ on u': u' = (√2, 1): cos a = √(2/3), cos c = 1/√3.
    plain = _scores(g, u, LLIParams(epsilon=0.6, delta=0.0, max_results=None, scale_query=False))
    assert plain["a"] == pytest.approx(math.sqrt(2 / 3), abs=1e-9)
    assert plain["c"] == pytest.approx(1 / math.sqrt(3), abs=1e-9)
    # δ = 0.5 keeps a and b only.
    assert set(_scores(g, u, LLIParams(epsilon=0.6, delta=0.5))) == {"a", "b"}


def test_forward_side_by_hand() -> None:
    # u -> c1, c2;  c1 <- u x y;  c2 <- u x.  B (rows x, y; columns c1, c2) = [[1 1], [1 0]]:
    # σ² = (3 ± √5) / 2, gap (σ1 - σ2) / σ1 = 0.618: ε = 0.7 keeps k = 2 (the whole space),
    # so with the plain projection the cosine is taken in the original space:
    # cos(x, u) = cos((1,1), (1,1)) = 1,  cos(y, u) = cos((1,0), (1,1)) = 1/√2.
    g = _graph({"u": ["c1", "c2"], "x": ["c1", "c2"], "y": ["c1"]})
    u = g.id_of("u")
    assert u is not None
    plain = _scores(g, u, LLIParams(epsilon=0.7, delta=0.0, scale_query=False, max_results=None))
    assert plain == pytest.approx({"x": 1.0, "y": 1 / math.sqrt(2)}, abs=1e-9)
    # k = 1 at ε = 0.5: both on the first (Perron) axis.
    assert _scores(g, u, LLIParams(epsilon=0.5, delta=0.0)) == {"x": 1.0, "y": 1.0}


def test_page_in_both_sides_keeps_its_best_cosine() -> None:
    # a is a sibling of u (in P3 with c) and a co-parent of u's child d.
    g = _graph({"P1": ["b", "u"], "P2": ["b", "u"], "P3": ["u", "a"], "u": ["d"], "a": ["d"]})
    u = g.id_of("u")
    assert u is not None
    # back side: σ = (2, 1); ε = 0.6 -> k = 2, cos a = 1/3;  forward side: B = [[1]], cos a = 1.
    assert _scores(g, u, LLIParams(epsilon=0.6, delta=0.0))["a"] == 1.0


def _dense_reference(sets: list[list[int]], epsilon: float, scale_query: bool) -> tuple[int, dict[int, float]]:
    """LLI straight from the definition: one dense SVD of the whole linkage matrix."""
    pages = sorted({p for s in sets for p in s})
    row = {p: i for i, p in enumerate(pages)}
    a = np.zeros((len(pages), len(sets)))
    for j, s in enumerate(sets):
        for p in s:
            a[row[p], j] = 1.0
    u, sigma, vt = np.linalg.svd(a, full_matrices=False)
    r = int(np.count_nonzero(sigma > rank_tolerance(float(sigma[0]), a.shape)))
    k = choose_rank(sigma, epsilon, r)
    coords = u[:, :k] * sigma[:k]
    coords[np.abs(coords) < sigma[0] * 1e-10] = 0.0  # round-off outside a vector's support
    query = np.ones(len(sets)) @ vt[:k].T * (sigma[:k] if scale_query else 1.0)
    norms = np.linalg.norm(coords, axis=1) * np.linalg.norm(query)
    cos = np.where(norms > 0, coords @ query / np.where(norms > 0, norms, 1), 0.0)
    return k, {p: float(cos[row[p]]) for p in pages}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("scale_query", [True, False])
def test_merged_blocks_equal_one_dense_svd(seed: int, scale_query: bool) -> None:
    rng = np.random.default_rng(seed)
    columns = int(rng.integers(2, 160))
    universe = int(rng.integers(5, 400))
    sets = [sorted(set(rng.integers(0, universe, int(rng.integers(0, 9))).tolist())) for _ in range(columns)]
    # repeated columns and a shared hub page, as mirrors and navigation bars make them
    sets += [list(sets[0])] * 3
    if seed % 2:
        sets = [s + [universe + 1] for s in sets]
    if not any(sets):
        sets[0] = [1]
    epsilon = float(rng.choice([0.1, 0.3, 0.5, 0.8]))
    side = latent_similarity(tuple(np.array(s, dtype=np.int32) for s in sets), epsilon, scale_query=scale_query)
    k, expected = _dense_reference(sets, epsilon, scale_query)
    assert side.k == k
    assert dict(zip(side.pages.tolist(), side.cosines.tolist())) == pytest.approx(expected, abs=1e-6)


@given(st.lists(st.floats(min_value=0.001, max_value=1000), min_size=1, max_size=12),
       st.floats(min_value=0.01, max_value=0.99), st.floats(min_value=0.01, max_value=0.99))
@settings(max_examples=200, deadline=None)
def test_k_follows_epsilon(values: list[float], eps1: float, eps2: float) -> None:
    sigma = np.array(sorted(values, reverse=True))
    low, high = sorted((eps1, eps2))
    k_low, k_high = choose_rank(sigma, low), choose_rank(sigma, high)
    # a larger gap threshold never gives a smaller k; k is the first index meeting the rule
    assert 1 <= k_low <= k_high <= len(sigma)
    gaps = [(sigma[i] - (sigma[i + 1] if i + 1 < len(sigma) else 0.0)) / sigma[i] for i in range(len(sigma))]
    assert gaps[k_high - 1] >= high and all(g < high for g in gaps[:k_high - 1])


def test_k_on_a_graph_follows_epsilon() -> None:
    g = _graph(BACK)
    sets = (np.array([0, 1]), np.array([0, 1]), np.array([2]))
    assert [latent_similarity(sets, e).k for e in (0.2, 0.5, 0.51, 0.9)] == [1, 1, 2, 2]
    assert choose_rank(np.array([4.0, 4.0, 1.0]), 0.5) == 2  # equal values are never cut apart
    assert choose_rank(np.zeros(3), 0.5) == 0
    assert lli(g, g.id_of("u"), LLIParams(epsilon=0.9, delta=0.0, max_results=None)).related[-1].score == pytest.approx(1 / 3)  # type: ignore[arg-type]


def test_empty_answers() -> None:
    isolated = LinkGraph.from_pages([("solo", [])], key_kind=KeyKind.ID)
    assert lli(isolated, 0).reason is NoAnswer.NO_PARENTS
    g = _graph({"x": ["y"], "w": ["y"]})
    y = g.id_of("y")
    assert y is not None and lli(g, y).reason is NoAnswer.EMPTY_NEIGHBOURHOOD


@pytest.mark.parametrize("bad", [{"epsilon": 0.0}, {"epsilon": 1.0}, {"delta": 2.0}, {"epsilon": "x"},
                                 {"scale_query": 1}, {"max_results": 0}])
def test_params_are_validated(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LLIParams(**bad)  # type: ignore[arg-type]
