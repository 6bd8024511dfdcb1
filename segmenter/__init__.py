"""HTML → link blocks (paper, "The HTML segmentation flow": scanning, then adjusting).

    >>> seg = segment_html('<ul><li><a href="/a">A</a><li><a href="b">B</a></ul>',
    ...                    "http://example.com/x/")
    >>> [[(link.href, link.anchor) for link in block] for block in seg.blocks]
    [[('http://example.com/a', 'A'), ('http://example.com/x/b', 'B')]]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from segmenter.adjust import AdjustParams, adjust, blocks_of
from segmenter.scan import Link, Section, scan_html

__all__ = [
    "AdjustParams",
    "Link",
    "Section",
    "Segmentation",
    "blocks_as_json",
    "segment_bytes",
    "segment_html",
]


@dataclass(frozen=True)
class Segmentation:
    """One page's sections before and after adjusting, and its blocks."""

    url: str
    base_url: str
    sections: tuple[Section, ...]  # after scanning
    adjusted: tuple[Section, ...]  # after the merge rules
    charset: str = "utf-8"

    @property
    def blocks(self) -> list[tuple[Link, ...]]:
        return blocks_of(self.adjusted)

    @property
    def blocks_before_adjusting(self) -> list[tuple[Link, ...]]:
        return blocks_of(self.sections)


def _resolve(href: str, base: str) -> str | None:
    from filters.urls import normalise_url

    return normalise_url(href, base)


def segment_html(text: str, url: str, params: AdjustParams = AdjustParams()) -> Segmentation:
    """Segment decoded HTML of the page at ``url`` (already normalised or not)."""
    page_url = _resolve(url, url) or url
    scanned = scan_html(text, page_url, _resolve)
    adjusted = adjust(scanned.sections, params)
    return Segmentation(page_url, scanned.base_url, scanned.sections, tuple(adjusted))


def segment_bytes(
    body: bytes,
    url: str,
    http_charset: str | None = None,
    params: AdjustParams = AdjustParams(),
) -> Segmentation:
    """Decode (HTTP charset, then <meta>, then detection) and segment raw page bytes."""
    from segmenter.decode import decode_html

    decoded = decode_html(body, http_charset)
    result = segment_html(decoded.text, url, params)
    return Segmentation(
        result.url, result.base_url, result.sections, result.adjusted, decoded.charset
    )


def blocks_as_json(blocks: list[tuple[Link, ...]]) -> list[list[dict[str, Any]]]:
    """DESIGN.md's block records: ``[[{"href", "anchor", "pos"}, …], …]``."""
    return [
        [{"href": link.href, "anchor": link.anchor, "pos": pos} for pos, link in enumerate(block)]
        for block in blocks
    ]
