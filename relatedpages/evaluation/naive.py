"""The naive reference of the related-pages evaluation: co-citation under one heading.

Issue 10's "simple reference method": for every index page, the links under each heading
(:class:`relatedpages.evaluation.related.HubSection`, links to other sites than the page's
own) co-cite each other; a page's related pages are the pages most often co-cited with it
(the number of citing sections), ties by popularity (the number of sections linking the
page at all), then URL.  No blocks, no filters, no proximity, no anchors: it keeps every
method of the table honest, since the hub lists' ground truth is itself heading sections.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, Protocol

from filters.site import site_of

NAIVE = "naive heading co-citation"


class _Sectioned(Protocol):
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
            for index, first in enumerate(links):
                for second in links[index + 1:]:
                    if sites[first] is None or sites[first] == sites[second]:
                        continue
                    cocited[first][second] += 1
                    cocited[second][first] += 1
    related: dict[str, list[list[Any]]] = {}
    for url, counts in cocited.items():
        ranked = sorted(counts.items(), key=lambda item: (-item[1], -popularity[item[0]], item[0]))
        related[url] = [[other, count, []] for other, count in ranked[:k]]
    return related
