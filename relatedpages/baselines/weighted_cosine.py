"""Cosine co-citation over linking **sites**, weighted as Marginalia Search weighs them.

Marginalia Search answers "similar sites" with the cosine of the sets of domains linking to
each domain (``MarginaliaSearch/MarginaliaSearch``, ``code/tools/website-adjacencies-calculator``:
``AdjacenciesData`` builds the vectors and weights, ``WebsiteAdjacenciesCalculator`` the
similarity; ``SimilarDomainsService`` only serves the stored values).  What that code does,
and how it reads on pages here:

* **Vector.**  A domain d is the set V(d) of the domains with a link to d, *plus d itself*
  (``createBitmapWithSelf``); a domain nothing links to has no vector.  Here a page p is
  L(p) = the sites (:attr:`LinkGraph.hosts`, the project's site identity with
  ``HostRule.SITE``) of the pages linking p from another site, plus p's own site; a page no
  other site links has none (it is neither asked nor answered).
* **Weight.**  Each member s weighs w(s) = 1 / ln(2 + |V(s)|), V(s) the *site's own*
  vector (``getWeight``): the sites linking to site s, plus s — so a site many sites link to
  weighs less (its in-degree in the site graph, not its out-degree).  ``getWeight`` gives
  1.0 to a site without a vector (nothing links to it); its weight table
  (``getWeights``) only holds the sites with one and leaves the rest at 0.0.  Here:
  :data:`UNLINKED_WEIGHT_DEFAULT` = 1.0, ``getWeight``'s value (the 0.0 of the table would
  silence every linking site nobody links to: most of this corpus's pages).
* **Similarity.**  ``expensiveCosineSimilarity``: Σ_{s ∈ L(p) ∩ L(q)} w(s) /
  sqrt(Σ_{s ∈ L(p)} w(s) · Σ_{s ∈ L(q)} w(s)) — each weight counted once, not squared.
* **Candidates.**  Every page sharing a member with L(p) (``getCandidates``: whatever the
  members link, and the members themselves).
* **Cuts** (Marginalia's, for hundreds of thousands of domains): a query needs |V| ≥ 10;
  a candidate |V| ≥ max(2, 1 % of the query's); the unweighted cosine and then the
  weighted one must exceed 0.1; at most 128 kept.  :meth:`WeightedCosineParams.marginalia`
  sets them.  The defaults keep only the candidate's max(2, 1 %) (a page only its own site
  "links"), like T = 1 instead of the paper's 4 for block co-citation: on ~1,700 crawled
  pages most test pages have fewer than 10 linking sites, and a cut can only lower the
  table's measures with missing results counted as 0.
* **Order.**  Similarity descending, then the number of shared sites, then URL (Marginalia:
  then domain id); score = the similarity.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from relatedpages.baselines import Answer, NoAnswer
from relatedpages.baselines.cosine import top
from relatedpages.store.linkgraph import LinkGraph

MAX_RESULTS_DEFAULT = 10
#: Marginalia's cuts (module doc), and the defaults used here.
MARGINALIA_MIN_QUERY_SITES = 10
MARGINALIA_MIN_SIMILARITY = 0.1
MARGINALIA_MAX_RESULTS = 128
MIN_QUERY_SITES_DEFAULT = 1
MIN_CANDIDATE_SITES = 2
MIN_CANDIDATE_SHARE = 0.01
MIN_SIMILARITY_DEFAULT = 0.0
UNLINKED_WEIGHT_DEFAULT = 1.0

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class WeightedCosineParams:
    """The weighted site cosine's parameters (module docstring)."""

    max_results: int = MAX_RESULTS_DEFAULT
    min_query_sites: int = MIN_QUERY_SITES_DEFAULT
    min_similarity: float = MIN_SIMILARITY_DEFAULT
    unlinked_weight: float = UNLINKED_WEIGHT_DEFAULT

    def __post_init__(self) -> None:
        if self.max_results < 1 or self.min_query_sites < 1:
            raise ValueError("max_results and min_query_sites must be >= 1")
        if not (0.0 <= self.min_similarity < 1.0 and self.unlinked_weight >= 0.0):
            raise ValueError("min_similarity must be in [0, 1) and unlinked_weight >= 0")

    @classmethod
    def marginalia(cls) -> WeightedCosineParams:
        """Marginalia's cuts exactly (module doc)."""
        return cls(max_results=MARGINALIA_MAX_RESULTS, min_query_sites=MARGINALIA_MIN_QUERY_SITES,
                   min_similarity=MARGINALIA_MIN_SIMILARITY)


@dataclass(frozen=True)
class SiteVectors:
    """Every page's L(p) as (page, site) pairs, and the sites' vector sizes |V(s)|."""

    pages: IndexArray  # one entry per (page, site) pair, sorted by page
    sites: IndexArray
    size: IndexArray  # |L(p)| per page: 0 = no vector
    site_size: IndexArray  # |V(s)| per site: 0 = no vector


def site_vectors(graph: LinkGraph) -> SiteVectors:
    """L(p) of every page and |V(s)| of every site (cached per graph).

    >>> g = LinkGraph.from_pages([
    ...     ("http://h1.org/", [("http://a.com/", "", 0), ("http://b.com/", "", 0)]),
    ...     ("http://h2.org/", [("http://a.com/", "", 0), ("http://h1.org/", "", 0)])])
    >>> v = site_vectors(g)
    >>> [(g.name(int(p)), g.host_names[int(s)]) for p, s in zip(v.pages, v.sites)]
    [('http://h1.org/', 'h1.org'), ('http://h1.org/', 'h2.org'), ('http://a.com/', 'h1.org'), ('http://a.com/', 'a.com'), ('http://a.com/', 'h2.org'), ('http://b.com/', 'h1.org'), ('http://b.com/', 'b.com')]
    >>> [g.name(i) for i in range(len(g))], v.size.tolist(), v.site_size.tolist()
    (['http://h1.org/', 'http://a.com/', 'http://b.com/', 'http://h2.org/'], [2, 3, 2, 0], [2, 3, 2, 0])
    """
    cached = graph.derived.get("site_vectors")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    n, hosts = len(graph), graph.hosts.astype(np.int64)
    sites = len(graph.host_names) if graph.host_names else int(hosts.max(initial=-1)) + 1
    sources = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.out_offsets))
    targets = graph.out_targets.astype(np.int64)
    linking, linked = hosts[sources], hosts[targets]
    other = linking != linked  # links inside a site are not evidence (Marginalia: domain links)
    # V(s): the distinct sites linking to site s, plus s when any does
    site_pairs = np.unique(linked[other] * sites + linking[other])
    site_size = np.bincount(site_pairs // sites, minlength=sites).astype(np.int64)
    site_size[site_size > 0] += 1
    # L(p): the distinct sites linking to page p, plus p's own site when any does
    page_pairs = np.unique(targets[other] * sites + linking[other])
    with_vector = np.unique(page_pairs // sites)
    page_pairs = np.union1d(page_pairs, with_vector * sites + hosts[with_vector])
    vectors = SiteVectors(page_pairs // sites, page_pairs % sites,
                          np.bincount(page_pairs // sites, minlength=n).astype(np.int64),
                          site_size)
    graph.derived["site_vectors"] = vectors
    return vectors


def site_weights(vectors: SiteVectors, unlinked_weight: float = UNLINKED_WEIGHT_DEFAULT,
                 ) -> FloatArray:
    """w(s) = 1 / ln(2 + |V(s)|); ``unlinked_weight`` for a site without a vector.

    >>> v = SiteVectors(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
    ...                 np.array([0, 2, 5]))
    >>> [round(w, 4) for w in site_weights(v).tolist()]
    [1.0, 0.7213, 0.5139]
    """
    size = vectors.site_size.astype(np.float64)
    return np.where(size > 0, 1.0 / np.log(2.0 + size), unlinked_weight)


def weighted_site_cosine(graph: LinkGraph, node: int,
                         params: WeightedCosineParams | None = None) -> Answer:
    """Pages related to ``node`` by Marginalia's weighted cosine of linking sites, best first.

    By hand: h1.org links a, b, c; h2.org links a, b; h3.org links c and h2.org.  Sites'
    vectors: V(a) = {a, h1, h2}, V(b) = {b, h1, h2}, V(c) = {c, h1, h3} (weights 1/ln 5 =
    0.6213), V(h2) = {h2, h3} (1/ln 4 = 0.7213); h1 and h3 have none (weight 1).  Pages'
    vectors: L(a) = V(a) (norm 2.3426), L(b) = V(b), L(c) = V(c) (2.6213), L(h2) = V(h2)
    (1.7213).  cos(a, b) = (1 + 0.7213) / 2.3426 = 0.7348; cos(a, c) = 1 / sqrt(2.3426 ·
    2.6213) = 0.4035; cos(a, h2) = 0.7213 / sqrt(2.3426 · 1.7213) = 0.3592.

    >>> g = LinkGraph.from_pages([
    ...     ("http://h1.org/", [("http://a.com/", "", 0), ("http://b.com/", "", 0),
    ...                         ("http://c.com/", "", 0)]),
    ...     ("http://h2.org/", [("http://a.com/", "", 0), ("http://b.com/", "", 0)]),
    ...     ("http://h3.org/", [("http://c.com/", "", 0), ("http://h2.org/", "", 0)])])
    >>> answer = weighted_site_cosine(g, g.id_of("http://a.com/"))
    >>> [(g.name(s.node), round(s.score, 4)) for s in answer.related]
    [('http://b.com/', 0.7348), ('http://c.com/', 0.4035), ('http://h2.org/', 0.3592)]
    >>> weighted_site_cosine(g, g.id_of("http://h1.org/")).reason
    <NoAnswer.NO_PARENTS: 'no_parents'>
    """
    params = params or WeightedCosineParams()
    vectors = site_vectors(graph)
    size = int(vectors.size[node])
    if size == 0:
        return Answer(reason=NoAnswer.NO_PARENTS)
    if size < params.min_query_sites:
        return Answer(reason=NoAnswer.EMPTY_NEIGHBOURHOOD)
    weights = site_weights(vectors, params.unlinked_weight)
    start, end = np.searchsorted(vectors.pages, [node, node + 1])
    members = vectors.sites[start:end]
    in_query = np.zeros(len(weights), dtype=bool)
    in_query[members] = True
    shared_pairs = in_query[vectors.sites]
    pages = vectors.pages[shared_pairs]
    shared_weight = np.bincount(pages, weights=weights[vectors.sites[shared_pairs]],
                                minlength=len(graph))
    shared = np.bincount(pages, minlength=len(graph))
    norms = np.bincount(vectors.pages, weights=weights[vectors.sites], minlength=len(graph))
    floor = max(MIN_CANDIDATE_SITES, int(MIN_CANDIDATE_SHARE * size))
    candidates = np.flatnonzero((shared > 0) & (vectors.size >= floor))
    candidates = candidates[candidates != node]
    query_norm = float(weights[members].sum())
    cosine = shared_weight[candidates] / np.sqrt(query_norm * norms[candidates])
    if params.min_similarity > 0:
        plain = shared[candidates] / np.sqrt(size * vectors.size[candidates])
        keep = (plain > params.min_similarity) & (cosine > params.min_similarity)
        candidates, cosine = candidates[keep], cosine[keep]
    if not len(candidates):
        return Answer(reason=NoAnswer.EMPTY_NEIGHBOURHOOD)
    return Answer(top(graph, candidates, cosine, shared[candidates], params.max_results))

