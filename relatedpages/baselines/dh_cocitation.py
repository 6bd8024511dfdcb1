"""Dean & Henzinger's query-time **Cocitation** algorithm on a :class:`LinkGraph`.

Dean & Henzinger, "Finding related pages in the World Wide Web" (WWW8, 1999), §2.2 (slides
14–16 of ``papers/001_…txt``): choose up to B arbitrary parents of u; from each parent p add
to a set S up to BF children of p that surround the link from p to u (the *siblings*); for
each s in S determine its *degree of co-citation* with u (the number of parents they share);
return the 10 most co-cited siblings.  "If there are not at least 15 nodes in S that are
co-cited with u at least twice, then we restart the algorithm using the node corresponding
to u's URL with one path element removed" (a.com/X/Y/Z → a.com/X/Y; "if the resulting URL is
invalid, we continue to chop elements until we are left with just a host name, or we find a
valid URL").  B = 2000, BF = 8 ("the same parameter values we used for … Companion").

This is the paper's query-time algorithm; :mod:`relatedpages.scoring.cocitation` is the batch
(MapReduce) baseline of the block co-citation paper, with every parent and no restart.

Readings chosen where the paper is vague:

* **Parents and windows** are those of Companion (:mod:`relatedpages.baselines.companion`):
  "arbitrary" parents = a uniform sample drawn with ``numpy.random.default_rng((sample_seed,
  u))`` when u has more than B (ascending node order otherwise); the BF window is ⌊BF/2⌋ links
  before and ⌈BF/2⌉ after the parent's first link to u, over its out-links without the links to
  u (and to stoplisted pages); a parent with at most BF such links gives them all.  The paper's
  Cocitation has no stoplist: ``stoplist`` defaults to empty.
* **Degree of co-citation** (``degree=CocitationDegree.COMMON_PARENTS``, the paper's
  definition, "the number of common parents"): the number of the chosen parents that link to s
  *anywhere* on the page — when u has at most B parents this is exactly |parents(u) ∩
  parents(s)|.  ``CocitationDegree.IN_WINDOW`` counts only the parents in whose BF window s
  appears (the reading of :mod:`relatedpages.scoring.cocitation`), for comparisons.
* **Restart** (URL graphs only; an id graph has no URL to chop): candidates from
  :func:`chopped_urls` — the query string first, then one path element at a time, each tried
  with and without a trailing slash, down to the host's root page; candidates that are not
  nodes of the graph are skipped ("continue to chop").  The first candidate that has enough
  siblings (≥ ``restart_min_siblings`` with degree ≥ ``restart_min_degree``; u itself counts
  among a chopped URL's siblings, though it is never returned) answers.  When
  none has enough — the paper stops at the host name — we answer with the attempt (u first,
  then the chopped URLs in order) that had the most such siblings, ties to the more specific
  URL: a bare host page with fewer co-cited siblings than u is no better answer than u's own.
* **Answer**: at most ``max_results`` (10) siblings, degree descending, ties by node name,
  score = degree; the original u is never returned (also not when a chopped URL answers),
  nor is the node that answered.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from relatedpages.baselines import Answer, NoAnswer, Scored
from relatedpages.baselines.companion import (
    MAX_PARENTS_DEFAULT,
    MAX_RESULTS_DEFAULT,
    SAMPLE_SEED_DEFAULT,
    SIBLINGS_PER_PARENT_DEFAULT,
    gather_out_links,
    sample_parents,
    sibling_windows,
)
from relatedpages.baselines.stoplist import StopSet, Stoplist, query_stops
from relatedpages.store.linkgraph import IntArray, KeyKind, LinkGraph

#: "if there are not at least 15 nodes in S …" (§2.2).
RESTART_MIN_SIBLINGS_DEFAULT = 15
#: "… that are co-cited with u at least twice" (§2.2).
RESTART_MIN_DEGREE_DEFAULT = 2


class CocitationDegree(str, Enum):
    """How the degree of co-citation of a sibling s with u is counted."""

    COMMON_PARENTS = "common-parents"  # chosen parents linking to s anywhere (the paper)
    IN_WINDOW = "in-window"  # chosen parents with s inside their BF window


@dataclass(frozen=True)
class DHCocitationParams:
    """Cocitation's parameters; defaults are Dean & Henzinger's (§2.2)."""

    max_parents: int = MAX_PARENTS_DEFAULT  # B
    siblings_per_parent: int = SIBLINGS_PER_PARENT_DEFAULT  # BF
    max_results: int = MAX_RESULTS_DEFAULT
    restart_min_siblings: int = RESTART_MIN_SIBLINGS_DEFAULT
    restart_min_degree: int = RESTART_MIN_DEGREE_DEFAULT
    chop_urls: bool = True
    degree: CocitationDegree = CocitationDegree.COMMON_PARENTS
    sample_seed: int = SAMPLE_SEED_DEFAULT
    stoplist: Stoplist = Stoplist()

    def __post_init__(self) -> None:
        for name in ("max_parents", "siblings_per_parent", "restart_min_siblings",
                     "restart_min_degree", "sample_seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.max_results < 1:
            raise ValueError("max_results must be >= 1")
        if not isinstance(self.degree, CocitationDegree):
            raise ValueError(f"degree must be a CocitationDegree: {self.degree!r}")


@dataclass(frozen=True)
class Attempt:
    """One run of the algorithm on one node: siblings with their degrees."""

    node: int
    siblings: IntArray  # distinct siblings (ascending), the query node excluded
    degrees: IntArray  # degree of co-citation per sibling
    parents: int  # parents used

    def well_cocited(self, min_degree: int) -> int:
        return int((self.degrees >= min_degree).sum())


@dataclass(frozen=True)
class DHCocitationRun:
    """An answer and how it was found: the node that answered and every attempt in order."""

    answer: Answer
    answered_by: int
    attempts: tuple[Attempt, ...]


def dh_cocitation(graph: LinkGraph, node: int, params: DHCocitationParams | None = None) -> Answer:
    """Pages related to ``node`` by Dean & Henzinger's Cocitation (best first)."""
    return dh_cocitation_run(graph, node, params).answer


def dh_cocitation_run(
    graph: LinkGraph, node: int, params: DHCocitationParams | None = None
) -> DHCocitationRun:
    """:func:`dh_cocitation` with the attempts it made (the restarts on chopped URLs)."""
    if params is None:
        params = DHCocitationParams()
    attempts = [cocitation_attempt(graph, node, params)]
    enough = attempts[0].well_cocited(params.restart_min_degree) >= params.restart_min_siblings
    if not enough and params.chop_urls and graph.key_kind is KeyKind.URL:
        seen = {node}
        for url in chopped_urls(graph.name(node)):
            shorter = graph.id_of(url)
            if shorter is None or shorter in seen:
                continue
            seen.add(shorter)
            attempt = cocitation_attempt(graph, shorter, params)
            attempts.append(attempt)
            if attempt.well_cocited(params.restart_min_degree) >= params.restart_min_siblings:
                enough = True
                break
    if enough:
        chosen = attempts[-1]
    else:  # most well co-cited siblings; max() keeps the first (most specific) of equals
        chosen = max(attempts, key=lambda a: a.well_cocited(params.restart_min_degree))
    answer = _answer(graph, chosen, node, params.max_results)
    return DHCocitationRun(answer, chosen.node, tuple(attempts))


def cocitation_attempt(graph: LinkGraph, node: int, params: DHCocitationParams) -> Attempt:
    """Siblings of ``node`` and their degrees of co-citation (no restart)."""
    stops: StopSet = query_stops(graph, node, params.stoplist)
    parents = sample_parents(graph, node, params.max_parents, params.sample_seed, stops)
    siblings, segment = sibling_windows(graph, parents, node, params.siblings_per_parent, stops)
    if len(siblings) == 0:
        empty = np.empty(0, dtype=np.int32)
        return Attempt(node, empty, empty.astype(np.int64), len(parents))
    n = len(graph)
    if params.degree is CocitationDegree.IN_WINDOW:
        pairs = np.unique(segment.astype(np.int64) * n + siblings)
        distinct, degrees = np.unique(pairs % n, return_counts=True)
    else:
        distinct = np.unique(siblings)
        targets, segment = gather_out_links(graph, parents)
        is_sibling = np.zeros(n, dtype=np.bool_)
        is_sibling[distinct] = True
        hit = is_sibling[targets]
        pairs = np.unique(segment[hit].astype(np.int64) * n + targets[hit])
        counted, counts = np.unique(pairs % n, return_counts=True)
        degrees = np.zeros(len(distinct), dtype=np.int64)
        degrees[np.searchsorted(distinct, counted)] = counts
    return Attempt(node, distinct.astype(np.int32), degrees.astype(np.int64), len(parents))


def _answer(graph: LinkGraph, attempt: Attempt, query: int, limit: int) -> Answer:
    keep = (attempt.siblings != query) & (attempt.siblings != attempt.node)
    siblings, degrees = attempt.siblings[keep], attempt.degrees[keep]
    if len(siblings) == 0:
        reason = NoAnswer.NO_PARENTS if attempt.parents == 0 else NoAnswer.EMPTY_NEIGHBOURHOOD
        return Answer((), reason)
    names = graph.names
    order = sorted(range(len(siblings)), key=lambda i: (-int(degrees[i]), names[int(siblings[i])]))
    return Answer(tuple(Scored(int(siblings[i]), float(degrees[i])) for i in order[:limit]))


def chopped_urls(url: str) -> list[str]:
    """The shorter URLs Cocitation restarts with, most specific first (§2.2).

    The query string goes first, then one path element at a time (each with and without a
    trailing slash), down to the host's root page.

    >>> chopped_urls("http://a.com/X/Y/Z")
    ['http://a.com/X/Y/', 'http://a.com/X/Y', 'http://a.com/X/', 'http://a.com/X', 'http://a.com/']
    >>> chopped_urls("http://a.com/X/Y/")
    ['http://a.com/X/', 'http://a.com/X', 'http://a.com/']
    >>> chopped_urls("https://a.com/p?id=3")
    ['https://a.com/p', 'https://a.com/']
    >>> chopped_urls("http://a.com/")
    []
    >>> chopped_urls("12345")
    []
    """
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return []
    out: list[str] = []

    def add(path: str) -> None:
        candidate = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        if candidate != url and candidate not in out:
            out.append(candidate)

    if parts.query:
        add(parts.path or "/")
    segments = [s for s in parts.path.split("/") if s]
    for keep in range(len(segments) - 1, 0, -1):
        prefix = "/" + "/".join(segments[:keep])
        add(prefix + "/")
        add(prefix)
    add("/")
    return out
