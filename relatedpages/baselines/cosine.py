"""Co-citation normalised by both pages' in-degrees (**cosine co-citation**) on a :class:`LinkGraph`.

Two pages are co-cited by each page that links both (Small 1973).  Raw counts favour popular
pages: a portal linked from everywhere is co-cited with everything.  The cosine of the two
pages' parent sets divides the count by both in-degrees (Salton's cosine, the normalisation
of "similar sites" features):

    cos(u, v) = |P(u) ∩ P(v)| / sqrt(|P(u)| · |P(v)|)

where P(x) is the set of distinct pages linking x (a page's links to itself do not count).
Readings chosen here:

* **Parents read**: all of u's parents, or a uniform sample of ``max_parents`` of them
  (``numpy.random.default_rng((sample_seed, u))``, as Companion's B): the count is then over
  the sample and |P(u)| is the sample's size, so the cosine stays in [0, 1].
* **Candidates**: every distinct child of those parents but u, co-cited at least
  ``min_shared`` times.
* **Order**: cosine descending, then the shared count descending (more evidence first), then
  node name; score = the cosine.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relatedpages.baselines import Answer, NoAnswer, Scored
from relatedpages.baselines.companion import MAX_PARENTS_DEFAULT, SAMPLE_SEED_DEFAULT, sample_parents
from relatedpages.store.linkgraph import LinkGraph

MAX_RESULTS_DEFAULT = 10
MIN_SHARED_DEFAULT = 1


@dataclass(frozen=True)
class CosineParams:
    """Cosine co-citation's parameters (module docstring)."""

    max_parents: int = MAX_PARENTS_DEFAULT
    min_shared: int = MIN_SHARED_DEFAULT
    max_results: int = MAX_RESULTS_DEFAULT
    sample_seed: int = SAMPLE_SEED_DEFAULT

    def __post_init__(self) -> None:
        if self.max_parents < 1 or self.min_shared < 1 or self.max_results < 1:
            raise ValueError("max_parents, min_shared and max_results must be >= 1")


def distinct_in_degrees(graph: LinkGraph) -> np.ndarray:
    """|P(x)| for every node: distinct pages linking x, x itself excluded (cached per graph)."""
    cached = graph.derived.get("distinct_in_degrees")
    if cached is None:
        sources = np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(graph.out_offsets))
        targets = graph.out_targets.astype(np.int64)
        keep = sources != targets
        pairs = np.unique(targets[keep] * len(graph) + sources[keep])
        cached = np.bincount(pairs // len(graph), minlength=len(graph)).astype(np.int64)
        graph.derived["distinct_in_degrees"] = cached
    return cached


def cosine_cocitation(graph: LinkGraph, node: int, params: CosineParams | None = None) -> Answer:
    """Pages related to ``node`` by cosine co-citation, best first.

    >>> g = LinkGraph.from_pages([
    ...     ("http://h1/", [("http://u/", "", 0), ("http://a/", "", 0), ("http://b/", "", 0)]),
    ...     ("http://h2/", [("http://u/", "", 0), ("http://a/", "", 0)]),
    ...     ("http://h3/", [("http://b/", "", 0), ("http://c/", "", 0)]),
    ...     ("http://h4/", [("http://b/", "", 0)])])
    >>> answer = cosine_cocitation(g, g.id_of("http://u/"))
    >>> [(g.name(s.node), round(s.score, 3)) for s in answer.related]
    [('http://a/', 1.0), ('http://b/', 0.408)]
    """
    params = params or CosineParams()
    parents = sample_parents(graph, node, params.max_parents, params.sample_seed)
    parents = np.unique(parents)
    if not len(parents):
        return Answer(reason=NoAnswer.NO_PARENTS)
    children = [np.unique(graph.children(int(parent))) for parent in parents]
    children = [kids[kids != parent] for kids, parent in zip(children, parents)]  # no self-link
    candidates, shared = np.unique(np.concatenate(children), return_counts=True)
    keep = (candidates != node) & (shared >= params.min_shared)
    candidates, shared = candidates[keep], shared[keep]
    if not len(candidates):
        return Answer(reason=NoAnswer.EMPTY_NEIGHBOURHOOD)
    degrees = distinct_in_degrees(graph)[candidates]
    cosine = shared / np.sqrt(float(len(parents)) * np.maximum(degrees, 1))
    return Answer(top(graph, candidates, cosine, shared, params.max_results))


def top(graph: LinkGraph, nodes: np.ndarray, scores: np.ndarray, evidence: np.ndarray,
        limit: int) -> tuple[Scored, ...]:
    """The ``limit`` best nodes: score descending, then ``evidence`` descending, then name
    (names are compared only among the nodes tied with the last one kept)."""
    def key(i: int) -> tuple[float, float, str]:
        return (-scores[i], -evidence[i], graph.name(int(nodes[i])))

    order = np.lexsort((-evidence, -scores))
    if len(order) <= limit:
        chosen = sorted(order.tolist(), key=key)
    else:
        last = order[limit - 1]
        tied = (scores == scores[last]) & (evidence == evidence[last])
        ahead = [i for i in order[:limit].tolist() if not tied[i]]  # strictly better than last
        ties = sorted(np.flatnonzero(tied).tolist(), key=key)
        chosen = sorted(ahead, key=key) + ties[:limit - len(ahead)]
    return tuple(Scored(int(nodes[i]), float(scores[i])) for i in chosen)
