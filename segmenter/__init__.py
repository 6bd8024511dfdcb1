"""HTML → link blocks (paper, "The HTML segmentation flow": scanning, then adjusting).

    >>> seg = segment_html('<ul><li><a href="/a">A</a><li><a href="b">B</a></ul>',
    ...                    "http://example.com/x/")
    >>> [[(link.href, link.anchor) for link in block] for block in seg.blocks]
    [[('http://example.com/a', 'A'), ('http://example.com/x/b', 'B')]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from filters.urls import normalise_url
from segmenter.adjust import MIN_BLOCK_LINKS, AdjustParams, adjust, blocks_of
from segmenter.scan import paused_gc, scan_html
from segmenter.sections import Link, Outline, Section

__all__ = [
    "AdjustParams",
    "Link",
    "Section",
    "Segmentation",
    "blocks_as_json",
    "loose_as_json",
    "segment_bytes",
    "segment_html",
    "segment_record",
]


@dataclass(frozen=True)
class Segmentation:
    """One page's sections before and after adjusting, and its blocks."""

    url: str
    base_url: str
    sections: tuple[Section, ...]  # after scanning
    adjusted: tuple[Section, ...]  # after the merge rules
    charset: str = "utf-8"
    outline: Outline = Outline()  # the scan's repeated siblings (rule 0 read them)

    @property
    def blocks(self) -> list[tuple[Link, ...]]:
        return blocks_of(self.adjusted)

    @property
    def block_headings(self) -> list[int]:
        """Per block, the heading whose text it is (``Section.heading``; 0: none): consecutive
        blocks of one heading are its heading section (the chain's ``--granularity
        heading``)."""
        return [s.heading for s in self.adjusted if len(s.links) >= MIN_BLOCK_LINKS]

    @property
    def blocks_before_adjusting(self) -> list[tuple[Link, ...]]:
        return blocks_of(self.sections)

    @property
    def loose(self) -> list[tuple[int, Link]]:
        """The links in no block (sections of one link), in page order, each with the
        number of blocks before it: the page's other links, for the link index."""
        loose: list[tuple[int, Link]] = []
        blocks = 0
        for section in self.adjusted:
            if len(section.links) >= MIN_BLOCK_LINKS:
                blocks += 1
            else:
                loose.extend((blocks, link) for link in section.links)
        return loose


#: How the segmenter resolves links: normalise_url itself (the compiled scan recognises it and
#: runs its canonical-URL fast path in C).
_resolve = normalise_url


def segment_html(text: str, url: str, params: AdjustParams = AdjustParams(),
                 utf8: bytes | None = None) -> Segmentation:
    """Segment decoded HTML of the page at ``url`` (already normalised or not); ``utf8``:
    the text's UTF-8 bytes when they are at hand (``scan_html``)."""
    page_url = _resolve(url, url) or url
    with paused_gc():
        scanned = scan_html(text, page_url, _resolve, utf8)
        adjusted = adjust(scanned.sections, params, scanned.outline)
    return Segmentation(page_url, scanned.base_url, scanned.sections, tuple(adjusted),
                        outline=scanned.outline)


def segment_bytes(
    body: bytes,
    url: str,
    http_charset: str | None = None,
    params: AdjustParams = AdjustParams(),
) -> Segmentation:
    """Decode (HTTP charset, then <meta>, then detection) and segment raw page bytes."""
    from segmenter.decode import decode_html

    with paused_gc():
        decoded = decode_html(body, http_charset)
        result = segment_html(decoded.text, url, params, decoded.utf8)
    return Segmentation(
        result.url, result.base_url, result.sections, result.adjusted, decoded.charset,
        result.outline)


def blocks_as_json(blocks: list[tuple[Link, ...]]) -> list[list[dict[str, Any]]]:
    """DESIGN.md's block records: ``[[{"href", "anchor", "pos"[, "text"]}, …], …]``, with
    ``text`` (the link's description, :class:`Link`) only where the page has one.

    >>> blocks_as_json([(Link("https://a.com/", "A", "A web framework"), Link("https://b.com/", "B"))])
    [[{'href': 'https://a.com/', 'anchor': 'A', 'pos': 0, 'text': 'A web framework'}, \
{'href': 'https://b.com/', 'anchor': 'B', 'pos': 1}]]
    """
    return [
        [{"href": link.href, "anchor": link.anchor, "pos": pos, "text": link.text} if link.text
         else {"href": link.href, "anchor": link.anchor, "pos": pos}
         for pos, link in enumerate(block)]
        for block in blocks
    ]


def loose_as_json(loose: list[tuple[int, Link]]) -> list[dict[str, Any]]:
    """The segment record's ``loose`` links: ``[{"href", "anchor", "at"}, …]`` in page
    order, ``at`` = the number of blocks before the link on the page."""
    return [{"href": link.href, "anchor": link.anchor, "at": at} for at, link in loose]


def segment_record(segmentation: Segmentation) -> dict[str, Any]:
    """The segment record of a page (DESIGN.md; ``jobs.segment`` writes it): its URL, site,
    link blocks, the heading each block is the text of (``headings``: the n-th h1-h6 of the
    page when the block is a list, paragraph or quotation after it; 0 above the first
    heading and for layout blocks), and the links in no block (``loose``, in page order).

    >>> seg = segment_html('<p><a href="/about">About</a></p><ul><li><a href="/a">A</a>'
    ...                    '<li><a href="/b">B</a></ul><h2>More</h2><ul><li><a href="/c">C</a>'
    ...                    '<li><a href="/d">D</a></ul><div id="ads"><a href="/e">E</a> '
    ...                    '<a href="/f">F</a></div>', "http://example.com/")
    >>> record = segment_record(seg)
    >>> [len(block) for block in record["blocks"]], record["headings"], record["loose"]
    ([2, 2, 2], [0, 1, 0], [{'href': 'http://example.com/about', 'anchor': 'About', 'at': 0}])
    """
    from filters.site import site_of

    return {"url": segmentation.url, "site": site_of(segmentation.url),
            "blocks": blocks_as_json(segmentation.blocks),
            "headings": segmentation.block_headings,
            "loose": loose_as_json(segmentation.loose)}
