"""Traditional co-citation: the paper's baseline (Dean & Henzinger 1999, "Cocitation").

The paper (§"Evaluation of performance results") compares block co-citation with
"traditional co-citation algorithms [implemented] using Hadoop.  The parameter BF was set
to 8, the same value as (Dean and Henzinger, 1999) [...] the parameter B [...] is equal to
the number of parent pages of p": every citing page counts.  Dean & Henzinger's Cocitation
takes, for every parent p of u, "up to BF children of p that surround the link from p to
u" as siblings of u, and ranks the siblings by their *degree of co-citation* with u, the
number of parents they share with u.  Here, for a whole corpus at once:

* a page's links are all its blocks' links concatenated in block order: no blocks, no
  anchors, no caps (no r, no N, no in_p damping);
* **singleton per page**: a URL counts once per page, at its first position (the link
  graph has one edge p → u however often p links to u);
* **siblings**: links at most BF/2 positions apart in the page's filtered link list
  (BF/2 before and BF/2 after, "4 above and 4 below" for BF = 8), positions counted after
  the filters, so removed links do not take window slots;
* **degree(u → v)** = the number of distinct citing pages in which v is a sibling of u
  (symmetric); related pages of u: at most M pages by degree, each with degree >=
  ``min_degree``, ties by URL; evidence = the citing sites that gave most pages, each with
  its strongest citing page (the one where u and v sit nearest, :func:`better_sibling`)
  and v's anchor text there, so a reader can open the page and find both links.

Which link filters the baseline keeps (the paper only says BF and B; our reading):

* kept, always: non-web schemes and unparsable URLs are removed (such a link names no
  page and has no site);
* kept: **normalisation** (the same :func:`filters.urls.normalise_url` rules), so both
  algorithms name pages by the same URLs and their results can be compared page by page;
* kept: the **site rules** -- the common-site filter (links to the citing page's own site
  are removed: navigation within a site is not a citation, as in Bharat & Henzinger's
  treatment of intra-host links), and siblings only between different sites (as the block
  algorithm's "related pairs" are);
* dropped: large block (there are no blocks), empty anchor (anchors are not read), file
  and dynamic (the paper introduces them for block co-citation, §"Filtering hyperlinks";
  Dean & Henzinger's connectivity graph keeps URLs as they are).  Each can be switched on
  (:class:`CocitationParams` ``link_filters``) to separate the effect of blocks from
  the effect of the filters.

Not carried over from Dean & Henzinger: the B = 2000 sample of parents (the paper uses all
parents) and the query-time restart with a shorter URL when fewer than 15 siblings are
co-cited at least twice (this is a precomputation; ``min_degree`` defaults to that 2).
One reading had to be chosen: Companion's rule gives *all* children of a parent with
fewer than BF children; here the window applies to every page (the contract's definition).

Arithmetic is integer counting, so every runner gives the same output.  This module is
the pure logic of ``jobs.cocitation`` and its in-memory oracle
(:func:`reference_cocitation`); it imports no mrjob.
"""
from __future__ import annotations

import functools
import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Protocol

from filters.anchors import AnchorWords
from filters.links import FilterEvent, FilteredLink, LinkFilter, LinkFilterParams
from relatedpages.scoring.parameters import EVIDENCE_DEFAULT, M_DEFAULT
from relatedpages.scoring.similarity import RelatedEntry

#: BF: a link's siblings are the links at most BF/2 positions before or after it.
BF_DEFAULT = 8
#: Related pages have a co-citation degree of at least this (Dean & Henzinger's "cocited
#: at least twice"; 1 would list every page ever seen beside u).
MIN_DEGREE_DEFAULT = 2

#: The link filters of the traditional algorithm (see the module docstring): removal of
#: non-web/unparsable links (always), normalisation and the common-site filter.  The
#: per-block singleton filter is off because the per-page one (:func:`page_links`)
#: subsumes it.
TRADITIONAL_LINK_FILTERS = LinkFilterParams(
    large_block=0,
    file=False,
    dynamic=False,
    normalise=True,
    singleton=False,
    empty_anchor=False,
    common_site=True,
)

#: The link filters a user may switch (the job's flags); the singleton rule is per page here.
SWITCHABLE_FILTERS = tuple(
    field.name
    for field in fields(LinkFilterParams)
    if field.type in (bool, "bool") and field.name != "singleton"
)


class CocitationEvent(str, Enum):
    """What the co-citation job counted (each value is a job counter name; never data)."""

    BAD_SEGMENT_RECORD = "bad_segment_record"
    """A segment record without a str ``url``, a non-empty str ``site`` or a ``blocks`` list."""
    LINK_REPEATED_IN_PAGE = "link_repeated_in_page"
    """A URL already linked earlier in the page (any block), removed (singleton per page)."""
    PAGE_WITHOUT_SIBLINGS = "page_without_sibling_pairs"
    """A page whose filtered links form no sibling pair (fewer than two, or one site)."""
    SIBLING_PAIRS = "sibling_pairs"
    """Unordered pairs {u, v} of different sites within BF/2 positions in one page."""
    SAME_SITE_SIBLINGS = "same_site_siblings_skipped"
    """Pairs within the window whose two links are of the same site: not co-cited."""
    BAD_INTERMEDIATE_VALUE = "bad_intermediate_value"
    """A reducer value that is not ``[other, citing_site, citing_page, distance, anchor]``
    (strs, and a distance int >= 1)."""
    CANDIDATES = "cocited_candidates"
    """Pairs (u, v) co-cited by at least one page (each direction counts)."""
    BELOW_MIN_DEGREE = "candidates_below_min_degree"
    """Candidates dropped because their degree is below ``min_degree``."""
    PAGES_WITH_RELATED = "pages_with_related"
    """Pages with at least one related page in the output."""


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class CocitationParams:
    """Parameters of traditional co-citation.

    >>> CocitationParams().window
    4
    >>> CocitationParams(bf=7)
    Traceback (most recent call last):
    ...
    ValueError: bf must be even (BF/2 siblings before and after), got 7
    """

    bf: int = BF_DEFAULT
    m: int = M_DEFAULT
    min_degree: int = MIN_DEGREE_DEFAULT
    evidence: int = EVIDENCE_DEFAULT
    link_filters: LinkFilterParams = TRADITIONAL_LINK_FILTERS

    def __post_init__(self) -> None:
        _check_int("bf", self.bf, 2)
        if self.bf % 2:
            raise ValueError(f"bf must be even (BF/2 siblings before and after), got {self.bf}")
        _check_int("m", self.m, 1)
        _check_int("min_degree", self.min_degree, 1)
        _check_int("evidence", self.evidence, 0)
        if not isinstance(self.link_filters, LinkFilterParams):
            raise ValueError("link_filters must be a LinkFilterParams")

    @property
    def window(self) -> int:
        """BF/2: the largest distance between two siblings in a page's link list."""
        return self.bf // 2


class SiteLink(Protocol):
    """A filtered link: its (normalised) URL and its site (FilteredLink is one; its
    ``anchor`` text, when it has one, is the evidence's: :class:`PageSiblings`)."""

    @property
    def url(self) -> str: ...

    @property
    def site(self) -> str: ...


class _NoAnchorWords(AnchorWords):
    """Traditional co-citation reads no anchors: skip stemming and jieba entirely."""

    def words(self, anchor: str) -> frozenset[str]:
        return frozenset()


@functools.lru_cache(maxsize=1)
def _no_anchor_words() -> AnchorWords:
    return _NoAnchorWords(cache_size=0)


def cocitation_links(
    page_site: str, blocks: Sequence[Sequence[Mapping[str, object]]], params: CocitationParams
) -> tuple[list[list[FilteredLink]], Counter[FilterEvent]]:
    """``filters.links.filter_blocks`` with the traditional algorithm's filters (no anchor
    words are computed: the links' ``words`` are empty), through one
    :class:`filters.links.LinkFilter` per filter parameters, so that a process parses each
    href once."""
    return _link_filter(params.link_filters)(page_site, blocks)


@functools.lru_cache(maxsize=4)
def _link_filter(params: LinkFilterParams) -> LinkFilter:
    return LinkFilter(_no_anchor_words(), params)


def page_links(filtered_blocks: Iterable[Iterable[SiteLink]]) -> tuple[list[SiteLink], int]:
    """A page's links in block order, each URL once at its first position, and the number
    of repeats removed (singleton per page: one edge p → u in the link graph).

    >>> from types import SimpleNamespace as L
    >>> links, repeated = page_links([[L(url="a", site="a"), L(url="b", site="b")],
    ...                               [L(url="a", site="a"), L(url="c", site="c")]])
    >>> [link.url for link in links], repeated
    (['a', 'b', 'c'], 1)
    """
    seen: set[str] = set()
    links: list[SiteLink] = []
    repeated = 0
    for block in filtered_blocks:
        for link in block:
            if link.url in seen:
                repeated += 1
                continue
            seen.add(link.url)
            links.append(link)
    return links, repeated


@dataclass(frozen=True)
class PageSiblings:
    """The sibling pairs of one citing page.

    ``pairs`` are the unordered pairs (earlier URL, later URL) of links at most BF/2
    positions apart and of different sites, in link order; ``links`` the page's URLs after
    the per-page singleton rule, ``anchors`` their anchor texts (at their first position,
    "" when none); ``repeated`` and ``same_site`` count what was left out.
    """

    links: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    repeated: int
    same_site: int
    anchors: tuple[str, ...] = ()

    def values(self, citing_site: str, citing_page: str) -> Iterator[tuple[str, list[Any]]]:
        """What the mapper emits for this page: per pair {u, v}, u → (v, the citing site
        and page, their distance, v's anchor) and v → (u, …, u's anchor).

        >>> from types import SimpleNamespace as L
        >>> links = [L(url=f"http://{c}.com/", site=f"{c}.com", anchor=c.upper()) for c in "ab"]
        >>> list(page_siblings([links], bf=2).values("d.org", "http://d.org/"))  # doctest: +NORMALIZE_WHITESPACE
        [('http://a.com/', ['http://b.com/', 'd.org', 'http://d.org/', 1, 'B']),
         ('http://b.com/', ['http://a.com/', 'd.org', 'http://d.org/', 1, 'A'])]
        """
        position = {url: index for index, url in enumerate(self.links)}
        anchors = self.anchors or ("",) * len(self.links)
        for u, v in self.pairs:
            at_u, at_v = position[u], position[v]
            distance = abs(at_v - at_u)
            yield u, encode_sibling_value(v, citing_site, citing_page, distance, anchors[at_v])
            yield v, encode_sibling_value(u, citing_site, citing_page, distance, anchors[at_u])


def page_siblings(filtered_blocks: Iterable[Iterable[SiteLink]], bf: int) -> PageSiblings:
    """The co-citations one page makes (Dean & Henzinger's siblings, for every link).

    >>> from types import SimpleNamespace as L
    >>> links = [L(url=f"http://{c}.com/", site=f"{c}.com") for c in "abcd"]
    >>> [(u[7], v[7]) for u, v in page_siblings([links], bf=2).pairs]
    [('a', 'b'), ('b', 'c'), ('c', 'd')]
    """
    if bf < 2 or bf % 2:
        raise ValueError(f"bf must be an even int >= 2, got {bf!r}")
    window = bf // 2
    links, repeated = page_links(filtered_blocks)
    pairs: list[tuple[str, str]] = []
    same_site = 0
    for i, first in enumerate(links):
        for second in links[i + 1 : i + 1 + window]:
            # "Pairs only between links of different sites" (paper, "Generating related
            # pairs"): the same site rule as block co-citation.
            if first.site == second.site:
                same_site += 1
                continue
            pairs.append((first.url, second.url))
    return PageSiblings(tuple(link.url for link in links), tuple(pairs), repeated, same_site,
                        tuple(getattr(link, "anchor", "") for link in links))


# -- intermediate values --------------------------------------------------------------------
#
# Mapper → reducer: key u, value [v, citing site, citing page, distance, v's anchor].
# With SORT_VALUES the values of u reach the reducer sorted by their *encoded bytes*.  All
# values sharing a prefix are contiguous in byte order, and a JSON string's encoding ends
# at its unescaped closing quote, so the values of one v arrive in one run, within it those
# of one citing site, within that the repeats of one citing page: the reducer streams them
# once in constant memory.  The distance and the anchor, after that prefix, only choose a
# site's strongest citation, by a rule that does not depend on the order values arrive in
# (:func:`better_sibling`), so nothing depends on how JSON sorts numbers.


def encode_sibling_value(other: str, citing_site: str, citing_page: str, distance: int,
                         anchor: str) -> list[Any]:
    """The value sent to key page u: its sibling v, the page (and its site) citing both,
    how many positions apart they are there, and v's anchor text on it."""
    return [other, citing_site, citing_page, distance, anchor]


#: A decoded sibling value: (other page, citing site, citing page, distance, anchor).
SiblingValue = tuple[str, str, str, int, str]


def decode_sibling_value(value: Any) -> SiblingValue:
    """(other page, citing site, citing page, distance, anchor) of an encoded value;
    ValueError if malformed.

    >>> decode_sibling_value(["http://b.com/", "c.org", "http://c.org/p", 2, "B"])
    ('http://b.com/', 'c.org', 'http://c.org/p', 2, 'B')
    >>> decode_sibling_value(["http://b.com/", "c.org", "http://c.org/p"])
    Traceback (most recent call last):
    ...
    ValueError: not a sibling value: ['http://b.com/', 'c.org', 'http://c.org/p']
    """
    if (
        isinstance(value, list)
        and len(value) == 5
        and all(isinstance(item, str) for item in value[:3])
        and isinstance(value[3], int) and not isinstance(value[3], bool) and value[3] >= 1
        and isinstance(value[4], str)
    ):
        return value[0], value[1], value[2], value[3], value[4]
    raise ValueError(f"not a sibling value: {value!r}")


#: A site's strongest citation of a pair: (distance, citing page, anchor text of v).
Citation = tuple[int, str, str]


def better_sibling(citation: Citation, best: Citation | None) -> bool:
    """Whether ``citation`` beats ``best`` as a site's evidence for a pair: the page where
    the two links sit nearest (Dean & Henzinger's siblings are the links *around* the
    link to u), then the smaller page URL, then the smaller anchor text: independent of
    the order values arrive in, so the job and the oracle agree (the block chain's
    :func:`relatedpages.scoring.similarity.better_citation` does the same with S_p).

    >>> better_sibling((1, "http://z.org/", "Z"), (2, "http://a.org/", "A"))
    True
    >>> better_sibling((2, "http://b.org/", "A"), (2, "http://a.org/", "Z"))
    False
    """
    return best is None or citation < best


# -- degrees and ranking --------------------------------------------------------------------


#: One citing site's evidence for a pair: (site, citing pages, strongest citing page, v's
#: anchor text on it).
SiteEvidence = tuple[str, int, str, str]


@dataclass(frozen=True)
class Cocited:
    """A page v co-cited with the key page u: degree(u → v) and its best citing sites
    (``(site, pages, citing page, anchor)``, most pages first, ties by site; the page is the
    site's strongest citation, :func:`better_sibling`, and the anchor v's text on it)."""

    url: str
    degree: int
    evidence: tuple[SiteEvidence, ...]

    def as_entry(self) -> RelatedEntry:
        """The related-pages record entry ``[url, degree, [[citing_site, pages,
        citing_page, anchor], ...]]`` (numbers as floats: the same record shape as
        ``jobs.related``'s, :data:`relatedpages.scoring.similarity.Evidence`)."""
        return [self.url, float(self.degree),
                [[site, float(n), citing, text] for site, n, citing, text in self.evidence]]


def _best_sites(best: tuple[SiteEvidence, ...], item: SiteEvidence,
                k: int) -> tuple[SiteEvidence, ...]:
    """Add a site's evidence to the best k sites (at most k + 1 items sorted: constant
    memory)."""
    return tuple(sorted((*best, item), key=lambda each: (-each[1], each[0]))[:k])


def cocited_degrees(values: Iterable[SiblingValue], evidence: int) -> Iterator[Cocited]:
    """Degrees from one key page's sorted values, streamed once in constant memory.

    ``values`` are ``(other, citing_site, citing_page, distance, anchor)`` grouped by other,
    within it by citing site, and with repeats of a citing page adjacent (what SORT_VALUES
    gives).  A page citing both u and v more than once (duplicate input records) counts
    once.  Each site's strongest citation (:func:`better_sibling`) is its evidence.

    >>> [(c.url, c.degree, c.evidence) for c in cocited_degrees(
    ...     [("v", "a.org", "p1", 3, "V"), ("v", "a.org", "p1", 3, "V"), ("v", "a.org", "p2", 1, "v!"),
    ...      ("v", "b.org", "p3", 2, ""), ("w", "b.org", "p3", 4, "W")], evidence=1)]
    [('v', 3, (('a.org', 2, 'p2', 'v!'),)), ('w', 1, (('b.org', 1, 'p3', 'W'),))]
    """
    current: str | None = None
    site = page = ""
    degree = site_pages = 0
    best: tuple[SiteEvidence, ...] = ()
    citation: Citation | None = None  # the current site's strongest

    def site_evidence() -> SiteEvidence:
        assert citation is not None  # a site has at least one value
        return (site, site_pages, citation[1], citation[2])

    for other, citing_site, citing_page, distance, anchor in values:
        if other != current:
            if current is not None:
                yield Cocited(current, degree, _best_sites(best, site_evidence(), evidence))
            current, degree, best = other, 0, ()
            site, page, site_pages, citation = citing_site, "", 0, None
        elif citing_site != site:
            best = _best_sites(best, site_evidence(), evidence)
            site, page, site_pages, citation = citing_site, "", 0, None
        if citing_page != page or site_pages == 0:
            page = citing_page
            degree += 1
            site_pages += 1
        if better_sibling((distance, citing_page, anchor), citation):
            citation = (distance, citing_page, anchor)
    if current is not None:
        yield Cocited(current, degree, _best_sites(best, site_evidence(), evidence))


def rank_key(cocited: Cocited) -> tuple[int, str]:
    """Degree descending, then URL ascending (ties)."""
    return (-cocited.degree, cocited.url)


def top_cocited(
    candidates: Iterable[Cocited], params: CocitationParams
) -> tuple[list[RelatedEntry], Counter[CocitationEvent]]:
    """The related pages of one page: at most M candidates with degree >= ``min_degree``,
    best first, ties by URL (a bounded heap: constant memory), and the counts of
    :data:`CocitationEvent.CANDIDATES` and :data:`CocitationEvent.BELOW_MIN_DEGREE`.

    >>> params = CocitationParams(m=2, min_degree=2)
    >>> entries, counts = top_cocited([Cocited("c", 3, ()), Cocited("a", 2, ()),
    ...                                Cocited("b", 3, ()), Cocited("d", 1, ())], params)
    >>> [(url, degree) for url, degree, _ in entries], counts[CocitationEvent.BELOW_MIN_DEGREE]
    ([('b', 3.0), ('c', 3.0)], 1)
    """
    counts: Counter[CocitationEvent] = Counter()

    def qualified() -> Iterator[Cocited]:
        for cocited in candidates:
            counts[CocitationEvent.CANDIDATES] += 1
            if cocited.degree < params.min_degree:
                counts[CocitationEvent.BELOW_MIN_DEGREE] += 1
                continue
            yield cocited

    best = heapq.nsmallest(params.m, qualified(), key=rank_key)
    return [cocited.as_entry() for cocited in best], counts


# -- the oracle -----------------------------------------------------------------------------


def reference_cocitation(
    records: Iterable[Mapping[str, Any]], params: CocitationParams = CocitationParams()
) -> dict[str, list[RelatedEntry]]:
    """The in-memory reference (test oracle) of ``jobs.cocitation``.

    Each segment record ``{"url", "site", "blocks"}`` is filtered with
    :func:`cocitation_links`; then, read directly from Dean & Henzinger, for every link u
    of the page its siblings are the links at most BF/2 positions before or after it (of
    another site), and degree(u → v) is the size of the set of citing pages (``(site,
    url)``) that have v among u's siblings.  Each citing site's evidence is its page where u
    and v sit nearest (ties: the smaller page URL, then the smaller anchor) with v's anchor
    text there.  Output: ``{url: [[v, degree, evidence], ...]}`` like the job's, pages
    without related pages absent, keys in URL order.  Records must be well formed (the
    job's skip-and-count is tested on the job).
    """
    citing: defaultdict[str, defaultdict[str, set[tuple[str, str]]]] = defaultdict(
        lambda: defaultdict(set)
    )
    strongest: dict[tuple[str, str, str], Citation] = {}  # (u, v, citing site) → citation
    window = params.window
    for record in records:
        page = (record["site"], record["url"])
        blocks, _events = cocitation_links(record["site"], record["blocks"], params)
        links, _repeated = page_links(blocks)
        for i, u in enumerate(links):
            for j in range(max(0, i - window), min(len(links), i + window + 1)):
                v = links[j]
                if j != i and v.site != u.site:
                    citing[u.url][v.url].add(page)
                    key = (u.url, v.url, record["site"])
                    citation = (abs(i - j), record["url"], getattr(v, "anchor", ""))
                    if better_sibling(citation, strongest.get(key)):
                        strongest[key] = citation
    related: dict[str, list[RelatedEntry]] = {}
    for url in sorted(citing):
        candidates = []
        for other, pages in citing[url].items():
            if len(pages) < params.min_degree:
                continue
            by_site = Counter(site for site, _ in pages)
            evidence = sorted(by_site.items(), key=lambda item: (-item[1], item[0]))
            sites: list[SiteEvidence] = []
            for site, n in evidence[: params.evidence]:
                _distance, citing_page, anchor = strongest[url, other, site]
                sites.append((site, n, citing_page, anchor))
            candidates.append(Cocited(other, len(pages), tuple(sites)))
        candidates.sort(key=rank_key)
        if candidates:
            related[url] = [cocited.as_entry() for cocited in candidates[: params.m]]
    return related
