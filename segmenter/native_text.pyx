# cython: language_level=3, cdivision=True
"""Text counted in C as the scan counts it: non-space characters, words and CJK characters
of UTF-8 bytes (``segmenter.sections.count_words``'s rules), for the compiled scan's text
events (``native_walker``), which never make a ``str`` of the text they count; and a link's
anchor with its spaces collapsed."""
from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    const char* PyUnicode_DATA(object text)


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


cdef str _collapsed(str text):
    """``" ".join(text.split())``: an ASCII text that has no run of spaces, no space but " "
    and none at either end (most anchors) returned as it is, without a split."""
    if not PyUnicode_IS_ASCII(text):
        return " ".join(text.split())
    cdef const unsigned char* data = <const unsigned char*>PyUnicode_DATA(text)
    cdef Py_ssize_t length = len(text), index
    cdef bint after_space = True  # a space at the start is one to drop
    for index in range(length):
        if _ASCII_CLASS[data[index]] == 1:
            if after_space or data[index] != 0x20:
                return " ".join(text.split())
            after_space = True
        else:
            after_space = False
    if after_space and length:
        return " ".join(text.split())  # a space at the end
    return text


def collapsed(str text):
    """:func:`_collapsed` for Python: the anchor text as the walk keeps it."""
    return _collapsed(text)
