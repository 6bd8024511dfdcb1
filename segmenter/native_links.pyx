# cython: language_level=3, cdivision=True
"""normalise_url's own fast path in C, for the links the compiled scan meets: a link already
in the canonical form normalise_url gives is kept as it is, a fragment-only, ``javascript:``,
``mailto:`` or ``tel:`` link is no page; anything else goes through normalise_url."""
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.string cimport memchr

from filters.urls import DEFAULT_INDEX_NAMES


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
#: What :func:`_canonical_link` returns for a link that is no page (for the modules that
#: cimport it: a .pxd shares no variable).
NOT_A_PAGE = _NOT_A_PAGE


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
