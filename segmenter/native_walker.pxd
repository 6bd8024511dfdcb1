# The compiled scan's walker, declared for native_scan.pyx (its SAX callbacks drive it) and
# for the .pyx that implements it.
from cpython.object cimport PyObject
from lxml.includes cimport tree

cdef enum:
    _DEPTH_LIMIT = 2040  # deeper: the pure-Python scan (the stacks here are arrays)


cdef class _Builder:
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

    cdef object build(self, bint nested)


cdef class _Walker:
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
    # list entries' descriptions (segmenter.scanner's _item_depths … _description)
    cdef list description
    cdef Py_ssize_t item_stack[_DEPTH_LIMIT]  # the depths of the open items, innermost last
    cdef Py_ssize_t items_open
    cdef bint item_fresh, link_leads
    cdef object describing
    cdef Py_ssize_t describing_depth
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

    cdef int save(self, Py_ssize_t depth, const tree.xmlChar** atts, bint every) except -1
    cdef object saved_value(self, Py_ssize_t position, const char* name)
    cdef dict saved_attributes(self, Py_ssize_t position)
    cdef int start(self, const tree.xmlChar* name, const tree.xmlChar** atts) except -1
    cdef int open_group(self, Py_ssize_t depth, int flags, const tree.xmlChar** atts) except -1
    cdef object label_at(self, Py_ssize_t position)
    cdef int end(self) except -1
    cdef int data(self, const char* text, Py_ssize_t length) except -1
    cdef object close(self)
    cdef int set_base(self, const tree.xmlChar** atts) except -1
    cdef object current_style(self)
    cdef object style_for(self, Py_ssize_t position, parent)
    cdef object combine(self, parent, tuple own)
    cdef int flush_text(self) except -1
    cdef int finish_link(self) except -1
    cdef int end_description(self) except -1
    cdef int flush_section(self) except -1
