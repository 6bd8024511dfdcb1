"""Random-walk relatedness on a :class:`LinkGraph`: **personalised PageRank** from the query
page and Ollivier & Senellart's **Green measure** (PPR divided by global PageRank).

* **The walk** (``direction``).  Related pages are pages linked *together*; a crawl's graph
  is also mostly pages that were linked but not crawled, with no out-links, where a walk
  along out-links goes nowhere.  So the default walk is the **co-citation walk**: a step goes
  from a page to one of the pages linking it, then on to one of that page's links (each
  chosen uniformly, a link counted as often as it occurs; Fogaras & Rácz's reverse-forward
  step, SALSA's authority chain).  Two pages co-cited by many parents are one step apart,
  and the walk only ever visits pages that are cited.  ``both`` steps along one link in
  either direction; ``out`` along out-links (the classic PageRank walk).  A page with no
  step (no parent; no out-link for ``out``) restarts.
* **Personalised PageRank** ``ppr_u`` (Jeh & Widom 2003; Haveliwala 2002): the stationary
  distribution of the walk that restarts at u with probability α (``restart``, 0.15) at
  every step.  Computed by Andersen, Chung & Lang's push (FOCS 2006), all nodes over the
  threshold pushed at once per round (u first, whatever its degree), until every node x
  keeps ``residual[x] <= tolerance · deg(x)`` (deg: its steps; its parents for the
  co-citation walk).  On the both-ways walk this bounds the error of each ``ppr_u(v)`` by about
  ``tolerance · deg(v)`` (ACL's bound; measured at most 1.15 times that on random graphs
  with self-loops, ``tests/test_baseline_walks.py``): the ranking's top is exact, the long
  tail of pages reached once is approximate.
* **Global PageRank** ``pr``: the same walk restarting at a uniformly chosen page; power
  iteration until the L1 change is below 1e-10 or 200 rounds, once per graph
  (``graph.derived``), before the first Green query.
* **Green measure** (Ollivier & Senellart, AAAI 2007): ``ppr_u(v) / pr(v)`` — how much more
  the walk from u visits v than a walk from anywhere does; it removes the popularity that
  personalised PageRank keeps.
* **Answer**: the pages the push reached (``ppr_u(v) > 0``), u excluded, best first; ties
  by ``ppr_u`` then node name; at most ``max_results``.  A query page with no step (no parent
  for the co-citation walk) has no walk: ``NoAnswer.NO_PARENTS``.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from relatedpages.baselines import Answer, NoAnswer
from relatedpages.baselines.cosine import MAX_RESULTS_DEFAULT, top
from relatedpages.store.linkgraph import LinkGraph

RESTART_DEFAULT = 0.15
TOLERANCE_DEFAULT = 1e-4
#: Global PageRank: power iteration stops at this L1 change, or after MAX_ROUNDS.
PAGERANK_L1 = 1e-10
MAX_ROUNDS = 200


class Direction(str, Enum):
    COCITATION = "cocitation"  # to a parent, then to one of its links (default)
    BOTH = "both"  # follow links in either direction
    OUT = "out"  # follow out-links (the classic PageRank walk)


@dataclass(frozen=True)
class WalkParams:
    """The parameters of personalised PageRank and the Green measure (module docstring)."""

    restart: float = RESTART_DEFAULT  # α
    tolerance: float = TOLERANCE_DEFAULT
    direction: Direction = Direction.COCITATION
    max_results: int = MAX_RESULTS_DEFAULT

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "direction", Direction(self.direction))
        except ValueError:
            choices = ", ".join(d.value for d in Direction)
            raise ValueError(f"direction must be one of {choices}, got {self.direction!r}") from None
        if not 0 < self.restart < 1:
            raise ValueError(f"restart must be in (0, 1), got {self.restart!r}")
        if not self.tolerance > 0:
            raise ValueError(f"tolerance must be > 0, got {self.tolerance!r}")
        if self.max_results < 1:
            raise ValueError("max_results must be >= 1")


def walk_csr(graph: LinkGraph, direction: Direction) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, targets) of the walk's steps from every node (cached per graph); for the
    co-citation walk, its first half-step (to the parents)."""
    key = f"walk_csr_{direction.value}"
    cached = graph.derived.get(key)
    if cached is None:
        if direction is Direction.COCITATION:
            cached = (graph.in_offsets.astype(np.int64), graph.in_sources.astype(np.int64))
        elif direction is Direction.OUT:
            cached = (graph.out_offsets.astype(np.int64), graph.out_targets.astype(np.int64))
        else:
            n = len(graph)
            sources = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.out_offsets))
            targets = graph.out_targets.astype(np.int64)
            start = np.concatenate([sources, targets])
            end = np.concatenate([targets, sources])
            order = np.argsort(start, kind="stable")
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(start, minlength=n), out=offsets[1:])
            cached = (offsets, end[order])
        graph.derived[key] = cached
    return cached


def _out_csr(graph: LinkGraph) -> tuple[np.ndarray, np.ndarray]:
    """The out-links as int64 CSR arrays (cached per graph: converted once, not per step)."""
    cached = graph.derived.get("out_csr")
    if cached is None:
        cached = (graph.out_offsets.astype(np.int64), graph.out_targets.astype(np.int64))
        graph.derived["out_csr"] = cached
    return cached


def _step(graph: LinkGraph, direction: Direction, nodes: np.ndarray,
          mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the mass of ``nodes`` (each with a step) arrives after one step: (distinct
    nodes, the mass arriving at each)."""
    offsets, targets = walk_csr(graph, direction)
    arrived, arriving = _spread(offsets, targets, nodes, mass)
    if direction is Direction.COCITATION:  # then from each parent to one of its links
        arrived, arriving = _spread(*_out_csr(graph), arrived, arriving)
    return arrived, arriving


def _spread(offsets: np.ndarray, targets: np.ndarray, nodes: np.ndarray,
            mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's mass split evenly over its steps: (distinct nodes reached, mass each)."""
    degree = offsets[nodes + 1] - offsets[nodes]
    # positions of each node's steps: offset of the node + 0 … degree-1
    within = np.arange(int(degree.sum())) - np.repeat(np.cumsum(degree) - degree, degree)
    arriving = targets[np.repeat(offsets[nodes], degree) + within]
    weights = np.repeat(mass / degree, degree)
    order = np.argsort(arriving, kind="stable")
    arriving = arriving[order]
    reached, first = np.unique(arriving, return_index=True)
    return reached, np.add.reduceat(weights[order], first) if len(first) else weights[:0]


def _dense_step(graph: LinkGraph, direction: Direction, mass: np.ndarray) -> np.ndarray:
    """:func:`_step` of every node at once (global PageRank): the mass arriving at each
    node; nodes without steps send nothing."""
    halves = [walk_csr(graph, direction)]
    if direction is Direction.COCITATION:
        halves.append(_out_csr(graph))
    for offsets, targets in halves:
        degree = np.diff(offsets)
        sources = np.repeat(np.arange(len(graph)), degree)
        share = mass / np.maximum(degree, 1)
        mass = np.bincount(targets, weights=share[sources], minlength=len(graph))
    return mass


def personalised_pagerank(graph: LinkGraph, node: int, params: WalkParams) -> np.ndarray:
    """``ppr_u`` for every node by push (module docstring); zeros where the push never went.

    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "a")])
    >>> p = personalised_pagerank(g, g.id_of("a"), WalkParams(tolerance=1e-9, direction="both"))
    >>> round(float(p[g.id_of("a")]), 4), round(float(p[g.id_of("b")]), 4)  # 1/(2-α), (1-α)/(2-α)
    (0.5405, 0.4595)
    """
    offsets, _ = walk_csr(graph, params.direction)
    n = len(graph)
    estimate = np.zeros(n)
    residual = np.zeros(n)
    residual[node] = 1.0
    alpha = params.restart
    active = np.array([node], dtype=np.int64)  # u is pushed once whatever its degree
    while len(active):
        mass = residual[active]
        residual[active] = 0.0
        estimate[active] += alpha * mass
        degree = offsets[active + 1] - offsets[active]
        walking = degree > 0
        # a page without steps (no out-links in the out walk) restarts at u
        residual[node] += (1 - alpha) * float(mass[~walking].sum())
        touched = np.array([node], dtype=np.int64)
        if walking.any():
            reached, arriving = _step(graph, params.direction, active[walking],
                                      (1 - alpha) * mass[walking])
            residual[reached] += arriving
            touched = np.concatenate([touched, reached])
        # only nodes that received mass can have crossed the threshold
        steps = offsets[touched + 1] - offsets[touched]
        active = np.unique(touched[residual[touched] > params.tolerance * np.maximum(steps, 1)])
    return estimate


def global_pagerank(graph: LinkGraph, params: WalkParams) -> np.ndarray:
    """PageRank of every node on the walk of ``params`` with uniform restart (cached)."""
    key = f"pagerank_{params.direction.value}_{params.restart}"
    cached = graph.derived.get(key)
    if cached is not None:
        return cached
    offsets, targets = walk_csr(graph, params.direction)
    n = len(graph)
    degree = np.diff(offsets)
    rank = np.full(n, 1.0 / n)
    for _ in range(MAX_ROUNDS):
        stuck = float(rank[degree == 0].sum())
        moved = _dense_step(graph, params.direction, rank)
        new = params.restart / n + (1 - params.restart) * (moved + stuck / n)
        change = float(np.abs(new - rank).sum())
        rank = new
        if change < PAGERANK_L1:
            break
    graph.derived[key] = rank
    return rank


def ppr(graph: LinkGraph, node: int, params: WalkParams | None = None) -> Answer:
    """Pages related to ``node`` by personalised PageRank, best first.

    >>> g = LinkGraph.from_edges([("h", "u"), ("h", "a"), ("k", "u"), ("k", "a"), ("k", "b")])
    >>> [g.name(s.node) for s in ppr(g, g.id_of("u")).related]  # a: 5/12 of a step, b: 1/6
    ['a', 'b']
    >>> [g.name(s.node) for s in ppr(g, g.id_of("u"), WalkParams(direction="both")).related]
    ['k', 'h', 'a', 'b']
    """
    params = params or WalkParams()
    return _answer(graph, _reached(graph, node, params), params)


def green(graph: LinkGraph, node: int, params: WalkParams | None = None) -> Answer:
    """Pages related to ``node`` by the Green measure ``ppr_u(v) / pr(v)``, best first.

    >>> g = LinkGraph.from_edges([("h", "u"), ("h", "a"), ("k", "u"), ("k", "a"), ("k", "b")])
    >>> [g.name(s.node) for s in green(g, g.id_of("u")).related]
    ['a', 'b']
    """
    params = params or WalkParams()
    return _answer(graph, _reached(graph, node, params), params, green=True)


def ppr_and_green(graph: LinkGraph, node: int,
                  params: WalkParams | None = None) -> tuple[Answer, Answer]:
    """:func:`ppr` and :func:`green` of ``node`` from one walk: the same two answers as
    asking each alone, for the cost of one (both read ``ppr_u``).

    >>> g = LinkGraph.from_edges([("h", "u"), ("h", "a"), ("k", "u"), ("k", "a"), ("k", "b")])
    >>> ppr_and_green(g, g.id_of("u")) == (ppr(g, g.id_of("u")), green(g, g.id_of("u")))
    True
    """
    params = params or WalkParams()
    reached = _reached(graph, node, params)
    return _answer(graph, reached, params), _answer(graph, reached, params, green=True)


def _answer(graph: LinkGraph, reached: tuple[np.ndarray, np.ndarray] | None,
            params: WalkParams, green: bool = False) -> Answer:
    """The answer from a walk's reach: ranked by ``ppr_u``, or with ``green`` by
    ``ppr_u / pr`` (ties by ``ppr_u`` either way)."""
    if reached is None:
        return Answer(reason=NoAnswer.NO_PARENTS)
    nodes, scores = reached
    if not len(nodes):
        return Answer(reason=NoAnswer.EMPTY_NEIGHBOURHOOD)
    measure = scores / global_pagerank(graph, params)[nodes] if green else scores
    return Answer(top(graph, nodes, measure, scores, params.max_results))


def _reached(graph: LinkGraph, node: int, params: WalkParams) -> tuple[np.ndarray, np.ndarray] | None:
    offsets, _ = walk_csr(graph, params.direction)
    if offsets[node + 1] == offsets[node]:
        return None
    estimate = personalised_pagerank(graph, node, params)
    estimate[node] = 0.0
    nodes = np.flatnonzero(estimate > 0)
    return nodes, estimate[nodes]
