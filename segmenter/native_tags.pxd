# What native_tags.pyx shares with the modules of the compiled scan that cimport it.
from cpython.object cimport PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport strcmp, strlen
from lxml.includes cimport tree

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

cdef int _tag_of(const tree.xmlChar* name, PyObject** tag, list owned) except -1


cdef inline const char* _find(const tree.xmlChar** atts, const char* name) noexcept:
    """The value of the first attribute ``name`` in a SAX attribute list (name, value, …,
    NULL), "" when it has no value (lxml's target reads it so); NULL when it is not there."""
    cdef Py_ssize_t index = 0
    if atts is NULL:
        return NULL
    while atts[index] is not NULL:
        if strcmp(<const char*>atts[index], name) == 0:
            if atts[index + 1] is NULL:
                return ""
            return <const char*>atts[index + 1]
        index += 2
    return NULL


cdef inline str _utf8(const tree.xmlChar* text):
    return PyUnicode_DecodeUTF8(<const char*>text, strlen(<const char*>text), NULL)


cdef inline str _utf8_n(const char* text, Py_ssize_t length):
    return PyUnicode_DecodeUTF8(text, length, NULL)


cdef inline bint _style_attribute(const char* name) noexcept:
    """An attribute the style of an element depends on (``_Walker.style_for``)."""
    return (strcmp(name, "class") == 0 or strcmp(name, "style") == 0 or strcmp(name, "id") == 0
            or strcmp(name, "bgcolor") == 0)
