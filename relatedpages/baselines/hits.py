"""Kleinberg's HITS on SFP's generated graphs: the comparison in Zhou et al. (paper 004 §4).

Paper 004 ran HITS "implemented by referencing [13]" (Kleinberg, SODA'98) on the same data as
SFP: "the filter threshold is set to be 5, and the iterating turn is set to be 20.  The
domains which have the same name are regarded as the same domain."  Readings:

* The graph is the union of the roots' generated graphs (:func:`sfp.generated_graph`, same
  Level/MaxPages/MaxLinks): Kleinberg's base set grown from a root set, here grown the way
  SFP grows it, so both methods see the same pages and links.
* Kleinberg's §3 heuristics on that graph.  *Intrinsic* links (between two pages of the same
  domain) are deleted — Kleinberg's choice, the one paper 004 §2 criticises ("HITS either
  treats internal links within the same site as the external ones or just ignores them");
  ``drop_intrinsic=False`` keeps them.  The **filter threshold** is Kleinberg's *m*: "allow
  only m pages (m ~ 4-8) from a single domain to point to any given page"; with m = 5, the
  links into a page from a sixth and later page of one domain are dropped — the kept ones
  are those from the pages with the smallest node numbers (a deterministic choice).  A
  domain is a host (``graph.host``: "domains which have the same name are the same domain";
  on an id graph every node is its own host, so both heuristics then only drop nothing).
* The iteration: all weights start at 1; each of the 20 turns sets a(p) = sum of h(q) over
  q -> p, then h(p) = sum of a(q) over p -> q with the new a, then scales both vectors to unit
  Euclidean length (Kleinberg's normalisation: Figure 2(b)'s twelve equal authorities of
  0.289 = 1/sqrt(12) are unit length).  Fixed turns, no convergence test (the paper's
  "iterating turn is set to be 20").
* Authorities (and hubs) with a positive weight, best first, ties by name, the first
  ``max_results`` of them (the paper's tables show ten).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from relatedpages.baselines import Scored
from relatedpages.baselines.sfp import AuthorityReason, GeneratedGraphParams, raw_generated_graphs, edge_keys
from relatedpages.store.linkgraph import LinkGraph

FILTER_THRESHOLD_DEFAULT = 5  # paper 004 §4: "the filter threshold is set to be 5" (Kleinberg's m)
ITERATIONS_DEFAULT = 20  # paper 004 §4: "the iterating turn is set to be 20"
DROP_INTRINSIC_DEFAULT = True  # Kleinberg §3: intrinsic (same-domain) links are deleted
MAX_RESULTS_DEFAULT = 10  # paper 004 Figure 2: top ten


@dataclass(frozen=True)
class HITSParams:
    """HITS on the generated graphs (paper 004 §4, Kleinberg §3)."""

    generated: GeneratedGraphParams = field(default_factory=GeneratedGraphParams)
    filter_threshold: int = FILTER_THRESHOLD_DEFAULT
    iterations: int = ITERATIONS_DEFAULT
    drop_intrinsic: bool = DROP_INTRINSIC_DEFAULT
    max_results: int = MAX_RESULTS_DEFAULT

    def __post_init__(self) -> None:
        if self.filter_threshold < 1:
            raise ValueError(f"filter_threshold must be >= 1, got {self.filter_threshold}")
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")
        if self.max_results < 1:
            raise ValueError(f"max_results must be >= 1, got {self.max_results}")


@dataclass(frozen=True)
class HITSResult:
    """Top authorities and hubs (weights of unit-length vectors), or a reason."""

    roots: tuple[int, ...]  # distinct roots, in the order given
    authorities: tuple[Scored, ...] = ()  # weight desc, then name
    hubs: tuple[Scored, ...] = ()
    pages: int = 0  # vertices of the union of the generated graphs
    links: int = 0  # links left after the filters
    reason: AuthorityReason | None = None

    def __post_init__(self) -> None:
        if self.authorities and self.reason is not None:
            raise ValueError("a result with authorities has no reason")


def hits(graph: LinkGraph, roots: Sequence[int], params: HITSParams | None = None) -> HITSResult:
    """Kleinberg's hubs and authorities on the union of the roots' generated graphs."""
    params = params or HITSParams()
    graphs = raw_generated_graphs(graph, roots, params.generated)
    distinct = tuple(g.vertices[0] for g in graphs)
    if not graphs:
        return HITSResult((), reason=AuthorityReason.NO_ROOTS)
    n = len(graph)
    pages = np.unique(np.concatenate([np.asarray(g.vertices, dtype=np.int64) for g in graphs]))
    keys = np.unique(np.concatenate([edge_keys(g, n) for g in graphs]))  # the union: each link once
    edges = np.stack(np.divmod(keys, n), axis=1) if len(keys) else np.empty((0, 2), dtype=np.int64)
    edges = filter_links(graph, edges, params.filter_threshold, params.drop_intrinsic)
    if not len(edges):
        return HITSResult(distinct, pages=len(pages), reason=AuthorityReason.NO_LINKS)
    local_sources = np.searchsorted(pages, edges[:, 0])
    local_targets = np.searchsorted(pages, edges[:, 1])
    authority, hub = _iterate(local_sources, local_targets, len(pages), params.iterations)
    return HITSResult(
        distinct,
        _top(graph, pages, authority, params.max_results),
        _top(graph, pages, hub, params.max_results),
        len(pages),
        len(edges),
    )


def filter_links(
    graph: LinkGraph, edges: npt.NDArray[np.int64], filter_threshold: int, drop_intrinsic: bool
) -> npt.NDArray[np.int64]:
    """Kleinberg's §3 heuristics on distinct ``(source, target)`` rows sorted by source.

    Intrinsic links go (when asked); then at most ``filter_threshold`` pages of one domain
    keep their links to any one page: those with the smallest node numbers.
    """
    if not len(edges):
        return edges
    source_hosts = graph.hosts[edges[:, 0]].astype(np.int64)
    if drop_intrinsic:
        keep = source_hosts != graph.hosts[edges[:, 1]]
        edges, source_hosts = edges[keep], source_hosts[keep]
    if not len(edges):
        return edges
    # rank of each link among the links into the same target from the same host
    order = np.lexsort((edges[:, 0], source_hosts, edges[:, 1]))
    target_sorted = edges[order, 1]
    host_sorted = source_hosts[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (target_sorted[1:] != target_sorted[:-1]) | (host_sorted[1:] != host_sorted[:-1])
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    rank = np.arange(len(order)) - group_start
    kept = np.sort(order[rank < filter_threshold])
    return edges[kept]


def _iterate(
    sources: npt.NDArray[np.int64], targets: npt.NDArray[np.int64], n: int, iterations: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Kleinberg's I and O operations, each turn followed by unit-length scaling."""
    hub: npt.NDArray[np.float64] = np.ones(n)
    authority: npt.NDArray[np.float64] = np.ones(n)
    for _ in range(iterations):
        authority = _unit(np.bincount(targets, weights=hub[sources], minlength=n).astype(np.float64))  # I
        hub = _unit(np.bincount(sources, weights=authority[targets], minlength=n).astype(np.float64))  # O
    return authority, hub


def _unit(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _top(
    graph: LinkGraph, pages: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], limit: int
) -> tuple[Scored, ...]:
    """The ``limit`` pages of largest positive weight, ties by name."""
    positive = np.flatnonzero(weights > 0)
    if not len(positive):
        return ()
    # candidates: everything at least as heavy as the limit-th weight (ties cross the cut)
    if len(positive) > limit:
        cut = np.partition(weights[positive], len(positive) - limit)[len(positive) - limit]
        positive = positive[weights[positive] >= cut]
    ranked = sorted(
        (Scored(int(pages[i]), float(weights[i])) for i in positive.tolist()),
        # rounded: symmetric pages whose sums differ in the last bit still tie by name
        key=lambda s: (-round(s.score, 12), graph.name(s.node)),
    )
    return tuple(ranked[:limit])
