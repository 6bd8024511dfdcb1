# cython: language_level=3, cdivision=True
"""libxml2's SAX events read in C for the compiled scan: an element's name as a ``str``
tag with its flags (the tag sets of ``segmenter.sections`` as bits, names cached by
libxml2's pointer); an attribute's value is looked up in the event's list by ``_find``
(``native_tags.pxd``: inline, so that the C compiler sees the names it is asked for)."""
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8
from libc.string cimport strcmp
from lxml.includes cimport tree

from segmenter.sections import (
    CARD_TAGS, CONTENT_TAGS, HEADINGS, ITEM_TAGS, LIST_TAGS, PARTITIONING_TAGS, SECTION_END_TAGS,
    SECTIONING_TAGS, SKIPPED_TAGS,
)

cdef dict _TAG_FLAGS = {}
for _names, _flag in ((SKIPPED_TAGS, _SKIPPED), (PARTITIONING_TAGS, _PARTITIONING),
                      (HEADINGS, _HEADING), (SECTIONING_TAGS, _SECTIONING),
                      (SECTION_END_TAGS, _SECTION_END), (CONTENT_TAGS, _CONTENT), (("a",), _A),
                      (("base",), _BASE), (("style",), _STYLE), (("body", "font"), _BODY_OR_FONT),
                      (LIST_TAGS, _LIST), (ITEM_TAGS, _ITEM), (CARD_TAGS, _CARD)):
    for _name in _names:
        _TAG_FLAGS[_name] = _TAG_FLAGS.get(_name, 0) | _flag


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
