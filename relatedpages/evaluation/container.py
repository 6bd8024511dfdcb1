"""The nearest-container reference segmenter: the simplest segmenter worth comparing with.

Issue 11's reference row of Table 1: every link is grouped with its nearest ``ul``, ``ol``,
``table``, ``nav`` or ``p`` ancestor (a link with none of them: with its parent element's
other links); groups of fewer than two links are dropped, as the segmenter drops sections
with fewer than two links.  No features, no thresholds, nothing tuned: a segmenter that
does not beat it on pages it was not tuned on has not earned its rules.

Links are read as the annotations are (:func:`relatedpages.evaluation.segmentation.manual_blocks`):
``<a href>`` resolved against the page URL and the first ``<base href>``, normalised; links
that do not normalise (``javascript:``, ``mailto:``, …) are left out.
"""
from __future__ import annotations

from lxml import etree

from filters.urls import normalise_url
from segmenter.decode import decode_html

#: The containers a link is grouped by (the nearest one wins).
CONTAINERS = frozenset({"ul", "ol", "table", "nav", "p"})


def parse_dom(data: bytes) -> etree._Element | None:
    """A page's DOM as the evaluation reads it (decoded, recovering, huge trees allowed)."""
    text = decode_html(data).text.replace("\x00", "\ufffd")
    parser = etree.HTMLParser(huge_tree=True, recover=True, encoding="utf-8")
    return etree.fromstring(text.encode("utf-8", "replace"), parser)


def base_url(root: etree._Element, url: str) -> str:
    """The page URL, or its first ``<base href>`` resolved against it."""
    base = normalise_url(url) or url
    for element in root.iter("base"):
        href = element.get("href")
        if href is not None:
            return normalise_url(href, base) or base
    return base


def nearest_container_blocks(data: bytes, url: str) -> list[list[str]]:
    """The reference's blocks of a page: lists of resolved hrefs in document order.

    >>> page = (b"<html><body><ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul>"
    ...         b"<div><a href='/c'>C</a> <span><a href='/d'>D</a></span> <a href='/e'>E</a></div>"
    ...         b"<p><a href='mailto:x@y.z'>m</a><a href='/f'>F</a></p></body></html>")
    >>> nearest_container_blocks(page, "http://s.org/")
    [['http://s.org/a', 'http://s.org/b'], ['http://s.org/c', 'http://s.org/e']]
    """
    root = parse_dom(data)
    if root is None:
        return []
    base = base_url(root, url)
    groups: dict[etree._Element, list[str]] = {}  # keyed by element: see manual_blocks
    for anchor in root.iter("a"):
        href = anchor.get("href")
        resolved = normalise_url(href, base) if href is not None else None
        if resolved is None:
            continue
        owner = next((a for a in anchor.iterancestors() if a.tag in CONTAINERS), None)
        if owner is None:
            owner = anchor.getparent()
        if owner is not None:
            groups.setdefault(owner, []).append(resolved)
    return [links for links in groups.values() if len(links) >= 2]
