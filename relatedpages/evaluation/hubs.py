"""The hub-list evaluation's ground truth: the hub pages' heading sections, the corpus of
segment records (cached per process), the seeded hold-out split of whole lists, and the
test pages (:mod:`relatedpages.evaluation.related` scores methods against them)."""
from __future__ import annotations

import functools
import logging
import random
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lxml import etree

if TYPE_CHECKING:
    from segmenter.adjust import AdjustParams

logger = logging.getLogger(__name__)

HUB_PATH = "awesomehub/awesomehub.warc.gz"
WEB_PATHS = ("web/aeb-pages.warc.gz", "web/trafilatura-pages.warc.gz")
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


# -- hub lists and their sections ------------------------------------------------------


@dataclass(frozen=True)
class HubSection:
    """The links (normalised, other sites, first occurrence order) under one heading."""

    heading: str
    level: int
    links: tuple[str, ...]


@dataclass(frozen=True)
class HubList:
    """One curated hub list: its URL, site and non-empty sections."""

    url: str
    site: str
    sections: tuple[HubSection, ...]

    @property
    def links(self) -> frozenset[str]:
        """Every graded link of the list (the union of its sections)."""
        return frozenset(link for section in self.sections for link in section.links)


def hub_sections(html: str, url: str) -> HubList:
    """The sections of a hub list: links grouped under each heading (module doc, step 1).

    >>> hub = hub_sections(
    ...     '<a href="https://intro.org/">before any heading: no section</a>'
    ...     '<h1>Awesome X <a href="https://awesome.re/">badge</a></h1>'
    ...     '<h2>Tools</h2><ul><li><a href="https://a.com/">A</a>'
    ...     '<li><a href="/me/page">same site</a><li><a href="http://B.com:80/x">B</a></ul>'
    ...     '<h3>Mo<b>re</b></h3><p><a href="https://c.org">C</a> <a href="#top">top</a>'
    ...     '<h2>Empty</h2><p><a href="https://github.com/me/other">my other repo</a>',
    ...     "https://github.com/me/awesome-x")
    >>> hub.site
    'github.com/me'
    >>> [(s.heading, s.level, s.links) for s in hub.sections]
    [('Tools', 2, ('https://a.com/', 'http://b.com/x')), ('More', 3, ('https://c.org/',))]
    """
    from filters.urls import normalise_url

    page_url = normalise_url(url) or url
    site = _site(page_url) or page_url
    parser = etree.HTMLParser(huge_tree=True, recover=True, encoding="utf-8")
    root = etree.fromstring(html.replace("\x00", "\ufffd").encode("utf-8", "replace"), parser)
    if root is None:
        return HubList(page_url, site, ())
    base = page_url
    for element in root.iter("base"):
        href = element.get("href")
        if href is not None:
            base = normalise_url(href, page_url) or page_url
            break
    headings: list[tuple[str, int, list[str]]] = []
    inside_heading = 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in HEADINGS:
            if event == "start":
                inside_heading += 1
                title = " ".join("".join(element.itertext()).split())
                headings.append((title, int(tag[1]), []))
            else:
                inside_heading -= 1
            continue
        if event != "start" or tag != "a" or inside_heading or not headings:
            continue
        href = element.get("href")
        resolved = normalise_url(href, base) if href is not None else None
        if resolved is None:
            continue
        link_site = _site(resolved)
        links = headings[-1][2]
        if link_site is not None and link_site != site and resolved not in links:
            links.append(resolved)
    sections = tuple(
        HubSection(title, level, tuple(links)) for title, level, links in headings if links
    )
    return HubList(page_url, site, sections)


def _site(url: str) -> str | None:
    from filters.site import site_of

    try:
        return site_of(url)
    except ValueError:  # a normalised http(s) URL always has a host; be safe anyway
        return None


# -- the corpus: segment records, cached per process -----------------------------------


@dataclass(frozen=True)
class CorpusFile:
    """One crawl file: its segment records (by URL, last record wins) and, for the hub
    file, the parsed lists."""

    path: str
    records: Mapping[str, Mapping[str, Any]]
    lists: tuple[HubList, ...]
    seconds: float


@functools.lru_cache(maxsize=8)
def load_corpus_file(path: str, parse_lists: bool = False,
                     params: AdjustParams | None = None) -> CorpusFile:
    """Segment every page of a crawl file into segment records (as ``jobs.segment``; with
    ``params``' adjusting, the defaults when None) and, if asked, parse each page as a hub
    list.  Cached for the process: treat as read-only."""
    from filters.site import site_of
    from filters.urls import normalise_url
    from relatedpages.corpus.ingest import Page, read_pages
    from segmenter import AdjustParams, segment_bytes, segment_record
    from segmenter.decode import decode_html

    started = time.monotonic()
    records: dict[str, Mapping[str, Any]] = {}
    lists: dict[str, HubList] = {}
    skipped = 0
    for item in read_pages(path):
        if not isinstance(item, Page):
            skipped += 1
            continue
        url = normalise_url(item.url)
        if url is None:
            skipped += 1
            continue
        segmentation = segment_bytes(item.body, url, item.http_charset, params or AdjustParams())
        records[url] = {**segment_record(segmentation), "url": url, "site": site_of(url)}
        if parse_lists:
            lists[url] = hub_sections(decode_html(item.body, item.http_charset).text, url)
    if skipped:
        logger.info("%s: %s records are not usable pages", path, skipped)
    return CorpusFile(path, records, tuple(lists[url] for url in sorted(lists)),
                      time.monotonic() - started)


# -- hold-out split ----------------------------------------------------------------------

#: The development split: seed 1, half of the lists held out.  Every choice of the default
#: preset was made on its held-out lists, so it never changes, and no other seed holds out
#: any of them (issue 43, item 4).
DEV_SEED = 1
DEV_HOLDOUT = 0.5


@dataclass(frozen=True)
class Split:
    """Which lists are held out and which are indexed (URLs, in the shuffled order)."""

    held_out: tuple[str, ...]
    indexed: tuple[str, ...]


def _held(holdout: float, lists: int) -> int:
    """``round(holdout × lists)``, at least 1 and at most all but one."""
    return min(max(1, round(holdout * lists)), lists - 1)


def split_lists(
    urls: Iterable[str], holdout: float, seed: int, max_lists: int | None = None
) -> Split:
    """Hold out whole lists, test lists never among the development split's.

    The development seed (:data:`DEV_SEED`) keeps the split every past choice was made on:
    shuffle the sorted URLs with ``Random(seed)``, keep the first ``max_lists``, hold out the
    first ``round(holdout × n)`` of them (1 … n − 1).  Any other seed draws its held-out
    lists only from the lists the development split indexes (the split of :data:`DEV_SEED`
    at :data:`DEV_HOLDOUT` on every list, whatever this call's ``holdout`` and
    ``max_lists``): those, sorted and shuffled with ``Random(seed)``, hold out
    ``round(holdout × their number)`` (at least 1); the index is every other list,
    development lists included, shuffled by the same generator.  ``max_lists`` = n keeps n
    lists: the first ``round(holdout × n)`` of those held-out lists and the first of the
    others, so a small run holds out a subset of the full run's held-out lists.

    >>> split_lists(["u1", "u2", "u3", "u4", "u5"], 0.4, seed=1)
    Split(held_out=('u3', 'u4'), indexed=('u5', 'u1', 'u2'))
    >>> dev = split_lists([f"u{i}" for i in range(10)], 0.5, seed=DEV_SEED).held_out
    >>> test = split_lists([f"u{i}" for i in range(10)], 0.5, seed=2)
    >>> sorted(dev), test.held_out, set(dev) & set(test.held_out)
    (['u5', 'u6', 'u7', 'u8', 'u9'], ('u2', 'u1'), set())
    >>> split_lists(["a"], 0.2, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: need at least 2 lists to hold some out, got 1
    """
    if not 0.0 < holdout < 1.0:
        raise ValueError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
    if max_lists is not None and max_lists < 2:
        raise ValueError(f"max_lists must be >= 2, got {max_lists!r}")
    every = sorted(set(urls))
    if seed == DEV_SEED:
        order = list(every)
        random.Random(seed).shuffle(order)
        if max_lists is not None:
            order = order[:max_lists]
        if len(order) < 2:
            raise ValueError(f"need at least 2 lists to hold some out, got {len(order)}")
        held = _held(holdout, len(order))
        return Split(tuple(order[:held]), tuple(order[held:]))
    if len(every) < 2:
        raise ValueError(f"need at least 2 lists to hold some out, got {len(every)}")
    development = set(split_lists(every, DEV_HOLDOUT, DEV_SEED).held_out)
    held_out, others = _drawn(every, [url for url in every if url not in development], holdout,
                              random.Random(seed))
    if max_lists is not None and max_lists < len(every):
        held_out = held_out[:_held(holdout, max_lists)]
        others = others[:max_lists - len(held_out)]
    return Split(tuple(held_out), tuple(others))


def _drawn(every: Sequence[str], pool: Sequence[str], holdout: float,
           rng: random.Random) -> tuple[list[str], list[str]]:
    """``holdout`` of ``pool`` (at least one list) held out in ``rng``'s order, and every
    other list of ``every``, shuffled by the same generator."""
    order = list(pool)
    rng.shuffle(order)
    held_out = order[:max(1, round(holdout * len(order)))]
    chosen = set(held_out)
    others = [url for url in every if url not in chosen]
    rng.shuffle(others)
    return held_out, others


def development_draw(urls: Iterable[str], holdout: float, draw: int) -> Split:
    """A development split with the test splits' index: hold out ``holdout`` of the lists
    the development split holds out (:data:`DEV_SEED`), drawn by ``draw``, and index every
    other list.  The test splits index 412 of the 550 lists, the development split 275: a
    choice made on the development split is also checked on an index of the test splits'
    size (docs/evaluation/related.md).  Its held-out lists are development lists, never a
    test split's.

    >>> every = [f"u{i}" for i in range(10)]
    >>> draw = development_draw(every, 0.5, 1)
    >>> sorted(draw.held_out), len(draw.indexed)
    (['u7', 'u8'], 8)
    >>> set(draw.held_out) <= set(split_lists(every, 0.5, seed=DEV_SEED).held_out)
    True
    """
    if not 0.0 < holdout < 1.0:
        raise ValueError(f"holdout must be a fraction in (0, 1), got {holdout!r}")
    every = sorted(set(urls))
    development = sorted(split_lists(every, DEV_HOLDOUT, DEV_SEED).held_out)
    held_out, others = _drawn(every, development, holdout, random.Random(draw))
    return Split(tuple(held_out), tuple(others))


# -- ground truth and test pages -------------------------------------------------------


@dataclass(frozen=True)
class GroundTruth:
    """Held-out sections and lists by URL (ids: positions in the held-out lists)."""

    sections_of: Mapping[str, frozenset[tuple[int, int]]]  # url -> {(list, section)}
    lists_of: Mapping[str, frozenset[int]]  # url -> {list}

    @classmethod
    def from_lists(cls, lists: Sequence[HubList]) -> GroundTruth:
        sections: defaultdict[str, set[tuple[int, int]]] = defaultdict(set)
        for list_id, hub in enumerate(lists):
            for section_id, section in enumerate(hub.sections):
                for link in section.links:
                    sections[link].add((list_id, section_id))
        return cls(
            {url: frozenset(keys) for url, keys in sections.items()},
            {url: frozenset(list_id for list_id, _ in keys) for url, keys in sections.items()},
        )

    def grade(self, target: str, result: str) -> int:
        """2 = same held-out section, 1 = same held-out list, 0 = otherwise (best over
        every held-out list and section holding ``target``).

        >>> truth = GroundTruth.from_lists([
        ...     HubList("l0", "s0", (HubSection("A", 2, ("a", "b")), HubSection("B", 2, ("c",)))),
        ...     HubList("l1", "s1", (HubSection("C", 2, ("c", "d")),))])
        >>> [truth.grade("a", r) for r in ("b", "c", "d", "zz")]
        [2, 1, 0, 0]
        >>> [truth.grade("c", r) for r in ("d", "a", "c")]
        [2, 1, 2]
        """
        if self.sections_of.get(target, frozenset()) & self.sections_of.get(result, frozenset()):
            return 2
        if self.lists_of.get(target, frozenset()) & self.lists_of.get(result, frozenset()):
            return 1
        return 0


def citing_pages(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """For every href in the records' blocks: the number of records of another site than
    the href's own that link to it."""
    citing: defaultdict[str, int] = defaultdict(int)
    for record in records:
        page_site = record["site"]
        for href in {link["href"] for block in record["blocks"] for link in block}:
            if _site(href) != page_site:
                citing[href] += 1
    return dict(citing)


def select_test_pages(
    truth: GroundTruth, index_records: Iterable[Mapping[str, Any]], min_citing: int
) -> tuple[str, ...]:
    """Held-out section links cited by at least ``min_citing`` index pages (sorted)."""
    citing = citing_pages(index_records)
    return tuple(sorted(url for url in truth.sections_of if citing.get(url, 0) >= min_citing))
