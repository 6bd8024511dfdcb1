"""Zhou et al.'s SFP: authoritative pages and communities as frequent structures.

Paper 004 (Zhou, Lou, Yuan, Ng, Wang, Shi, "Refining Web Authoritative Resource by Frequent
Structures").  Each *root page* (a search result) gets a **generated graph**: the pages and
links reached from it breadth first within *Level*, *MaxPages* and *MaxLinks* (§3.2).  The
generated graphs of all roots are the dataset GD; SFP mines the sub-graphs that occur in at
least *minfreq* of them (§3.1):

* a 0-rank frequent sub-graph (one vertex) is an **authoritative page**, ranked by its
  support F, the number of generated graphs containing it (§3.1, Figure 2(c));
* **site grouping** keeps, per site, its best authoritative page (Figure 2(e));
* an **authoritative community** is a connected frequent sub-graph of rank >= 1 (§3.1, §4.2,
  Figure 4).

Readings chosen where the paper is vague (each says which text it rests on):

* Generated graph (§3.2).  The root has level 0.  Pages are *analysed* (their links
  separated out) in breadth-first order — by level, then in the order they were found, a
  page's links in page order.  A page is analysed only if its level is below *Level*, so
  every vertex has level <= *Level* ("page depth 2" in §4 gives vertices at depths 0, 1, 2).
  *MaxPages* caps the analysed pages per generated graph, root included ("for each page and
  within the limit of MaxPages, we analyze its content and separate out the links");
  *MaxLinks* caps the links taken from one analysed page — its first *MaxLinks* distinct
  targets in page order.  (MaxLinks cannot be a cap on the whole graph: the Java experiment
  of Figure 3 has 85,287 edges over 110 graphs with MaxLinks = 100.)  A page whose out-links
  the connectivity server does not know (``graph.crawled`` false) is a vertex but is not
  analysed and does not use up MaxPages (a fetch that fails).  Self-links are removed and
  repeated links collapse into one edge: SFP's graphs are simple, without loops (§3.1, §3.2).
* Support.  A vertex's or an edge's support is the number of generated graphs containing it;
  a root counts in its own graph.  Roots given twice count once.  Edges are directed: a->b and
  b->a are different items (§3.2).
* Site grouping (Figure 2(e)).  The figure lists, for each site, the top page with that page's
  own F (www.xml.com/ 31 in both 2(d) and 2(e)) and treats validator.w3.org apart from
  www.w3.org, so a site is a URL host name (not the graph's host rule, which would merge
  those two) and its support is its best page's support.
  Sites are ranked like pages.
* Communities.  A community is a *maximal* weakly connected frequent sub-graph of rank >= 1:
  a set of edges, connected when directions are ignored (§3.2 "weak connectivity"), present
  together in at least *minfreq* generated graphs, with no frequent connected super-set.
  Because vertex labels (URLs) are unique, a sub-graph is just a set of edges and its
  support is the size of the intersection of its edges' graph sets, so the search is
  pattern growth over frequent edges with graph sets as bit masks, jumping to the
  connected closure at each step (the edges adjacent to the pattern present in every graph
  of its support belong to every maximal super-set).  SFP's own FP-tree is not needed for
  that.  The number of closed patterns visited is capped (``max_patterns``); a capped search
  says so (``communities_complete`` false) and returns the maximal ones found.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from relatedpages.store.linkgraph import KeyKind, LinkGraph

log = logging.getLogger(__name__)

LEVEL_DEFAULT = 2  # §4: "we set page depth to be 2"; §4.1.3: Level = 2
MAX_PAGES_DEFAULT = 100  # §4.1.3: MaxPages = 100
MAX_LINKS_DEFAULT = 100  # §4.1.3: MaxLinks = 100
MIN_FREQ_DEFAULT = 7  # §4.1.3: minfreq = 7 (the Java experiment; §4.2 uses 13 for communities)
MAX_PATTERNS_DEFAULT = 10_000  # ours: a bound on the closed patterns the community search visits

Int64Array = npt.NDArray[np.int64]


class AuthorityReason(str, Enum):
    """Why an SFP or HITS answer has no authoritative pages."""

    NO_ROOTS = "no_roots"  # no root page was given
    NOTHING_FREQUENT = "nothing_frequent"  # SFP: no page occurs in minfreq generated graphs
    NO_LINKS = "no_links"  # HITS: the generated graphs have no links left after filtering


@dataclass(frozen=True)
class GeneratedGraphParams:
    """How far a generated graph reaches from its root page (paper 004 §3.2)."""

    level: int = LEVEL_DEFAULT
    max_pages: int = MAX_PAGES_DEFAULT
    max_links: int = MAX_LINKS_DEFAULT

    def __post_init__(self) -> None:
        if self.level < 0:
            raise ValueError(f"level must be >= 0, got {self.level}")
        if self.max_pages < 1:
            raise ValueError(f"max_pages must be >= 1, got {self.max_pages}")
        if self.max_links < 1:
            raise ValueError(f"max_links must be >= 1, got {self.max_links}")


@dataclass(frozen=True)
class SFPParams:
    """SFP's parameters: the generated graphs' reach and the minimum frequency."""

    generated: GeneratedGraphParams = field(default_factory=GeneratedGraphParams)
    min_freq: int = MIN_FREQ_DEFAULT
    max_patterns: int = MAX_PATTERNS_DEFAULT

    def __post_init__(self) -> None:
        if self.min_freq < 1:
            raise ValueError(f"min_freq must be >= 1, got {self.min_freq}")
        if self.max_patterns < 1:
            raise ValueError(f"max_patterns must be >= 1, got {self.max_patterns}")


@dataclass(frozen=True)
class GeneratedGraph:
    """One root's generated graph: vertices in breadth-first order, directed edges."""

    root: int
    vertices: tuple[int, ...]  # root first, then in the order found
    levels: tuple[int, ...]  # the level of each vertex (root 0)
    edges: tuple[tuple[int, int], ...]  # (source, target), distinct, no self-links
    analysed: int  # pages whose links were taken (<= max_pages)


@dataclass(frozen=True)
class Authority:
    """An authoritative page: a 0-rank frequent sub-graph and its support F."""

    node: int
    support: int


@dataclass(frozen=True)
class SiteGroup:
    """A site's authoritative pages; the site ranks by its best page's support."""

    host: str  # the URL's host name (Figure 2(e) lists hosts); the node id on id graphs
    best: int  # the site's top page
    support: int  # the top page's support (Figure 2(e))
    pages: tuple[int, ...]  # all the site's authoritative pages, best first


@dataclass(frozen=True)
class Community:
    """An authoritative community: a maximal weakly connected frequent sub-graph."""

    vertices: tuple[int, ...]  # ascending node numbers
    edges: tuple[tuple[int, int], ...]  # (source, target), ascending
    support: int  # generated graphs containing every edge

    @property
    def rank(self) -> int:
        """SFP's rank: the number of edges (§3.1)."""
        return len(self.edges)


@dataclass(frozen=True)
class SFPResult:
    """Authoritative pages, sites and communities mined from the roots' generated graphs."""

    roots: tuple[int, ...]  # distinct roots, in the order given
    authorities: tuple[Authority, ...] = ()  # support desc, then name
    sites: tuple[SiteGroup, ...] = ()  # best page's support desc, then its name
    communities: tuple[Community, ...] = ()  # support desc, rank desc, then sorted vertex names
    communities_complete: bool = True  # False when max_patterns stopped the search
    reason: AuthorityReason | None = None

    def __post_init__(self) -> None:
        if self.authorities and self.reason is not None:
            raise ValueError("a result with authorities has no reason")


# -- generated graphs -----------------------------------------------------------------


def generated_graph(
    graph: LinkGraph, root: int, params: GeneratedGraphParams | None = None
) -> GeneratedGraph:
    """The generated graph of ``root`` (paper 004 §3.2; readings in the module docstring)."""
    raw = _generate(graph, root, params or GeneratedGraphParams())
    return GeneratedGraph(root, tuple(raw.vertices), tuple(raw.levels),
                          tuple(zip(raw.sources, raw.targets)), raw.analysed)


def generated_graphs(
    graph: LinkGraph, roots: Iterable[int], params: GeneratedGraphParams | None = None
) -> list[GeneratedGraph]:
    """One generated graph per distinct root, in the order given."""
    return [generated_graph(graph, root, params) for root in _distinct(roots)]


@dataclass(frozen=True)
class RawGeneratedGraph:
    """A generated graph as flat lists (edges as parallel source/target lists), for SFP and HITS."""

    vertices: list[int]
    levels: list[int]
    sources: list[int]
    targets: list[int]
    analysed: int


def _generate(graph: LinkGraph, root: int, params: GeneratedGraphParams) -> RawGeneratedGraph:
    """Breadth first from ``root``: analyse pages above ``level``, at most ``max_pages``."""
    order = [root]
    level_of = {root: 0}
    sources: list[int] = []
    targets: list[int] = []
    analysed = 0
    head = 0
    while head < len(order) and analysed < params.max_pages:
        page = order[head]
        head += 1
        level = level_of[page]
        if level >= params.level:
            break  # breadth first: every later page is at least this deep
        if not graph.crawled[page]:
            continue
        analysed += 1
        # the first max_links distinct targets in page order, self-links removed
        links = [t for t in dict.fromkeys(graph.children(page).tolist()) if t != page]
        links = links[: params.max_links]
        sources.extend([page] * len(links))
        targets.extend(links)
        for target in links:
            if target not in level_of:
                level_of[target] = level + 1
                order.append(target)
    return RawGeneratedGraph(order, [level_of[v] for v in order], sources, targets, analysed)


def raw_generated_graphs(
    graph: LinkGraph, roots: Iterable[int], params: GeneratedGraphParams
) -> list[RawGeneratedGraph]:
    """One raw generated graph per distinct root, in the order given (SFP and HITS share them)."""
    return [_generate(graph, root, params) for root in _distinct(roots)]


def _distinct(roots: Iterable[int]) -> list[int]:
    return list(dict.fromkeys(int(r) for r in roots))


# -- SFP --------------------------------------------------------------------------------


def sfp(graph: LinkGraph, roots: Sequence[int], params: SFPParams | None = None) -> SFPResult:
    """Authoritative pages, site grouping and communities of ``roots`` (paper 004 §3, §4).

    ``roots`` are node numbers (a search engine's result pages); duplicates count once.
    """
    params = params or SFPParams()
    distinct = _distinct(roots)
    if not distinct:
        return SFPResult((), reason=AuthorityReason.NO_ROOTS)
    graphs = raw_generated_graphs(graph, distinct, params.generated)
    n = len(graph)
    vertex_sets = [np.asarray(g.vertices, dtype=np.int64) for g in graphs]
    edge_sets = [edge_keys(g, n) for g in graphs]

    vertex_ids, vertex_support = np.unique(np.concatenate(vertex_sets), return_counts=True)
    frequent = vertex_support >= params.min_freq
    authorities = sorted(
        (Authority(int(v), int(s)) for v, s in zip(vertex_ids[frequent], vertex_support[frequent])),
        key=lambda a: (-a.support, graph.name(a.node)),
    )
    if not authorities:
        return SFPResult(tuple(distinct), reason=AuthorityReason.NOTHING_FREQUENT)
    communities, complete = _communities(graph, edge_sets, n, params.min_freq, params.max_patterns)
    return SFPResult(
        tuple(distinct),
        tuple(authorities),
        _site_groups(graph, authorities),
        communities,
        complete,
    )


def edge_keys(g: RawGeneratedGraph, n: int) -> Int64Array:
    """A generated graph's edges as distinct int64 keys ``source * n + target``."""
    return np.asarray(g.sources, dtype=np.int64) * n + np.asarray(g.targets, dtype=np.int64)


def _host_name(graph: LinkGraph, node: int) -> str:
    """Zhou et al. group by host name (www.w3.org and validator.w3.org apart, Figure 2(e)),
    not by the graph's host rule (site identity would merge those two)."""
    name = graph.name(node)
    if graph.key_kind is KeyKind.ID:
        return name
    return urlsplit(name).hostname or name


def _site_groups(graph: LinkGraph, authorities: list[Authority]) -> tuple[SiteGroup, ...]:
    """Authorities grouped by host; ``authorities`` are already best first (Figure 2(e))."""
    grouped: dict[str, list[Authority]] = {}
    for authority in authorities:
        grouped.setdefault(_host_name(graph, authority.node), []).append(authority)
    groups = [
        SiteGroup(host, members[0].node, members[0].support, tuple(a.node for a in members))
        for host, members in grouped.items()
    ]
    # dicts keep insertion order and authorities arrive best first: already ranked
    return tuple(groups)


def _communities(
    graph: LinkGraph, edge_sets: list[Int64Array], n: int, min_freq: int, max_patterns: int
) -> tuple[tuple[Community, ...], bool]:
    """Maximal weakly connected frequent edge sets (see the module docstring)."""
    if not edge_sets:
        return (), True
    all_keys, support = np.unique(np.concatenate(edge_sets), return_counts=True)
    keys = all_keys[support >= min_freq]
    if not len(keys):
        return (), True
    # graph set of each frequent edge, as a bit mask over the generated graphs
    masks = [0] * len(keys)
    for bit, edges in enumerate(edge_sets):
        for index in np.flatnonzero(np.isin(keys, edges, assume_unique=True)).tolist():
            masks[index] |= 1 << bit
    sources, targets = np.divmod(keys, n)
    ends = list(zip(sources.tolist(), targets.tolist()))
    touching: dict[int, list[int]] = {}  # vertex -> frequent edges at it, either direction
    for index, (source, target) in enumerate(ends):
        touching.setdefault(source, []).append(index)
        touching.setdefault(target, []).append(index)

    def closure(pattern: frozenset[int], mask: int) -> tuple[frozenset[int], set[int]]:
        """The pattern grown by adjacent edges present in every graph of ``mask`` (they keep
        its support), and the adjacent edges left over: the candidate extensions."""
        grown = set(pattern)
        vertices = {v for e in pattern for v in ends[e]}
        touched: set[int] = set()
        fresh = vertices
        while fresh:
            for vertex in fresh:
                touched.update(touching[vertex])
            added = {e for e in touched - grown if masks[e] & mask == mask}
            grown |= added
            fresh = {v for e in added for v in ends[e]} - vertices
            vertices |= fresh
        return frozenset(grown), touched - grown

    seen: set[frozenset[int]] = set()
    closed_seeds: set[tuple[int, int]] = set()  # (edge, mask) of every closed pattern visited
    maximal: dict[frozenset[int], int] = {}
    complete = True
    stack: list[tuple[frozenset[int], int]] = []
    for index in range(len(keys)):
        if (index, masks[index]) in closed_seeds:
            continue  # its closure is a pattern already visited
        stack.append((frozenset((index,)), masks[index]))
        while stack:
            pattern, mask = stack.pop()
            pattern, extensions = closure(pattern, mask)
            if pattern in seen:
                continue
            if len(seen) >= max_patterns:
                complete = False
                stack.clear()
                break
            seen.add(pattern)
            closed_seeds.update((e, mask) for e in pattern)
            extended = False
            for edge in sorted(extensions, reverse=True):
                joint = mask & masks[edge]
                if joint.bit_count() >= min_freq:
                    extended = True
                    stack.append((pattern | {edge}, joint))
            if not extended:
                maximal[pattern] = mask.bit_count()
        if not complete:
            log.info("SFP community search stopped after %s patterns", max_patterns)
            break
    # a pattern is recorded only when no one-edge extension is frequent, so every recorded
    # pattern is maximal even when the search stopped early (some may then be missing)
    communities = []
    for pattern, count in maximal.items():
        pattern_edges = sorted(ends[e] for e in pattern)
        vertices = sorted({v for edge in pattern_edges for v in edge})
        communities.append(Community(tuple(vertices), tuple(pattern_edges), count))
    communities.sort(key=lambda c: (-c.support, -c.rank, sorted(graph.name(v) for v in c.vertices)))
    return tuple(communities), complete
