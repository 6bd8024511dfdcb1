"""Single-source **SimRank** of the query page against every other page of a :class:`LinkGraph`.

Jeh & Widom 2002, "SimRank: a measure of structural-context similarity" (KDD): two pages
are similar when pages that are similar link to them.  With I(x) the distinct pages linking
x (the link graph's in-links; a page linking itself is one of its own parents, as in
networkx), and decay C::

    s(a, a) = 1
    s(a, b) = C / (|I(a)| |I(b)|) · Σ_{i ∈ I(a)} Σ_{j ∈ I(b)} s(i, j)     (0 when I(a) or I(b) is empty)

Exact SimRank is all pairs (n² values); this module answers one query page u at a time.

* **Linearisation** (Kusumoto, Maehara & Kawarabayashi, "Scalable similarity search for
  SimRank", SIGMOD 2014).  With P the reverse-walk matrix (from x to one of its parents, each 1/|I(x)|)
  SimRank is the solution of S = C·Pᵀ S P + D, where the diagonal correction D holds
  ``d_w = 1 - C·(Pᵀ S P)_ww`` (what makes s(w, w) = 1).  Hence, for v ≠ u::

      s(u, v) = Σ_{k ≥ 1} C^k Σ_w x_k(w) · d_w · y_k(w),   x_k = P^k e_u,  y_k = P^k e_v

  x_k(w) is the probability that a reverse walk from u stands on w after k steps: the two
  reverse walks from u and v meet at w after k steps, and d_w discounts meetings that are
  not their last.
* **Single source** (the query): x_1 … x_K by K backward steps from u (only the pages
  reached), then Horner's scheme forwards, h_K = d∘x_K, h_k = d∘x_k + C·Pᵀh_{k+1},
  s(u, ·) = C·Pᵀh_1: 2K sparse steps on the CSR arrays.  Pᵀ averages a page's parents'
  values, so it never increases a value.
* **Depth** ``iterations`` (K = 5 and C = 0.8, the values of Jeh & Widom's experiments):
  meetings after more than K steps are dropped.  As for Jeh & Widom's K iterations, this
  loses at most C^(K+1) of a score (0.26 at the defaults; measured at most 0.041 on random
  graphs, ``tests/test_baseline_simrank.py``).
* **Diagonal** (the approximation).  The exact d_w needs the similarity of w's parents
  among themselves::

      d_w = 1 - C/|I(w)| - C/|I(w)|² · Σ_{i ≠ j ∈ I(w)} s(i, j)          (d_w = 1 when I(w) is empty)

  This module drops the last term: **d_w ≈ 1 - C/|I(w)|** (and 1 without parents).  It is
  exact for a page with at most one parent, and for a page whose parents are pairwise
  dissimilar; otherwise it is too large, so a meeting there counts too much: scores are
  at least those of the exact D at the same depth, never below (the over-estimate is
  largest where two walks meet, then keep meeting: 1.056 for an exact 0.8 in the tests'
  worst hand-made case).  The true d_w is in [1 - C, 1 - C/|I(w)|]; the constant
  D ≈ (1 - C)·I of Kusumoto et al. (who argued that top-k rankings hardly change with it;
  Yu & McCann, SIGIR 2015, disagree) is that interval's other end.  On random graphs the
  first-order D is far closer to networkx's exact SimRank than the constant one (measured
  in the tests).  With the exact D (the tests pass it) the method is exact SimRank up to
  the depth and the tolerance.
* **Tolerance**: before each forward step, values of h below ``tolerance`` are dropped
  (they would reach the results only averaged and decayed; a walk spread over thousands of
  pages is mostly such values).  Since Pᵀ averages, each step loses less than
  ``tolerance`` per page, so a score is lowered by at most ``tolerance · (C + C² + … +
  C^K)`` (4·tolerance for C = 0.8) and never raised; ``tolerance = 0`` drops nothing.
* **Answer**: the pages with s(u, v) > 0, u excluded, best first; ties by node name; at most
  ``max_results``.  No parent: ``NoAnswer.NO_PARENTS`` (s(u, v) = 0 for every v).
* **Evidence** (:func:`simrank_evidence`): why v is similar to u.  The pages linking both
  (the walks meet after one step; as :mod:`relatedpages.baselines.evidence` orders them),
  or, when there is none, the strongest later meeting: a parent a of u and a parent b of v
  through which the two walks most likely reach the common ancestor w where they meet, as
  ``query-parent`` a, ``result-parent`` b and ``ancestor`` w (after two steps, w is a page
  linking both a and b); the ancestor's ``distance`` is the number of steps.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relatedpages.baselines import Answer, NoAnswer
from relatedpages.baselines.cosine import MAX_RESULTS_DEFAULT, top
from relatedpages.baselines.evidence import (
    EVIDENCE_LIMIT_DEFAULT,
    PARENT,
    LinkEvidence,
    ResultEvidence,
    link_evidence,
)
from relatedpages.store.linkgraph import LinkGraph

#: C, the decay of Jeh & Widom's experiments.
DECAY_DEFAULT = 0.8
#: K, the iterations of Jeh & Widom's experiments (the depth of the two walks' meeting).
ITERATIONS_DEFAULT = 5
#: Values of h under it are dropped before each forward step (module docstring).
TOLERANCE_DEFAULT = 1e-4

QUERY_PARENT = "query-parent"  # a page linking the query page, on the way to the meeting
RESULT_PARENT = "result-parent"  # a page linking the result, on the way to the meeting
ANCESTOR = "ancestor"  # where the two reverse walks meet

#: Sparse steps that gather more values than n / this sum into a dense array instead.
_DENSE_SHARE = 16


@dataclass(frozen=True)
class SimRankParams:
    """SimRank's parameters (module docstring)."""

    decay: float = DECAY_DEFAULT  # C
    iterations: int = ITERATIONS_DEFAULT  # K
    tolerance: float = TOLERANCE_DEFAULT
    max_results: int = MAX_RESULTS_DEFAULT

    def __post_init__(self) -> None:
        if not 0 < self.decay < 1:
            raise ValueError(f"decay must be in (0, 1), got {self.decay!r}")
        if isinstance(self.iterations, bool) or not isinstance(self.iterations, int) or self.iterations < 1:
            raise ValueError(f"iterations must be a whole number >= 1, got {self.iterations!r}")
        if not 0 <= self.tolerance < 1:
            raise ValueError(f"tolerance must be in [0, 1), got {self.tolerance!r}")
        if self.max_results < 1:
            raise ValueError("max_results must be >= 1")


Sparse = tuple[np.ndarray, np.ndarray]  # (distinct nodes ascending, their values)


def _in_csr(graph: LinkGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, parents, in-degree): the graph's own arrays (no copy when the offsets are
    int64 already), the in-degrees computed once per graph."""
    cached = graph.derived.get("simrank_in")
    if cached is None:
        offsets = np.asarray(graph.in_offsets, dtype=np.int64)
        cached = (offsets, graph.in_sources, np.diff(offsets))
        graph.derived["simrank_in"] = cached
    return cached


def _children_csr(graph: LinkGraph) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, children): each page's distinct children, ascending — the transpose of the
    in-links, so that a link repeated on a page counts once, as in I(x) (cached per graph)."""
    cached = graph.derived.get("simrank_children")
    if cached is None:
        _, parents, degree = _in_csr(graph)
        children = np.repeat(np.arange(len(graph), dtype=graph.in_sources.dtype), degree)
        order = np.argsort(parents, kind="stable")  # children stay ascending per parent
        starts = np.zeros(len(graph) + 1, dtype=np.int64)
        np.cumsum(np.bincount(parents, minlength=len(graph)), out=starts[1:])
        cached = (starts, children[order])
        graph.derived["simrank_children"] = cached
    return cached


def first_order_diagonal(in_degree: np.ndarray, decay: float) -> np.ndarray:
    """d_w ≈ 1 - C/|I(w)|, and 1 for a page without parents (module docstring).

    >>> [round(d, 6) for d in first_order_diagonal(np.array([0, 1, 4]), 0.8).tolist()]
    [1.0, 0.2, 0.8]
    """
    return 1.0 - decay / np.maximum(in_degree, 1) * (in_degree > 0)


def _push(offsets: np.ndarray, targets: np.ndarray, nodes: np.ndarray, values: np.ndarray,
          n: int) -> Sparse:
    """Every target of each node receives the node's value: (targets reached, sums)."""
    degree = offsets[nodes + 1] - offsets[nodes]
    total = int(degree.sum())
    # positions of each node's targets: its offset + 0 … degree-1
    within = np.arange(total) - np.repeat(np.cumsum(degree) - degree, degree)
    reached = targets[np.repeat(offsets[nodes], degree) + within]
    return _sum_by_node(reached, np.repeat(values, degree), n)


def _sum_by_node(nodes: np.ndarray, values: np.ndarray, n: int) -> Sparse:
    """The values of repeated nodes summed: (distinct nodes ascending, sums)."""
    if len(nodes) * _DENSE_SHARE > n:  # many: one dense pass beats sorting them
        dense = np.bincount(nodes, weights=values, minlength=n)
        distinct = np.flatnonzero(dense > 0)  # values are positive; a mask is 4x faster
        return distinct, dense[distinct]
    order = np.argsort(nodes, kind="stable")
    nodes, values = nodes[order], values[order]
    distinct, first = np.unique(nodes, return_index=True)
    return distinct, np.add.reduceat(values, first) if len(first) else values[:0]


def reverse_walks(graph: LinkGraph, node: int, steps: int) -> list[Sparse]:
    """x_1 … x_steps: where a reverse walk from ``node`` (to a parent chosen uniformly)
    stands after each step, with its probability; a walk at a page without parents ends.

    >>> g = LinkGraph.from_edges([("r", "a"), ("r", "b"), ("a", "u"), ("b", "u")])
    >>> [([g.name(i) for i in nodes], mass.tolist()) for nodes, mass in reverse_walks(g, g.id_of("u"), 2)]
    [(['a', 'b'], [0.5, 0.5]), (['r'], [1.0])]
    """
    offsets, parents, degree = _in_csr(graph)
    walks: list[Sparse] = []
    nodes, mass = np.array([node], dtype=np.int64), np.ones(1)
    for _ in range(steps):
        moving = degree[nodes] > 0
        nodes, mass = nodes[moving], mass[moving]
        if len(nodes):
            nodes, mass = _push(offsets, parents, nodes, mass / degree[nodes], len(graph))
        walks.append((nodes, mass))
    return walks


def _average_children(graph: LinkGraph, values: Sparse, tolerance: float) -> Sparse:
    """Pᵀ of a sparse vector, its values below ``tolerance`` dropped first: each child's
    value is the mean over its parents (a parent without a value counts 0).  Dropping first
    saves the step most of its work (the many small values of a walk spread thin) and
    lowers a mean by less than ``tolerance``."""
    offsets, children = _children_csr(graph)
    _, _, degree = _in_csr(graph)
    nodes, values_kept = values
    if tolerance > 0:
        kept = values_kept >= tolerance
        nodes, values_kept = nodes[kept], values_kept[kept]
    nodes, sums = _push(offsets, children, nodes, values_kept, len(graph))
    return nodes, sums / degree[nodes]


def _add(first: Sparse, second: Sparse, n: int) -> Sparse:
    return _sum_by_node(np.concatenate([first[0], second[0]]), np.concatenate([first[1], second[1]]), n)


def simrank_scores(graph: LinkGraph, node: int, params: SimRankParams | None = None,
                   diagonal: np.ndarray | None = None) -> Sparse:
    """s(u, v) for the pages v ≠ u with a positive score: (nodes ascending, scores).

    ``diagonal`` (every page's d_w) replaces the first-order estimate: with the exact one
    the scores are exact SimRank up to the depth and the tolerance.

    >>> g = LinkGraph.from_edges([("r", "a"), ("r", "b"), ("a", "u"), ("b", "v")])
    >>> nodes, scores = simrank_scores(g, g.id_of("u"))
    >>> [(g.name(i), round(float(s), 4)) for i, s in zip(nodes, scores)]  # C·s(a, b) = C·C
    [('v', 0.64)]
    """
    params = params or SimRankParams()
    _, _, degree = _in_csr(graph)
    n, decay = len(graph), params.decay
    walks = reverse_walks(graph, node, params.iterations)

    def discounted(step: Sparse) -> Sparse:
        nodes, mass = step
        weights = first_order_diagonal(degree[nodes], decay) if diagonal is None else diagonal[nodes]
        return nodes, mass * weights

    offsets, _ = _children_csr(graph)
    h = discounted(walks[-1])
    for step in reversed(walks[:-1]):  # Horner: h_k = d∘x_k + C·Pᵀ h_{k+1}
        nodes, averaged = _average_children(graph, h, params.tolerance)
        # h_k only feeds the next Pᵀ: a page without links (most of a crawl's) adds nothing
        linking = offsets[nodes + 1] > offsets[nodes]
        h = _add(discounted(step), (nodes[linking], decay * averaged[linking]), n)
    nodes, averaged = _average_children(graph, h, params.tolerance)
    scores = decay * averaged
    others = nodes != node
    return nodes[others], scores[others]


def simrank(graph: LinkGraph, node: int, params: SimRankParams | None = None) -> Answer:
    """Pages related to ``node`` by SimRank, best first.

    >>> g = LinkGraph.from_edges([("h", "u"), ("h", "a"), ("k", "u"), ("k", "a"), ("k", "b")])
    >>> [(g.name(s.node), round(s.score, 4)) for s in simrank(g, g.id_of("u")).related]
    [('a', 0.4), ('b', 0.4)]
    """
    params = params or SimRankParams()
    _, _, degree = _in_csr(graph)
    if degree[node] == 0:
        return Answer(reason=NoAnswer.NO_PARENTS)
    nodes, scores = simrank_scores(graph, node, params)
    if not len(nodes):
        return Answer(reason=NoAnswer.EMPTY_NEIGHBOURHOOD)
    if len(nodes) > params.max_results:  # only pages scoring at least the last kept can be kept
        last = np.partition(scores, len(scores) - params.max_results)[len(scores) - params.max_results]
        nodes, scores = nodes[scores >= last], scores[scores >= last]
    return Answer(top(graph, nodes, scores, scores, params.max_results))


def simrank_evidence(graph: LinkGraph, query: int, result: int, params: SimRankParams | None = None,
                     limit: int = EVIDENCE_LIMIT_DEFAULT) -> ResultEvidence:
    """Why ``result`` is similar to ``query`` (module docstring, "Evidence"): the shared
    parents, else the parents of each through which their reverse walks meet at the
    strongest common ancestor within the depth; empty only when s = 0.

    >>> g = LinkGraph.from_edges([("r", "a"), ("r", "b"), ("a", "u"), ("b", "v")])
    >>> e = simrank_evidence(g, g.id_of("u"), g.id_of("v"))
    >>> [(i.relation, g.name(i.node)) for i in e.items]
    [('query-parent', 'a'), ('result-parent', 'b'), ('ancestor', 'r')]
    """
    params = params or SimRankParams()
    shared = link_evidence(graph, query, result, limit)
    parents = tuple(item for item in shared.items if item.relation == PARENT)
    if parents:
        return ResultEvidence(shared.shared_parents, shared.shared_children, parents)
    walks = (reverse_walks(graph, query, params.iterations), reverse_walks(graph, result, params.iterations))
    meeting = _strongest_meeting(graph, walks, params.decay)
    if meeting is None:
        return ResultEvidence(0, shared.shared_children, ())
    steps, ancestor = meeting
    by_query, by_result = _parents_towards(graph, ancestor, steps, (query, result), walks)
    items = (LinkEvidence(QUERY_PARENT, by_query, _anchor(graph, by_query, query)),
             LinkEvidence(RESULT_PARENT, by_result, _anchor(graph, by_result, result)),
             LinkEvidence(ANCESTOR, ancestor, "", distance=steps))
    return ResultEvidence(0, shared.shared_children, items)


Walks = tuple[list[Sparse], list[Sparse]]  # reverse_walks of the query and of the result


def _strongest_meeting(graph: LinkGraph, walks: Walks, decay: float) -> tuple[int, int] | None:
    """(k, w) with the largest term C^k·x_k(w)·d_w·y_k(w) of s(query, result); ties by
    fewer steps, then name.  None when the walks never meet within the depth."""
    _, _, degree = _in_csr(graph)
    best: tuple[float, int, str, int] | None = None
    for steps, ((from_query, x), (from_result, y)) in enumerate(zip(*walks), 1):
        common, at_x, at_y = np.intersect1d(from_query, from_result, assume_unique=True,
                                            return_indices=True)
        if not len(common):
            continue
        terms = decay ** steps * x[at_x] * y[at_y] * first_order_diagonal(degree[common], decay)
        for i in np.flatnonzero(terms == terms.max()).tolist():
            key = (-float(terms[i]), steps, graph.name(int(common[i])), int(common[i]))
            if best is None or key < best:
                best = key
    return None if best is None else (best[1], best[3])


def _parents_towards(graph: LinkGraph, ancestor: int, steps: int, pages: tuple[int, int],
                     walks: Walks) -> tuple[int, int]:
    """The parent of each of ``pages`` from which a reverse walk most likely reaches
    ``ancestor`` in ``steps - 1`` steps (ties by name)."""
    reach = (np.array([ancestor], dtype=np.int64), np.ones(1))
    for moved in range(1, steps):  # Pᵀ from the ancestor: reach(y) = P(walk from y at ancestor)
        nodes, chance = _average_children(graph, reach, 0.0)
        # only pages that the walks from the pair reach in steps - moved steps lie on the way
        on_way = np.union1d(walks[0][steps - moved - 1][0], walks[1][steps - moved - 1][0])
        keep = np.isin(nodes, on_way, assume_unique=True)
        reach = (nodes[keep], chance[keep])
    chosen = []
    for page in pages:
        candidates = np.intersect1d(graph.parents(page), reach[0])
        chance = reach[1][np.searchsorted(reach[0], candidates)]
        best = candidates[chance == chance.max()]
        chosen.append(min(best.tolist(), key=graph.name))
    return chosen[0], chosen[1]


def _anchor(graph: LinkGraph, page: int, target: int) -> str:
    """The anchor text of ``page``'s first link to ``target``."""
    where = np.flatnonzero(graph.children(page) == target)
    return graph.anchors(page)[int(where[0])] if len(where) else ""
