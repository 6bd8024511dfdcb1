"""What the scan makes of a page: its sections (links, word counts, the text's styles, the
heading and list groups around them), the tag sets that cut a page into sections, and the
word count (paper, "The HTML segmentation flow", scanning stage; ``segmenter.scan`` scans,
``segmenter.adjust`` merges).

Both scans build these: the pure-Python parser target (:mod:`segmenter.scanner`) and the
compiled one (``native_scan.pyx`` and the modules it cimports), so they live below both.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, Mapping, TypeAlias

from segmenter.style import RGB

# Debnath et al.'s partitioning tags plus the HTML5 sectioning elements.  <li> is not one:
# a list is one section, as in the paper.
PARTITIONING_TAGS = frozenset(
    "table tr td th p ul ol dl div h1 h2 h3 h4 h5 h6 hr form section nav header footer "
    "article aside main blockquote body center".split()
)
# Subtrees whose text and links are not page content a reader sees as links.
SKIPPED_TAGS = frozenset(
    "script style noscript template svg math select textarea iframe object head title".split()
)
BOLD_TAGS = frozenset("b strong h1 h2 h3 h4 h5 h6 th".split())
HEADINGS = frozenset("h1 h2 h3 h4 h5 h6".split())
#: The text a heading titles: lists, paragraphs and quotations.  A div, table, nav, footer …
#: after a heading is page layout (an ad box, the footer), not the heading's text.
CONTENT_TAGS = frozenset("ul ol dl p blockquote".split())
#: HTML's sectioning elements (and header, footer, main): where one starts or ends, the text
#: of the heading before it ends (HTML's outline), e.g. at a page's footer after an article.
#: The end of a header does not: the h1 of an article's header titles the article's text.
SECTIONING_TAGS = frozenset("section article aside nav header footer main".split())
SECTION_END_TAGS = SECTIONING_TAGS - {"header"}
#: Repeated siblings (issue 42): a list, a definition list or a table is a *list group*, its
#: items (li, dt, dd; a table's rows) the repeats; and same-class div, article or section
#: children of one parent are a *card group*, each card an item.  The scan records, per
#: section, the groups around it and the item it is in (``Section.lists``); the adjusting
#: stage joins the items of one group into one block (segmenter.adjust, rule 0).
LIST_TAGS = frozenset("ul ol dl table".split())
ITEM_TAGS = frozenset("li dt dd tr".split())
CARD_TAGS = frozenset("div article section".split())
#: The text flushes (one per run of text between tags) a description reads at most.
DESCRIPTION_PIECES = 64


#: A list group's key: (its element's number, tag); a card group's: (the parent's number,
#: tag, normalised class).  Element numbers count every element from the page's start.
Group: TypeAlias = "tuple[int, str] | tuple[int, str, str]"
#: The groups around a point of the page, outermost first, each with the number of the item
#: the point is in (0: inside the list but before its first item).
Lists: TypeAlias = "tuple[tuple[Group, int], ...]"

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD_RE = re.compile(rf"[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")

Resolver = Callable[[str, str], "str | None"]


def count_words(text: str) -> int:
    """Words in a text: alphanumeric runs; CJK text counts one word per two characters
    (the average length of a Chinese word), since it has no spaces.

    >>> count_words("Hello, world 42"), count_words("新浪新闻 news")
    (3, 3)
    """
    words = len(_WORD_RE.findall(text))
    if not text.isascii():
        cjk = len(_CJK_RE.findall(text))
        words += (cjk + 1) // 2
    return words


#: The words of a link's description (:class:`Link` ``text``) kept: a list entry's line, not
#: the paragraph an inline link happens to open.
DESCRIPTION_WORDS = 24


def description(pieces: list[str]) -> str:
    """The text pieces read after a link as its description: collapsed, cut at
    :data:`DESCRIPTION_WORDS` words, with the separator that opens a list entry's
    description ("- ", "– ", ": ") dropped.

    >>> description([" - A micro", "framework  for Python. "])
    'A micro framework for Python.'
    >>> description(["  "]), len(description(["w "] * 99).split())
    ('', 24)
    """
    words = " ".join(pieces).split()[:DESCRIPTION_WORDS + 1]
    while words and not any(ch.isalnum() for ch in words[0]):
        words = words[1:]
    return " ".join(words[:DESCRIPTION_WORDS])


@dataclass(frozen=True)
class Link:
    """A link as it appears in a page: absolute normalised href, its anchor text, and, for
    the link that opens a list item (an li, dt, dd or table row with no text before it), the
    item's text after it: the entry's description, "[Flask](…) – a micro web framework"
    (:func:`description`; the anchors of links inside it left out; "" for every other link).
    """

    href: str
    anchor: str
    text: str = ""


@dataclass(frozen=True)
class Section:
    """A scanned section and the features the adjusting rules read."""

    links: tuple[Link, ...]
    link_count: int  # every <a href>, web or not: a menu of javascript: links is still a menu
    words: int
    anchor_words: int
    chars: int  # Σ nᵢ, non-space characters of the text elements
    weighted_chars: float  # Σ nᵢ·bᵢ·edisᵢ (Eq. 1 numerator)
    bold: bool
    background: RGB
    label: str  # the innermost partitioning element, e.g. "ul" or "div#nav", for people
    fonts: tuple[str, ...] = ()  # font family/size/colour seen, most characters first
    # The n-th h1-h6 of the page whose text this section is: a list, paragraph or quotation
    # (CONTENT_TAGS) after it, before the next heading and any sectioning element's start or
    # end.  0 above the first heading, outside a heading's text and for layout (div, table …).
    heading: int = 0
    # Whether this section's partitioning element lies inside the previous section's, or
    # encloses it (a menu and its sub-menu, a list and the text around it): False when the
    # previous one is a sibling's or a cousin's (the next cell, column, box or list).  The
    # merging rules (1 and 5) join nested partitions only (segmenter.adjust).
    nested: bool = True
    # The list and card groups around the section's first text or link, outermost first, with
    # the item it is in (sections.Lists): the adjusting joins the items of one group (rule 0).
    lists: Lists = ()
    # The h1-h6 elements started before the section's first text or link: a heading between
    # two sections shows as a difference (rule 0 does not join across one).
    headings_seen: int = 0

    @property
    def afs(self) -> float:
        """Average font score, Eq. (1)."""
        return self.weighted_chars / self.chars if self.chars else 0.0


@dataclass(frozen=True)
class Outline:
    """What the scan saw of the page's repeated siblings beside the sections: per list or
    card group, the number of items started in it (an item may hold no text or link)."""

    items: Mapping[Group, int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ScanResult:
    sections: tuple[Section, ...]
    base_url: str
    outline: Outline = Outline()


def _label(tag: str, attrib: Mapping[str, str]) -> str:
    """A section's label for people: its tag, ``#id`` and its first two classes."""
    label = tag
    element_id = attrib.get("id")
    if element_id:
        label += "#" + element_id.strip()[:40]
    classes = (attrib.get("class") or "").split()
    if classes:
        label += "." + ".".join(classes[:2])[:40]
    return label
