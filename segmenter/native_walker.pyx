# cython: language_level=3, cdivision=True
"""The compiled scan's state machine: the events of one page (element start, text, end),
received from libxml2's SAX parser in C (``native_scan``), cut the page into sections as
``segmenter.scanner._SectionScanner`` does, through the same states.

The stacks are C arrays of borrowed references; text is counted on libxml2's UTF-8 bytes
(``native_text``), links already canonical are taken at once (``native_links``), ``<style>``
sheets read in C (``native_sheets``).  Style resolution, ``<base>`` and the other URLs call
the pure-Python scanner's own methods, so the rules live in one place.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from libc.math cimport floor
from libc.string cimport memcpy, strcmp, strlen
from lxml.includes cimport tree

from segmenter.native_links cimport _canonical_link
from segmenter.native_tags cimport (
    _A, _BASE, _BODY_OR_FONT, _CARD, _HEADING, _ITEM, _LIST, _PARTITIONING, _SECTION_END,
    _SECTIONING, _SKIPPED, _STYLE, _find, _style_attribute, _tag_of, _utf8_n,
)
from segmenter.native_text cimport _collapsed, _count

from filters.urls import normalise_url
from segmenter.native_links import NOT_A_PAGE
from segmenter.native_sheets import sheet_rules
from segmenter.scanner import _INHERIT, _SectionScanner, _Style
from segmenter.sections import CONTENT_TAGS, DESCRIPTION_PIECES, Link, Outline, ScanResult
from segmenter.sections import Section, _label, description
from segmenter.style import WHITE

#: Section labels by (tag, id, class), for the pages of the process (emptied when full).
cdef dict _FORMATTED_LABELS = {}
cdef Py_ssize_t _LABELS_KEPT = 65536

cdef object _PENDING = object()  # a stack entry: resolve this element's style from its node
cdef object _new_section = Section.__new__
cdef object _new_link = Link.__new__
cdef object _NOT_A_PAGE = NOT_A_PAGE  # _canonical_link: normalise_url gives None
cdef str _DOCUMENT = "#document"
cdef const char* _NO_VALUE = ""  # an attribute without a value reads as "" (lxml's target)


cdef class _Builder:
    """``segmenter.scanner._SectionBuilder`` with C counters."""

    def __init__(self, label, Py_ssize_t heading):
        self.label = label
        self.heading = heading
        self.lists = None
        self.headings_seen = 0
        self.links = []
        self.link_count = self.words = self.anchor_words = self.chars = 0
        self.weighted_chars = 0.0
        self.bold = False
        self.background = None
        self.fonts = {}

    cdef object build(self, bint nested):
        cdef dict fonts = self.fonts
        if len(fonts) == 1:
            for style in fonts:
                described = (_describe(style),)
        else:
            ranked = sorted(fonts.items(), key=_minus_count)[:3]
            described = tuple(dict.fromkeys([_describe(style) for style, _ in ranked]))
        label = self.label
        tag = label if type(label) is str else label[0]
        section = _new_section(Section)
        # Section's own fields, as its __init__ would set them (a frozen dataclass sets
        # each through object.__setattr__, the slowest part of building one).
        cdef dict fields = section.__dict__
        fields["links"] = tuple(self.links)
        fields["link_count"] = self.link_count
        fields["words"] = self.words
        fields["anchor_words"] = self.anchor_words
        fields["chars"] = self.chars
        fields["weighted_chars"] = _round6(self.weighted_chars)
        fields["bold"] = self.bold
        fields["background"] = self.background or WHITE
        fields["label"] = label if type(label) is str else label[1]
        fields["fonts"] = described
        fields["heading"] = self.heading if tag in CONTENT_TAGS else 0
        fields["nested"] = nested
        fields["lists"] = self.lists or ()
        fields["headings_seen"] = self.headings_seen
        return section


cdef inline double _round6(double x) except? -1.0:
    """``round(x, 6)`` (the pure scan's), exactly, without its decimal conversion where
    x·10⁶ is far from a half: below 2⁴², fl(x·10⁶) is within 2⁻¹¹ of the exact product, so
    both round to the same integer r when the fraction is more than 10⁻³ from ½, and r / 10⁶
    (an exact integer over an exact 10⁶, rounded once) is the double nearest r·10⁻⁶, as
    round's decimal string read back is.  round itself otherwise (and for NaN)."""
    cdef double product = x * 1e6, whole, fraction
    if 0.0 <= product < 4398046511104.0:  # 2⁴²
        whole = floor(product)
        fraction = product - whole
        if fraction < 0.499 or fraction > 0.501:
            return (whole + (fraction > 0.5)) / 1e6
    return round(x, 6)


def round6(double x):
    """:func:`_round6` for Python (the tests compare it with ``round(x, 6)``)."""
    return _round6(x)


cdef inline str _describe(style):
    """_Style.describe(), read from its memo when it has one."""
    described = style._described
    return described if described is not None else style.describe()


def _minus_count(item):
    return -item[1]


cdef class _Walker:
    """The event state machine of ``segmenter.scanner._SectionScanner``, driven by SAX events.

    The stacks are C arrays of borrowed references: tag names from native_tags' table (kept
    for the process), styles from the scanner's ``_styles_by_key`` (kept for the page), and
    the two markers.  Text is counted on libxml2's UTF-8 bytes: a ``str`` is made only for
    link text and ``<style>`` sheets."""

    def __init__(self, str page_url, resolve):
        self.scanner = _SectionScanner(page_url, resolve)
        self.depth = 1
        self.style_stack[0] = <PyObject*>self.scanner._styles[0]
        self.tag_stack[0] = <PyObject*>_DOCUMENT
        self.flag_stack[0] = 0
        self.number_stack[0] = 0
        self.elements = 0
        self.open_lists = ()
        self.list_depths = []
        self.items = {}
        self.owned = []
        self.styled_tags = self.scanner._styled_tags
        self.labels = ["body"]
        self.built_depth = self.lowest_depth = 1
        self.skip_depth = self.link_depth = self.headings = self.heading = 0
        self.base_seen = self.collecting_css = False
        self.css = []
        self.link_text = []
        self.pieces = []
        self.items_open = self.describing_depth = 0
        self.item_fresh = self.link_leads = False
        self.describing = None
        self.description = []
        self.sections = []
        self.link_href = None
        self.resolved = {}
        self.own_styles = {}
        self.sheet = self.scanner._sheet
        self.style_memo = self.scanner._style_cache
        self.styles_by_key = self.scanner._styles_by_key
        self.class_hits = self.sheet._class_hits
        self.class_rules = self.id_rules = False
        self.fast_links = resolve is normalise_url
        self.current = _Builder("body", 0)
        self.text_any = self.in_word = False
        self.text_nonspace = self.text_words = self.text_cjk = 0
        self.saved_used = 0
        self.saved_size = 4096
        self.saved = <char*>PyMem_Malloc(self.saved_size)
        if self.saved is NULL:
            raise MemoryError()
        self.error = None

    def __dealloc__(self):
        PyMem_Free(self.saved)

    cdef int save(self, Py_ssize_t depth, const tree.xmlChar** atts, bint every) except -1:
        """Keep the attributes the element's style may need (``every``: all of them)."""
        cdef Py_ssize_t index = 0, name_size, value_size, needed
        cdef const char* value
        cdef char* grown
        self.saved_at[depth] = self.saved_used
        while True:
            name = <const char*>atts[index]
            if name is NULL:
                name_size = value_size = 0
            elif every or _style_attribute(name):
                value = <const char*>atts[index + 1] if atts[index + 1] is not NULL else _NO_VALUE
                name_size = strlen(name)
                value_size = strlen(value)
            else:
                index += 2
                continue
            needed = self.saved_used + name_size + value_size + 2
            if needed > self.saved_size:
                grown = <char*>PyMem_Realloc(self.saved, needed * 2)
                if grown is NULL:
                    raise MemoryError()
                self.saved = grown
                self.saved_size = needed * 2
            if name is NULL:
                self.saved[self.saved_used] = 0
                self.saved_used += 1
                return 0
            memcpy(self.saved + self.saved_used, name, name_size + 1)
            self.saved_used += name_size + 1
            memcpy(self.saved + self.saved_used, value, value_size + 1)
            self.saved_used += value_size + 1
            index += 2

    cdef object saved_value(self, Py_ssize_t position, const char* name):
        """A kept attribute of the open element at ``position`` as a str, or None."""
        cdef Py_ssize_t at = self.saved_at[position]
        cdef Py_ssize_t size
        if at < 0:
            return None
        while self.saved[at] != 0:
            size = strlen(self.saved + at)
            if strcmp(self.saved + at, name) == 0:
                at += size + 1
                return _utf8_n(self.saved + at, strlen(self.saved + at))
            at += size + 1
            at += strlen(self.saved + at) + 1
        return None

    cdef dict saved_attributes(self, Py_ssize_t position):
        """All kept attributes of the open element at ``position``, as the parser target's
        ``attrib`` (later duplicates win)."""
        cdef Py_ssize_t at = self.saved_at[position]
        cdef Py_ssize_t size
        cdef dict attrib = {}
        if at < 0:
            return attrib
        while self.saved[at] != 0:
            size = strlen(self.saved + at)
            name = _utf8_n(self.saved + at, size)
            at += size + 1
            size = strlen(self.saved + at)
            attrib[name] = _utf8_n(self.saved + at, size)
            at += size + 1
        return attrib

    cdef int start(self, const tree.xmlChar* name, const tree.xmlChar** atts) except -1:
        if self.text_any:
            self.flush_text()
        cdef Py_ssize_t depth = self.depth
        if depth >= _DEPTH_LIMIT:
            raise OverflowError("deeper than the compiled scan's stacks")
        cdef PyObject* tag_ref
        cdef int flags = _tag_of(name, &tag_ref, self.owned)
        cdef const char* value
        if atts is not NULL and atts[0] is NULL:
            atts = NULL
        self.saved_at[depth] = -1
        self.tag_stack[depth] = tag_ref
        self.flag_stack[depth] = flags
        self.depth = depth + 1
        self.elements += 1
        self.number_stack[depth] = 0
        if self.skip_depth or flags & _SKIPPED:
            if flags & _BASE and not self.base_seen:
                self.set_base(atts)
            elif flags & _STYLE and not self.collecting_css:
                self.collecting_css = True
                self.css = []
            self.skip_depth += 1
            self.style_stack[depth] = <PyObject*>_INHERIT
            return 0
        if flags & (_ITEM | _LIST):
            if self.describing is not None:
                self.end_description()
            if flags & _ITEM:
                self.item_stack[self.items_open] = depth  # depth < _DEPTH_LIMIT: checked above
                self.items_open += 1
                self.item_fresh = True
        if flags & _A:
            if self.link_href is None:
                value = _find(atts, "href")
                if value is not NULL:
                    self.link_href = _utf8_n(value, strlen(value))
                    self.link_text = []
                    self.link_depth = depth
                    self.link_leads = self.item_fresh and self.items_open > 0
        elif flags & _BASE and not self.base_seen:
            self.set_base(atts)
        if atts is not NULL:
            self.save(depth, atts, flags & _BODY_OR_FONT)
            self.style_stack[depth] = <PyObject*>_PENDING
        elif <object>tag_ref in self.styled_tags:
            self.style_stack[depth] = <PyObject*>_PENDING
        else:
            self.style_stack[depth] = <PyObject*>_INHERIT
        if flags & (_LIST | _ITEM | _CARD):
            self.open_group(depth, flags, atts)
        self.number_stack[depth] = self.elements
        if flags & _PARTITIONING and self.link_href is None:
            self.flush_section()
            if flags & _HEADING:
                self.headings += 1
                self.heading = self.current.heading = self.headings
            elif flags & _SECTIONING:
                self.heading = self.current.heading = 0
            label = <object>tag_ref
            if _find(atts, "id") is not NULL or _find(atts, "class") is not NULL:
                label = depth
            self.labels.append(label)
            self.current.label = label
        return 0

    cdef int open_group(self, Py_ssize_t depth, int flags, const tree.xmlChar** atts) except -1:
        """segmenter.scanner's list, item and card bookkeeping at an element's start."""
        cdef Py_ssize_t number = self.elements
        cdef tuple lists = self.open_lists
        cdef const char* value
        if flags & _LIST:
            group = (number, <object>self.tag_stack[depth])
            self.open_lists = lists + ((group, 0),)
            self.list_depths.append(depth + 1)
        elif flags & _ITEM:
            if lists and len(lists[-1][0]) == 2:  # the innermost group is a list: a new item
                group = lists[-1][0]
                self.open_lists = lists[:-1] + ((group, number),)
                self.items[group] = self.items.get(group, 0) + 1
        else:
            value = _find(atts, "class")
            if value is NULL:
                return 0
            classes = _utf8_n(value, strlen(value))
            if not classes or classes.isspace():
                return 0
            group = (self.number_stack[depth - 1], <object>self.tag_stack[depth],
                     " ".join(classes.split()))
            self.open_lists = lists + ((group, number),)
            self.list_depths.append(depth + 1)
            self.items[group] = self.items.get(group, 0) + 1
        return 0

    cdef object label_at(self, Py_ssize_t position):
        """(tag, segmenter.sections._label's string) of the open element at ``position``, from
        its kept id and class."""
        tag = <object>self.tag_stack[position]
        key = (tag, self.saved_value(position, "id"), self.saved_value(position, "class"))
        label = _FORMATTED_LABELS.get(key)
        if label is None:
            attrib = {}
            if key[1] is not None:
                attrib["id"] = key[1]
            if key[2] is not None:
                attrib["class"] = key[2]
            if len(_FORMATTED_LABELS) >= _LABELS_KEPT:
                _FORMATTED_LABELS.clear()
            label = _FORMATTED_LABELS[key] = (tag, _label(tag, attrib))
        return label

    cdef int end(self) except -1:
        if self.text_any:
            self.flush_text()
        self.depth -= 1
        cdef int flags = self.flag_stack[self.depth]
        if self.saved_at[self.depth] >= 0:
            self.saved_used = self.saved_at[self.depth]
        cdef list depths = self.list_depths
        while depths and <Py_ssize_t>depths[-1] > self.depth:  # the group's element ended
            depths.pop()
            self.open_lists = self.open_lists[:-1]
        if self.skip_depth:
            self.skip_depth -= 1
            if flags & _STYLE and self.collecting_css:
                self.scanner._add_rules(sheet_rules("".join(self.css)))
                self.own_styles = {}  # they predate these rules
                self.class_rules = self.sheet.has_class_rules
                self.id_rules = self.sheet.has_id_rules
                self.styled_tags = self.scanner._styled_tags
                self.collecting_css = False
            return 0
        if self.link_href is not None and self.depth <= self.link_depth:
            self.finish_link()
        while self.items_open and self.item_stack[self.items_open - 1] >= self.depth:
            self.items_open -= 1  # an item ended (or its list)
        if self.describing is not None and self.depth <= self.describing_depth:
            self.end_description()
        if flags & _PARTITIONING and self.link_href is None:
            self.flush_section()
            if len(self.labels) > 1:
                self.labels.pop()
                if len(self.labels) < self.lowest_depth:
                    self.lowest_depth = len(self.labels)
            self.current.label = self.labels[-1]
            if flags & _SECTION_END:
                self.heading = self.current.heading = 0
        return 0

    cdef int data(self, const char* text, Py_ssize_t length) except -1:
        """Text: counted as segmenter.scanner's ``data`` would buffer it and ``_flush_text``
        count the buffer (leading whitespace dropped, words running on across pieces)."""
        if length <= 0:
            return 0
        if self.skip_depth:
            if self.collecting_css:
                self.css.append(_utf8_n(text, length))
            return 0
        cdef Py_ssize_t nonspace = 0, words = 0, cjk = 0
        cdef bint in_word = self.in_word
        _count(<const unsigned char*>text, length, &in_word, &nonspace, &words, &cjk)
        if not self.text_any and not nonspace:
            return 0  # leading whitespace: it can change no count (segmenter.scanner's data)
        self.text_any = True
        self.in_word = in_word
        self.text_nonspace += nonspace
        self.text_words += words
        self.text_cjk += cjk
        if self.link_href is not None or (self.describing is not None
                                          and len(self.description) < DESCRIPTION_PIECES):
            self.pieces.append(_utf8_n(text, length))  # a str only for text that is kept
        return 0

    cdef object close(self):
        if self.text_any:
            self.flush_text()
        if self.link_href is not None:
            self.finish_link()
        if self.describing is not None:
            self.end_description()
        self.flush_section()
        return ScanResult(sections=tuple(self.sections), base_url=self.scanner.base_url,
                          outline=Outline(self.items))

    cdef int set_base(self, const tree.xmlChar** atts) except -1:
        cdef const char* href = _find(atts, "href")
        if href is not NULL:
            self.scanner._set_base(_utf8_n(href, strlen(href)))
            self.base_seen = True
        return 0

    cdef object current_style(self):
        """Resolve the pending styles on the stack, bottom-up from the nearest resolved."""
        cdef Py_ssize_t index = self.depth - 1, position
        while type(<object>self.style_stack[index]) is not _Style:
            index -= 1
        style = <object>self.style_stack[index]
        for position in range(index + 1, self.depth):
            if self.style_stack[position] == <PyObject*>_PENDING:
                style = self.style_for(position, style)
            self.style_stack[position] = <PyObject*>style
        return style

    cdef object style_for(self, Py_ssize_t position, parent):
        """scanner._style_for with its memo (``_style_cache``, same key) read here: the
        parent's style at once where nothing can change it (no inline style, bgcolor, class or
        id a rule names, and a tag no rule styles); on a miss, scanner._own_style memoised by
        the element's attributes and combined with the parent's style here."""
        tag = <object>self.tag_stack[position]
        scanner = self.scanner
        if self.flag_stack[position] & _BODY_OR_FONT:
            return scanner._style_for(tag, self.saved_attributes(position), parent)
        inline = self.saved_value(position, "style")
        bgcolor = self.saved_value(position, "bgcolor")
        # a class or id that no rule names changes nothing: not part of the memo's key
        # (the sheet's own memo of that, read here; its method only on a miss)
        classes = self.saved_value(position, "class") if self.class_rules else None
        if classes is not None:
            named = self.class_hits.get(classes)
            if named is None:
                named = self.sheet.names_a_class(classes)
            if not named:
                classes = None
        element_id = self.saved_value(position, "id") if self.id_rules else None
        if element_id is not None and not self.sheet.names_an_id(element_id):
            element_id = None
        if inline is None and bgcolor is None and classes is None and element_id is None:
            if tag not in self.styled_tags:
                return parent
        key = (parent, tag, classes, element_id, inline, bgcolor)
        cdef dict memo = self.style_memo
        style = memo.get(key)
        if style is not None:
            return style
        # A miss: what the element sets itself depends on these attributes alone (and, for
        # a link, on <body link>), not on the parent: memoised apart, then combined here.
        own_key = key[1:] if not self.flag_stack[position] & _A else (key, scanner._link_colour)
        own = self.own_styles.get(own_key)
        if own is None:
            attrib = {}
            if inline is not None:
                attrib["style"] = inline
            if bgcolor is not None:
                attrib["bgcolor"] = bgcolor
            if classes is not None:
                attrib["class"] = classes
            if element_id is not None:
                attrib["id"] = element_id
            own = self.own_styles[own_key] = scanner._own_style(tag, attrib)
        style = memo[key] = self.combine(parent, <tuple>own)
        return style

    cdef object combine(self, parent, tuple own):
        """scanner._combine, with _Style's memo (``_styles_by_key``) read here."""
        colour, background, bold, family, size = own
        key = (parent.colour if colour is None else colour,
               parent.background if background is None else background,
               parent.bold if bold is None else bold,
               parent.family if family is None else family,
               parent.size if size is None else size)
        style = self.styles_by_key.get(key)
        if style is None:
            style = self.scanner._style(*key)
        return style

    cdef int flush_text(self) except -1:
        cdef Py_ssize_t nonspace = self.text_nonspace
        cdef Py_ssize_t words = self.text_words + (self.text_cjk + 1) // 2
        self.text_any = self.in_word = False
        self.text_nonspace = self.text_words = self.text_cjk = 0
        cdef list pieces = self.pieces
        if pieces:
            self.pieces = []
        if not nonspace:
            return 0
        style = <object>self.style_stack[self.depth - 1]
        if type(style) is not _Style:
            style = self.current_style()
        cdef _Builder current = self.current
        if current.lists is None:
            current.lists = self.open_lists
            current.headings_seen = self.headings
        if current.background is None:
            current.background = style.background
        current.chars += nonspace
        current.weighted_chars += <double>nonspace * <double>style.weight * <double>style.edis
        current.words += words
        if style.bold:
            current.bold = True
        cdef dict fonts = current.fonts
        fonts[style] = fonts.get(style, 0) + nonspace
        self.item_fresh = False
        if self.link_href is not None:
            current.anchor_words += words
            self.link_text.append("".join(pieces) if len(pieces) > 1 else pieces[0])
        elif self.describing is not None and len(self.description) < DESCRIPTION_PIECES:
            self.description.append("".join(pieces) if len(pieces) > 1 else pieces[0])
        return 0

    cdef int finish_link(self) except -1:
        href = self.link_href
        self.link_href = None
        cdef list pieces = self.link_text
        anchor = _collapsed(pieces[0] if len(pieces) == 1 else " ".join(pieces))
        self.link_text = []
        cdef _Builder current = self.current
        current.link_count += 1
        if current.lists is None:
            current.lists = self.open_lists
            current.headings_seen = self.headings
        if current.background is None:
            current.background = self.current_style().background
        base_url = self.scanner.base_url
        resolved = _canonical_link(href, base_url) if self.fast_links else None
        if resolved is _NOT_A_PAGE:
            resolved = None
        elif resolved is None:
            key = (href, base_url)
            resolved = self.resolved.get(key, _PENDING)
            if resolved is _PENDING:
                resolved = self.resolved[key] = self.scanner._resolve(href, base_url)
        self.item_fresh = False
        if resolved is not None:
            link = _new_link(Link)
            fields = link.__dict__
            fields["href"] = resolved
            fields["anchor"] = anchor
            current.links.append(link)
            if self.link_leads and self.items_open:  # it opens its list item
                self.describing = link
                self.describing_depth = self.item_stack[self.items_open - 1]
                self.description = []
        self.link_leads = False
        return 0

    cdef int end_description(self) except -1:
        """segmenter.scanner's ``_end_description`` (the link's Link.text)."""
        link = self.describing
        self.describing = None
        cdef list pieces = self.description
        if pieces:
            self.description = []
            text = description(pieces)
            if text:
                link.__dict__["text"] = text
        return 0

    cdef int flush_section(self) except -1:
        cdef _Builder current = self.current
        cdef Py_ssize_t depth
        if current.chars or current.link_count:
            if type(current.label) is int:
                current.label = self.label_at(current.label)
            depth = len(self.labels)  # segmenter.scanner's _flush_section
            self.sections.append(current.build(
                not (self.lowest_depth < self.built_depth and depth > self.lowest_depth)))
            self.built_depth = self.lowest_depth = depth
            self.current = _Builder(self.labels[-1], self.heading)
        return 0
