"""Ingest's record types and the checks every input format shares: one job, the vocabulary.

The readers (:mod:`relatedpages.corpus.warc_reader`, and JSON lines and manifests in
:mod:`relatedpages.corpus.ingest`) yield the :class:`Page` / :class:`Skip` items defined here
and run the same URL, media-type and body checks (:func:`_finish_page`) before a page leaves
ingest for the segment job.  This module imports none of the other ingest modules.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit

from segmenter.decode import utf16_without_bom

MAX_PAGE_BYTES_DEFAULT = 10 * 1024 * 1024
"""Page bodies (after HTTP decoding) longer than this are cut to it; the page is kept with
``truncated=True``."""

RESYNC_CHUNK_BYTES = 1024 * 1024
GZIP_MAGIC = b"\x1f\x8b\x08"


class InputFormat(str, Enum):
    """The three input formats :func:`read_pages` accepts."""

    WARC = "warc"
    JSONL = "jsonl"
    MANIFEST = "manifest"


class SkipReason(str, Enum):
    """Why a record of an input file is not a page.  One counter per member."""

    # WARC record types that are not pages.
    WARC_REQUEST = "warc_request"
    WARC_METADATA = "warc_metadata"
    WARC_WARCINFO = "warc_warcinfo"
    WARC_REVISIT = "warc_revisit"
    WARC_OTHER_TYPE = "warc_other_type"
    # Responses that are not (usable) HTML pages.
    NON_2XX_STATUS = "non_2xx_status"
    NOT_HTML = "not_html_content_type"
    BINARY_BODY = "binary_body_labelled_html"
    EMPTY_BODY = "empty_body"
    BAD_CONTENT_ENCODING = "bad_content_encoding"
    # Damaged records and archives.
    MISSING_TARGET_URI = "missing_target_uri"
    BAD_URL = "bad_url"
    BAD_HTTP_HEADERS = "bad_http_headers"
    BROKEN_RECORD = "broken_record"
    TRUNCATED_ARCHIVE = "truncated_archive"
    # JSON lines.
    BAD_JSON = "bad_json_line"
    OVERSIZED_LINE = "oversized_json_line"
    MISSING_FIELD = "missing_field"
    BAD_FIELD_VALUE = "bad_field_value"
    BAD_BASE64 = "bad_base64"
    # HTML folder + manifest.
    MANIFEST_BAD_LINE = "manifest_bad_line"
    MISSING_FILE = "missing_file"
    UNREADABLE_FILE = "unreadable_file"


class Note(str, Enum):
    """Something worth counting about a page that was kept."""

    TRUNCATED_TO_CAP = "page_truncated_to_size_cap"


@dataclass(frozen=True)
class Page:
    """One HTML page.

    ``body`` is the HTTP payload after Transfer-/Content-Encoding decoding, at most
    ``max_page_bytes`` long; ``truncated`` is True when it was cut to that cap or the crawler
    had already cut it (``WARC-Truncated``), i.e. count :attr:`Note.TRUNCATED_TO_CAP`.
    ``http_charset`` is the charset declared by the transport (HTTP header, JSON field), to
    be checked by :func:`segmenter.decode.decode_html`, not trusted blindly.
    """

    url: str
    body: bytes
    http_charset: str | None
    truncated: bool
    ordinal: int


@dataclass(frozen=True)
class Skip:
    """A record that is not a page: why, where (ordinal), and a short human detail for logs
    (never used as a counter name)."""

    reason: SkipReason
    ordinal: int
    detail: str = ""


Item = Page | Skip


# --------------------------------------------------------------------------- shared checks

# Magic numbers of formats that servers label text/html by mistake.
_BINARY_MAGIC: tuple[bytes, ...] = (
    b"%PDF-", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"PK\x03\x04",
    b"PK\x05\x06", b"\x1f\x8b", b"RIFF", b"OggS", b"ID3", b"\x00\x00\x01\x00", b"%!PS",
    b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07", b"\xd0\xcf\x11\xe0", b"\x00asm", b"wOFF", b"wOF2",
    b"\x7fELF", b"fLaC", b"\x1a\x45\xdf\xa3", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd",
)
# WHATWG MIME Sniffing §7.2 "binary data bytes" (C0 controls except TAB LF FF CR ESC).
_BINARY_DATA_BYTES = bytes(
    b for b in range(0x20) if b not in (0x09, 0x0A, 0x0C, 0x0D, 0x1B)
)
BINARY_SNIFF_BYTES = 1024
BINARY_SHARE_DEFAULT = 0.05
"""A body whose first KB has more than this share of binary data bytes is not HTML (text
has ~0; compressed or image data ~10.5%, since 27 of 256 byte values are such bytes)."""

# WHATWG MIME Sniffing §7.1 "identifying a resource with an unknown MIME type": patterns
# that make a body with no (or an uninformative) Content-Type HTML; each must be followed by
# a tag-terminating byte (space or '>').
_HTML_SNIFF = re.compile(
    rb"<(?:!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body"
    rb"|br|p|!--)[\s>]",
    re.IGNORECASE,
)
_UNINFORMATIVE_TYPES = frozenset({"", "application/octet-stream", "unknown/unknown",
                                  "application/unknown", "*/*", "binary/octet-stream"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_NON_SPACE = re.compile(rb"\S")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


def binary_reason(body: bytes) -> str | None:
    """Why `body` is binary data rather than HTML text (for the Skip detail), or None.

    >>> binary_reason(b"%PDF-1.7 ..."), binary_reason(b"<html>x</html>")
    ("magic number b'%PDF-'", None)
    """
    for magic in _BINARY_MAGIC:
        if body.startswith(magic):
            return f"magic number {magic!r}"
    if len(body) >= 8 and body[4:8] == b"ftyp":  # MP4 / QuickTime / HEIF
        return "magic number ftyp"
    sample = body[:BINARY_SNIFF_BYTES]
    if not sample or utf16_without_bom(sample) is not None:
        return None
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM
        return None
    binary = len(sample) - len(sample.translate(None, _BINARY_DATA_BYTES))
    if binary > BINARY_SHARE_DEFAULT * len(sample):
        return f"{binary} of the first {len(sample)} bytes are control bytes"
    return None


def _looks_like_html(body: bytes) -> bool:
    head = body[:BINARY_SNIFF_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n\x0c")
    if _HTML_SNIFF.match(head):
        return True
    # XHTML served without a type: an XML declaration, then an <html> element soon after.
    return head[:5].lower() == b"<?xml" and re.search(rb"<html[\s>]", head, re.I) is not None


def _url_problem(url: str) -> str | None:
    """Why `url` cannot be a page URL at all, or None (normalisation happens in the job)."""
    if _CONTROL_CHARS.search(url):
        return "control character in URL"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"unparsable URL: {exc}"
    if not parts.scheme or not parts.netloc:
        return "URL is not absolute (no scheme or host)"
    return None


def _media_type(content_type: str) -> tuple[str, str | None]:
    """('text/html', 'utf-8') from 'text/html; charset="UTF-8"'."""
    media, _, params = content_type.partition(";")
    charset = None
    match = re.search(r"""charset\s*=\s*["']?([^"';\s,]+)""", params, re.IGNORECASE)
    if match:
        charset = match.group(1)
    return media.strip().lower(), charset


def _finish_page(url: str, body: bytes, http_charset: str | None, truncated: bool,
                 ordinal: int) -> Item:
    """The checks every format shares: a page must have non-blank, non-binary bytes."""
    if _NON_SPACE.search(body) is None:
        return Skip(SkipReason.EMPTY_BODY, ordinal)
    why = binary_reason(body)
    if why is not None:
        return Skip(SkipReason.BINARY_BODY, ordinal, why)
    return Page(url=url, body=body, http_charset=http_charset, truncated=truncated,
                ordinal=ordinal)
