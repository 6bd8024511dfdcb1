"""Link filters: the links of a page's blocks that may form related pairs (paper, §"Filtering
hyperlinks"; DESIGN.md, "Link filters").

"All hyperlinks in a block are sequentially processed by the following filters.  Each filter
can remove or change links in the block.  Only links remaining after all filter procedures
generate valid related pairs."  :func:`filter_blocks` applies them in the paper's order:

1. large block: a block with more than S links (as segmented) is dropped whole;
2. non-web schemes (``javascript:``, ``mailto:`` …), empty hrefs and unparsable URLs removed
   (always on: such a link names no page and has no site); malformed link records too;
3. file: links whose path ends in a file extension (:data:`FILE_EXTENSIONS`) removed;
4. dynamic: links with a query string or a dynamic extension (:data:`DYNAMIC_EXTENSIONS`)
   replaced by their site's home page (:func:`site_home`);
5. normalisation: :func:`filters.urls.normalise_url` with the parameters' Lee et al. options;
6. singleton: only the first occurrence of a URL in a block is kept;
7. empty anchor: links whose anchor text has no letter or digit (image links, "»") removed;
8. common site: links of the same site (TSD) as the citing page removed.

The order matters: the singleton filter runs before the empty-anchor filter, so when an image
link precedes a text link to the same URL (thumbnail, then title) both are gone — the paper's
order, kept on purpose (47 of ~136,000 hub links, measured on ../shared/data/awesomehub).

Blocks left without links are dropped; the others keep their order, and every link keeps its
segmented position ``pos`` (proximity, Eq. 5, measures distances as segmented).  Each step
is switchable in :class:`LinkFilterParams` and every event is counted under a
:class:`FilterEvent` (the counter names of the MapReduce jobs).

Per link exactly one *fate* is counted: ``link_in_large_block``, ``link_malformed``,
``link_empty_href``, ``link_non_web_scheme``, ``link_unparsable``, ``link_to_file``,
``link_repeated_in_block``, ``link_empty_anchor``, ``link_same_site_as_page`` or
``link_kept``; ``link_dynamic_to_site_home`` and ``link_changed_by_normalisation`` count
changes to links that go on.  Per block exactly one of ``block_too_large``,
``block_malformed``, ``block_emptied_by_filters`` or ``block_kept``.
"""
from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import Enum

from filters.anchors import AnchorWords
from filters.site import SiteIdentity, site_of, split_authority
from filters.urls import (
    NORMALISE_OPTIONS_DEFAULT,
    RFC_ONLY_OPTIONS,
    NormaliseOptions,
    UrlRejection,
    classify_url,
)

logger = logging.getLogger(__name__)

#: Hrefs whose filter fate a :class:`LinkFilter` remembers (about 10 MB when full, measured).
URL_FATE_CACHE_SIZE_DEFAULT = 1 << 15

#: S, the block size threshold: blocks with more links than this are dropped.
LARGE_BLOCK_DEFAULT = 80

#: Path extensions of links to files, not pages (compared lower-case, without the dot).
FILE_EXTENSIONS = frozenset(
    {
        # documents
        "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "txt", "csv",
        # audio and video
        "mp3", "mp4", "avi", "mov", "wav",
        # archives, installers, disk images
        "zip", "rar", "gz", "tgz", "7z", "tar", "exe", "dmg", "iso", "apk",
        # images
        "jpg", "jpeg", "png", "gif", "bmp", "svg", "webp", "ico", "tif", "tiff",
        # data and feeds
        "json", "xml", "rss",
    }
)  # fmt: skip
#: Not files: ``.js`` and ``.css``.  A page loads its scripts and style sheets, it does not
#: link them; a link whose last segment ends in ``.js`` or ``.css`` names a project
#: (``github.com/vercel/next.js``, ``en.wikipedia.org/wiki/Node.js``, ``animate.css``).  Of
#: the 284 such links in the blocks of the development split's index (the shared data) none
#: is a file, and dropping them took Next.js, NW.js and Chart.js out of every list.

#: Path extensions of server-side scripts: such links are dynamic even without a query.
DYNAMIC_EXTENSIONS = frozenset({"php", "asp", "aspx", "jsp", "cgi", "pl", "do", "action", "cfm"})

_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


class FilterEvent(str, Enum):
    """What the link filters did (each value is a job counter name; never data)."""

    BLOCK_TOO_LARGE = "block_too_large"
    """A block with more than S links, dropped whole (counted once per block)."""
    LINK_IN_LARGE_BLOCK = "link_in_large_block"
    """Each link of a block dropped as too large."""
    BLOCK_MALFORMED = "block_malformed"
    """A block that is not a list of link records."""
    MALFORMED = "link_malformed"
    """A link record that is not a mapping with str ``href``, str ``anchor``, int ``pos`` >= 0
    (and a str ``text`` where it has one)."""
    EMPTY_HREF = "link_empty_href"
    """An empty href or a same-document reference (``#top``): names no other page."""
    NON_WEB = "link_non_web_scheme"
    """``javascript:``, ``mailto:``, ``tel:``, ``ftp:`` … (not http/https)."""
    UNPARSABLE = "link_unparsable"
    """No valid host or port, or a relative href (hrefs must be absolute here)."""
    FILE = "link_to_file"
    """A link to a file (:data:`FILE_EXTENSIONS`), removed."""
    DYNAMIC = "link_dynamic_to_site_home"
    """A dynamic link replaced by its site's home page (the link goes on)."""
    NORMALISED = "link_changed_by_normalisation"
    """Normalisation changed the URL (the link goes on)."""
    SINGLETON = "link_repeated_in_block"
    """A repeated URL in the block after its first occurrence, removed."""
    EMPTY_ANCHOR = "link_empty_anchor"
    """Anchor text without a letter or digit (image or bookmark link), removed."""
    COMMON_SITE = "link_same_site_as_page"
    """A link to the citing page's own site, removed."""
    KEPT = "link_kept"
    """A link that passed every filter."""
    BLOCK_EMPTIED = "block_emptied_by_filters"
    """A block of at most S links with no link left after the filters."""
    BLOCK_KEPT = "block_kept"
    """A block with at least one link left."""


@dataclass(frozen=True)
class LinkFilterParams:
    """Switches and thresholds of the link filters (all on by default).

    ``large_block`` is S (``0`` disables the large-block filter); the other filters have one
    bool each.  The non-web/unparsable filter cannot be switched off: such a link has no URL
    to compare and no site.  ``normalise_options`` are the Lee et al. switches used by the
    normalisation filter.

    >>> LinkFilterParams(large_block=-1)
    Traceback (most recent call last):
    ...
    ValueError: large_block must be an int >= 0 (0 disables the filter), got -1
    """

    large_block: int = LARGE_BLOCK_DEFAULT
    file: bool = True
    dynamic: bool = True
    normalise: bool = True
    singleton: bool = True
    empty_anchor: bool = True
    common_site: bool = True
    normalise_options: NormaliseOptions = NORMALISE_OPTIONS_DEFAULT

    def __post_init__(self) -> None:
        if (
            isinstance(self.large_block, bool)
            or not isinstance(self.large_block, int)
            or self.large_block < 0
        ):
            raise ValueError(
                "large_block must be an int >= 0 (0 disables the filter), "
                f"got {self.large_block!r}"
            )
        for field in fields(self):
            if field.type in ("bool", bool) and not isinstance(getattr(self, field.name), bool):
                raise ValueError(f"LinkFilterParams.{field.name} must be a bool")
        if not isinstance(self.normalise_options, NormaliseOptions):
            raise ValueError("LinkFilterParams.normalise_options must be a NormaliseOptions")


LINK_FILTER_PARAMS_DEFAULT = LinkFilterParams()


_NO_WORDS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class FilteredLink:
    """A link that passed the filters.

    ``url`` is the (possibly replaced and normalised) target, ``site`` its site identity,
    ``anchor`` the anchor text with whitespace collapsed, ``words`` its anchor words (may be
    empty when the anchor has only stop words), ``pos`` its position in the block as
    segmented; ``context`` the words of its description (the record's ``text``: what
    follows the link in its list entry), empty when it has none.
    """

    url: str
    site: str
    anchor: str
    words: frozenset[str]
    pos: int
    context: frozenset[str] = frozenset()


def path_extension(url: str) -> str:
    """The lower-case extension of the last path segment of an absolute URL, or ``""``.

    Path parameters (``;jsessionid=…``), the query and the fragment are ignored.

    >>> path_extension("https://example.com/docs/Report.PDF?download=1")
    'pdf'
    >>> path_extension("http://example.com/cgi-bin/search.cgi;s=1")
    'cgi'
    >>> path_extension("https://example.com/v1.2/"), path_extension("https://example.com")
    ('', '')
    """
    rest = url.partition("://")[2]
    for delimiter in "?#":
        rest = rest.partition(delimiter)[0]
    slash = rest.find("/")
    if slash < 0:
        return ""
    last = rest[rest.rfind("/") + 1 :].partition(";")[0]
    stem, dot, extension = last.rpartition(".")
    return extension.lower() if dot and stem else ""


def is_file_link(url: str) -> bool:
    """Whether an absolute URL points to a file (paper: "mp3 files, doc files, etc.").

    >>> is_file_link("http://a.com/song.mp3"), is_file_link("http://a.com/paper.pdf?v=2")
    (True, True)
    >>> is_file_link("http://a.com/report.html"), is_file_link("http://a.com/zip/")
    (False, False)
    """
    return path_extension(url) in FILE_EXTENSIONS


def is_dynamic_link(url: str) -> bool:
    """Whether an absolute URL is dynamic: a non-empty query or a script extension.

    >>> is_dynamic_link("http://a.com/x.php"), is_dynamic_link("http://a.com/list?page=2")
    (True, True)
    >>> is_dynamic_link("http://a.com/about.html"), is_dynamic_link("http://a.com/page?")
    (False, False)
    """
    query = url.partition("#")[0].partition("?")[2]
    return bool(query) or path_extension(url) in DYNAMIC_EXTENSIONS


def site_home(url: str, site: str) -> str:
    """The home page of ``url``'s site (``site`` = its site identity): the dynamic filter's
    replacement (paper: "replace all dynamic links with their domain name").

    A host-based site's home is ``scheme://host/`` on the link's own host (and port); a
    path-based multi-tenant site (``github.com/<owner>``, ``sourceforge.net/projects/<name>``)
    keeps as many path segments as the site has, in the link's spelling.

    >>> site_home("http://a.com/x.php?id=1", "a.com")
    'http://a.com/'
    >>> site_home("https://github.com/owner/repo/issues?q=1", "github.com/owner")
    'https://github.com/owner'
    >>> site_home("https://news.example.co.uk:8080/cgi/a.cgi", "example.co.uk")
    'https://news.example.co.uk:8080/'
    >>> site_home("https://sourceforge.net/projects/Foo/files/?page=2",
    ...           "sourceforge.net/projects/foo")
    'https://sourceforge.net/projects/Foo'
    """
    scheme, authority, tail = split_authority(url)
    depth = site.count("/") if not site.startswith("[") else 0
    if depth:
        path = tail.partition("#")[0].partition("?")[0]
        segments = path.split("/")[1 : 1 + depth]
        if len(segments) == depth and all(segments):
            return f"{scheme}://{authority}/" + "/".join(segments)
    return f"{scheme}://{authority}/"


def filter_blocks(
    page_site: str,
    blocks: Sequence[Sequence[Mapping[str, object]]],
    words: AnchorWords,
    params: LinkFilterParams = LINK_FILTER_PARAMS_DEFAULT,
    *,
    identity: SiteIdentity | None = None,
) -> tuple[list[list[FilteredLink]], Counter[FilterEvent]]:
    """Apply the link filters to the blocks of a page of site ``page_site``.

    ``blocks`` are the segment records' blocks (``[[{"href", "anchor", "pos"[, "text"]}, …],
    …]``);
    anything malformed in them is counted, never raised.  ``identity`` gives link sites
    (default: :func:`filters.site.default_site_identity`).  Returns the non-empty filtered
    blocks in order and the counts of :class:`FilterEvent`.  A process that filters many
    pages with the same parameters uses a :class:`LinkFilter` instead (the same result).

    >>> blocks = [[{"href": "http://a.com/x.php?id=1", "anchor": "A home", "pos": 0},
    ...            {"href": "mailto:me@b.org", "anchor": "mail", "pos": 1},
    ...            {"href": "https://b.org/", "anchor": "B", "pos": 2}]]
    >>> kept, counts = filter_blocks("b.org", blocks, AnchorWords())
    >>> [(link.url, link.pos) for link in kept[0]]
    [('http://a.com/', 0)]
    >>> sorted((event.value, n) for event, n in counts.items())  # doctest: +NORMALIZE_WHITESPACE
    [('block_kept', 1), ('link_dynamic_to_site_home', 1), ('link_kept', 1),
     ('link_non_web_scheme', 1), ('link_same_site_as_page', 1)]
    """
    def fate(href: str) -> _UrlFate:
        return _url_fate(href, params, identity)

    return _filter_blocks(page_site, blocks, words, params, fate)


class LinkFilter:
    """:func:`filter_blocks` for one process: the anchor words, parameters and site
    identity fixed, and what the href-only filters (2-5, and the link's site) make of each
    href remembered in a bounded LRU cache of ``cache_size`` hrefs.  A crawl's pages cite
    the same hrefs again and again (site templates, popular pages), so a map task parses
    most of them once.  The result is :func:`filter_blocks`'s, event for event.

    >>> link_filter = LinkFilter(AnchorWords())
    >>> page = [[{"href": "http://a.com/x.php?id=1", "anchor": "A home", "pos": 0},
    ...          {"href": "https://b.org/", "anchor": "B", "pos": 2}]]
    >>> [[link.url for link in block] for block in link_filter("b.org", page)[0]]
    [['http://a.com/']]
    >>> link_filter("b.org", page) == filter_blocks("b.org", page, AnchorWords())
    True
    """

    def __init__(
        self,
        words: AnchorWords,
        params: LinkFilterParams = LINK_FILTER_PARAMS_DEFAULT,
        *,
        identity: SiteIdentity | None = None,
        cache_size: int = URL_FATE_CACHE_SIZE_DEFAULT,
    ) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be a non-negative int, got {cache_size!r}")
        self.words = words
        self.params = params
        self.identity = identity

        def fate(href: str) -> _UrlFate:
            return _url_fate(href, params, identity)

        self._fate: Callable[[str], _UrlFate] = functools.lru_cache(maxsize=cache_size)(fate)

    def __call__(
        self, page_site: str, blocks: Sequence[Sequence[Mapping[str, object]]]
    ) -> tuple[list[list[FilteredLink]], Counter[FilterEvent]]:
        """The filtered blocks of a page of site ``page_site`` and the events' counts."""
        return _filter_blocks(page_site, blocks, self.words, self.params, self._fate)


def _filter_blocks(
    page_site: str,
    blocks: Sequence[Sequence[Mapping[str, object]]],
    words: AnchorWords,
    params: LinkFilterParams,
    fate: Callable[[str], _UrlFate],
) -> tuple[list[list[FilteredLink]], Counter[FilterEvent]]:
    counts: Counter[FilterEvent] = Counter()
    result: list[list[FilteredLink]] = []
    for block in blocks:
        if isinstance(block, (str, bytes)) or not isinstance(block, Sequence):
            counts[FilterEvent.BLOCK_MALFORMED] += 1
            continue
        # Large block filter: "discard blocks which contain more than S links", counted on
        # the block as segmented (before any other filter removes links).
        if params.large_block and len(block) > params.large_block:
            counts[FilterEvent.BLOCK_TOO_LARGE] += 1
            counts[FilterEvent.LINK_IN_LARGE_BLOCK] += len(block)
            continue
        kept = _filter_block(page_site, block, words, params, fate, counts)
        if kept:
            counts[FilterEvent.BLOCK_KEPT] += 1
            result.append(kept)
        else:
            counts[FilterEvent.BLOCK_EMPTIED] += 1
    return result, counts


_URL_REJECTION_EVENT = {
    UrlRejection.EMPTY: FilterEvent.EMPTY_HREF,
    UrlRejection.NON_WEB_SCHEME: FilterEvent.NON_WEB,
    UrlRejection.UNPARSABLE: FilterEvent.UNPARSABLE,
}

#: What filters 2-5 make of an href, and its link's site: the events to count for every
#: occurrence, the URL that goes on (None: the href's fate is the last event) and its site
#: (None: the URL has none, counted ``link_unparsable`` after the singleton and empty-anchor
#: filters, where the paper's order puts it).
_UrlFate = tuple[tuple[FilterEvent, ...], "str | None", "str | None"]


def _url_fate(
    href: str, params: LinkFilterParams, identity: SiteIdentity | None
) -> _UrlFate:
    # Non-web scheme / unparsable: parse with the RFC 3986 rules only, so that the
    # normalisation filter below can still tell (and count) what it changes.
    parsed = classify_url(href, options=RFC_ONLY_OPTIONS)
    if isinstance(parsed, UrlRejection):
        return (_URL_REJECTION_EVENT[parsed],), None, None
    # File filter: "discard all links pointing to a file ... we only consider the
    # relationship between two pages."
    if params.file and is_file_link(parsed):
        return (FilterEvent.FILE,), None, None
    events: tuple[FilterEvent, ...] = ()
    url = href
    if params.dynamic and is_dynamic_link(parsed):
        # Dynamic filter: "replace all dynamic links with their domain name" (here: the
        # home page of their site, which keeps github.com/<owner> apart).
        url = parsed = site_home(parsed, site_of(parsed, identity))
        events = (FilterEvent.DYNAMIC,)
    if params.normalise:
        # Normalisation filter (Pant et al. 2004; Lee et al. 2005): canonical forms, so
        # that www.sina.com/index.html and www.sina.com are one page.
        normalised = classify_url(url, options=params.normalise_options)
        if isinstance(normalised, UrlRejection):  # not expected after parsing above
            return events + (_URL_REJECTION_EVENT[normalised],), None, None
        if normalised != url:
            events += (FilterEvent.NORMALISED,)
        url = parsed = normalised
    try:
        site: str | None = site_of(parsed, identity)
    except ValueError:  # a parsed URL always has a host; kept narrow on purpose
        site = None
    return events, url, site


def _filter_block(
    page_site: str,
    block: Sequence[Mapping[str, object]],
    words: AnchorWords,
    params: LinkFilterParams,
    fate: Callable[[str], _UrlFate],
    counts: Counter[FilterEvent],
) -> list[FilteredLink]:
    kept: list[FilteredLink] = []
    seen: set[str] = set()
    for link in block:
        if not isinstance(link, Mapping):
            counts[FilterEvent.MALFORMED] += 1
            continue
        href, anchor, pos = link.get("href"), link.get("anchor"), link.get("pos")
        described = link.get("text", "")
        if (
            not isinstance(href, str)
            or not isinstance(anchor, str)
            or isinstance(pos, bool)
            or not isinstance(pos, int)
            or pos < 0
            or not isinstance(described, str)
        ):
            counts[FilterEvent.MALFORMED] += 1
            continue
        # Filters 2-5 (non-web scheme, file, dynamic, normalisation) and the link's site
        # depend on the href alone.
        events, url, site = fate(href)
        for event in events:
            counts[event] += 1
        if url is None:
            continue
        # Singleton filter: "any link with the same URL format as a previous link will be
        # deleted", so a block's repeated citation does not inflate the similarity.
        if params.singleton:
            if url in seen:
                counts[FilterEvent.SINGLETON] += 1
                continue
            seen.add(url)
        # Empty anchor filter: "links with no anchor [are] a bookmark link or spam link".
        if params.empty_anchor and _LETTER_OR_DIGIT.search(anchor) is None:
            counts[FilterEvent.EMPTY_ANCHOR] += 1
            continue
        if site is None:
            counts[FilterEvent.UNPARSABLE] += 1
            continue
        # Common domain name filter: "remove any links in a block which have the same top
        # sub-domain name as the parent page."
        if params.common_site and site == page_site:
            counts[FilterEvent.COMMON_SITE] += 1
            continue
        counts[FilterEvent.KEPT] += 1
        text = " ".join(anchor.split())
        kept.append(FilteredLink(url, site, text, words.words(text), pos,
                                 words.words(described) if described else _NO_WORDS))
    return kept
