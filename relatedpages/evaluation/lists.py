"""The hub lists' shapes report (issue 42): per markup shape around a hub page's outside
links, how many of them the segmenter keeps in a block with another link of their heading
section ("kept"), and how many of the blocks holding them mix two heading sections ("mixed").

The ground truth is the curators' (:func:`relatedpages.evaluation.hubs.hub_sections`): the
outside links under one heading belong together.  Only heading sections of two or more
outside links count (a lone link has nothing to be kept with).  A link's *shape* is the
markup it sits in, read from its nearest block-level ancestor (inline elements such as
``strong`` or ``code`` skipped): a tight list item, an item that holds a sub-list, a loose
list's paragraph (``li > p``), a table cell, a definition list's term or description, a
card (a ``div`` with the class of a sibling), a paragraph outside lists, or other.

The hub pages are CommonMark, so their lists are ``ul``/``ol`` (and some tables); ``render``
rewrites every list of a page as a table, a definition list, a grid of cards or a loose
list, so each shape the segmenter must handle is measured on the same curated lists.  The
pages are split by a seeded hash of their URL into a development and a test half: rule 0's
word limit was chosen on the development half (README "Lists").
"""
from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from relatedpages.evaluation.hubs import HEADINGS, HUB_PATH
from segmenter import AdjustParams, segment_html

#: The report's rows, in order (module doc).
SHAPES = ("li", "li with a sub-list", "li > p", "td", "dt / dd", "div card", "p", "other")
#: Shapes that are lists: the goal (kept ≥ 98 %, mixed ≤ 2 %) is on these; prose p is not.
LIST_SHAPES = SHAPES[:6]
#: How ``render`` can rewrite a page's lists (module doc); "as is" leaves them.
RENDERINGS = ("as-is", "table", "dl", "cards", "loose")
SPLITS = ("dev", "test", "all")
INLINE = frozenset(
    "a strong b em i code span sup sub small img kbd mark s del u abbr cite q tt big font "
    "br wbr picture source".split())


@dataclass
class ShapeCounts:
    """One row: graded links, those kept; blocks holding such links, those mixed."""

    links: int = 0
    kept: int = 0
    blocks: int = 0
    mixed: int = 0

    def add(self, other: ShapeCounts) -> None:
        self.links += other.links
        self.kept += other.kept
        self.blocks += other.blocks
        self.mixed += other.mixed

    @property
    def kept_share(self) -> float:
        return self.kept / self.links if self.links else 0.0

    @property
    def mixed_share(self) -> float:
        return self.mixed / self.blocks if self.blocks else 0.0


@dataclass
class ListsReport:
    rendering: str
    split: str
    pages: int = 0
    shapes: dict[str, ShapeCounts] = field(
        default_factory=lambda: {shape: ShapeCounts() for shape in SHAPES})

    def add(self, other: ListsReport) -> None:
        self.pages += other.pages
        for shape, counts in other.shapes.items():
            self.shapes[shape].add(counts)


def shape_of(anchor: etree._Element) -> str:
    """The shape of the markup around a link (module doc).

    >>> page = etree.fromstring('<div><ul><li><b><a href="x">x</a></b><ul><li>'
    ...     '<a href="y">y</a></li></ul></li></ul><p><a href="z">z</a></p></div>')
    >>> [shape_of(a) for a in page.iter("a")]
    ['li with a sub-list', 'li', 'p']
    """
    element = anchor.getparent()
    while element is not None and element.tag in INLINE:
        element = element.getparent()
    if element is None:
        return "other"
    tag = element.tag
    if tag == "li":
        return "li with a sub-list" if element.find(".//ul") is not None \
            or element.find(".//ol") is not None else "li"
    if tag in ("td", "th"):
        return "td"
    if tag in ("dt", "dd"):
        return "dt / dd"
    if tag == "p":
        parent = element.getparent()
        return "li > p" if parent is not None and parent.tag == "li" else "p"
    if tag == "div" and element.get("class"):
        parent = element.getparent()
        if parent is not None and sum(1 for sibling in parent if sibling.tag == "div"
                                      and sibling.get("class") == element.get("class")) >= 2:
            return "div card"
    return "other"


def render(root: etree._Element, rendering: str) -> etree._Element:
    """A copy of the page with every list rewritten (module doc): ``table`` (one row per
    item: the item's first link in a cell, the rest in a second), ``dl`` (the first link a
    ``dt``, the rest a ``dd``), ``cards`` (``div.cards > div.card``, the description in a ``p``),
    ``loose`` (each item's text in a ``p``, as Markdown renders a list with blank lines).
    Sub-lists stay lists inside the new item (in a loose list, loose lists)."""
    if rendering not in RENDERINGS:
        raise ValueError(f"the renderings are {', '.join(RENDERINGS)}, got {rendering!r}")
    root = copy.deepcopy(root)
    if rendering == "as-is":
        return root
    # innermost lists first, so an item's sub-list is rewritten before the item moves; a
    # sub-list stays a list (an entry's sub-entries) except in a loose rendering
    for listing in reversed([e for e in root.iter("ul", "ol")]):
        if rendering != "loose" and any(True for _ in listing.iterancestors("li")):
            continue
        items = [child for child in listing if child.tag == "li"]
        if not items:
            continue
        if rendering == "table":
            listing.tag, item_tag = "table", "tr"
        elif rendering == "dl":
            listing.tag, item_tag = "dl", None
        elif rendering == "cards":
            listing.tag, item_tag = "div", "div"
            listing.attrib.clear()
            listing.set("class", "cards")
        else:
            item_tag = "li"
        for item in items:
            _render_item(listing, item, rendering, item_tag)
    return root


def _render_item(listing: etree._Element, item: etree._Element, rendering: str,
                 item_tag: str | None) -> None:
    head = etree.Element("span")
    rest = etree.Element("span")
    head.text, item.text = item.text, None
    target = head
    for child in list(item):
        target.append(child)  # moves it, with its tail
        if child.tag == "a" or (target is head and child.find(".//a") is not None):
            target = rest
    if target is head:  # no link: everything is the description
        head, rest = etree.Element("span"), head
    if rendering == "loose":
        paragraph = etree.SubElement(item, "p")
        paragraph.append(head)
        paragraph.append(rest)
        return
    if rendering == "dl":
        index = listing.index(item)
        listing.remove(item)
        term = etree.Element("dt")
        term.append(head)
        description = etree.Element("dd")
        description.append(rest)
        listing.insert(index, term)
        listing.insert(index + 1, description)
        return
    item.tag = item_tag or "li"
    item.attrib.clear()
    if rendering == "table":
        first = etree.SubElement(item, "td")
        first.append(head)
        second = etree.SubElement(item, "td")
        second.append(rest)
    else:
        item.set("class", "card")
        item.append(head)
        text = etree.SubElement(item, "p")
        text.append(rest)


def _parse(html: str) -> etree._Element | None:
    parser = etree.HTMLParser(huge_tree=True, recover=True, encoding="utf-8")
    return etree.fromstring(html.replace("\x00", "\ufffd").encode("utf-8", "replace"), parser)


def in_split(url: str, split: str, seed: int = 1) -> bool:
    """Whether a hub page is in the development or test half (a seeded hash of its URL)."""
    if split == "all":
        return True
    digest = hashlib.sha256(f"{seed}:{url}".encode()).digest()
    return (digest[0] % 2 == 0) == (split == "dev")


def report_page(html: str, url: str, rendering: str = "as-is",
                params: AdjustParams = AdjustParams()) -> ListsReport:
    """One hub page's rows (module doc)."""
    from filters.urls import normalise_url
    from relatedpages.evaluation.hubs import _site

    report = ListsReport(rendering, "page", pages=1)
    page_url = normalise_url(url) or url
    site = _site(page_url) or page_url
    root = _parse(html)
    if root is None:
        return report
    if rendering != "as-is":  # parsed again: the shapes are read from what the segmenter reads
        html = etree.tostring(render(root, rendering), encoding="unicode", method="html")
        root = _parse(html)
        if root is None:
            return report
    # the heading sections' outside links (first occurrence per section) and their shapes
    sections: list[dict[str, str]] = []
    inside_heading = 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in HEADINGS:
            inside_heading += 1 if event == "start" else -1
            if event == "start":
                sections.append({})
            continue
        if event != "start" or tag != "a" or inside_heading or not sections:
            continue
        href = element.get("href")
        resolved = normalise_url(href, page_url) if href is not None else None
        if resolved is None or _site(resolved) in (None, site):
            continue
        sections[-1].setdefault(resolved, shape_of(element))
    graded = [links for links in sections if len(links) >= 2]
    where: dict[str, set[int]] = {}
    for number, links in enumerate(graded):
        for href in links:
            where.setdefault(href, set()).add(number)
    segmentation = segment_html(html, page_url, params)
    kept: set[tuple[int, str]] = set()
    for block in segmentation.blocks:
        in_block: dict[int, set[str]] = {}
        shapes: set[str] = set()
        common: set[int] | None = None  # the sections holding every graded link of the block
        for link in block:
            numbers = where.get(link.href)
            if not numbers:
                continue
            common = set(numbers) if common is None else common & numbers
            for number in numbers:
                in_block.setdefault(number, set()).add(link.href)
                shapes.add(graded[number][link.href])
        for number, hrefs in in_block.items():
            if len(hrefs) >= 2:
                kept.update((number, href) for href in hrefs)
        for shape in shapes:
            report.shapes[shape].blocks += 1
            report.shapes[shape].mixed += not common
    for number, links in enumerate(graded):
        for href, shape in links.items():
            report.shapes[shape].links += 1
            report.shapes[shape].kept += (number, href) in kept
    return report


def report_of_file(path: Path, rendering: str = "as-is", split: str = "all",
                   params: AdjustParams = AdjustParams(), seed: int = 1) -> ListsReport:
    """The rows over every hub page of a crawl file (``awesomehub.warc.gz``) in the split."""
    from relatedpages.corpus.ingest import Page, read_pages
    from segmenter.decode import decode_html

    report = ListsReport(rendering, split)
    for item in read_pages(path):
        if isinstance(item, Page) and in_split(item.url, split, seed):
            text = decode_html(item.body, item.http_charset).text
            report.add(report_page(text, item.url, rendering, params))
    return report


def format_reports(reports: Sequence[ListsReport]) -> str:
    """A Markdown table: per shape (rows) and rendering (columns), the links' kept share,
    the mixed share of the blocks holding them, and the number of links."""
    lines = ["kept % / mixed % (links) per shape of the hub lists' markup",
             "| shape | " + " | ".join(report.rendering for report in reports) + " |",
             "|---|" + "---:|" * len(reports)]
    for shape in SHAPES:
        if not any(report.shapes[shape].links for report in reports):
            continue
        cells = []
        for report in reports:
            counts = report.shapes[shape]
            cells.append(f"{100 * counts.kept_share:.1f} / {100 * counts.mixed_share:.1f} "
                         f"({counts.links:,})" if counts.links else "–")
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def goal_misses(reports: Iterable[ListsReport], kept: float = 0.98,
                mixed: float = 0.02) -> list[str]:
    """The list shapes below the goal (kept ≥ 98 %, mixed ≤ 2 %), for people and tests."""
    misses = []
    for report in reports:
        for shape in LIST_SHAPES:
            counts = report.shapes[shape]
            if counts.links and (counts.kept_share < kept or counts.mixed_share > mixed):
                misses.append(f"{report.rendering} {shape}: kept {100 * counts.kept_share:.1f} %,"
                              f" mixed {100 * counts.mixed_share:.1f} %")
    return misses


__all__ = ["HUB_PATH", "LIST_SHAPES", "RENDERINGS", "SHAPES", "SPLITS", "ListsReport",
           "format_reports", "goal_misses", "in_split", "render", "report_of_file",
           "report_page", "shape_of"]
