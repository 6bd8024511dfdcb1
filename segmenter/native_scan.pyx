# cython: language_level=3, cdivision=True
"""The scanning stage compiled: ``segmenter.scan``'s scan as a C walk of lxml's tree.

Same sections as ``segmenter.scan._SectionScanner`` (the pure-Python scan, and the fallback
when this extension is not built), computed without a Python call per parser event: lxml
builds its tree in C, and this module walks libxml2's nodes in C, replaying the events the
parser target would receive (start, text, end) through the same state machine.  Python
objects are made only for what a section keeps: non-space text, links, labels, styles.
Style resolution, ``<base>``, ``<style>`` sheets and URL resolution call the pure-Python
scanner's own methods, so the rules live in one place.

:func:`scan` returns None where the tree could differ from the event stream (libxml2's
tree builder stops at 2048 levels of nesting; its event stream does not): the caller then
runs the pure-Python scan.  ``tests/test_segmenter_same_output.py`` checks both paths give
the same sections on every page of ``../shared/data``.
"""
from cpython.unicode cimport PyUnicode_DecodeUTF8, Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE
from libc.string cimport strcmp, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree

from lxml import etree

from segmenter.scan import (
    BOLD_TAGS, CONTENT_TAGS, HEADINGS, PARTITIONING_TAGS, SECTION_END_TAGS, SECTIONING_TAGS,
    SKIPPED_TAGS, Link, ScanResult, Section, _INHERIT, _label, _SectionScanner, _Style,
)
from segmenter.style import WHITE

cdef extern from *:
    """
    #ifndef NATIVE_SCAN_SOURCE_SHA256
    #define NATIVE_SCAN_SOURCE_SHA256 "unknown"
    #endif
    """
    const char* NATIVE_SCAN_SOURCE_SHA256

cetree.import_lxml__etree()

#: sha256 of the .pyx this module was compiled from (setup.py passes it): the loader in
#: ``segmenter.scan`` uses this module only while the .pyx beside it is unchanged.
SOURCE_SHA256 = NATIVE_SCAN_SOURCE_SHA256.decode("ascii")
#: The lxml this module was compiled against: its C structures must be the running one's.
LXML_VERSION = cetree.LXML_VERSION_STRING.decode("ascii")
if LXML_VERSION != etree.__version__:
    raise ImportError(f"compiled against lxml {LXML_VERSION}, running {etree.__version__}")

# Tag flags, one bit per tag set of segmenter.scan.
cdef enum:
    _SKIPPED = 1
    _PARTITIONING = 2
    _HEADING = 4
    _SECTIONING = 8
    _SECTION_END = 16
    _CONTENT = 32
    _A = 64
    _BASE = 128
    _STYLE = 256
    _BODY_OR_FONT = 512
    _TREE_DEPTH_LIMIT = 2040  # libxml2's tree builder stops at 2048 levels (huge_tree)

cdef dict _TAG_FLAGS = {}
for _names, _flag in ((SKIPPED_TAGS, _SKIPPED), (PARTITIONING_TAGS, _PARTITIONING),
                      (HEADINGS, _HEADING), (SECTIONING_TAGS, _SECTIONING),
                      (SECTION_END_TAGS, _SECTION_END), (CONTENT_TAGS, _CONTENT), (("a",), _A),
                      (("base",), _BASE), (("style",), _STYLE), (("body", "font"), _BODY_OR_FONT)):
    for _name in _names:
        _TAG_FLAGS[_name] = _TAG_FLAGS.get(_name, 0) | _flag

cdef object _PENDING = object()  # a stack entry: resolve this element's style from its node
cdef object _new_section = Section.__new__
cdef object _new_link = Link.__new__


cdef inline bint _is_cjk(Py_UCS4 c) noexcept:
    return ((0x3040 <= c <= 0x30ff) or (0x3400 <= c <= 0x4dbf) or (0x4e00 <= c <= 0x9fff)
            or (0xf900 <= c <= 0xfaff) or (0xac00 <= c <= 0xd7af))


cdef Py_ssize_t _nonspace(str text):
    """len("".join(text.split())): the characters str.split() does not split at."""
    cdef Py_ssize_t count = 0
    cdef Py_UCS4 c
    for c in text:
        if not Py_UNICODE_ISSPACE(c):
            count += 1
    return count


def count_words(str text):
    """``segmenter.scan.count_words`` in C: runs of word characters other than ``_`` and CJK
    (the regex ``[^\\W_<CJK>]+``), plus one word per two CJK characters."""
    return _count_words(text)


cdef Py_ssize_t _count_words(str text):
    cdef Py_ssize_t words = 0, cjk = 0
    cdef bint in_word = False
    cdef Py_UCS4 c
    for c in text:
        if _is_cjk(c):
            cjk += 1
            in_word = False
        elif c != u'_' and Py_UNICODE_ISALNUM(c):
            if not in_word:
                words += 1
                in_word = True
        else:
            in_word = False
    return words + (cjk + 1) // 2


cdef str _utf8(const tree.xmlChar* text):
    return PyUnicode_DecodeUTF8(<const char*>text, strlen(<const char*>text), NULL)


cdef str _attribute_value(tree.xmlAttr* attribute):
    """The attribute's value as lxml's parser target reports it ('' when it has none)."""
    cdef tree.xmlNode* child = attribute.children
    if child is NULL:
        return ""
    if child.next is NULL:
        return _utf8(child.content) if child.content is not NULL else ""
    parts = []
    while child is not NULL:
        if child.content is not NULL:
            parts.append(_utf8(child.content))
        child = child.next
    return "".join(parts)


cdef tree.xmlAttr* _find(tree.xmlNode* node, const char* name) noexcept:
    cdef tree.xmlAttr* attribute = node.properties
    while attribute is not NULL:
        if strcmp(<const char*>attribute.name, name) == 0:
            return attribute
        attribute = attribute.next
    return NULL


cdef dict _attributes(tree.xmlNode* node):
    """The element's attributes as the parser target's ``attrib`` (later duplicates win)."""
    cdef dict attrib = {}
    cdef tree.xmlAttr* attribute = node.properties
    while attribute is not NULL:
        attrib[_utf8(attribute.name)] = _attribute_value(attribute)
        attribute = attribute.next
    return attrib


cdef class _Builder:
    """``segmenter.scan._SectionBuilder`` with C counters."""

    cdef public object label
    cdef public Py_ssize_t heading
    cdef list links
    cdef Py_ssize_t link_count, words, anchor_words, chars
    cdef double weighted_chars
    cdef bint bold
    cdef object background
    cdef dict fonts

    def __init__(self, label, Py_ssize_t heading):
        self.label = label
        self.heading = heading
        self.links = []
        self.link_count = self.words = self.anchor_words = self.chars = 0
        self.weighted_chars = 0.0
        self.bold = False
        self.background = None
        self.fonts = {}

    cdef object build(self):
        cdef dict fonts = self.fonts
        if len(fonts) == 1:
            described = tuple([style.describe() for style in fonts])
        else:
            ranked = sorted(fonts.items(), key=_minus_count)[:3]
            described = tuple(dict.fromkeys([style.describe() for style, _ in ranked]))
        label = self.label
        tag = label if type(label) is str else label[0]
        section = _new_section(Section)
        # Section's own fields, as its __init__ would set them (a frozen dataclass sets
        # each through object.__setattr__, the slowest part of building one).
        section.__dict__.update(
            links=tuple(self.links), link_count=self.link_count, words=self.words,
            anchor_words=self.anchor_words, chars=self.chars,
            weighted_chars=round(self.weighted_chars, 6), bold=self.bold,
            background=self.background or WHITE,
            label=label if type(label) is str else _label(*label), fonts=described,
            heading=self.heading if tag in CONTENT_TAGS else 0)
        return section


def _minus_count(item):
    return -item[1]


cdef class _Walker:
    """The event state machine of ``segmenter.scan._SectionScanner``, driven by a tree walk."""

    cdef object scanner  # the pure-Python scanner: styles, <base>, sheets, URL resolution
    cdef list styles  # per open element: a _Style, _INHERIT or _PENDING
    cdef list tags  # per open element: its tag
    cdef tree.xmlNode* nodes[_TREE_DEPTH_LIMIT]
    cdef list labels
    cdef Py_ssize_t skip_depth, link_depth, headings, heading
    cdef bint base_seen, collecting_css
    cdef list css, text, link_text, sections
    cdef object link_href
    cdef dict resolved
    cdef _Builder current

    def __init__(self, str page_url, resolve):
        self.scanner = _SectionScanner(page_url, resolve)
        self.styles = [self.scanner._styles[0]]
        self.tags = ["#document"]
        self.labels = ["body"]
        self.skip_depth = self.link_depth = self.headings = self.heading = 0
        self.base_seen = self.collecting_css = False
        self.css = []
        self.text = []
        self.link_text = []
        self.sections = []
        self.link_href = None
        self.resolved = {}
        self.current = _Builder("body", 0)

    cdef int start(self, tree.xmlNode* node) except -1:
        if self.text:
            self.flush_text()
        cdef list styles = self.styles
        cdef Py_ssize_t depth = len(styles)
        if depth >= _TREE_DEPTH_LIMIT:  # the tree may be cut short here: not the events
            raise OverflowError("as deep as the tree builder's limit")
        tag = _utf8(node.name)
        cdef int flags = _TAG_FLAGS.get(tag, 0)
        cdef tree.xmlAttr* attribute
        self.nodes[depth] = node
        self.tags.append(tag)
        if self.skip_depth or flags & _SKIPPED:
            if flags & _BASE and not self.base_seen:
                self.set_base(node)
            elif flags & _STYLE and not self.collecting_css:
                self.collecting_css = True
                self.css = []
            self.skip_depth += 1
            styles.append(_INHERIT)
            return 0
        if flags & _A:
            if self.link_href is None:
                attribute = _find(node, "href")
                if attribute is not NULL:
                    self.link_href = _attribute_value(attribute)
                    self.link_text = []
                    self.link_depth = depth
        elif flags & _BASE and not self.base_seen:
            self.set_base(node)
        if node.properties is not NULL or tag in self.scanner._styled_tags:
            styles.append(_PENDING)
        else:
            styles.append(_INHERIT)
        if flags & _PARTITIONING and self.link_href is None:
            self.flush_section()
            if flags & _HEADING:
                self.headings += 1
                self.heading = self.current.heading = self.headings
            elif flags & _SECTIONING:
                self.heading = self.current.heading = 0
            label = self.label_of(tag, node)
            self.labels.append(label)
            self.current.label = label
        return 0

    cdef object label_of(self, str tag, tree.xmlNode* node):
        """What the section label needs of the element (segmenter.scan._label reads its id
        and class): the tag alone when it has neither."""
        cdef tree.xmlAttr* element_id = _find(node, "id")
        cdef tree.xmlAttr* classes = _find(node, "class")
        if element_id is NULL and classes is NULL:
            return tag
        attrib = {}
        if element_id is not NULL:
            attrib["id"] = _attribute_value(element_id)
        if classes is not NULL:
            attrib["class"] = _attribute_value(classes)
        return (tag, attrib)

    cdef int end(self) except -1:
        if self.text:
            self.flush_text()
        cdef list styles = self.styles
        styles.pop()
        tag = self.tags.pop()
        cdef int flags = _TAG_FLAGS.get(tag, 0)
        if self.skip_depth:
            self.skip_depth -= 1
            if flags & _STYLE and self.collecting_css:
                self.scanner._add_style_sheet("".join(self.css))
                self.collecting_css = False
            return 0
        if self.link_href is not None and len(styles) <= self.link_depth:
            self.finish_link()
        if flags & _PARTITIONING and self.link_href is None:
            self.flush_section()
            if len(self.labels) > 1:
                self.labels.pop()
            self.current.label = self.labels[-1]
            if flags & _SECTION_END:
                self.heading = self.current.heading = 0
        return 0

    cdef int data(self, tree.xmlNode* node) except -1:
        if node.content is NULL:
            return 0
        text = _utf8(node.content)
        if self.skip_depth:
            if self.collecting_css:
                self.css.append(text)
            return 0
        if self.text or not text.isspace():
            self.text.append(text)
        return 0

    cdef object close(self):
        if self.text:
            self.flush_text()
        if self.link_href is not None:
            self.finish_link()
        self.flush_section()
        return ScanResult(sections=tuple(self.sections), base_url=self.scanner.base_url)

    cdef int set_base(self, tree.xmlNode* node) except -1:
        cdef tree.xmlAttr* href = _find(node, "href")
        if href is not NULL:
            self.scanner._set_base(_attribute_value(href))
            self.base_seen = True
        return 0

    cdef object current_style(self):
        """Resolve the pending styles on the stack, bottom-up from the nearest resolved."""
        cdef list styles = self.styles
        cdef Py_ssize_t index = len(styles) - 1, position
        while type(styles[index]) is not _Style:
            index -= 1
        style = styles[index]
        for position in range(index + 1, len(styles)):
            if styles[position] is _PENDING:
                style = self.style_for(position, style)
            styles[position] = style
        return style

    cdef object style_for(self, Py_ssize_t position, parent):
        """scanner._style_for: its memo (``_style_cache``, same key) read here, and its call
        skipped where it would return the parent's style at once (no inline style, bgcolor,
        matchable class or id, and a tag no rule styles)."""
        cdef tree.xmlNode* node = self.nodes[position]
        tag = self.tags[position]
        scanner = self.scanner
        if _TAG_FLAGS.get(tag, 0) & _BODY_OR_FONT:
            return scanner._style_for(tag, _attributes(node), parent)
        sheet = scanner._sheet
        inline = self.get(node, "style")
        bgcolor = self.get(node, "bgcolor")
        classes = self.get(node, "class") if sheet.has_class_rules else None
        element_id = self.get(node, "id") if sheet.has_id_rules else None
        if inline is None and bgcolor is None and classes is None and element_id is None:
            if tag not in scanner._styled_tags:
                return parent
        style = (<dict>scanner._style_cache).get((parent, tag, classes, element_id, inline, bgcolor))
        if style is None:
            style = scanner._style_for(tag, _attributes(node), parent)
        return style

    cdef object get(self, tree.xmlNode* node, const char* name):
        cdef tree.xmlAttr* attribute = _find(node, name)
        return None if attribute is NULL else _attribute_value(attribute)

    cdef int flush_text(self) except -1:
        cdef list parts = self.text
        text = "".join(parts) if len(parts) > 1 else parts[0]
        self.text = []
        cdef Py_ssize_t nonspace = _nonspace(text)
        if not nonspace:
            return 0
        style = self.styles[-1]
        if type(style) is not _Style:
            style = self.current_style()
        cdef Py_ssize_t words = _count_words(text)
        cdef _Builder current = self.current
        if current.background is None:
            current.background = style.background
        current.chars += nonspace
        current.weighted_chars += <double>nonspace * <double>style.weight * <double>style.edis
        current.words += words
        if style.bold:
            current.bold = True
        cdef dict fonts = current.fonts
        fonts[style] = fonts.get(style, 0) + nonspace
        if self.link_href is not None:
            current.anchor_words += words
            self.link_text.append(text)
        return 0

    cdef int finish_link(self) except -1:
        href = self.link_href
        self.link_href = None
        anchor = " ".join(" ".join(self.link_text).split())
        self.link_text = []
        cdef _Builder current = self.current
        current.link_count += 1
        if current.background is None:
            current.background = self.current_style().background
        base_url = self.scanner.base_url
        key = (href, base_url)
        resolved = self.resolved.get(key, _PENDING)
        if resolved is _PENDING:
            resolved = self.resolved[key] = self.scanner._resolve(href, base_url)
        if resolved is not None:
            link = _new_link(Link)
            link.__dict__.update(href=resolved, anchor=anchor)
            current.links.append(link)
        return 0

    cdef int flush_section(self) except -1:
        cdef _Builder current = self.current
        if current.chars or current.link_count:
            self.sections.append(current.build())
            self.current = _Builder(self.labels[-1], self.heading)
        return 0

    cdef object walk(self, tree.xmlNode* first):
        """Pre-order over the document's nodes: start, children, end per element."""
        cdef tree.xmlNode* node = first
        cdef tree.xmlNode* top = first.parent
        while node is not NULL:
            if node.type == tree.XML_ELEMENT_NODE:
                self.start(node)
                if node.children is not NULL:
                    node = node.children
                    continue
                self.end()
            elif node.type == tree.XML_TEXT_NODE or node.type == tree.XML_CDATA_SECTION_NODE:
                self.data(node)
            while node.next is NULL:
                node = node.parent
                if node is NULL or node is top:
                    return self.close()
                self.end()
            node = node.next
        return self.close()


def scan(bytes data, str page_url, resolve):
    """The sections of UTF-8 HTML, as ``segmenter.scan.scan_html`` computes them; None when
    only the event stream can tell (no tree, or the tree builder stopped early)."""
    parser = etree.HTMLParser(encoding="utf-8", huge_tree=True, recover=True,
                              remove_comments=True, remove_pis=True, no_network=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    cdef cetree._Element element = root
    cdef tree.xmlNode* first = <tree.xmlNode*>element._c_node
    while first.prev is not NULL:  # the document's first node (a DTD, or the root)
        first = first.prev
    walker = _Walker(page_url, resolve)
    try:
        return walker.walk(first)
    except OverflowError:
        return None
