# cython: language_level=3, cdivision=True
"""``segmenter.style.sheet_rules`` in C: a ``<style>`` sheet searched for the rules that
can change a text's colour, background or font, with simple selectors (tag, ``.class``,
``#id``), memoised like the pure one (a site's pages repeat sheets)."""
from functools import lru_cache

from segmenter.style import _COMMENT_RE, EMPTY_DECLARATIONS, parse_declarations, parse_selector

# Per ASCII character: a letter, digit, "-", ".", "_", "~" (RFC 3986's unreserved), "#" or "*":
# what a compound selector of tag, .class and #id is made of.
cdef unsigned char _SELECTOR_CHAR[128]
for _code in range(128):
    _char = chr(_code)
    _SELECTOR_CHAR[_code] = _char.isascii() and (_char.isalnum() or _char in "-._~#*")


cdef bint _compound(str text):
    """Could parse_selector read this as a compound of tag, .class and #id?  False, without
    a call, for the descendant, child, pseudo and attribute selectors of most sheets."""
    cdef Py_UCS4 c
    for c in text:
        if not (c < 128 and _SELECTOR_CHAR[c]):
            return False  # "#" and "*" besides letters, digits, "-", "_", "."
    return True


# parse_selector's and parse_declarations' answers by text, read here without a call (their
# own memos are Python calls; a site's sheets repeat their rules): emptied when full.
cdef dict _SELECTORS = {}
cdef dict _DECLARATIONS = {}
cdef Py_ssize_t _KEPT = 65536
cdef object _UNKNOWN = object()


cdef object _parsed(dict memo, parse, str text):
    """``parse(text)``, from ``memo`` when it was parsed before."""
    parsed = memo.get(text, _UNKNOWN)
    if parsed is _UNKNOWN:
        if len(memo) >= _KEPT:
            memo.clear()
        parsed = memo[text] = parse(text)
    return parsed


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
                        parsed = _parsed(_SELECTORS, parse_selector, selector)
                        if parsed is not None:
                            simple.append(parsed)
                if simple:
                    declarations = _parsed(_DECLARATIONS, parse_declarations,
                                           css[opening + 1:close])
                    if declarations is not EMPTY_DECLARATIONS:
                        for selector in simple:
                            rules.append((selector, declarations))
        start = close + 1
    return tuple(rules)


#: The compiled sheet_rules, memoised like the pure one (a site's pages repeat sheets).
sheet_rules = lru_cache(maxsize=1024)(_sheet_rules)
