# cython: language_level=3, cdivision=True
"""The scanning stage compiled: ``segmenter.scan``'s scan on libxml2's SAX events, in C.

Same sections as ``segmenter.scanner._SectionScanner`` (the pure-Python scan, and the
fallback when this extension is not built), computed without a Python call per parser event:
this module runs libxml2's HTML parser (the copy lxml runs) with C callbacks set up as lxml sets
up a parser target, so they receive the events that scanner receives (start, text, end),
and feeds them through the same state machine.  No tree is built.  Python objects are made
only for what a section keeps: non-space text, links, labels, styles.  Style resolution,
``<base>``, ``<style>`` sheets and URL resolution call the pure-Python scanner's own
methods, so the rules live in one place.

:func:`scan` returns None for nesting deeper than its stacks (2,040 levels): the caller then
runs the pure-Python scan.  ``tests/test_segmenter_same_output.py`` checks both paths give
the same sections on every page of ``../shared/data`` and on generated pages.
"""
from cpython.object cimport PyObject
from cpython.unicode cimport (
    PyUnicode_AsUTF8, PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8, Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE,
)
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.string cimport memchr, memcpy, strcmp, strlen

cdef extern from "pythread.h":
    unsigned long PyThread_get_thread_ident()

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.xmlparser cimport xmlParserCtxt

from functools import lru_cache

from lxml import etree

from segmenter.scanner import _INHERIT, _SectionScanner, _Style
from segmenter.sections import (
    BOLD_TAGS, CARD_TAGS, CONTENT_TAGS, HEADINGS, ITEM_TAGS, LIST_TAGS, PARTITIONING_TAGS,
    SECTION_END_TAGS, SECTIONING_TAGS, SKIPPED_TAGS, Link, Outline, ScanResult, Section,
    _label,
)
from filters.urls import DEFAULT_INDEX_NAMES, normalise_url
from segmenter.style import (
    _COMMENT_RE, EMPTY_DECLARATIONS, WHITE, parse_declarations, parse_selector,
)

cdef extern from *:
    """
    #ifndef NATIVE_SCAN_SOURCE_SHA256
    #define NATIVE_SCAN_SOURCE_SHA256 "unknown"
    #endif
    """
    const char* NATIVE_SCAN_SOURCE_SHA256

cdef extern from "dlfcn.h" nogil:
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

cdef extern from "libxml/parser.h" nogil:
    # the fields this module sets (the real struct comes from the header)
    ctypedef struct _SaxHandler "xmlSAXHandler":
        void* internalSubset
        void* startElementNs
        void* endElementNs
        void* startElement
        void* endElement
        void* characters
        void* cdataBlock
        void* reference
        void* comment
        void* processingInstruction
        void* warning
        void* error
        void* serror

cetree.import_lxml__etree()

# libxml2's SAX parser, from the copy lxml itself runs (its extension module exports
# libxml2, or links the system's): the same parser, so the same events as lxml's.
ctypedef xmlParserCtxt* (*_NewContext)() noexcept nogil
ctypedef tree.xmlDoc* (*_ReadMemory)(xmlParserCtxt*, const char*, int, const char*, const char*,
                                     int) noexcept nogil
ctypedef void (*_FreeContext)(xmlParserCtxt*) noexcept nogil
ctypedef void (*_FreeDoc)(tree.xmlDoc*) noexcept nogil
ctypedef void (*_StopParser)(xmlParserCtxt*) noexcept nogil
ctypedef void (*_ErrorHandler)(void*, const void*) noexcept nogil
ctypedef void (*_SetErrorHandler)(xmlParserCtxt*, _ErrorHandler, void*) noexcept nogil

cdef void* _libxml2 = dlopen(etree.__file__.encode(), RTLD_NOW | RTLD_NOLOAD)
cdef _NewContext _new_context = <_NewContext>dlsym(_libxml2, "htmlNewParserCtxt")
cdef _ReadMemory _read_memory = <_ReadMemory>dlsym(_libxml2, "htmlCtxtReadMemory")
cdef _FreeContext _free_context = <_FreeContext>dlsym(_libxml2, "htmlFreeParserCtxt")
cdef _FreeDoc _free_doc = <_FreeDoc>dlsym(_libxml2, "xmlFreeDoc")
cdef _StopParser _stop_parser = <_StopParser>dlsym(_libxml2, "xmlStopParser")
cdef _SetErrorHandler _set_error_handler = <_SetErrorHandler>dlsym(
    _libxml2, "xmlCtxtSetErrorHandler")  # libxml2 >= 2.13; the SAX error slots otherwise
if (_libxml2 is NULL or _new_context is NULL or _read_memory is NULL or _free_context is NULL
        or _free_doc is NULL or _stop_parser is NULL):
    raise ImportError("libxml2's SAX parser is not reachable through lxml.etree")

#: sha256 of the .pyx this module was compiled from (setup.py passes it): the loader in
#: ``segmenter.scan`` uses this module only while the .pyx beside it is unchanged.
SOURCE_SHA256 = NATIVE_SCAN_SOURCE_SHA256.decode("ascii")
#: The lxml this module was compiled against: its C structures must be the running one's.
LXML_VERSION = cetree.LXML_VERSION_STRING.decode("ascii")
if LXML_VERSION != etree.__version__:
    raise ImportError(f"compiled against lxml {LXML_VERSION}, running {etree.__version__}")

# Tag flags, one bit per tag set of segmenter.sections.
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
    _LIST = 1024
    _ITEM = 2048
    _CARD = 4096
    _DEPTH_LIMIT = 2040  # deeper: the pure-Python scan (the stacks here are arrays)

cdef dict _TAG_FLAGS = {}
for _names, _flag in ((SKIPPED_TAGS, _SKIPPED), (PARTITIONING_TAGS, _PARTITIONING),
                      (HEADINGS, _HEADING), (SECTIONING_TAGS, _SECTIONING),
                      (SECTION_END_TAGS, _SECTION_END), (CONTENT_TAGS, _CONTENT), (("a",), _A),
                      (("base",), _BASE), (("style",), _STYLE), (("body", "font"), _BODY_OR_FONT),
                      (LIST_TAGS, _LIST), (ITEM_TAGS, _ITEM), (CARD_TAGS, _CARD)):
    for _name in _names:
        _TAG_FLAGS[_name] = _TAG_FLAGS.get(_name, 0) | _flag

#: Section labels by (tag, id, class), for the pages of the process (emptied when full).
cdef dict _FORMATTED_LABELS = {}
cdef Py_ssize_t _LABELS_KEPT = 65536

cdef object _PENDING = object()  # a stack entry: resolve this element's style from its node
cdef object _new_section = Section.__new__
cdef object _new_link = Link.__new__


cdef inline bint _is_cjk(Py_UCS4 c) noexcept:
    return ((0x3040 <= c <= 0x30ff) or (0x3400 <= c <= 0x4dbf) or (0x4e00 <= c <= 0x9fff)
            or (0xf900 <= c <= 0xfaff) or (0xac00 <= c <= 0xd7af))


# Per ASCII character: 1 a space (str.isspace), 2 a word character (alphanumeric, not "_"),
# 0 anything else: the classes segmenter.sections' str.split() and word regex see.
cdef unsigned char _ASCII_CLASS[128]
for _code in range(128):
    _ASCII_CLASS[_code] = (1 if Py_UNICODE_ISSPACE(_code)
                           else 2 if Py_UNICODE_ISALNUM(_code) and _code != 0x5f else 0)


cdef inline Py_UCS4 _next_code_point(const unsigned char* text, Py_ssize_t length,
                                     Py_ssize_t* index) noexcept:
    """The UTF-8 sequence at text[index] (its lead byte >= 0x80), index moved past it; an
    invalid or cut sequence is one U+FFFD per byte, as a "replace" decode would read it."""
    cdef Py_ssize_t at = index[0]
    cdef unsigned char lead = text[at]
    cdef Py_ssize_t size, position
    cdef unsigned int c  # not Py_UCS4: Cython's arithmetic on that type goes through str
    if 0xc2 <= lead <= 0xdf:
        size = 2
        c = lead & 0x1f
    elif 0xe0 <= lead <= 0xef:
        size = 3
        c = lead & 0x0f
    elif 0xf0 <= lead <= 0xf4:
        size = 4
        c = lead & 0x07
    else:
        index[0] = at + 1
        return 0xfffd
    for position in range(1, size):
        if at + position >= length or text[at + position] & 0xc0 != 0x80:
            index[0] = at + 1
            return 0xfffd
        c = (c << 6) | (text[at + position] & 0x3f)
    index[0] = at + size
    return <Py_UCS4>c


cdef void _count(const unsigned char* text, Py_ssize_t length, bint* in_word,
                 Py_ssize_t* nonspace, Py_ssize_t* words, Py_ssize_t* cjk) noexcept:
    """Count UTF-8 text as segmenter.sections does its str: characters that are not spaces
    (``len("".join(text.split()))``), word-character runs other than ``_`` and CJK (the
    regex ``[^\\W_<CJK>]+``, a run carried on from the text before through ``in_word``)
    and CJK characters.  Adds to the counts."""
    cdef Py_ssize_t index = 0
    cdef bint word = in_word[0]
    cdef unsigned char byte
    cdef Py_UCS4 c
    while index < length:
        byte = text[index]
        if byte < 0x80:
            index += 1
            if _ASCII_CLASS[byte] == 1:
                word = False
                continue
            nonspace[0] += 1
            if _ASCII_CLASS[byte] == 2:
                if not word:
                    words[0] += 1
                    word = True
            else:
                word = False
            continue
        c = _next_code_point(text, length, &index)
        if Py_UNICODE_ISSPACE(c):
            word = False
            continue
        nonspace[0] += 1
        if _is_cjk(c):
            cjk[0] += 1
            word = False
        elif Py_UNICODE_ISALNUM(c):
            if not word:
                words[0] += 1
                word = True
        else:
            word = False
    in_word[0] = word


def count_words(str text):
    """``segmenter.sections.count_words`` in C, on the text's UTF-8 bytes (as the walk counts
    libxml2's text nodes): word runs plus one word per two CJK characters."""
    data = text.encode("utf-8", "surrogatepass")
    cdef bint in_word = False
    cdef Py_ssize_t nonspace = 0, words = 0, cjk = 0
    _count(data, len(data), &in_word, &nonspace, &words, &cjk)
    return words + (cjk + 1) // 2


# Links already in the canonical form normalise_url gives (its own fast path, in C): an
# absolute http(s) URL, or a root-relative path on a canonical base, whose host is lower-case
# labels, whose path and query hold only characters that stay literal, with no escape to
# fix, no dot segment, no default index name and no bare "?".  Anything else returns None
# and goes through normalise_url; tests/test_segmenter_same_output.py checks the two agree.
cdef enum:
    _PATH_CHAR = 1   # RFC 3986 pchar and "/" (filters.urls._PATH_NEEDS_WORK's complement)
    _QUERY_CHAR = 2  # the same and "?"
    _HOST_CHAR = 4   # a canonical registered name: a-z 0-9 _ - .
    _HEX_UPPER = 8   # 0-9 A-F
    _UNRESERVED = 16  # RFC 3986 section 2.3: an escape of one is decoded (not canonical)
cdef unsigned char _URL_CLASS[128]
for _code in range(128):
    _char = chr(_code)
    _URL_CLASS[_code] = (
        (_PATH_CHAR | _QUERY_CHAR if _char.isascii() and (_char.isalnum() or _char in "-._~!$&'()*+,;=:@/%") else 0)
        | (_QUERY_CHAR if _char == "?" else 0)
        | (_HOST_CHAR if _char in "abcdefghijklmnopqrstuvwxyz0123456789_-." else 0)
        | (_HEX_UPPER if _char in "0123456789ABCDEF" else 0)
        | (_UNRESERVED if _char.isascii() and (_char.isalnum() or _char in "-._~") else 0))


cdef inline int _hex_value(unsigned char c) noexcept:
    return c - 48 if c <= 57 else c - 55


cdef Py_ssize_t _canonical_host(const unsigned char* url, Py_ssize_t length) noexcept:
    """The index of the "/" after a canonical "http://host" or "https://host" that starts
    url (lower-case scheme, no port, userinfo or trailing dot; labels of 1-63 characters,
    253 in all; a last label that is not a number, which filters.urls reads as IPv4), or -1."""
    cdef Py_ssize_t at, start, label = 0
    if length > 7 and url[0] == 104 and url[1] == 116 and url[2] == 116 and url[3] == 112:  # http
        at = 4
        if url[at] == 115:  # s
            at += 1
        if at + 3 > length or url[at] != 58 or url[at + 1] != 47 or url[at + 2] != 47:
            return -1
    else:
        return -1
    at += 3
    start = at
    cdef Py_ssize_t label_start = at
    while at < length and url[at] != 47:
        if url[at] >= 128 or not _URL_CLASS[url[at]] & _HOST_CHAR:
            return -1
        if url[at] == 46:  # "."
            if at == label_start or at - label_start > 63:
                return -1
            label_start = at + 1
        at += 1
    if at == length or at == label_start or at - label_start > 63 or at - start > 253:
        return -1
    # the last label: [0-9]+ or 0x[0-9a-f]* makes the host an IPv4 address (not handled here)
    if url[label_start] == 48 and at - label_start >= 2 and url[label_start + 1] == 120:
        return -1
    label = label_start
    while label < at and 48 <= url[label] <= 57:
        label += 1
    if label == at:
        return -1
    return at


cdef bint _canonical_path(const unsigned char* url, Py_ssize_t at, Py_ssize_t length) noexcept:
    """url[at:] (it starts with "/") is a path and query normalise_url leaves as they are."""
    cdef bint query = False
    cdef Py_ssize_t segment = at + 1, end
    cdef unsigned char c
    while at < length:
        c = url[at]
        if c >= 128:
            return False
        if query:
            if not _URL_CLASS[c] & _QUERY_CHAR:
                return False
        elif c == 47 or c == 63:  # "/" or "?" ends a segment
            end = at - segment
            if url[segment] == 46 and (end == 1 or (end == 2 and url[segment + 1] == 46)):
                return False  # a dot segment
            if c == 63:
                if at + 1 == length:
                    return False  # a bare "?" (remove_empty_query)
                if _is_index_name(url, segment, at):
                    return False
                query = True
            segment = at + 1
        elif not _URL_CLASS[c] & _PATH_CHAR:
            return False
        if c == 37:  # "%": an upper-case escape of a byte that is not unreserved
            if (at + 2 >= length or url[at + 1] >= 128 or url[at + 2] >= 128
                    or not _URL_CLASS[url[at + 1]] & _HEX_UPPER
                    or not _URL_CLASS[url[at + 2]] & _HEX_UPPER):
                return False
            c = <unsigned char>(_hex_value(url[at + 1]) * 16 + _hex_value(url[at + 2]))
            if c < 128 and _URL_CLASS[c] & _UNRESERVED:
                return False
        at += 1
    if not query:
        end = at - segment
        if end and url[segment] == 46 and (end == 1 or (end == 2 and url[segment + 1] == 46)):
            return False
        if _is_index_name(url, segment, at):
            return False
    return True


cdef bint _is_index_name(const unsigned char* url, Py_ssize_t start, Py_ssize_t end):
    """url[start:end] is a default index name (remove_default_index)."""
    if end - start < 9 or end - start > 16 or url[start] not in b"iIdD":
        return False
    return (<bytes>url[start:end]).decode("ascii").lower() in DEFAULT_INDEX_NAMES


cdef object _NOT_A_PAGE = object()  # _canonical_link: normalise_url gives None


cdef object _canonical_link(str href, str base):
    """normalise_url(href, base) where C can tell at once: the URL, or _NOT_A_PAGE for a
    fragment-only href or a javascript:, mailto: or tel: one; else None (ask it).  A
    fragment is dropped, as normalise_url drops it."""
    cdef Py_ssize_t length, base_length, at
    cdef const unsigned char* url = <const unsigned char*>PyUnicode_AsUTF8AndSize(href, &length)
    cdef const unsigned char* base_url
    if length == 0:
        return None
    if url[0] == 35:  # "#": this page (EMPTY)
        return _NOT_A_PAGE
    if url[0] == 106 or url[0] == 109 or url[0] == 116:  # j, m, t (NON_WEB_SCHEME)
        if href.startswith(("javascript:", "mailto:", "tel:")):
            return _NOT_A_PAGE
        return None
    cdef const unsigned char* fragment = <const unsigned char*>memchr(url, 35, length)
    if fragment is not NULL:
        length = fragment - url
    if url[0] == 47:  # "/": a path on the base's host, unless "//host" or "/\\"
        if length > 1 and (url[1] == 47 or url[1] == 92):
            return None
        base_url = <const unsigned char*>PyUnicode_AsUTF8AndSize(base, &base_length)
        at = _canonical_host(base_url, base_length)
        if at < 0 or not _canonical_path(url, 0, length):
            return None
        return base[:at] + (href if fragment is NULL else href[:length])
    at = _canonical_host(url, length)
    if at < 0 or not _canonical_path(url, at, length):
        return None
    return href if fragment is NULL else href[:length]


def canonical_link(str href, str base):
    """For tests: (True, what normalise_url gives) where the compiled fast path answers,
    (False, None) where the general path decides."""
    found = _canonical_link(href, base)
    if found is None:
        return (False, None)
    return (True, None if found is _NOT_A_PAGE else found)


cdef bint _compound(str text):
    """Could parse_selector read this as a compound of tag, .class and #id?  False, without
    a call, for the descendant, child, pseudo and attribute selectors of most sheets."""
    cdef Py_UCS4 c
    for c in text:
        if not (c < 128 and (_URL_CLASS[c] & _UNRESERVED or c == 35 or c == 42)):
            return False  # "#" and "*" besides letters, digits, "-", "_", "."
    return True


def _sheet_rules(str css):
    """segmenter.style.sheet_rules, with the sheet searched in C: a rule's text is cut out
    only when its body names a colour, background or font, and parse_selector is called
    only on selectors that could be simple."""
    if "/*" in css:
        css = _COMMENT_RE.sub(" ", css)
    cdef list rules = []
    cdef Py_ssize_t length = len(css), start = 0, close, opening, head
    while start <= length:
        close = css.find("}", start)
        if close < 0:
            close = length
        opening = css.rfind("{", start, close)
        if opening >= 0 and (css.find("color", opening + 1, close) >= 0
                             or css.find("background", opening + 1, close) >= 0
                             or css.find("font", opening + 1, close) >= 0):
            head = css.rfind("{", start, opening)
            head = start if head < 0 else head + 1
            if css.find("@", head, opening) < 0:
                simple = []
                for selector in css[head:opening].split(","):
                    if _compound(selector.strip()):
                        parsed = parse_selector(selector)
                        if parsed is not None:
                            simple.append(parsed)
                if simple:
                    declarations = parse_declarations(css[opening + 1:close])
                    if declarations is not EMPTY_DECLARATIONS:
                        for selector in simple:
                            rules.append((selector, declarations))
        start = close + 1
    return tuple(rules)


#: The compiled sheet_rules, memoised like the pure one (a site's pages repeat sheets).
sheet_rules = lru_cache(maxsize=1024)(_sheet_rules)


# Tag names by libxml2's name pointer.  lxml's parsers intern names in one dictionary for
# the thread, so a name's pointer repeats from page to page; an entry is used only while
# its pointer still holds its name (strcmp), and the strs it points to are kept for the
# process (_TAG_NAMES).  Open addressing, filled to half at most.
cdef enum:
    _TABLE_SIZE = 4096
cdef const tree.xmlChar* _table_names[_TABLE_SIZE]
cdef PyObject* _table_tags[_TABLE_SIZE]
cdef int _table_flags[_TABLE_SIZE]
cdef Py_ssize_t _table_used = 0
cdef list _TAG_NAMES = []
cdef str _DOCUMENT = "#document"


cdef int _tag_of(const tree.xmlChar* name, PyObject** tag, list owned) except -1:
    """The element's tag (a borrowed reference, alive for the walk) and its flags."""
    global _table_used
    cdef size_t slot = (<size_t>name >> 4) & (_TABLE_SIZE - 1)
    cdef const char* kept
    while _table_names[slot] is not NULL:
        if _table_names[slot] == name:
            kept = PyUnicode_AsUTF8(<object>_table_tags[slot])
            if strcmp(kept, <const char*>name) == 0:
                tag[0] = _table_tags[slot]
                return _table_flags[slot]
            break  # the pointer now holds another name: not cached
        slot = (slot + 1) & (_TABLE_SIZE - 1)
    text = _utf8(name)
    cdef int flags = _TAG_FLAGS.get(text, 0)
    if _table_names[slot] is NULL and _table_used < _TABLE_SIZE // 2:
        _TAG_NAMES.append(text)
        _table_names[slot] = name
        _table_tags[slot] = <PyObject*>text
        _table_flags[slot] = flags
        _table_used += 1
    else:
        owned.append(text)
    tag[0] = <PyObject*>text
    return flags


cdef str _utf8(const tree.xmlChar* text):
    return PyUnicode_DecodeUTF8(<const char*>text, strlen(<const char*>text), NULL)


cdef str _utf8_n(const char* text, Py_ssize_t length):
    return PyUnicode_DecodeUTF8(text, length, NULL)


cdef const char* _NO_VALUE = ""  # an attribute without a value reads as "" (lxml's target)


cdef const char* _find(const tree.xmlChar** atts, const char* name) noexcept:
    """The value of the first attribute ``name`` in a SAX attribute list (name, value, …,
    NULL), "" when it has no value; NULL when it is not there."""
    cdef Py_ssize_t index = 0
    if atts is NULL:
        return NULL
    while atts[index] is not NULL:
        if strcmp(<const char*>atts[index], name) == 0:
            return <const char*>atts[index + 1] if atts[index + 1] is not NULL else _NO_VALUE
        index += 2
    return NULL


cdef inline bint _style_attribute(const char* name) noexcept:
    """An attribute the style of an element depends on (``_Walker.style_for``)."""
    return (strcmp(name, "class") == 0 or strcmp(name, "style") == 0 or strcmp(name, "id") == 0
            or strcmp(name, "bgcolor") == 0)


cdef class _Builder:
    """``segmenter.scanner._SectionBuilder`` with C counters."""

    cdef public object label
    cdef public Py_ssize_t heading
    cdef list links
    cdef Py_ssize_t link_count, words, anchor_words, chars
    cdef double weighted_chars
    cdef bint bold
    cdef object background
    cdef dict fonts
    cdef object lists  # Section.lists, set at the first text or link (None before)
    cdef Py_ssize_t headings_seen

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
        fields["weighted_chars"] = round(self.weighted_chars, 6)
        fields["bold"] = self.bold
        fields["background"] = self.background or WHITE
        fields["label"] = label if type(label) is str else label[1]
        fields["fonts"] = described
        fields["heading"] = self.heading if tag in CONTENT_TAGS else 0
        fields["nested"] = nested
        fields["lists"] = self.lists or ()
        fields["headings_seen"] = self.headings_seen
        return section


cdef inline str _describe(style):
    """_Style.describe(), read from its memo when it has one."""
    described = style._described
    return described if described is not None else style.describe()


def _minus_count(item):
    return -item[1]


cdef class _Walker:
    """The event state machine of ``segmenter.scanner._SectionScanner``, driven by SAX events.

    The stacks are C arrays of borrowed references: tag names from the module's table (kept
    for the process), styles from the scanner's ``_styles_by_key`` (kept for the page), and
    the two markers.  Text is counted on libxml2's UTF-8 bytes: a ``str`` is made only for
    link text and ``<style>`` sheets."""

    cdef object scanner  # the pure-Python scanner: styles, <base>, sheets, URL resolution
    cdef Py_ssize_t depth  # open elements, the document included
    cdef int flag_stack[_DEPTH_LIMIT]
    cdef PyObject* tag_stack[_DEPTH_LIMIT]
    cdef PyObject* style_stack[_DEPTH_LIMIT]  # a _Style, _INHERIT or _PENDING
    # A pending element's attributes, kept until its end (SAX lends them for the start
    # event only): name NUL value NUL … NUL, from saved_at[depth] (-1: none kept).
    cdef Py_ssize_t saved_at[_DEPTH_LIMIT]
    cdef char* saved
    cdef Py_ssize_t saved_used, saved_size
    cdef object error  # an exception raised in a SAX callback: the parse stops, scan re-raises
    cdef list owned  # tag names the table could not keep: alive for the walk
    cdef object styled_tags  # scanner._styled_tags, refreshed after each sheet
    # per open partitioning element: its tag, or its depth when it has an id or class (the
    # label is formatted from its kept attributes only for a section built under it)
    cdef list labels
    # Section.nested: len(labels) when the last section was built, the lowest since then
    cdef Py_ssize_t built_depth, lowest_depth
    cdef Py_ssize_t skip_depth, link_depth, headings, heading
    # repeated siblings (segmenter.scanner's _elements, _numbers, _lists, _list_depths, and the
    # outline's _items); a group's depth is self.depth after its start
    cdef Py_ssize_t elements
    cdef Py_ssize_t number_stack[_DEPTH_LIMIT]
    cdef tuple open_lists
    cdef list list_depths
    cdef dict items
    cdef bint base_seen, collecting_css
    cdef list css, link_text, pieces, sections
    cdef object link_href
    cdef dict resolved
    cdef dict own_styles  # what an element sets itself (scanner._own_style), by attributes
    # the scanner's sheet and memos (the same objects for the page), and the sheet's flags
    cdef object sheet
    cdef dict style_memo, styles_by_key, class_hits
    cdef bint class_rules, id_rules
    cdef bint fast_links  # links resolved by normalise_url: its canonical fast path in C
    cdef _Builder current
    # the text buffered since the last start or end: segmenter.scanner's _text, counted
    cdef bint text_any, in_word
    cdef Py_ssize_t text_nonspace, text_words, text_cjk

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
        if flags & _A:
            if self.link_href is None:
                value = _find(atts, "href")
                if value is not NULL:
                    self.link_href = _utf8_n(value, strlen(value))
                    self.link_text = []
                    self.link_depth = depth
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
        if self.link_href is not None:
            self.pieces.append(_utf8_n(text, length))
        return 0

    cdef object close(self):
        if self.text_any:
            self.flush_text()
        if self.link_href is not None:
            self.finish_link()
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
        if self.link_href is not None:
            current.anchor_words += words
            self.link_text.append("".join(pieces) if len(pieces) > 1 else pieces[0])
        return 0

    cdef int finish_link(self) except -1:
        href = self.link_href
        self.link_href = None
        anchor = " ".join(" ".join(self.link_text).split())
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
        if resolved is not None:
            link = _new_link(Link)
            fields = link.__dict__
            fields["href"] = resolved
            fields["anchor"] = anchor
            current.links.append(link)
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


# The SAX callbacks: the walker is the parser context's _private (as lxml's own handlers
# find theirs).  An exception stops the parser; scan() raises it.
cdef inline _Walker _walker_of(void* context):
    return <_Walker>(<xmlParserCtxt*>context)._private


cdef void _on_start(void* context, const tree.xmlChar* name, const tree.xmlChar** atts) noexcept:
    walker = _walker_of(context)
    if walker.error is not None:
        return
    try:
        walker.start(name, atts)
    except BaseException as error:
        walker.error = error
        _stop_parser(<xmlParserCtxt*>context)


cdef void _on_end(void* context, const tree.xmlChar* name) noexcept:
    walker = _walker_of(context)
    if walker.error is not None:
        return
    try:
        walker.end()
    except BaseException as error:
        walker.error = error
        _stop_parser(<xmlParserCtxt*>context)


cdef void _on_text(void* context, const tree.xmlChar* text, int length) noexcept:
    walker = _walker_of(context)
    if walker.error is not None:
        return
    try:
        walker.data(<const char*>text, length)
    except BaseException as error:
        walker.error = error
        _stop_parser(<xmlParserCtxt*>context)


cdef void _ignore_error(void* data, const void* error) noexcept nogil:
    pass


cdef xmlParserCtxt* _new_sax_context() except NULL:
    """An HTML parser context whose SAX handler is the one lxml's parser target runs on:
    libxml2's HTML defaults (the document node, the doctype, ignorable whitespace dropped)
    with start, end and text events to the walker, and no comment, processing instruction or
    entity-reference events (``remove_comments``, ``remove_pis``; entities replaced)."""
    cdef xmlParserCtxt* context = _new_context()
    if context is NULL:
        raise MemoryError()
    cdef _SaxHandler* sax = <_SaxHandler*>context.sax
    sax.startElementNs = sax.endElementNs = NULL
    sax.startElement = <void*>_on_start
    sax.endElement = <void*>_on_end
    sax.characters = sax.cdataBlock = <void*>_on_text
    sax.comment = sax.processingInstruction = sax.reference = NULL
    sax.warning = sax.error = sax.serror = NULL  # errors are recovered from, never shown
    if _set_error_handler is not NULL:
        _set_error_handler(context, _ignore_error, NULL)
    context.replaceEntities = 1
    return context


# One context for the thread that scans first (libxml2 interns tag names in its dictionary,
# so a name's pointer repeats from page to page: _tag_of's table); any other thread, or a
# nested scan, gets a context of its own for the page.
cdef xmlParserCtxt* _shared_context = NULL
cdef unsigned long _shared_owner = 0
cdef bint _shared_owned = False
cdef bint _shared_busy = False

# lxml's HTMLParser(recover=True, no_network=True, huge_tree=True) with its default
# compact text nodes: the same options, as libxml2's HTML_PARSE_* bits.
cdef enum:
    _PARSE_OPTIONS = (1 << 0) | (1 << 11) | (1 << 16) | (1 << 19)


def scan(bytes data, str page_url, resolve):
    """The sections of UTF-8 HTML, as ``segmenter.scan.scan_html`` computes them from
    lxml's parser events (libxml2's SAX parser, driven in C); None where the compiled scan
    declines the page (nesting deeper than its stacks): the caller runs the pure-Python
    scan."""
    global _shared_context, _shared_owner, _shared_owned, _shared_busy
    walker = _Walker(page_url, resolve)  # before a context is taken: nothing to give back
    cdef unsigned long thread = PyThread_get_thread_ident()
    cdef xmlParserCtxt* context
    cdef bint shared = not _shared_busy and (not _shared_owned or _shared_owner == thread)
    if shared:
        if _shared_context is NULL:
            _shared_context = _new_sax_context()
            _shared_owner = thread
            _shared_owned = True
        context = _shared_context
        _shared_busy = True
    else:
        context = _new_sax_context()
    context._private = <void*>walker
    cdef tree.xmlDoc* document
    try:
        document = _read_memory(context, data, len(data), NULL, "UTF-8", _PARSE_OPTIONS)
        if document is not NULL:
            _free_doc(document)
        if context.myDoc is not NULL:  # a parse stopped early may leave it
            _free_doc(context.myDoc)
            context.myDoc = NULL
    finally:
        context._private = NULL
        if shared:
            _shared_busy = False
        else:
            _free_context(context)
    if walker.error is not None:
        if isinstance(walker.error, OverflowError):
            return None
        raise walker.error
    return walker.close()
