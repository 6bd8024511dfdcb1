"""Hou & Zhang's **Extended Co-citation** (survey 002, §2.1 and §2.1.1), answered at query time.

Hou & Zhang (2003) extend Dean & Henzinger's co-citation with the *children* of the query
page u.  The **page source** (§2.1, Fig. 1; :func:`page_source`) is

1. up to B parents of u, merged into groups ``P_u = {P_1 .. P_n}`` ("merge the intrinsic or
   near duplicate parent pages", step 2), and for each group the set ``S_i`` of up to BF
   children of its parents "that surround the link from p to u"; ``BS = ∪ S_i``;
2. the first F children of u, merged into groups ``C_u = {C_1 .. C_q}`` (step 4), and for
   each group the set ``A_i`` of up to FB parents "with highest in-degree" of each child;
   ``FS = ∪ A_i``.

The **back co-citation degree** ``b(p, u)`` is the number of parent groups whose ``S_i``
holds p (p and u are cited together by that parent); the **forward co-citation degree**
``f(p, u)`` is the number of child groups whose ``A_i`` holds p (p and u cite that child
together: bibliographic coupling).  Step 5: the relevant pages are

    RP = {p ∈ BS : b(p, u) ≥ δ}  ∪  {p ∈ FS : f(p, u) ≥ δ}.

Readings chosen where the survey is vague (it prints no parameter values at all):

* **B, BF, F, FB** default to Dean & Henzinger's vicinity-graph values (slides 001, slide 8:
  2000 parents, 8 children per parent; F and FB shared with Companion, whose module says where they come from), since Hou &
  Zhang's steps 1-4 are D&H's construction word for word.  **δ = 2**: a page cited together
  with u by one parent only is no evidence (D&H's co-citation also needs degree ≥ 2).
* "Up to B **arbitrary** parents" (step 1): the first B eligible parents in ascending node
  order — deterministic.  "The **first** F children" (step 3): u's first F distinct
  out-link targets in page order, u itself excluded.
* **Surround** (step 2): the window of Dean & Henzinger (slide 9, "4 above and 4 below"):
  BF // 2 links before the *first* link from p to u and BF − BF // 2 after it, clipped at
  the page's ends; a parent with at most BF + 1 out-links gives all its children
  (slide 11).  A page repeated in one window counts once.
* **Intrinsic** pages are pages on the same host (``graph.host``; id graphs: every node is
  its own host, so nothing is intrinsic).  Parents and children on u's own host are left
  out of ``P_u`` / ``C_u`` (their links to or from u are intrinsic links), and pages on u's
  host never enter ``S_i`` or ``A_i`` (the survey states it for ``A_i``; we apply it to both
  sides, with "the page source reduces the influence of the pages in the same website",
  §3).  Parents (children) that share a host with each other are merged into one group.
* **Near duplicates** (Dean & Henzinger, slide 12): two pages that each have more than 10
  distinct out-links and have at least 95 % of them in common — |L(a) ∩ L(b)| ≥
  0.95 · max(|L(a)|, |L(b)|) — are merged (transitively).  Near duplicates of u never enter
  the page source.  Merging is switchable (``merge_near_duplicates``).
* **FB parents with highest in-degree** (step 4): ties by ascending node number; u, pages on
  u's host and near duplicates of u are removed *before* choosing, so they take no slot.
* **Ranking**: the survey's RP is a set; answers are ranked by the total co-citation degree
  ``b + f`` (best first, ties by page name), at most ``max_results`` of them (the survey's
  §1.2 judges the "top 10" pages).  A page selected through one side still adds the degree
  of the other side to its score.

Empty answers: ``NO_PARENTS`` when nothing links to u and u has no eligible child either;
otherwise ``EMPTY_NEIGHBOURHOOD`` (a page source was built, or its parents and children
were all intrinsic, but no page reached δ).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from relatedpages.baselines import Answer, NoAnswer, Scored
from relatedpages.baselines.companion import (
    COPARENTS_PER_CHILD_DEFAULT,
    MAX_CHILDREN_DEFAULT,
    MAX_PARENTS_DEFAULT,
    SIBLINGS_PER_PARENT_DEFAULT,
)
from relatedpages.store.linkgraph import LinkGraph

IntArray = npt.NDArray[np.int32]

# The vicinity parameters have one home, Companion's (Dean & Henzinger): Hou & Zhang build
# their page source the same way.  B = 2000 and BF = 8 are on the slides (001, slides 8-9);
# F and FB are not in our texts (see relatedpages.baselines.companion).
PARENTS_DEFAULT = MAX_PARENTS_DEFAULT
SIBLINGS_DEFAULT = SIBLINGS_PER_PARENT_DEFAULT
CHILDREN_DEFAULT = MAX_CHILDREN_DEFAULT
CO_PARENTS_DEFAULT = COPARENTS_PER_CHILD_DEFAULT
#: δ: selection threshold on the back or forward co-citation degree (survey §2.1.1 step 5).
DELTA_DEFAULT = 2
#: Answers returned, best first (the survey's §1.2 "top 10").
MAX_RESULTS_DEFAULT = 10
#: Near duplicates: more than this many distinct links each (Dean & Henzinger, slide 12) ...
NEAR_DUPLICATE_MIN_LINKS = 10
#: ... and at least this share of them in common.
NEAR_DUPLICATE_OVERLAP = 0.95


def check_int(name: str, value: object, minimum: int) -> None:
    """Raise ValueError unless ``value`` is an int (not a bool) ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


def check_max_results(value: object) -> None:
    if value is not None:
        check_int("max_results", value, 1)


@dataclass(frozen=True)
class PageSourceParams:
    """Hou & Zhang's page-source sizes (survey §2.1): B, BF, F, FB and the merge switch."""

    parents: int = PARENTS_DEFAULT
    siblings: int = SIBLINGS_DEFAULT
    children: int = CHILDREN_DEFAULT
    co_parents: int = CO_PARENTS_DEFAULT
    merge_near_duplicates: bool = True

    def __post_init__(self) -> None:
        check_int("parents", self.parents, 0)
        check_int("siblings", self.siblings, 0)
        check_int("children", self.children, 0)
        check_int("co_parents", self.co_parents, 0)
        if not isinstance(self.merge_near_duplicates, bool):
            raise ValueError("merge_near_duplicates must be a bool")


@dataclass(frozen=True)
class ExtendedCocitationParams(PageSourceParams):
    """Page source (B, BF, F, FB), selection threshold δ and the answer length."""

    delta: int = DELTA_DEFAULT
    max_results: int | None = MAX_RESULTS_DEFAULT

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("delta", self.delta, 1)
        check_max_results(self.max_results)


@dataclass(frozen=True)
class PageSource:
    """The page source of u (survey Fig. 1).

    ``parent_groups[i]`` are the merged parents ``P_i`` and ``back_sets[i]`` their ``S_i``;
    ``child_groups[j]`` the merged children ``C_j`` and ``forward_sets[j]`` their ``A_j``
    (all arrays of distinct node numbers, ascending).  Groups with an empty set are kept:
    they are still columns of LLI's linkage matrices.
    """

    node: int
    parent_groups: tuple[IntArray, ...]
    back_sets: tuple[IntArray, ...]
    child_groups: tuple[IntArray, ...]
    forward_sets: tuple[IntArray, ...]

    @property
    def empty(self) -> bool:
        return not any(len(s) for s in self.back_sets) and not any(len(s) for s in self.forward_sets)


def distinct_links(graph: LinkGraph, node: int) -> IntArray:
    """The distinct out-link targets of ``node``, ascending."""
    return np.unique(graph.children(node))


def is_near_duplicate(a: IntArray, b: IntArray) -> bool:
    """Dean & Henzinger's rule on two distinct, sorted link sets (see the module docstring).

    >>> import numpy as np
    >>> links = np.arange(20, dtype=np.int32)
    >>> is_near_duplicate(links, links[:19]), is_near_duplicate(links, links[:18])
    (True, False)
    """
    if len(a) <= NEAR_DUPLICATE_MIN_LINKS or len(b) <= NEAR_DUPLICATE_MIN_LINKS:
        return False
    need = NEAR_DUPLICATE_OVERLAP * max(len(a), len(b))
    if min(len(a), len(b)) < need:
        return False
    common = len(np.intersect1d(a, b, assume_unique=True))
    return common >= need


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri != rj:
            self.parent[max(ri, rj)] = min(ri, rj)


def merge_groups(graph: LinkGraph, nodes: IntArray, *, near_duplicates: bool = True) -> list[IntArray]:
    """Group ``nodes`` (distinct) that are intrinsic (same host) or near duplicates.

    Groups are returned in the order of their smallest member's position in ``nodes``; each
    group's members ascending.  Near-duplicate candidates come from a prefix filter (each
    link set sorted rarest target first; two sets with ≥ 95 % overlap share an element of
    their first ``|L| − ⌈0.95 |L|⌉ + 1`` elements), then are verified exactly.
    """
    count = len(nodes)
    uf = _UnionFind(count)
    by_host: dict[int, int] = {}
    for i, host in enumerate(graph.hosts[nodes].tolist()):
        first = by_host.setdefault(host, i)
        if first != i:
            uf.union(first, i)
    if near_duplicates and count > 1:
        _merge_near_duplicates(graph, nodes, uf)
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(uf.find(i), []).append(int(nodes[i]))
    return [np.array(sorted(members), dtype=np.int32) for _, members in sorted(groups.items())]


def _merge_near_duplicates(graph: LinkGraph, nodes: IntArray, uf: _UnionFind) -> None:
    degrees = (graph.out_offsets[nodes + 1] - graph.out_offsets[nodes])
    candidates = np.flatnonzero(degrees > NEAR_DUPLICATE_MIN_LINKS)
    if len(candidates) < 2:
        return
    in_degree = graph.in_offsets[1:] - graph.in_offsets[:-1]
    links: dict[int, IntArray] = {}
    owners: dict[int, list[int]] = {}
    for i in candidates.tolist():
        distinct = distinct_links(graph, int(nodes[i]))
        size = len(distinct)
        if size <= NEAR_DUPLICATE_MIN_LINKS:
            continue
        links[i] = distinct
        rare_first = distinct[np.lexsort((distinct, in_degree[distinct]))]
        prefix = size - math.ceil(NEAR_DUPLICATE_OVERLAP * size) + 1
        for element in rare_first[:prefix].tolist():
            owners.setdefault(element, []).append(i)
    checked: set[tuple[int, int]] = set()
    for members in owners.values():
        if len(members) < 2:
            continue
        # Length filter: only sets within 95 % of each other's size can be near duplicates.
        members.sort(key=lambda i: len(links[i]))
        for x in range(1, len(members)):
            b = members[x]
            floor = NEAR_DUPLICATE_OVERLAP * len(links[b])
            for y in range(x - 1, -1, -1):
                a = members[y]
                if len(links[a]) < floor:
                    break
                if (a, b) in checked or uf.find(a) == uf.find(b):
                    continue
                checked.add((a, b))
                if is_near_duplicate(links[a], links[b]):
                    uf.union(a, b)


def _eligible(graph: LinkGraph, node: int, pages: IntArray, u_links: IntArray | None) -> IntArray:
    """``pages`` without u, pages on u's host and near duplicates of u (order kept)."""
    keep = (pages != node) & (graph.hosts[pages] != graph.hosts[node])
    pages = pages[keep]
    if u_links is None or not len(pages):
        return pages
    # Size filter first: a near duplicate of u has at least 0.95·|L(u)| out-links.
    degrees = graph.out_offsets[pages + 1] - graph.out_offsets[pages]
    floor = max(NEAR_DUPLICATE_MIN_LINKS + 1, NEAR_DUPLICATE_OVERLAP * len(u_links))
    suspects = np.flatnonzero(degrees >= floor)
    if not len(suspects):
        return pages
    drop = [i for i in suspects.tolist() if is_near_duplicate(u_links, distinct_links(graph, int(pages[i])))]
    if not drop:
        return pages
    return np.delete(pages, drop)


def _windows(graph: LinkGraph, node: int, parents: IntArray, siblings: int) -> tuple[IntArray, IntArray]:
    """(parent index, sibling) pairs: BF children surrounding each parent's first link to u."""
    starts = graph.out_offsets[parents]
    ends = graph.out_offsets[parents + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0 or siblings == 0:
        empty = np.empty(0, dtype=np.int32)
        return empty, empty
    owner = np.repeat(np.arange(len(parents)), lengths)
    edge = np.arange(total) + np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    hits = np.flatnonzero(graph.out_targets[edge] == node)
    hit_owner, first = np.unique(owner[hits], return_index=True)
    position = np.zeros(len(parents), dtype=np.int64)
    position[hit_owner] = edge[hits[first]]
    before = siblings // 2
    after = siblings - before
    lo = np.maximum(starts, position - before)
    hi = np.minimum(ends, position + 1 + after)
    small = lengths <= siblings + 1  # slide 11: fewer children than the window -> all of them
    lo = np.where(small, starts, lo)
    hi = np.where(small, ends, hi)
    in_window = (edge >= lo[owner]) & (edge < hi[owner])
    return owner[in_window].astype(np.int32), graph.out_targets[edge[in_window]]


def _grouped_sets(
    group_of: npt.NDArray[np.int64], members: IntArray, pages: IntArray, groups: int
) -> tuple[IntArray, ...]:
    """Distinct pages per group from (member index, page) pairs."""
    keys = np.unique(group_of[members].astype(np.int64) * (1 << 32) + pages.astype(np.int64))
    group_ids, nodes = np.divmod(keys, 1 << 32)
    bounds = np.searchsorted(group_ids, np.arange(groups + 1))
    return tuple(nodes[bounds[g]:bounds[g + 1]].astype(np.int32) for g in range(groups))


def _group_index(groups: list[IntArray], members: IntArray) -> npt.NDArray[np.int64]:
    """For each of ``members`` (in order), the number of the group holding it."""
    lookup = {int(m): g for g, group in enumerate(groups) for m in group.tolist()}
    return np.array([lookup[int(m)] for m in members.tolist()], dtype=np.int64)


def page_source(graph: LinkGraph, node: int, params: PageSourceParams = PageSourceParams()) -> PageSource:
    """Hou & Zhang's page source of ``node`` (survey §2.1.1 steps 1-4; see the module docstring)."""
    u_links = distinct_links(graph, node) if params.merge_near_duplicates else None
    if u_links is not None and len(u_links) <= NEAR_DUPLICATE_MIN_LINKS:
        u_links = None  # u cannot have near duplicates
    host_u = graph.hosts[node]

    # Steps 1-2: parents, merged; their windows.
    parents = graph.parents(node)
    parents = parents[(parents != node) & (graph.hosts[parents] != host_u)][:params.parents]
    parent_groups = merge_groups(graph, parents, near_duplicates=params.merge_near_duplicates)
    owner, siblings = _windows(graph, node, parents, params.siblings)
    keep = np.isin(siblings, _eligible(graph, node, np.unique(siblings), u_links))
    back_sets = _grouped_sets(
        _group_index(parent_groups, parents), owner[keep], siblings[keep], len(parent_groups)
    )

    # Steps 3-4: the first F children, merged; their FB parents of highest in-degree.
    children: list[int] = []
    seen: set[int] = set()
    for child in graph.children(node).tolist():
        if len(children) >= params.children:
            break
        if child != node and child not in seen:
            seen.add(child)
            children.append(child)
    child_array = np.array(children, dtype=np.int32)
    child_array = child_array[graph.hosts[child_array] != host_u]
    child_groups = merge_groups(graph, child_array, near_duplicates=params.merge_near_duplicates)
    in_degree = graph.in_offsets[1:] - graph.in_offsets[:-1]
    forward: list[set[int]] = [set() for _ in child_groups]
    group_of_child = _group_index(child_groups, child_array)
    for child, group in zip(child_array.tolist(), group_of_child.tolist()):
        co_parents = graph.parents(child)
        co_parents = co_parents[(co_parents != node) & (graph.hosts[co_parents] != host_u)]
        order = np.lexsort((co_parents, -in_degree[co_parents]))
        chosen: list[int] = []
        # Walk in in-degree order; near duplicates of u are skipped without taking a slot.
        step = max(params.co_parents, 1)
        for start in range(0, len(order), step):
            if len(chosen) >= params.co_parents:
                break
            batch = _eligible(graph, node, co_parents[order[start:start + step]], u_links)
            chosen.extend(batch.tolist()[:params.co_parents - len(chosen)])
        forward[group].update(chosen)
    forward_sets = tuple(np.array(sorted(s), dtype=np.int32) for s in forward)
    return PageSource(node, tuple(parent_groups), back_sets, tuple(child_groups), forward_sets)


def degrees(sets: tuple[IntArray, ...]) -> dict[int, int]:
    """Page → number of the sets holding it (the back or forward co-citation degree)."""
    if not sets:
        return {}
    pages, counts = np.unique(np.concatenate(sets), return_counts=True)
    return dict(zip(pages.tolist(), counts.tolist()))


def rank(graph: LinkGraph, scores: dict[int, float], max_results: int | None) -> tuple[Scored, ...]:
    """Best first, ties by page name; at most ``max_results``."""
    ordered = sorted(scores.items(), key=lambda item: (-item[1], graph.name(item[0])))
    if max_results is not None:
        ordered = ordered[:max_results]
    return tuple(Scored(page, score) for page, score in ordered)


def empty_reason(graph: LinkGraph, source: PageSource) -> NoAnswer:
    """Why a page source gave no answer (see the module docstring)."""
    if not source.parent_groups and not source.child_groups and graph.in_degree(source.node) == 0:
        return NoAnswer.NO_PARENTS
    return NoAnswer.EMPTY_NEIGHBOURHOOD


def extended_cocitation(
    graph: LinkGraph, node: int, params: ExtendedCocitationParams = ExtendedCocitationParams()
) -> Answer:
    """Pages with back or forward co-citation degree ≥ δ with ``node``, by ``b + f``."""
    source = page_source(graph, node, params)
    back = degrees(source.back_sets)
    forward = degrees(source.forward_sets)
    selected = {p for p, b in back.items() if b >= params.delta}
    selected.update(p for p, f in forward.items() if f >= params.delta)
    if not selected:
        return Answer(reason=empty_reason(graph, source))
    scores = {p: float(back.get(p, 0) + forward.get(p, 0)) for p in selected}
    return Answer(rank(graph, scores, params.max_results))
