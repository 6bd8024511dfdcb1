"""HTML bytes -> text: pick the character encoding the way a careful browser would.

Order of evidence (first one that *decodes the whole body strictly* wins):

1. a byte order mark (UTF-8, UTF-16LE/BE) — the WHATWG Encoding standard's "BOM sniff"
   overrides every declaration;
2. the ``charset`` parameter of the HTTP ``Content-Type`` header;
3. a ``<meta charset>`` / ``<meta http-equiv="Content-Type" content="...; charset=...">``
   declaration in the first :data:`META_SCAN_BYTES_DEFAULT` bytes;
4. detection: UTF-16 without BOM (NUL every other byte), strict UTF-8 (most of the web, and
   cheap), "UTF-8 with a few stray bytes", then charset-normalizer on the *text* of a
   bounded prefix (markup and scripts removed);
5. fallback: UTF-8 with ``errors="replace"``.

One exception to "a declaration that decodes wins": bytes that are strictly valid UTF-8 and
contain multi-byte characters are UTF-8 whatever legacy charset is declared (a single-byte
label decodes *any* bytes, so its success proves nothing; legacy text is practically never
valid UTF-8 by accident; the label was copied from an old template).

A declared charset that is unknown to Python, or that fails to decode the body strictly, is
*not trusted*: real pages lie (a UTF-8 header in front of GBK bytes, a ``gb2312`` label on
GBK text).  Labels are mapped to the superset encodings browsers actually use (WHATWG
Encoding §4.2: ``gb2312``/``gbk`` -> gb18030, ``iso-8859-1``/``ascii`` -> windows-1252,
``big5`` -> Big5-HKSCS, ``shift_jis`` -> windows-31j, ``euc-kr`` -> windows-949).

The decoder never raises for any ``bytes`` input, and NUL characters in the result are
replaced by U+FFFD as the HTML tokenizer does ("unexpected-null-character"), so downstream
parsers (lxml rejects NUL) never see one.
"""
from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass, field
from enum import Enum

logger = logging.getLogger(__name__)

META_SCAN_BYTES_DEFAULT = 64 * 1024
"""How far into the body to look for a ``<meta>`` charset declaration.  WHATWG prescans
1024 bytes, but real pages put kilobytes of inline script and style before the meta."""

DETECT_SCAN_BYTES_DEFAULT = 1024 * 1024
"""Detection looks at this prefix of the body only (speed) ..."""

DETECT_SAMPLE_BYTES_DEFAULT = 64 * 1024
"""... and hands charset-normalizer at most this much of its *text* (markup, scripts and
styles removed: on real Chinese pages the first 64 KB are often almost all ASCII script, and
charset-normalizer then guesses a Latin code page).  The chosen codec decodes the whole
body."""

STRAY_BYTES_RATIO_DEFAULT = 0.2
"""A body that is not strictly UTF-8 is still read as UTF-8 when its invalid sequences
number at most this fraction of its valid multi-byte characters (a UTF-8 page with a few
Latin-1 bytes pasted into a template).  Legacy-encoded text almost never forms valid UTF-8
multi-byte sequences, so for it the ratio is far above 1."""

STRAY_BYTES_MIN_MULTIBYTE_DEFAULT = 8
"""... and it must contain at least this many valid multi-byte characters (evidence)."""


class CharsetSource(str, Enum):
    """Which piece of evidence chose the charset."""

    BOM = "byte_order_mark"
    HTTP_HEADER = "http_header"
    META = "meta"
    DETECTED = "detected"
    FALLBACK = "fallback"


@dataclass(frozen=True)
class Decoded:
    """The decoded text, the Python codec name used, and why that codec was chosen."""

    text: str
    charset: str
    source: CharsetSource
    #: ``text`` encoded as UTF-8 when that is the body itself (strictly valid UTF-8 without a
    #: byte order mark, a cut last character or NUL): the segmenter parses it as is.
    utf8: bytes | None = field(default=None, compare=False, repr=False)


# WHATWG Encoding §4.2 labels -> the superset codec that browsers decode with.  Python's
# own aliases (codecs.lookup) cover the rest; these are the ones where Python's codec is a
# strict *subset* of what real pages labelled that way contain.
_LABEL_TO_CODEC: dict[str, str] = {
    # Chinese (simplified): pages labelled gb2312 routinely contain GBK characters.
    **dict.fromkeys(
        ("gb2312", "gbk", "gb_2312", "gb_2312-80", "csgb2312", "x-gbk", "chinese",
         "iso-ir-58", "csiso58gb231280", "cp936", "ms936", "windows-936", "gb18030",
         "euc-cn", "euccn", "x-euc-cn"),
        "gb18030"),
    # Western: WHATWG decodes every Latin-1/ASCII label as windows-1252.
    **dict.fromkeys(
        ("iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "latin-1",
         "l1", "ascii", "us-ascii", "ansi_x3.4-1968", "cp819", "ibm819", "csisolatin1",
         "iso-ir-100", "windows-1252", "x-cp1252", "cp1252", "iso88591"),
        "cp1252"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "latin5", "l5", "windows-1254"), "cp1254"),
    **dict.fromkeys(("tis-620", "iso-8859-11", "windows-874", "dos-874"), "cp874"),
    # Chinese (traditional): WHATWG's Big5 is Big5-HKSCS.
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5", "cp950"),
                    "big5hkscs"),
    # Japanese: Shift_JIS labels mean windows-31j (cp932) in practice.
    **dict.fromkeys(("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis",
                     "windows-31j", "ms932", "cp932"), "cp932"),
    # Korean: EUC-KR labels mean windows-949 (UHC).
    **dict.fromkeys(("euc-kr", "euckr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601",
                     "ksc_5601", "korean", "csksc56011987", "iso-ir-149", "windows-949",
                     "cp949"), "cp949"),
    **dict.fromkeys(("x-mac-roman", "macintosh", "mac", "csmacintosh"), "mac_roman"),
    **dict.fromkeys(("utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8",
                     "unicode20utf8", "x-unicode20utf8"), "utf-8"),
}

# Codecs that are not character encodings of web text (bytes->bytes transforms, escapes,
# or dangerous: UTF-7 is a classic XSS vector and WHATWG does not support it).
_REFUSED_CODECS = frozenset({
    "utf-7", "unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined",
    "charmap", "mbcs", "oem", "latin-1-escape", "unicode-internal",
})

_UTF16_FAMILY = frozenset({"utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                           "utf-32-be"})

_LABEL_SYNTAX = re.compile(r"[a-z0-9._:+\-]{1,40}")

# <meta charset=x> and <meta http-equiv=Content-Type content="text/html; charset=x">.  A
# regex over bytes rather than the full WHATWG prescan: one pass, no HTML parse.
_META_CHARSET = re.compile(
    rb"""<meta\b[^>]{0,512}?\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:+\-]{1,40})""",
    re.IGNORECASE,
)

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)

_UNICODE_CODECS = frozenset({"utf-8", "utf-8-sig"}) | _UTF16_FAMILY


def codec_for_label(label: str | None) -> str | None:
    """Map a charset label from a header or meta tag to a Python codec name, or None.

    >>> codec_for_label("GB2312"), codec_for_label(" 'ISO-8859-1' "), codec_for_label("x-sjis")
    ('gb18030', 'cp1252', 'cp932')
    >>> codec_for_label("base64") is None, codec_for_label("no-such") is None
    (True, True)
    """
    if not label:
        return None
    cleaned = label.strip().strip("\"'").strip().lower()
    if not _LABEL_SYNTAX.fullmatch(cleaned):
        return None
    mapped = _LABEL_TO_CODEC.get(cleaned)
    if mapped is not None:
        return mapped
    try:
        info = codecs.lookup(cleaned)
    except LookupError:
        return None
    # `_is_text_encoding` is False for bytes->bytes codecs (base64, zlib, hex, rot13 ...).
    if not getattr(info, "_is_text_encoding", True):
        return None
    name = info.name
    if name in _REFUSED_CODECS:
        return None
    return _LABEL_TO_CODEC.get(name, name)


def _decode_strict(body: bytes, codec: str) -> str | None:
    """Decode strictly; a multi-byte character cut by truncation at the very end is
    tolerated (replaced), since the ingest size cap cuts bodies at arbitrary bytes."""
    try:
        return body.decode(codec)  # the whole body: no cut character to keep back
    except (UnicodeError, LookupError):
        pass
    try:
        decoder = codecs.getincrementaldecoder(codec)(errors="strict")
        text = decoder.decode(body, final=False)
    except (UnicodeError, LookupError):  # UTF-16 without BOM raises plain UnicodeError
        return None
    if decoder.getstate()[0]:
        text += "\ufffd"
    return text


def _bom(body: bytes) -> str | None:
    for mark, codec in _BOMS:
        if body.startswith(mark):
            return codec
    return None


def find_meta_charset(body: bytes, scan_bytes: int = META_SCAN_BYTES_DEFAULT) -> str | None:
    """The codec of the first ``<meta>`` charset declaration known to Python, or None.

    >>> find_meta_charset(b'<html><head><meta charset="gbk"><title>x</title>')
    'gb18030'
    >>> find_meta_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=Big5">')
    'big5hkscs'
    """
    for match in _META_CHARSET.finditer(body, 0, scan_bytes):
        codec = codec_for_label(match.group(1).decode("ascii"))
        if codec is None:
            continue
        # WHATWG: a UTF-16 meta cannot be right (we just read it as ASCII) -> UTF-8.
        if codec in _UTF16_FAMILY:
            return "utf-8"
        return codec
    return None


def utf16_without_bom(body: bytes) -> str | None:
    """'utf-16-le' / 'utf-16-be' when the first KB has NUL at every other byte and
    nothing else (ASCII-range text in UTF-16 without a byte order mark), else None.

    >>> utf16_without_bom("<html>hi</html>".encode("utf-16-le"))
    'utf-16-le'
    >>> utf16_without_bom(b"<html>hi</html>") is None
    True
    """
    sample = body[:1024]
    if len(sample) < 16:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def _wide_markup(body: bytes) -> bool:
    """Whether the first KB looks like UTF-16 or UTF-32 text: markup is ASCII, so at least
    a third of such bytes are NUL; a page in a single-byte or UTF-8 charset has none.

    >>> _wide_markup("<p>hi</p>".encode("utf-16-le")), _wide_markup("<p>hi</p>".encode("utf-32"))
    (True, True)
    >>> _wide_markup("<p>Grüße</p>".encode("utf-8"))
    False
    """
    sample = body[:1024]
    return bool(sample) and sample.count(0) * 3 >= len(sample)


def _mostly_utf8(body: bytes) -> str | None:
    """UTF-8 text with a few invalid bytes -> the text (invalid bytes replaced), else None."""
    text = body.decode("utf-8", errors="replace")
    errors = text.count("\ufffd") - body.count(b"\xef\xbf\xbd")
    if errors <= 0:
        return text
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore"))
    multibyte = non_ascii - text.count("\ufffd")
    if (multibyte >= STRAY_BYTES_MIN_MULTIBYTE_DEFAULT
            and errors <= STRAY_BYTES_RATIO_DEFAULT * multibyte):
        return text
    return None


_NON_TEXT_START = re.compile(rb"<script\b|<style\b|<!--", re.IGNORECASE)
_NON_TEXT_END = {b"<sc": b"</script", b"<st": b"</style", b"<!-": b"-->"}
# Bounded and '<'-free, so a page full of unclosed '<' stays linear.
_TAG = re.compile(rb"<[^<>]{0,4096}>")
_WHITESPACE_RUN = re.compile(rb"\s+")
# NUL and other C0 controls carry no charset evidence and make charset-normalizer give up
# ("binary"); no legacy multi-byte encoding uses them as trail bytes.
_C0_CONTROLS = bytes(b for b in range(0x20) if b not in (0x09, 0x0A, 0x0D))


def _text_sample(prefix: bytes) -> bytes:
    """The prefix's text with scripts, styles, comments and tags removed (bytes).

    Safe on legacy multi-byte encodings: no GBK/Big5/Shift_JIS/EUC trail byte is '<' or
    '>', so removing markup never splits a character.
    """
    lowered = prefix.lower()  # bytes.lower() only touches ASCII letters
    parts: list[bytes] = []
    pos = 0
    while True:
        match = _NON_TEXT_START.search(lowered, pos)
        if match is None:
            parts.append(prefix[pos:])
            break
        parts.append(prefix[pos:match.start()])
        closing = _NON_TEXT_END[lowered[match.start():match.start() + 3]]
        end = lowered.find(closing, match.end())
        if end < 0:
            break
        pos = end + len(closing)
    text = _TAG.sub(b" ", b"".join(parts)).translate(None, _C0_CONTROLS)
    return _WHITESPACE_RUN.sub(b" ", text).strip()[:DETECT_SAMPLE_BYTES_DEFAULT]


def _detect(body: bytes) -> tuple[str, str, bool] | None:
    """(text, codec, whether the text is the body decoded strictly as UTF-8) by detection,
    or None when nothing plausible was found."""
    text = _decode_strict(body, "utf-8")
    if text is not None:
        return text, "utf-8", True
    text = _mostly_utf8(body)
    if text is not None:
        return text, "utf-8", False
    # Imported lazily: charset-normalizer loads language models on first use (convention 7).
    import charset_normalizer

    prefix = body[:DETECT_SCAN_BYTES_DEFAULT]
    sample = _text_sample(prefix)
    best = charset_normalizer.from_bytes(sample).best() if sample else None
    if best is None:
        best = charset_normalizer.from_bytes(prefix[:DETECT_SAMPLE_BYTES_DEFAULT]).best()
    if best is None:
        return None
    codec = codec_for_label(best.encoding)
    if codec is None:
        return None
    text = _decode_strict(body, codec)
    if text is None:
        # The prefix decoded; something after it does not.  Keep the detected codec.
        try:
            text = body.decode(codec, errors="replace")
        except (UnicodeError, LookupError):
            return None
    return text, codec, False


def _finish(text: str, codec: str, source: CharsetSource) -> Decoded:
    return Decoded(text=text.replace("\x00", "\ufffd"), charset=codecs.lookup(codec).name,
                   source=source)


def _finish_utf8(body: bytes, text: str, source: CharsetSource) -> Decoded:
    """``_finish`` for a body that decoded strictly as UTF-8: when the text's UTF-8 is the
    body itself (no NUL to replace, no cut character completed by U+FFFD), the body is kept
    as ``utf8`` and nothing is searched or encoded again."""
    if b"\x00" in body or text.endswith("\ufffd"):
        return _finish(text, "utf-8", source)
    return Decoded(text=text, charset="utf-8", source=source, utf8=body)


def decode_html(body: bytes, http_charset: str | None = None) -> Decoded:
    """Decode an HTML body, choosing the charset from BOM, header, meta, then detection.

    Never raises for ``bytes`` input.

    >>> decode_html("<p>café</p>".encode("cp1252"), "iso-8859-1")
    Decoded(text='<p>café</p>', charset='cp1252', source=<CharsetSource.HTTP_HEADER: 'http_header'>)
    >>> decode_html(b"<p>ok</p>", "no-such-charset").source
    <CharsetSource.DETECTED: 'detected'>
    """
    if not body:
        return Decoded(text="", charset="utf-8", source=CharsetSource.FALLBACK)

    bom_codec = _bom(body)
    if bom_codec is not None:
        text = body.decode(bom_codec, errors="replace")
        # str.decode("utf-8") keeps U+FEFF; drop it (it is framing, not content).
        return _finish(text.removeprefix("\ufeff"), bom_codec, CharsetSource.BOM)

    declared: list[tuple[str, CharsetSource]] = []
    header_codec = codec_for_label(http_charset)
    if header_codec is not None:
        declared.append((header_codec, CharsetSource.HTTP_HEADER))
    meta_codec = find_meta_charset(body)
    if meta_codec is not None:
        declared.append((meta_codec, CharsetSource.META))

    for codec, source in declared:
        if codec in _UTF16_FAMILY and not _wide_markup(body):
            # UTF-8 or legacy bytes "decode" as UTF-16 without an error (any even length
            # does): a wide-charset declaration is trusted only when the bytes are wide.
            logger.debug("declared charset %s (%s) but the body has no wide markup", codec,
                         source.value)
            continue
        strict = _decode_strict(body, codec)
        if strict is None:
            logger.debug("declared charset %s (%s) does not decode the body", codec,
                         source.value)
            continue
        if codec not in _UNICODE_CODECS and not body.isascii():
            # Valid UTF-8 with multi-byte characters beats a legacy label (module docstring).
            utf8 = _decode_strict(body, "utf-8")
            if utf8 is not None:
                return _finish_utf8(body, utf8, CharsetSource.DETECTED)
        if codec == "utf-8":
            return _finish_utf8(body, strict, source)
        return _finish(strict, codec, source)

    utf16 = utf16_without_bom(body)
    if utf16 is not None:
        return _finish(body.decode(utf16, errors="replace"), utf16, CharsetSource.DETECTED)

    detected = _detect(body)
    if detected is not None:
        text, codec, strict_utf8 = detected
        if strict_utf8:
            return _finish_utf8(body, text, CharsetSource.DETECTED)
        return _finish(text, codec, CharsetSource.DETECTED)
    return _finish(body.decode("utf-8", errors="replace"), "utf-8", CharsetSource.FALLBACK)
