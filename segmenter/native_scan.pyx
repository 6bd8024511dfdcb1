# cython: language_level=3, cdivision=True
"""The scanning stage compiled: ``segmenter.scan``'s scan on libxml2's SAX events, in C.

Same sections as ``segmenter.scanner._SectionScanner`` (the pure-Python scan, and the
fallback when this extension is not built), computed without a Python call per parser event:
this module runs libxml2's HTML parser (the copy lxml runs) with C callbacks set up as lxml
sets up a parser target, so they receive the events that scanner receives (start, text, end),
and feeds them to the same state machine (``native_walker``).  No tree is built.  Python
objects are made only for what a section keeps: non-space text, links, labels, styles.  Style
resolution, ``<base>``, ``<style>`` sheets and URL resolution call the pure-Python scanner's
own methods, so the rules live in one place.

The compiled scan is six modules, each with one job, cimporting each other's ``.pxd``:
this one (libxml2's SAX parser and its callbacks), ``native_walker`` (the state machine),
``native_tags`` (element names and attributes of the SAX events), ``native_text`` (text
counted in C), ``native_links`` (normalise_url's fast path) and ``native_sheets``
(``<style>`` sheets).  setup.py builds them together; :data:`SOURCE_SHA256` covers them all.

:func:`scan` returns None for nesting deeper than its stacks (2,040 levels): the caller then
runs the pure-Python scan.  ``tests/test_segmenter_same_output.py`` checks both paths give
the same sections on every page of ``../shared/data`` and on generated pages.
"""
cdef extern from "pythread.h":
    unsigned long PyThread_get_thread_ident()

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.xmlparser cimport xmlParserCtxt

from segmenter.native_walker cimport _Walker

from lxml import etree

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

#: sha256 of the compiled scan's sources, ``segmenter/native_*.pyx`` and ``.pxd`` (setup.py
#: passes it): the loader in ``segmenter.scan`` uses the compiled scan only while the sources
#: beside it are unchanged.
SOURCE_SHA256 = NATIVE_SCAN_SOURCE_SHA256.decode("ascii")
#: The lxml this module was compiled against: its C structures must be the running one's.
LXML_VERSION = cetree.LXML_VERSION_STRING.decode("ascii")
if LXML_VERSION != etree.__version__:
    raise ImportError(f"compiled against lxml {LXML_VERSION}, running {etree.__version__}")


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
