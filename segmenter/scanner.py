"""The pure-Python scan: lxml's parser events through a parser target that cuts the page
into sections and computes each text element's style (inline styles, ``bgcolor``,
``<font>``, simple ``<style>`` rules; Eq. 1's CIELAB distance).  The compiled scan
(``native_scan.pyx``, ``native_walker.pyx``) drives the same state machine from C and calls
back into this module's scanner for styles, sheets and URLs, so the rules live in one
place."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, TypeAlias, cast

from lxml import etree

from segmenter.sections import (
    BOLD_TAGS,
    CARD_TAGS,
    CONTENT_TAGS,
    DESCRIPTION_PIECES,
    HEADINGS,
    ITEM_TAGS,
    LIST_TAGS,
    PARTITIONING_TAGS,
    SECTION_END_TAGS,
    SECTIONING_TAGS,
    SKIPPED_TAGS,
    Group,
    Link,
    Lists,
    Outline,
    Resolver,
    ScanResult,
    Section,
    _label,
    count_words,
    description,
)
from segmenter.style import (
    BLACK,
    LINK_BLUE,
    RGB,
    WHITE,
    EMPTY_DECLARATIONS,
    Declarations,
    SimpleSelector,
    StyleSheet,
    colour_distance,
    parse_colour,
    parse_declarations,
    sheet_rules,
)

HEADING_SIZES: Mapping[str, str] = {
    "h1": "2em", "h2": "1.5em", "h3": "1.17em", "h4": "1em", "h5": ".83em", "h6": ".67em",
}
# Attributes that can change style; elements without any of them (and without a tag
# default or a matching stylesheet rule) inherit their parent's style unchanged.
_STYLED_TAGS = BOLD_TAGS | {"a", "font", "body"}


class _AllTags:
    """Stands for the set of every tag (a stylesheet with a universal rule)."""

    def __contains__(self, tag: object) -> bool:
        return True


_ALL_TAGS = _AllTags()
_INHERIT = object()  # a stack entry: this element's style is its parent's

_Label: TypeAlias = "str | tuple[str, Mapping[str, str]]"  # a tag, or (tag, attributes)


class _Style:
    """The computed style of an element (immutable; shared by children that inherit it).

    edis (Eq. 1) and the font description are computed once per distinct style, not per
    text element."""

    __slots__ = ("colour", "background", "bold", "family", "size", "edis", "weight", "_described")

    def __init__(self, colour: RGB, background: RGB, bold: bool, family: str, size: str) -> None:
        self.colour = colour
        self.background = background
        self.bold = bold
        self.family = family
        self.size = size
        self.edis = colour_distance(colour, background)
        self.weight = 1.2 if bold else 1.0  # bᵢ in Eq. (1)
        self._described: str | None = None

    def key(self) -> tuple[RGB, RGB, bool, str, str]:
        return (self.colour, self.background, self.bold, self.family, self.size)

    def describe(self) -> str:
        if self._described is None:
            r, g, b = self.colour
            self._described = (f"{self.family} {self.size} #{r:02x}{g:02x}{b:02x}"
                               + (" bold" if self.bold else ""))
        return self._described


_DEFAULT_STYLE_ARGS = (BLACK, WHITE, False, "serif", "medium")
#: The styles met so far, by their fields: a style is immutable and depends on nothing else,
#: so the pages of a process share them (most pages repeat a few dozen colours and fonts,
#: and each new one costs a CIELAB distance).  Emptied when it reaches _STYLES_KEPT; each
#: scanner keeps its page's own in ``_styles_by_key``.
_STYLES: dict[tuple[RGB, RGB, bool, str, str], _Style] = {}
_STYLES_KEPT = 65536
#: What an element sets itself, in _Style's field order; None: inherited from the parent.
Overrides: TypeAlias = "tuple[RGB | None, RGB | None, bool | None, str | None, str | None]"


class _SectionBuilder:
    __slots__ = ("label", "links", "link_count", "words", "anchor_words", "chars",
                 "weighted_chars", "bold", "background", "fonts", "heading", "lists",
                 "headings_seen")

    def __init__(self, label: "_Label", heading: int = 0) -> None:
        self.label = label
        self.heading = heading
        self.links: list[Link] = []
        self.link_count = 0
        self.words = 0
        self.anchor_words = 0
        self.chars = 0
        self.weighted_chars = 0.0
        self.bold = False
        self.background: RGB | None = None
        self.fonts: dict[_Style, int] = {}
        self.lists: Lists | None = None  # set at the first text or link
        self.headings_seen = 0

    @property
    def empty(self) -> bool:
        return not self.chars and not self.link_count

    def build(self, nested: bool = True) -> Section:
        fonts = self.fonts
        if len(fonts) == 1:
            described: tuple[str, ...] = tuple(style.describe() for style in fonts)
        else:
            ranked = sorted(fonts.items(), key=lambda kv: -kv[1])[:3]
            described = tuple(dict.fromkeys(style.describe() for style, _ in ranked))
        label = self.label
        tag = label if isinstance(label, str) else label[0]
        return Section(
            links=tuple(self.links),
            link_count=self.link_count,
            words=self.words,
            anchor_words=self.anchor_words,
            chars=self.chars,
            weighted_chars=round(self.weighted_chars, 6),
            bold=self.bold,
            background=self.background or WHITE,
            label=label if isinstance(label, str) else _label(*label),
            fonts=described,
            heading=self.heading if tag in CONTENT_TAGS else 0,
            nested=nested,
            lists=self.lists or (),
            headings_seen=self.headings_seen,
        )


class _SectionScanner:
    """lxml parser target: receives start/end/data events and builds sections.

    This is the hot path of the whole segmenter (a callback per element and text node):
    elements that change nothing reuse their parent's style object, whitespace-only text
    returns at once, and an empty section is relabelled rather than rebuilt."""

    def __init__(self, page_url: str, resolve: Resolver) -> None:
        self.base_url = page_url
        self._resolve = resolve
        self._base_seen = False
        self._sheet = StyleSheet()
        self._styles_by_key: dict[tuple[RGB, RGB, bool, str, str], _Style] = {}
        self._style_cache: dict[tuple[object, ...], _Style] = {}
        self._styled_tags: frozenset[str] | _AllTags = _STYLED_TAGS
        self._resolved: dict[tuple[str, str], str | None] = {}
        default = self._style(*_DEFAULT_STYLE_ARGS)
        # One entry per open element: its resolved style, or what is needed to resolve it
        # (tag, attributes), or _INHERIT.  Styles are resolved lazily, when text or a link
        # needs them, so elements with no text beneath them never pay for style work.
        self._styles: list[_Style | tuple[str, Mapping[str, str]] | object] = [default]
        self._labels: list[_Label] = ["body"]
        self._link_colour = LINK_BLUE
        self._skip_depth = 0
        self._css: list[str] | None = None
        self._text: list[str] = []
        self._link_href: str | None = None
        self._link_text: list[str] = []
        self._link_depth = 0
        # List entries' descriptions (Link.text): the depths of the open items, whether the
        # innermost has had no text or link yet, whether the open link opens its item, and
        # the link whose description is being read with its item's depth and text so far
        self._item_depths: list[int] = []
        self._item_fresh = False
        self._link_leads = False
        self._describing: Link | None = None
        self._describing_depth = 0
        self._description: list[str] = []
        self._sections: list[Section] = []
        self._headings = 0  # h1-h6 elements started so far
        self._heading = 0  # the one whose text is being read (Section.heading), 0: none
        self._current = _SectionBuilder(label="body")
        # Section.nested: the partitioning depth (len(_labels)) when the last section was
        # built, and the lowest it has been since.
        self._built_depth = self._lowest_depth = 1
        # Repeated siblings (Section.lists, Outline): every element's number (a count of
        # start events), per open element its number, the open groups with their current
        # item, the depth (len(_styles)) of the element that opened each, and the items
        # started per group (Outline).
        self._elements = 0
        self._numbers: list[int] = [0]
        self._lists: Lists = ()
        self._list_depths: list[int] = []
        self._items: dict[Group, int] = {}

    # -- lxml target interface --------------------------------------------------------

    def start(self, tag: str, attrib: Mapping[str, str]) -> None:
        if self._text:
            self._flush_text()
        styles = self._styles
        self._elements += 1
        if self._skip_depth or tag in SKIPPED_TAGS:
            self._numbers.append(0)
            if tag == "base" and not self._base_seen:
                self._set_base(attrib.get("href"))
            elif tag == "style" and self._css is None:
                self._css = []  # collect the rules: <style> is usually inside a skipped <head>
            self._skip_depth += 1
            styles.append(_INHERIT)
            return
        if tag in ITEM_TAGS or tag in LIST_TAGS:
            if self._describing is not None:
                self._end_description()
            if tag in ITEM_TAGS:
                self._item_depths.append(len(styles))
                self._item_fresh = True
        if tag == "a":
            if self._link_href is None:
                href = attrib.get("href")
                if href is not None:
                    self._link_href = href
                    self._link_text = []
                    self._link_depth = len(styles)
                    self._link_leads = self._item_fresh and bool(self._item_depths)
        elif tag == "base" and not self._base_seen:
            self._set_base(attrib.get("href"))
        if attrib or tag in self._styled_tags:
            styles.append((tag, attrib))
        else:
            styles.append(_INHERIT)
        number = self._elements
        if tag in LIST_TAGS:
            self._open_group((number, tag), 0)
        elif tag in ITEM_TAGS:
            lists = self._lists
            if lists and len(lists[-1][0]) == 2:  # the innermost group is a list: a new item
                listing = lists[-1][0]
                self._lists = lists[:-1] + ((listing, number),)
                self._items[listing] = self._items.get(listing, 0) + 1
        elif tag in CARD_TAGS:
            classes = attrib.get("class")
            if classes and not classes.isspace():
                cards: Group = (self._numbers[-1], tag, " ".join(classes.split()))
                self._open_group(cards, number)
                self._items[cards] = self._items.get(cards, 0) + 1
        self._numbers.append(number)
        if tag in PARTITIONING_TAGS and self._link_href is None:
            self._flush_section()
            if tag in HEADINGS:  # its text: what follows, up to the next heading
                self._headings += 1
                self._heading = self._current.heading = self._headings
            elif tag in SECTIONING_TAGS:
                self._heading = self._current.heading = 0
            label = (tag, attrib) if attrib else tag  # formatted only if the section is kept
            self._labels.append(label)
            self._current.label = label

    def end(self, tag: str) -> None:
        if self._text:
            self._flush_text()
        styles = self._styles
        if len(styles) <= 1:
            return
        styles.pop()
        self._numbers.pop()
        depths = self._list_depths
        while depths and depths[-1] > len(styles):  # the element that opened a group ended
            depths.pop()
            self._lists = self._lists[:-1]
        if self._skip_depth:
            self._skip_depth -= 1
            if tag == "style" and self._css is not None:
                self._add_style_sheet("".join(self._css))
                self._css = None
            return
        if self._link_href is not None and len(styles) <= self._link_depth:
            self._finish_link()
        items = self._item_depths
        while items and items[-1] >= len(styles):  # an item ended (or its list did)
            items.pop()
        if self._describing is not None and len(styles) <= self._describing_depth:
            self._end_description()
        if tag in PARTITIONING_TAGS and self._link_href is None:
            self._flush_section()
            if len(self._labels) > 1:
                self._labels.pop()
                self._lowest_depth = min(self._lowest_depth, len(self._labels))
            self._current.label = self._labels[-1]
            if tag in SECTION_END_TAGS:
                self._heading = self._current.heading = 0

    def data(self, text: str) -> None:
        if self._skip_depth:
            if self._css is not None:
                self._css.append(text)
            return
        # Whitespace with nothing buffered is leading whitespace of a text node (most of
        # the page's text events): it can change no count, so it never reaches a flush.
        if self._text or not text.isspace():
            self._text.append(text)

    def comment(self, text: str) -> None:  # comments are not content
        return None

    def close(self) -> ScanResult:
        if self._text:
            self._flush_text()
        if self._link_href is not None:
            self._finish_link()
        if self._describing is not None:
            self._end_description()
        self._flush_section()
        return ScanResult(sections=tuple(self._sections), base_url=self.base_url,
                          outline=Outline(self._items))

    # -- helpers ----------------------------------------------------------------------

    def _open_group(self, group: Group, item: int) -> None:
        self._lists += ((group, item),)
        self._list_depths.append(len(self._styles))

    def _current_style(self) -> _Style:
        """Resolve the pending styles on the stack, bottom-up from the nearest resolved."""
        styles = self._styles
        index = len(styles) - 1
        while styles[index].__class__ is not _Style:
            index -= 1
        style = styles[index]
        for position in range(index + 1, len(styles)):
            entry = styles[position]
            if entry is not _INHERIT:
                tag, attrib = entry  # type: ignore[misc]
                style = self._style_for(tag, attrib, style)  # type: ignore[arg-type]
            styles[position] = style
        return style  # type: ignore[return-value]

    def _add_style_sheet(self, css: str) -> None:
        """A ``<style>`` element's text, at its end: its rules apply to what follows."""
        self._add_rules(sheet_rules(css))

    def _add_rules(self, rules: Iterable[tuple[SimpleSelector, Declarations]]) -> None:
        """A sheet's rules (``segmenter.style.sheet_rules``; the compiled scan's own)."""
        self._sheet.add_rules(rules)
        self._style_cache.clear()  # memoised styles predate these rules
        sheet_tags = self._sheet.styled_tags()
        self._styled_tags = _ALL_TAGS if sheet_tags is None else _STYLED_TAGS | sheet_tags

    def _style(self, colour: RGB, background: RGB, bold: bool, family: str, size: str) -> _Style:
        key = (colour, background, bold, family, size)
        style = self._styles_by_key.get(key)
        if style is None:
            style = _STYLES.get(key)
            if style is None:
                if len(_STYLES) >= _STYLES_KEPT:
                    _STYLES.clear()
                style = _STYLES[key] = _Style(colour, background, bold, family, size)
            # the page's own reference: the compiled scan's stacks borrow it
            self._styles_by_key[key] = style
        return style

    def _set_base(self, href: str | None) -> None:
        # Only the first <base href> counts (HTML: "the first base element with an href").
        if href is None:
            return
        self._base_seen = True
        resolved = self._resolve(href, self.base_url)
        if resolved is not None:
            self.base_url = resolved

    def _style_for(self, tag: str, attrib: Mapping[str, str], parent: _Style) -> _Style:
        """The element's style, memoised on what can change it: most elements of a page
        repeat a few (parent style, tag, class, inline style) combinations."""
        if tag in ("body", "font"):
            return self._compute_style(tag, attrib, parent)
        get = attrib.get
        sheet = self._sheet
        inline = get("style")
        bgcolor = get("bgcolor")
        # a class or id that no rule names changes nothing: not part of the memo's key
        classes = get("class") if sheet.has_class_rules else None
        if classes is not None and not sheet.names_a_class(classes):
            classes = None
        element_id = get("id") if sheet.has_id_rules else None
        if element_id is not None and not sheet.names_an_id(element_id):
            element_id = None
        if inline is None and bgcolor is None and classes is None and element_id is None:
            if tag not in self._styled_tags:
                return parent  # nothing on this element can change its style
        key = (parent, tag, classes, element_id, inline, bgcolor)
        style = self._style_cache.get(key)
        if style is None:
            style = self._style_cache[key] = self._compute_style(tag, attrib, parent)
        return style

    def _compute_style(self, tag: str, attrib: Mapping[str, str], parent: _Style) -> _Style:
        return self._combine(parent, self._own_style(tag, attrib))

    def _combine(self, parent: _Style, own: Overrides) -> _Style:
        """The parent's style with what the element sets itself (CSS inheritance)."""
        colour, background, bold, family, size = own
        return self._style(
            parent.colour if colour is None else colour,
            parent.background if background is None else background,
            parent.bold if bold is None else bold,
            parent.family if family is None else family,
            parent.size if size is None else size)

    def _own_style(self, tag: str, attrib: Mapping[str, str]) -> Overrides:
        """What the element sets itself, None where it inherits: its inline style over the
        sheet's matching rules, over its presentational attributes and the UA defaults
        (links blue, headings and ``<b>`` bold).  Apart from ``<body>`` and ``<font>``, only
        ``style``, ``bgcolor``, ``class`` and ``id`` matter (the compiled scan memoises on
        those)."""
        declared = EMPTY_DECLARATIONS
        style_attr = attrib.get("style")
        if style_attr:
            declared = parse_declarations(style_attr)
        if self._sheet:
            class_attr = attrib.get("class")
            classes = class_attr.split() if class_attr else ()
            declared = declared.over(self._sheet.match(tag, classes, attrib.get("id")))
        colour: RGB | None = None
        background: RGB | None = None
        bold: bool | None = None
        family: str | None = None
        size: str | None = None
        if tag == "body":
            colour = parse_colour(attrib.get("text", ""))
            link_colour = parse_colour(attrib.get("link", ""))
            if link_colour is not None:
                self._link_colour = link_colour
        elif tag == "a":
            colour = self._link_colour  # the UA stylesheet colours links, not inheritance
        elif tag == "font":
            colour = parse_colour(attrib.get("color", ""))
            face = attrib.get("face")
            if face:
                family = face.split(",")[0].strip().lower()
            if attrib.get("size"):
                size = "font-size-" + attrib["size"].strip()
        if tag in BOLD_TAGS:
            bold = True
            size = HEADING_SIZES.get(tag, size)
        bgcolor = attrib.get("bgcolor")
        if bgcolor:
            background = parse_colour(bgcolor)
        if declared.colour is not None:
            colour = declared.colour
        if declared.background is not None:
            background = declared.background
        if declared.bold is not None:
            bold = declared.bold
        family = declared.font_family or family
        size = declared.font_size or size
        return (colour, background, bold, family, size)

    def _flush_text(self) -> None:
        text = "".join(self._text) if len(self._text) > 1 else self._text[0]
        self._text = []
        if text.isspace():
            return
        nonspace = len("".join(text.split()))
        if not nonspace:
            return
        style = self._styles[-1]
        if style.__class__ is not _Style:
            style = self._current_style()
        words = count_words(text)
        current = self._current
        if current.lists is None:
            current.lists = self._lists
            current.headings_seen = self._headings
        if current.background is None:
            current.background = style.background
        current.chars += nonspace
        current.weighted_chars += nonspace * style.weight * style.edis  # nᵢ·bᵢ·edisᵢ
        current.words += words
        if style.bold:
            current.bold = True
        fonts = current.fonts
        fonts[style] = fonts.get(style, 0) + nonspace
        self._item_fresh = False
        if self._link_href is not None:
            current.anchor_words += words
            self._link_text.append(text)
        elif self._describing is not None and len(self._description) < DESCRIPTION_PIECES:
            self._description.append(text)

    def _finish_link(self) -> None:
        href, self._link_href = self._link_href, None
        if href is None:
            return
        anchor = " ".join(" ".join(self._link_text).split())
        self._link_text = []
        current = self._current
        current.link_count += 1
        if current.lists is None:
            current.lists = self._lists
            current.headings_seen = self._headings
        if current.background is None:
            current.background = self._current_style().background
        key = (href, self.base_url)
        try:
            resolved = self._resolved[key]
        except KeyError:
            resolved = self._resolved[key] = self._resolve(href, self.base_url)
        self._item_fresh = False
        if resolved is not None:
            link = Link(resolved, anchor)
            current.links.append(link)
            if self._link_leads and self._item_depths:  # it opens its list item
                self._describing = link
                self._describing_depth = self._item_depths[-1]
                self._description = []
        self._link_leads = False

    def _end_description(self) -> None:
        """The item of the link being described ended (or a list or item started inside
        it): the text read after the link is its description (Link.text, set before the
        page's sections are adjusted, on the link the section already holds)."""
        link, self._describing = self._describing, None
        if self._description:
            text = description(self._description)
            self._description = []
            if text:
                object.__setattr__(link, "text", text)  # Link is frozen for its readers

    def _flush_section(self) -> None:
        current = self._current
        if current.chars or current.link_count:
            # Not nested: the previous section's element ended (the depth went below it)
            # and this one's started after that (it is above the lowest point).
            depth = len(self._labels)
            lowest = self._lowest_depth
            self._sections.append(current.build(not (lowest < self._built_depth and depth > lowest)))
            self._built_depth = self._lowest_depth = depth
            self._current = _SectionBuilder(self._labels[-1], self._heading)



def _scan_events(data: bytes, page_url: str, resolve: Resolver) -> ScanResult:
    """The pure-Python scan: UTF-8 HTML through :class:`_SectionScanner` as parser target."""
    scanner = _SectionScanner(page_url, resolve)
    parser = etree.HTMLParser(
        target=cast(Any, scanner),  # lxml's stub types data as str | bytes: ours is str
        encoding="utf-8",  # already decoded: never let a <meta charset> re-decode it
        huge_tree=True,
        recover=True,
        remove_comments=True,
        remove_pis=True,
        no_network=True,
    )
    try:
        parser.feed(data)
        result = parser.close()
    except (etree.ParserError, etree.XMLSyntaxError):
        return ScanResult(sections=(), base_url=page_url)
    return result if isinstance(result, ScanResult) else ScanResult((), page_url)
