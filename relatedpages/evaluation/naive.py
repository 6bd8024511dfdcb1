"""The naive references of the related-pages evaluation: co-citation under one heading.

Issue 10's "simple reference method": for every index page, the links under each heading
(:class:`relatedpages.evaluation.related.HubSection`, links to other sites than the page's
own) co-cite each other; a page's related pages are the pages most often co-cited with it
(the number of citing sections), ties by popularity (the number of sections linking the
page at all), then URL.  No blocks, no filters, no proximity, no anchors: it keeps every
method of the table honest, since the hub lists' ground truth is itself heading sections.

Its strongest form (issue 43, item 3), the row of ``relatedpages eval related``
(:data:`NAIVE_STRONG`, :func:`naive_heading_related`): the same sections (cut at every
``h1``–``h6``, links to other sites than the page's), only those holding
:data:`SECTION_LINKS_MIN` to :data:`SECTION_LINKS_MAX` such links (a section of one link
co-cites nothing; a longer one is an index or a link dump), ranked by the number of co-citing
sections, ties by the number of distinct *pages* whose sections link the candidate (any
section of the page, whatever its size), then URL.  :data:`NAIVE` (no size filter, ties by
sections) stays the reference of ``relatedpages eval topics``.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from filters.site import site_of

NAIVE = "naive heading co-citation"
NAIVE_STRONG = "naive heading (2-80 links, ties by pages)"
#: The sections the strongest form co-cites: 2 to 80 links to other sites.
SECTION_LINKS_MIN = 2
SECTION_LINKS_MAX = 80


class _Sectioned(Protocol):
    @property
    def url(self) -> str: ...

    @property
    def sections(self) -> tuple[Any, ...]: ...


def naive_section_related(pages: Iterable[_Sectioned], k: int) -> dict[str, list[list[Any]]]:
    """``{url: [[related_url, co-citing sections, []], …]}``, best first, at most ``k``.

    >>> from relatedpages.evaluation.related import HubList, HubSection
    >>> page = HubList("http://l.org/", "l.org", (
    ...     HubSection("A", 2, ("http://a.com/", "http://b.com/", "http://c.com/")),
    ...     HubSection("B", 2, ("http://a.com/", "http://b.com/"))))
    >>> naive_section_related([page], 2)["http://a.com/"]
    [['http://b.com/', 2, []], ['http://c.com/', 1, []]]
    """
    cocited: defaultdict[str, Counter[str]] = defaultdict(Counter)
    popularity: Counter[str] = Counter()
    sites: dict[str, str | None] = {}
    for page in pages:
        for section in page.sections:
            links = sorted(set(section.links))
            popularity.update(links)
            for url in links:
                if url not in sites:
                    sites[url] = site_of(url)
            _cocite(cocited, links, sites)
    related: dict[str, list[list[Any]]] = {}
    for url, counts in cocited.items():
        ranked = sorted(counts.items(), key=lambda item: (-item[1], -popularity[item[0]], item[0]))
        related[url] = [[other, count, []] for other, count in ranked[:k]]
    return related


def _cocite(cocited: defaultdict[str, Counter[str]], links: Sequence[str],
            sites: Mapping[str, str | None]) -> None:
    """Count one section's co-citations: every pair of its links of two different sites."""
    for index, first in enumerate(links):
        for second in links[index + 1:]:
            if sites[first] is None or sites[first] == sites[second]:
                continue
            cocited[first][second] += 1
            cocited[second][first] += 1


def naive_heading_related(pages: Iterable[_Sectioned], k: int, *,
                          min_links: int = SECTION_LINKS_MIN,
                          max_links: int = SECTION_LINKS_MAX) -> dict[str, list[list[Any]]]:
    """The strongest naive reference (module doc): ``{url: [[related_url, co-citing
    sections, []], …]}``, best first, at most ``k``; only sections of ``min_links`` to
    ``max_links`` distinct links co-cite, ties by the pages linking the candidate.

    >>> from relatedpages.evaluation.related import HubList, HubSection
    >>> one = HubList("http://l.org/", "l.org", (
    ...     HubSection("A", 2, ("http://q.com/", "http://b.com/", "http://c.com/")),
    ...     HubSection("B", 2, ("http://b.com/",)), HubSection("C", 2, ("http://b.com/",))))
    >>> two = HubList("http://m.org/", "m.org", (HubSection("D", 2, ("http://c.com/",)),))
    >>> naive_heading_related([one, two], 2)["http://q.com/"]
    [['http://c.com/', 1, []], ['http://b.com/', 1, []]]
    >>> naive_heading_related([one, two], 2, max_links=2)
    {}
    """
    if not 1 <= min_links <= max_links:
        raise ValueError(f"need 1 <= min_links <= max_links, got {min_links!r}, {max_links!r}")
    cocited: defaultdict[str, Counter[str]] = defaultdict(Counter)
    linking_pages: defaultdict[str, set[str]] = defaultdict(set)
    sites: dict[str, str | None] = {}
    for page in pages:
        for section in page.sections:
            links = sorted(set(section.links))
            for url in links:
                linking_pages[url].add(page.url)
                if url not in sites:
                    sites[url] = site_of(url)
            if not min_links <= len(links) <= max_links:
                continue
            _cocite(cocited, links, sites)
    related: dict[str, list[list[Any]]] = {}
    for url, counts in cocited.items():
        ranked = sorted(counts.items(),
                        key=lambda item: (-item[1], -len(linking_pages[item[0]]), item[0]))
        related[url] = [[other, count, []] for other, count in ranked[:k]]
    return related
