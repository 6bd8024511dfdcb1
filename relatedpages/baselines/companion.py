"""Dean & Henzinger's **Companion** related-pages algorithm, at query time on a :class:`LinkGraph`.

Dean & Henzinger, "Finding related pages in the World Wide Web" (WWW8, 1999; slides in
``papers/001_…txt``).  Given a query page u:

1. **Vicinity graph** (§2.1.1; slides 6–11).  Its nodes are u;
   *go back*: up to B parents of u and, for each parent, up to BF of its children other than u
   (the *siblings*); *go forward*: up to F children of u and, for each child, up to FB of its
   parents other than u (the *co-parents*).  Its edges are all links between those nodes.
2. **Near-duplicate merge** (§2.1.2; slide 12): two nodes that each have more than 10 links and
   have at least 95 % of their links in common are replaced by one node with the union of
   their links.
3. **Edge weights** (§2.1.3, Bharat & Henzinger): an edge between two nodes on the same host
   has weight 0 (dropped); if k edges go from pages on one host to a single page q, each has
   *authority weight* 1/k; if l edges go from a single page p to pages on one host, each has
   *hub weight* 1/l.
4. **Hub and authority scores** (§2.1.4; slide 13): H = A = 1, then repeatedly
   A[n] = Σ_{(n', n)} H[n'] · aw(n', n);  H[n] = Σ_{(n, n')} A[n'] · hw(n, n');  normalise both;
   return the top 10 authorities.

Readings chosen where the sources are vague (cite these when comparing numbers):

* **Parameters**: B = 2000 and BF = 8 are on the slides (8: "number of parents of u 2000",
  "number of children of every parent 8") and in the paper's §2.2 ("we chose B to be 2000 and
  BF to be 8 (the same parameter values we used for … Companion)").  F and FB are only named
  (slide 11: "up to C children of u", "up to Cp parents of c"); we use F = 50 and FB = 8, our
  recollection of the full paper's §2.1.1, which is not among the sources in ``papers/`` — treat
  them as parameters to vary, not as quoted values.  Go forward, also from §2.1.1 as recalled:
  "the children pointed to by the first F links of u" and, for a child with more than FB
  parents, "the FB parents … with highest indegree".
* **Go back**: "if u has more than B parents, add B random parents not on STOP": the sample is
  drawn with ``numpy.random.default_rng((sample_seed, u))`` — deterministic per query and
  independent of the order queries are asked in — and kept in ascending node order.  A
  self-loop u → u does not make u its own parent.
* **Sibling window** ("BF/2 children above and BF/2 below the link to u", slides 9 and 11): the
  window is taken over the parent's out-links *in page order after removing the links to u and
  to stoplisted pages* (removed links take no window slot, as in
  :mod:`relatedpages.scoring.cocitation`), around the parent's **first** link to u: up to ⌊BF/2⌋ links
  before it and up to ⌈BF/2⌉ after it, not refilled when u is near an end of the page.  A
  parent with at most BF such links contributes all of them.  A page linking twice to the same
  sibling takes two slots (link positions, not distinct pages).
* **Go forward**: the first F *distinct* children of u in page order (u itself and stoplisted
  pages skipped); for each child with more than FB parents (other than u, not stoplisted), the
  FB parents with the highest in-degree in the whole graph, ties by lower node number.
* **Stoplist** (§2.1.1; slide 10): the pages on STOP never enter the vicinity graph, so they
  are never returned; when u itself is on STOP the stoplist is disabled for that query (as in
  the paper).  ``conf/stoplist.txt`` (:mod:`relatedpages.baselines.stoplist` reads it; see
  its :class:`Stoplist` for the line format) holds D&H's two published examples
  (www.yahoo.com, www.microsoft.com/ie/download.html) and popular 1999 portal and
  search-engine home pages in their spirit — the paper's full list of 21 URLs was not
  published.  ``CompanionParams(stoplist=Stoplist())`` disables it.
* **Links for the near-duplicate test**: a node's out-links in the whole graph (the page's
  links, as distinct targets — mirrors are recognised by what the pages link to, wherever that
  is), not only those inside the vicinity graph.  "At least 95 % in common" = each node has at
  least 95 % of its links in the other: |A ∩ B| ≥ 0.95 · max(|A|, |B|).  The relation is closed
  transitively (a ~ b and b ~ c merge all three).  The merged node takes the union of its
  members' vicinity edges, in and out; it is shown as u when u is in the group (and u's group
  is never returned), otherwise as the member with the most in-links in the whole graph (ties
  by name).  Its host, for the weights, is that member's host.
* **Edges**: distinct (source, target) pairs — a page linking twice to a page is one edge;
  self-loops are dropped (also those created by a merge).
* **Iteration**: until neither vector moves by more than ``hits_tolerance`` (max-norm, after
  L2 normalisation) or ``hits_max_iterations`` rounds; A is updated from the previous H, then
  H from the new A (slide 13's order).
* **Answer**: the ``max_results`` (10, §2.1) nodes with the highest positive authority score,
  excluding u and its merged duplicates; scores are the L2-normalised authority values rounded
  to 12 decimals (so that equal scores tie exactly), ties by node name.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from relatedpages.baselines import Answer, NoAnswer, Scored
from relatedpages.baselines.stoplist import (
    NO_STOPS,
    Stoplist,
    StopSet,
    default_stoplist,
    query_stops,
)
from relatedpages.store.linkgraph import IntArray, LinkGraph

FloatArray = npt.NDArray[np.float64]
LabelArray = npt.NDArray[np.int64]

#: B — parents of u in the vicinity graph (slide 8; §2.2).
MAX_PARENTS_DEFAULT = 2000
#: BF — children of each parent around the link to u (slides 8–9; §2.2).
SIBLINGS_PER_PARENT_DEFAULT = 8
#: F — children of u (full paper §2.1.1 as recalled, not verifiable here; see the docstring).
MAX_CHILDREN_DEFAULT = 50
#: FB — parents of each child of u (likewise).
COPARENTS_PER_CHILD_DEFAULT = 8
#: Near-duplicates "each have more than 10 links" (slide 12).
DUPLICATE_MIN_LINKS_DEFAULT = 10
#: … "and at least 95 % of their links in common" (slide 12).
DUPLICATE_OVERLAP_DEFAULT = 0.95
#: Convergence of the hub/authority vectors (slide 13: "while … not converged").
HITS_TOLERANCE_DEFAULT = 1e-8
HITS_MAX_ITERATIONS_DEFAULT = 200
#: "Our implementation returns the top 10" (§2.1; slide 18: top 10 answers rated).
MAX_RESULTS_DEFAULT = 10
SAMPLE_SEED_DEFAULT = 0

_SCORE_DECIMALS = 12


# ---------------------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True)
class CompanionParams:
    """Companion's parameters; defaults are Dean & Henzinger's (see the module docstring)."""

    max_parents: int = MAX_PARENTS_DEFAULT  # B
    siblings_per_parent: int = SIBLINGS_PER_PARENT_DEFAULT  # BF
    max_children: int = MAX_CHILDREN_DEFAULT  # F
    coparents_per_child: int = COPARENTS_PER_CHILD_DEFAULT  # FB
    duplicate_min_links: int = DUPLICATE_MIN_LINKS_DEFAULT  # "more than 10 links"
    duplicate_overlap: float = DUPLICATE_OVERLAP_DEFAULT  # "at least 95 % in common"
    hits_tolerance: float = HITS_TOLERANCE_DEFAULT
    hits_max_iterations: int = HITS_MAX_ITERATIONS_DEFAULT
    max_results: int = MAX_RESULTS_DEFAULT
    sample_seed: int = SAMPLE_SEED_DEFAULT
    stoplist: Stoplist = field(default_factory=default_stoplist)

    def __post_init__(self) -> None:
        for name in ("max_parents", "siblings_per_parent", "max_children", "coparents_per_child",
                     "duplicate_min_links", "sample_seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if not 0.0 < self.duplicate_overlap <= 1.0:
            raise ValueError("duplicate_overlap must be in (0, 1]")
        if not self.hits_tolerance > 0.0:
            raise ValueError("hits_tolerance must be > 0")
        if self.hits_max_iterations < 1:
            raise ValueError("hits_max_iterations must be >= 1")
        if self.max_results < 1:
            raise ValueError("max_results must be >= 1")


# ---------------------------------------------------------------------------------------
# Step 1: the vicinity graph (shared with dh_cocitation)


def gather_out_links(graph: LinkGraph, sources: IntArray) -> tuple[IntArray, IntArray]:
    """All out-links of ``sources``, concatenated: (targets, index into ``sources``)."""
    starts = graph.out_offsets[sources]
    lengths = graph.out_offsets[sources + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    segment = np.repeat(np.arange(len(sources), dtype=np.int32), lengths)
    first = np.cumsum(lengths) - lengths  # first concatenated slot of each source
    index = np.arange(total, dtype=np.int64) + np.repeat(starts - first, lengths)
    return graph.out_targets[index], segment


def sample_parents(
    graph: LinkGraph, node: int, limit: int, seed: int, stops: StopSet = NO_STOPS
) -> IntArray:
    """Up to ``limit`` parents of ``node`` not on STOP (never ``node``), ascending.

    More than ``limit`` candidates: a uniform sample drawn with
    ``numpy.random.default_rng((seed, node))`` (Dean & Henzinger: "B random parents").
    """
    parents = graph.parents(node)
    keep = parents != node
    if len(stops):
        keep &= ~stops.contains(graph, parents)
    parents = parents[keep]
    if len(parents) > limit:
        rng = np.random.default_rng((seed, node))
        parents = np.sort(parents[rng.choice(len(parents), size=limit, replace=False)])
    return parents


def sibling_windows(
    graph: LinkGraph, parents: IntArray, node: int, per_parent: int, stops: StopSet = NO_STOPS
) -> tuple[IntArray, IntArray]:
    """The siblings of ``node`` taken from each parent: (sibling, index into ``parents``).

    A parent's out-links in page order, without the links to ``node`` and to stopped pages;
    a parent with at most ``per_parent`` of them gives all, otherwise the ⌊per_parent/2⌋
    before and ⌈per_parent/2⌉ after its first link to ``node``.  Repeats are kept (one entry
    per link); parents that do not link to ``node`` give nothing.
    """
    targets, segment = gather_out_links(graph, parents)
    if len(targets) == 0 or per_parent == 0:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    is_node = targets == node
    valid = ~is_node
    if len(stops):
        valid &= ~stops.contains(graph, targets)
    count = np.cumsum(valid, dtype=np.int64)  # valid links up to and including each slot
    padded = np.concatenate([np.zeros(1, dtype=np.int64), count])
    lengths = np.bincount(segment, minlength=len(parents))
    ends = np.cumsum(lengths)
    before_segment = padded[ends - lengths]  # valid links before each parent's first slot
    valid_in_segment = padded[ends] - before_segment
    # rank of the first link to node among its parent's valid links
    node_slots = np.flatnonzero(is_node)
    node_segments, first = np.unique(segment[node_slots], return_index=True)
    node_rank = np.full(len(parents), -1, dtype=np.int64)
    node_rank[node_segments] = count[node_slots[first]] - before_segment[node_segments]
    rank = count - 1 - before_segment[segment]
    below, above = per_parent // 2, per_parent - per_parent // 2
    centre = node_rank[segment]
    in_window = (rank >= centre - below) & (rank < centre + above)
    keep = valid & (centre >= 0) & ((valid_in_segment[segment] <= per_parent) | in_window)
    return targets[keep], segment[keep]


def forward_nodes(
    graph: LinkGraph, node: int, max_children: int, per_child: int, stops: StopSet = NO_STOPS
) -> tuple[IntArray, IntArray]:
    """Go forward: (the first F distinct children of ``node``, their FB co-parents)."""
    children = graph.children(node)
    keep = children != node
    if len(stops):
        keep &= ~stops.contains(graph, children)
    children = children[keep]
    _, first = np.unique(children, return_index=True)
    children = children[np.sort(first)][:max_children]
    in_degree = np.diff(graph.in_offsets)
    coparents: list[IntArray] = []
    for child in children.tolist():
        parents = graph.parents(child)
        keep = parents != node
        if len(stops):
            keep &= ~stops.contains(graph, parents)
        parents = parents[keep]
        if len(parents) > per_child:
            # highest in-degree first, ties by lower node number (parents are ascending)
            order = np.argsort(-in_degree[parents], kind="stable")[:per_child]
            parents = parents[order]
        coparents.append(parents)
    together = np.concatenate(coparents) if coparents else np.empty(0, dtype=np.int32)
    return children.astype(np.int32), together.astype(np.int32)


@dataclass(frozen=True)
class Vicinity:
    """A vicinity graph: ``nodes`` (graph node numbers, ascending) and local edges.

    ``edge_sources``/``edge_targets`` index into ``nodes``: every distinct link between two
    vicinity nodes, self-loops dropped, sorted by (source, target).
    """

    query: int
    nodes: IntArray
    parents: IntArray
    siblings: IntArray
    children: IntArray
    coparents: IntArray
    edge_sources: IntArray
    edge_targets: IntArray

    def local(self, node: int) -> int:
        return int(np.searchsorted(self.nodes, node))


def vicinity_graph(
    graph: LinkGraph, node: int, params: CompanionParams, stops: StopSet | None = None
) -> Vicinity:
    """Step 1 (§2.1.1): u, B parents and their BF siblings, F children and their FB co-parents."""
    if stops is None:
        stops = query_stops(graph, node, params.stoplist)
    parents = sample_parents(graph, node, params.max_parents, params.sample_seed, stops)
    siblings, _ = sibling_windows(graph, parents, node, params.siblings_per_parent, stops)
    children, coparents = forward_nodes(
        graph, node, params.max_children, params.coparents_per_child, stops)
    nodes = np.unique(np.concatenate([
        np.array([node], dtype=np.int32), parents, siblings, children, coparents,
    ]).astype(np.int32))
    sources, targets = _induced_edges(graph, nodes)
    return Vicinity(node, nodes, parents, np.unique(siblings), children, np.unique(coparents),
                    sources, targets)


def _induced_edges(graph: LinkGraph, nodes: IntArray) -> tuple[IntArray, IntArray]:
    """Distinct links between ``nodes`` (ascending), as local indices sorted by (source, target)."""
    m = len(nodes)
    targets, sources = gather_out_links(graph, nodes)
    if len(targets) == 0:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    local = np.searchsorted(nodes, targets)
    local[local == m] = 0
    inside = nodes[local] == targets
    src = sources[inside].astype(np.int64)
    dst = local[inside].astype(np.int64)
    keys = np.unique(src * m + dst)
    src, dst = np.divmod(keys, m)
    loop = src == dst
    return src[~loop].astype(np.int32), dst[~loop].astype(np.int32)


# ---------------------------------------------------------------------------------------
# Step 2: near-duplicates


def page_links(graph: LinkGraph, nodes: IntArray, min_links: int) -> tuple[IntArray, IntArray]:
    """Distinct out-links (whole graph) of the ``nodes`` with more than ``min_links`` of them.

    Returns (owner, target): owner indexes ``nodes``; sorted by (owner, target).
    """
    degree = graph.out_offsets[nodes + 1] - graph.out_offsets[nodes]
    enough = np.flatnonzero(degree > min_links)  # repeats only shrink a set: a safe pre-filter
    targets, segment = gather_out_links(graph, nodes[enough])
    if len(targets) == 0:
        return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32)
    n = len(graph)
    owner, target = np.divmod(np.unique(enough[segment].astype(np.int64) * n + targets), n)
    return owner.astype(np.int32), target.astype(np.int32)


def near_duplicate_groups(
    owners: IntArray, links: IntArray, m: int, min_links: int, overlap: float
) -> LabelArray:
    """Group label per node 0..m-1: nodes with the same label are near-duplicates (§2.1.2).

    ``owners``/``links``: each node's distinct links (any ids), sorted by (owner, link).  Two
    nodes are near-duplicates when both have more than ``min_links`` links and
    |A ∩ B| ≥ overlap · max(|A|, |B|); the relation is closed transitively.  Candidates come
    from exact duplicates (a 64-bit set hash) and a prefix filter (rarest links first), then
    are checked exactly.
    """
    parent = list(range(m))  # union-find over Python ints (scalar access is the hot path)

    def find(a: int) -> int:
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    sizes = np.bincount(owners, minlength=m)
    candidates = np.flatnonzero(sizes > min_links)
    if len(candidates) < 2:
        return np.arange(m, dtype=np.int64)
    chosen = sizes[owners] > min_links
    token_ids, dst = np.unique(links[chosen], return_inverse=True)
    dst = dst.reshape(-1).astype(np.int64)
    t = len(token_ids)
    set_sizes = sizes[candidates]
    starts = np.cumsum(set_sizes) - set_sizes
    # exact duplicates: equal (size, sum of random 64-bit token codes) → same set (whp; checked)
    codes = np.random.default_rng(0x5EED).integers(1, 2**63 - 1, size=t, dtype=np.uint64)
    hashes = np.add.reduceat(codes[dst], starts)
    keys = np.stack([set_sizes.astype(np.uint64), hashes], axis=1)
    _, klass, class_count = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    klass = klass.reshape(-1)
    token_sets: dict[int, frozenset[int]] = {}

    def tokens(i: int) -> frozenset[int]:
        found = token_sets.get(i)
        if found is None:
            found = token_sets[i] = frozenset(dst[starts[i]:starts[i] + set_sizes[i]].tolist())
        return found

    def similar(i: int, j: int) -> bool:
        common = len(tokens(i) & tokens(j))
        return common >= overlap * max(int(set_sizes[i]), int(set_sizes[j])) - 1e-9

    leaders: dict[int, int] = {}
    is_lead = np.zeros(len(candidates), dtype=np.bool_)
    for i in range(len(candidates)):
        lead = leaders.setdefault(int(klass[i]), i)
        if lead != i and class_count[klass[i]] > 1 and tokens(lead) == tokens(i):
            union(int(candidates[lead]), int(candidates[i]))
        else:  # a class leader (or, against all odds, a hash collision)
            is_lead[i] = True
    lead_index = np.flatnonzero(is_lead)
    if len(lead_index) >= 2:
        # prefix filter: with links ordered rarest first, two sets with >= t common links
        # share one of their first |A| - t + 1 links, t = ceil(overlap * |A|) <= the pair's bound
        frequency = np.bincount(dst, minlength=t)
        rank_of = np.empty(t, dtype=np.int64)
        rank_of[np.lexsort((np.arange(t), frequency))] = np.arange(t)
        token_of_rank = np.argsort(rank_of)
        lead_sizes = set_sizes[lead_index]
        owner = np.repeat(np.arange(len(lead_index)), lead_sizes)
        set_of_edge = np.repeat(np.arange(len(candidates)), set_sizes)
        lead_edges = is_lead[set_of_edge]
        ordered = np.sort(owner * t + rank_of[dst[lead_edges]])
        owner, rank = np.divmod(ordered, t)
        first_slot = np.cumsum(lead_sizes) - lead_sizes
        position = np.arange(len(ordered)) - first_slot[owner]
        prefix = lead_sizes - np.ceil(overlap * lead_sizes - 1e-9).astype(np.int64) + 1
        keep = position < prefix[owner]
        token, owner = token_of_rank[rank[keep]], owner[keep]
        order = np.lexsort((owner, token))
        token, owner = token[order], owner[order]
        bounds = np.flatnonzero(np.diff(token)) + 1
        nodes_of = candidates[lead_index].tolist()
        for group in np.split(owner, bounds):
            if len(group) < 2:
                continue
            members = group.tolist()
            for x in range(1, len(members)):
                a = nodes_of[members[x]]
                for y in range(x):
                    b = nodes_of[members[y]]
                    # pairs already in one group need no check: the relation is closed
                    # transitively anyway (this keeps clusters of templated pages cheap)
                    if find(a) != find(b) and similar(int(lead_index[members[x]]),
                                                      int(lead_index[members[y]])):
                        union(a, b)
    labels = np.array(parent, dtype=np.int64)
    while True:  # point every node at its root
        roots = labels[labels]
        if np.array_equal(roots, labels):
            return labels
        labels = roots


# ---------------------------------------------------------------------------------------
# Steps 3 and 4: Bharat–Henzinger weights and weighted HITS


def bharat_henzinger_weights(
    sources: IntArray, targets: IntArray, hosts: IntArray
) -> tuple[FloatArray, FloatArray]:
    """(authority weight, hub weight) per edge; ``hosts`` per local node (§2.1.3).

    Authority weight 1/k: k edges go from the source's host to the target.  Hub weight
    1/l: l edges go from the source to pages on the target's host.  Same-host edges must
    have been removed before.
    """
    if len(sources) == 0:
        return np.empty(0), np.empty(0)
    m = int(max(int(sources.max()), int(targets.max())) + 1)
    host_span = int(hosts.max()) + 1
    to_target = hosts[sources].astype(np.int64) * m + targets
    _, inverse, k = np.unique(to_target, return_inverse=True, return_counts=True)
    from_source = sources.astype(np.int64) * host_span + hosts[targets]
    _, inverse_l, l_count = np.unique(from_source, return_inverse=True, return_counts=True)
    return 1.0 / k[inverse.reshape(-1)], 1.0 / l_count[inverse_l.reshape(-1)]


def weighted_hits(
    sources: IntArray,
    targets: IntArray,
    authority_weights: FloatArray,
    hub_weights: FloatArray,
    m: int,
    tolerance: float = HITS_TOLERANCE_DEFAULT,
    max_iterations: int = HITS_MAX_ITERATIONS_DEFAULT,
) -> tuple[FloatArray, FloatArray, int]:
    """(authority, hub, iterations run): slide 13's iteration with L2 normalisation."""
    authority: FloatArray = np.ones(m)
    hub: FloatArray = np.ones(m)
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        new_authority: FloatArray = _unit(np.bincount(
            targets, weights=hub[sources] * authority_weights, minlength=m).astype(np.float64))
        new_hub: FloatArray = _unit(np.bincount(
            sources, weights=new_authority[targets] * hub_weights, minlength=m).astype(np.float64))
        moved = max(float(np.abs(new_authority - authority).max(initial=0.0)),
                    float(np.abs(new_hub - hub).max(initial=0.0)))
        authority, hub = new_authority, new_hub
        if moved <= tolerance:
            break
    return authority, hub, iterations


def _unit(vector: FloatArray) -> FloatArray:
    norm = math.sqrt(float(np.dot(vector, vector)))
    return vector / norm if norm > 0.0 else vector


# ---------------------------------------------------------------------------------------
# The algorithm


@dataclass(frozen=True)
class CompanionRun:
    """Everything a Companion query computed (for tests, debugging and the evaluation)."""

    answer: Answer
    vicinity: Vicinity
    representative: LabelArray  # per local node: the local node it was merged into
    authority: FloatArray  # per local node (0 for merged-away nodes)
    hub: FloatArray
    iterations: int


def companion(graph: LinkGraph, node: int, params: CompanionParams | None = None) -> Answer:
    """Pages related to ``node`` by Dean & Henzinger's Companion (best first)."""
    return companion_run(graph, node, params).answer


def companion_run(graph: LinkGraph, node: int, params: CompanionParams | None = None) -> CompanionRun:
    """:func:`companion` with its intermediate results."""
    if params is None:
        params = CompanionParams()
    stops = query_stops(graph, node, params.stoplist)
    vicinity = vicinity_graph(graph, node, params, stops)
    nodes, m = vicinity.nodes, len(vicinity.nodes)
    query = vicinity.local(node)
    owners, links = page_links(graph, nodes, params.duplicate_min_links)
    labels = near_duplicate_groups(owners, links, m, params.duplicate_min_links,
                                   params.duplicate_overlap)
    representative = _representatives(graph, nodes, labels, query)
    merged_src = representative[vicinity.edge_sources]
    merged_dst = representative[vicinity.edge_targets]
    hosts = graph.hosts[nodes]
    # merged self-loops go; same-host edges have weight 0 (§2.1.3); a merge can repeat edges
    keep = (merged_src != merged_dst) & (hosts[merged_src] != hosts[merged_dst])
    src_key, dst_key = np.divmod(np.unique(merged_src[keep] * m + merged_dst[keep]), m)
    src, dst = src_key.astype(np.int32), dst_key.astype(np.int32)
    authority_w, hub_w = bharat_henzinger_weights(src, dst, hosts)
    authority, hub, iterations = weighted_hits(
        src, dst, authority_w, hub_w, m, params.hits_tolerance, params.hits_max_iterations)
    authority = np.round(authority, _SCORE_DECIMALS)
    eligible = authority > 0.0
    eligible[representative[query]] = False
    eligible &= representative == np.arange(m)
    found = np.flatnonzero(eligible)
    names = graph.names
    ranked = sorted(found.tolist(), key=lambda i: (-float(authority[i]), names[int(nodes[i])]))
    related = tuple(Scored(int(nodes[i]), float(authority[i])) for i in ranked[:params.max_results])
    reason = None
    if not related:
        lonely = len(vicinity.parents) == 0 and len(vicinity.children) == 0
        reason = NoAnswer.NO_PARENTS if lonely else NoAnswer.EMPTY_NEIGHBOURHOOD
    return CompanionRun(Answer(related, reason), vicinity, representative, authority, hub,
                        iterations)


def _representatives(graph: LinkGraph, nodes: IntArray, labels: LabelArray, query: int) -> LabelArray:
    """Per local node, the local node shown for its near-duplicate group (see the docstring)."""
    m = len(nodes)
    representative = np.arange(m, dtype=np.int64)
    counts = np.bincount(labels, minlength=m)
    if counts.max(initial=0) <= 1:
        return representative
    in_degree = graph.in_offsets[nodes + 1] - graph.in_offsets[nodes]
    for label in np.flatnonzero(counts > 1).tolist():
        members = np.flatnonzero(labels == label).tolist()
        if query in members:
            chosen = query
        else:
            chosen = min(members, key=lambda i: (-int(in_degree[i]), graph.names[int(nodes[i])]))
        representative[members] = chosen
    return representative
