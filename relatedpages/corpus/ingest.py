"""Crawl records -> pages: WARC / WARC.gz, JSON lines, or a folder of HTML files + TSV manifest.

:func:`read_pages` streams one input file and yields, in file order, a :class:`Page` for
every HTML page and a :class:`Skip` (with a :class:`SkipReason`) for every record that is not
one.  Each item carries an ``ordinal`` (its record index within the file) so the job can
apply "last record wins" across files; nothing is de-duplicated and URLs are only stripped
of surrounding whitespace here (the job normalises them with ``filters.urls``).

WARC library: FastWARC 2.0.0, not warcio 1.8.1.
  * Speed (scripts/bench_warc.py, median of 3 runs, every response record's payload read,
    on the three real archives in ../shared/data, two runs): FastWARC 5,300-13,000
    records/s and 170-196 MB/s of gzipped input, warcio 2,300-5,400 records/s and 66-83
    MB/s: FastWARC is 2.2-2.6x faster; this module on top of it (checks, own HTTP parsing)
    is still 1.4-2.0x faster than bare warcio.
  * Robustness, measured with the malformed archives in tests/test_ingest.py:
    - warcio raises AttributeError (not its own ArchiveLoadFailed) on a record without
      ``WARC-Target-URI`` and on ``Content-Encoding: br`` with brotli 1.2, so one bad record
      kills the file unless we catch AttributeError around library code;
    - neither library re-synchronises after garbage between records or a corrupt gzip
      member (both stop), and both silently return a short body for a record truncated at
      the end of the file.
    FastWARC's failures are all recoverable from outside: it raises OSError (only), it
    reports each record's start offset (``stream_pos``), its iterator can be restarted at
    any offset, and it gives the WARC ``Content-Length`` to check completeness against.  So
    this module adds, on top of FastWARC: re-synchronisation (scan for the next gzip member /
    ``WARC/`` line that really starts a record, restart there), a completeness check of
    every record (short block at end of file = ``truncated_archive``), and its own lenient
    HTTP parsing and Content-/Transfer-Encoding decoding (FastWARC's ``auto_decode`` raises
    and aborts the iterator on a body that is not really gzip; its HTTP parser drops the
    body of a response whose headers end in bare LF).
  * Limitation (both libraries): a WARC record whose *WARC* header lines end in bare LF is
    not readable and is skipped as ``broken_record``.
"""
from __future__ import annotations

import base64
import binascii
import gzip
import io
import itertools
import json
import logging
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from segmenter.decode import utf16_without_bom

logger = logging.getLogger(__name__)

MAX_PAGE_BYTES_DEFAULT = 10 * 1024 * 1024
"""Page bodies (after HTTP decoding) longer than this are cut to it; the page is kept with
``truncated=True``."""

HTTP_HEADER_MAX_BYTES_DEFAULT = 64 * 1024
"""The HTTP header block of a WARC response must end within this many bytes."""

WARC_HEADER_MAX_BYTES_DEFAULT = 256 * 1024
"""Longest WARC header block FastWARC will parse (its default, 32 KB, is below what some
crawlers write for long URLs and outlinks)."""

JSON_LINE_MAX_BYTES_FACTOR_DEFAULT = 8
"""A JSON line may be this many times ``max_page_bytes`` (+1 MiB) long: base64 costs 4/3,
JSON ``\\uXXXX`` escapes up to 6x.  Longer lines are skipped, streamed past, never loaded."""

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

_SUFFIX_FORMATS: tuple[tuple[str, InputFormat], ...] = (
    (".warc.gz", InputFormat.WARC),
    (".warc", InputFormat.WARC),
    (".jsonl.gz", InputFormat.JSONL),
    (".json.gz", InputFormat.JSONL),
    (".jsonl", InputFormat.JSONL),
    (".json", InputFormat.JSONL),
    (".tsv", InputFormat.MANIFEST),
)
# Names that say nothing about the content; for these we look at the first bytes.
_AMBIGUOUS_SUFFIXES = frozenset({"", ".gz", ".txt", ".dat", ".data"})


# --------------------------------------------------------------------------- format


def _peek(path: Path, size: int) -> bytes:
    """The first `size` bytes of the file's content (gunzipped when it starts with the gzip
    magic, whatever its name says); b"" when they cannot be read."""
    with path.open("rb") as raw:
        if raw.read(2) != GZIP_MAGIC[:2]:
            raw.seek(0)
            return raw.read(size)
        raw.seek(0)
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                return unzipped.read(size)
        except (OSError, EOFError, zlib.error):
            return b""


def _sniff_format(path: Path) -> InputFormat | None:
    stripped = _peek(path, 64).lstrip()
    if stripped.startswith(b"WARC/"):
        return InputFormat.WARC
    if stripped.startswith(b"{"):
        return InputFormat.JSONL
    return None


def input_format(path: str | Path) -> InputFormat:
    """The input format of `path`, from its name; from its first bytes when the name is
    ambiguous (``.gz``, no extension: mrjob's raw-input copies may be named like that).

    Raises ValueError for a name that is not one of the supported formats (usage error).

    >>> input_format("crawl/CC-MAIN-00000.warc.gz"), input_format("pages.JSONL")
    (<InputFormat.WARC: 'warc'>, <InputFormat.JSONL: 'jsonl'>)
    """
    path = Path(path)
    name = path.name.lower()
    for suffix, fmt in _SUFFIX_FORMATS:
        if name.endswith(suffix):
            return fmt
    if path.suffix.lower() in _AMBIGUOUS_SUFFIXES and path.is_file():
        sniffed = _sniff_format(path)
        if sniffed is not None:
            return sniffed
    raise ValueError(
        f"unknown input format for {str(path)!r}: expected a name ending in "
        + ", ".join(suffix for suffix, _ in _SUFFIX_FORMATS)
    )


def expand_inputs(inputs: Sequence[str]) -> list[str]:
    """The input files of a command line: files as given (their format must be known: see
    :func:`input_format`), remote URIs (``hdfs://…``, ``s3://…``) as given, and for each
    local folder every WARC, JSON lines and ``.tsv`` manifest file below it (hidden ones
    left out), in path order.

    Raises ValueError with one line for a missing input, a file of an unknown format, or a
    folder without any such file.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.warc.gz", "a.jsonl", "notes.txt", ".hidden.warc"):
    ...     _ = (folder / name).write_text("x")
    >>> [pathlib.Path(p).name for p in expand_inputs([str(folder)])]
    ['a.jsonl', 'b.warc.gz']
    """
    accepted = ", ".join(suffix for suffix, _ in _SUFFIX_FORMATS)
    expanded: list[str] = []
    for name in inputs:
        if "://" in name and not name.startswith("file://"):
            expanded.append(name)
            continue
        path = Path(name)
        if path.is_dir():
            found = sorted(
                str(child) for child in path.rglob("*")
                if child.is_file() and not any(part.startswith(".")
                                               for part in child.relative_to(path).parts)
                and any(child.name.lower().endswith(suffix) for suffix, _ in _SUFFIX_FORMATS))
            if not found:
                raise ValueError(f"{name}: a folder without input files (accepted: {accepted})")
            expanded += found
        elif path.is_file():
            input_format(path)
            expanded.append(name)
        else:
            raise ValueError(f"no such input: {name}")
    return expanded


def read_pages(
    path: str | Path,
    *,
    max_page_bytes: int = MAX_PAGE_BYTES_DEFAULT,
    base_dir: str | Path | None = None,
) -> Iterator[Item]:
    """Stream the pages (and skips) of one input file, in file order.

    ``base_dir`` only matters for TSV manifests: the folder that manifest paths are relative
    to (default: the manifest's own folder).  A job reading raw input gets a renamed local
    copy of the manifest, so it should pass the folder of the original input URI.

    Raises ValueError for an unknown input format or a non-positive `max_page_bytes`
    (usage errors, at call time) and OSError when `path` itself cannot be opened; every
    problem *inside* the file is a :class:`Skip`.
    """
    if max_page_bytes <= 0:
        raise ValueError(f"max_page_bytes must be positive, got {max_page_bytes}")
    path = Path(path)
    fmt = input_format(path)
    if fmt is InputFormat.WARC:
        return _read_warc(path, max_page_bytes)
    if fmt is InputFormat.JSONL:
        _reject_json_array(path)
        return _read_jsonl(path, max_page_bytes)
    base = Path(base_dir) if base_dir is not None else path.parent
    return _read_manifest(path, base, max_page_bytes)


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


# --------------------------------------------------------------------------- HTTP payload

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_STATUS_LINE = re.compile(rb"HTTP/\d(?:\.\d)?[ \t]+(\d{3})(?:[ \t].*)?")
_CHUNK_SIZE = re.compile(rb"[ \t]*([0-9A-Fa-f]{1,15})[ \t]*(?:;[^\n]*)?\r?\n")


@dataclass(frozen=True)
class _HttpResponse:
    status: int
    headers: tuple[tuple[str, str], ...]  # (lower-case name, value), in order
    body: bytes

    def last(self, name: str) -> str | None:
        for key, value in reversed(self.headers):
            if key == name:
                return value
        return None


def parse_http_response(block: bytes, complete: bool) -> _HttpResponse | str:
    """Split a WARC response block into status, headers and payload; or a problem string.

    Lenient like browsers: bare-LF line ends, header lines without a colon are ignored,
    obsolete line folding is joined.  `complete` says whether `block` is the whole block
    (so a header section running to its end is just a response without a body).
    """
    end = _HEADER_END.search(block, 0, HTTP_HEADER_MAX_BYTES_DEFAULT)
    if end is not None:
        head, body = block[:end.start()], block[end.end():]
    elif complete and len(block) <= HTTP_HEADER_MAX_BYTES_DEFAULT:
        head, body = block, b""
    else:
        return f"no end of HTTP headers in the first {HTTP_HEADER_MAX_BYTES_DEFAULT} bytes"
    lines = head.split(b"\n")
    status_match = _STATUS_LINE.fullmatch(lines[0].rstrip(b"\r"))
    if status_match is None:
        return f"not an HTTP status line: {lines[0][:60]!r}"
    headers: list[tuple[str, str]] = []
    for raw_line in lines[1:]:
        line = raw_line.rstrip(b"\r").decode("latin-1")
        if line[:1] in (" ", "\t") and headers:  # obs-fold (RFC 9112 §5.2)
            name, value = headers[-1]
            headers[-1] = (name, f"{value} {line.strip()}")
            continue
        name, colon, value = line.partition(":")
        if colon and name and name == name.strip():
            headers.append((name.lower(), value.strip()))
    return _HttpResponse(int(status_match.group(1)), tuple(headers), body)


def _dechunk(data: bytes, limit: int) -> bytes | None:
    """Undo chunked transfer coding, leniently: None when `data` does not start like a
    chunked body (some crawlers store the payload de-chunked but keep the header); a
    truncated or damaged chunk stream yields what was decoded so far."""
    out = bytearray()
    pos = 0
    while pos < len(data) and len(out) <= limit:
        match = _CHUNK_SIZE.match(data, pos)
        if match is None:
            if pos == 0:
                return None
            break
        size = int(match.group(1), 16)
        if size == 0:
            break
        start = match.end()
        out += data[start:start + size]
        pos = start + size
        if data.startswith(b"\r\n", pos):
            pos += 2
        elif data.startswith(b"\n", pos):
            pos += 1
    return bytes(out)


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    return zlib.decompressobj(wbits).decompress(data, limit + 1)


def _decode_content(data: bytes, codings: list[str], limit: int) -> bytes | str:
    """Undo Content-Encoding (gzip, deflate, br), producing at most limit+1 bytes (so the
    caller can tell that the cap was hit); a problem string when a coding fails."""
    for coding in reversed(codings):
        try:
            if coding in ("", "identity", "none"):
                continue
            if coding in ("gzip", "x-gzip"):
                data = _inflate(data, 16 + zlib.MAX_WBITS, limit)
            elif coding == "deflate":
                # RFC 9110 says zlib-wrapped; many servers send raw deflate.
                try:
                    data = _inflate(data, zlib.MAX_WBITS, limit)
                except zlib.error:
                    data = _inflate(data, -zlib.MAX_WBITS, limit)
            elif coding == "br":
                unbrotli = _unbrotli(data, limit)
                if unbrotli is None:
                    return "Content-Encoding br does not decode"
                data = unbrotli
            else:
                return f"unsupported Content-Encoding {coding[:30]!r}"
        except zlib.error as exc:
            return f"Content-Encoding {coding} does not decode: {exc}"
    return data


def _unbrotli(data: bytes, limit: int) -> bytes | None:
    import brotli  # lazily: only brotli-encoded payloads need it

    try:
        return bytes(brotli.Decompressor().process(data, output_buffer_limit=limit + 1))
    except brotli.error:
        return None


def _http_payload(response: _HttpResponse, payload_cut: bool,
                  limit: int) -> tuple[bytes, bool] | str:
    """(decoded body, cut) from an HTTP response, or a bad-content-encoding problem."""
    body = response.body
    transfer = (response.last("transfer-encoding") or "").lower()
    if "chunked" in transfer:
        dechunked = _dechunk(body, limit)
        if dechunked is not None:
            body = dechunked
    encoding = response.last("content-encoding")
    if encoding:
        codings = [c.strip().lower() for c in encoding.split(",")]
        decoded = _decode_content(body, codings, limit)
        if isinstance(decoded, str):
            # The crawler may have stored the decoded body and kept the header: if the bytes
            # already look like HTML, use them as they are (warcio does the same).
            if _looks_like_html(body) or (binary_reason(body) is None and b"<" in body[:4096]):
                logger.debug("ignoring Content-Encoding %s: body is already HTML", encoding)
            else:
                return decoded
        else:
            body = decoded
    cut = payload_cut or len(body) > limit
    return body[:limit], cut


# --------------------------------------------------------------------------- WARC


@dataclass(frozen=True)
class _RawRecord:
    """What we keep of a FastWARC record once it has been read (the library object is only
    valid until the iterator moves on)."""

    stream_pos: int
    record_type: str
    headers: dict[str, str]
    block: bytes          # first block_limit bytes of the block
    block_read: int       # bytes of block present in the file (read + consumed)
    declared_length: int | None


@dataclass(frozen=True)
class _Failure:
    """FastWARC could not go on (it raised OSError) after the records it gave so far."""

    message: str


def _fastwarc_type_names() -> dict[int, str]:
    from fastwarc.warc import WarcRecordType

    return {int(member): str(member) for member in (
        WarcRecordType.warcinfo, WarcRecordType.response, WarcRecordType.resource,
        WarcRecordType.request, WarcRecordType.metadata, WarcRecordType.revisit,
        WarcRecordType.conversion, WarcRecordType.continuation, WarcRecordType.unknown,
        WarcRecordType.no_type)}


def _iter_fastwarc(stream: BinaryIO, start: int, block_limit: int,
                   type_names: dict[int, str]) -> Iterator[_RawRecord | _Failure]:
    """FastWARC records from byte `start` on; ends with a _Failure if it had to stop."""
    from fastwarc.warc import ArchiveIterator

    stream.seek(start)
    records = iter(ArchiveIterator(stream, parse_http=False,
                                   max_header_len=WARC_HEADER_MAX_BYTES_DEFAULT))
    while True:
        try:
            record = next(records)
        except StopIteration:
            return
        except OSError as exc:  # FastWARC's only error for unreadable input
            yield _Failure(str(exc))
            return
        headers = {key.lower(): value for key, value in record.headers.items()}
        try:
            block = record.reader.read(block_limit)
            rest = record.reader.consume()
        except OSError as exc:
            yield _Failure(f"record at byte {record.stream_pos}: {exc}")
            return
        length_text = headers.get("content-length", "").strip()
        yield _RawRecord(
            stream_pos=record.stream_pos,
            record_type=type_names.get(int(record.record_type), "unknown"),
            headers=headers,
            block=block,
            block_read=len(block) + rest,
            declared_length=int(length_text) if length_text.isdigit() else None,
        )


_WARC_LINE = re.compile(rb"WARC/\d+\.\d+\r\n")
_CONTENT_LENGTH_LINE = re.compile(rb"\r\ncontent-length:[ \t]*\d+[ \t]*\r\n", re.IGNORECASE)
_RECORD_START_PROBE_BYTES = 32 * 1024


def _looks_like_record_header(text: bytes) -> bool:
    """`text` starts with a WARC version line and a header block with a Content-Length."""
    if _WARC_LINE.match(text) is None:
        return False
    end = text.find(b"\r\n\r\n")
    return end >= 0 and _CONTENT_LENGTH_LINE.search(text, 0, end + 2) is not None


def _is_record_start(stream: BinaryIO, offset: int) -> bool:
    """Does a WARC record, or a gzip member holding one, start at `offset`?"""
    stream.seek(offset)
    head = stream.read(2 * _RECORD_START_PROBE_BYTES)
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(
                head, _RECORD_START_PROBE_BYTES)
        except zlib.error:
            return False
    return _looks_like_record_header(head[:_RECORD_START_PROBE_BYTES])


_RECORD_START = re.compile(re.escape(GZIP_MAGIC) + rb"|WARC/")


def _next_record_start(stream: BinaryIO, offset: int) -> int | None:
    """The first offset >= `offset` where a record really starts, scanning in chunks: a
    gzip member that inflates to a WARC header, or an uncompressed WARC header (version
    line, header lines with a Content-Length, blank line); None at end of file.  Both kinds
    are looked for, so a file whose first bytes are junk is still read in the right mode."""
    overlap = len(b"WARC/") - 1
    while True:
        stream.seek(offset)
        chunk = stream.read(RESYNC_CHUNK_BYTES + overlap)
        for match in _RECORD_START.finditer(chunk):
            if _is_record_start(stream, offset + match.start()):
                return offset + match.start()
        if len(chunk) < RESYNC_CHUNK_BYTES + overlap:
            return None
        offset += RESYNC_CHUNK_BYTES


class _Framing(Enum):
    SOUND = "sound"
    TRUNCATED = "truncated"
    DAMAGED = "damaged"


@dataclass(frozen=True)
class _FramingCheck:
    framing: _Framing
    retry_at: int           # where to scan for the next record
    end: int | None = None  # first byte after a sound record (after its gzip member)


def _check_framing(stream: BinaryIO, record: _RawRecord, compressed: bool) -> _FramingCheck:
    """Re-read `record` from the file: is it sound (its block ends where its Content-Length
    says, then CRLF CRLF, and in a gzipped file its gzip member ends there too), or did a
    wrong Content-Length make it run into the next record, or does the file end inside it?

    Used when FastWARC failed right behind `record` (garbage after a good record, or a
    damaged record?) and at the end of the file (is anything left after the last record?).
    `retry_at` is where to scan for the next record: behind a sound record in an
    uncompressed file, so a ``WARC/1.0`` line inside its payload is never taken for a
    record; else the byte after its start (only a real gzip member inflates to a header).
    """
    retry_at = record.stream_pos + 1
    if record.declared_length is None:
        return _FramingCheck(_Framing.DAMAGED, retry_at)
    if record.block_read < record.declared_length:
        return _FramingCheck(_Framing.TRUNCATED, retry_at)
    stream.seek(record.stream_pos)
    if compressed:
        member = _inflate_member(stream)
        if member is None:
            return _FramingCheck(_Framing.DAMAGED, retry_at)
        if member.size < 0:
            return _FramingCheck(_Framing.TRUNCATED, retry_at)
        header_end = member.head.find(b"\r\n\r\n")
        # The member must hold exactly this record: header, block, CR LF CR LF.
        extra = member.size - (header_end + 4 + record.declared_length)
        if header_end >= 0 and 0 <= extra <= 4 and \
                member.tail[len(member.tail) - extra:] == b"\r\n\r\n"[:extra]:
            return _FramingCheck(_Framing.SOUND, retry_at, record.stream_pos + member.stored)
        return _FramingCheck(_Framing.DAMAGED, retry_at)
    header_end = stream.read(WARC_HEADER_MAX_BYTES_DEFAULT).find(b"\r\n\r\n")
    if header_end < 0:
        return _FramingCheck(_Framing.DAMAGED, retry_at)
    block_end = header_end + 4 + record.declared_length
    stream.seek(record.stream_pos + block_end)
    separator = stream.read(4)
    if separator == b"\r\n\r\n" or (len(separator) < 4 and b"\r\n\r\n".startswith(separator)):
        end = record.stream_pos + block_end + len(separator)
        return _FramingCheck(_Framing.SOUND, end, end)
    return _FramingCheck(_Framing.DAMAGED, retry_at)


@dataclass(frozen=True)
class _Member:
    head: bytes   # first WARC_HEADER_MAX_BYTES_DEFAULT inflated bytes
    size: int     # inflated size; -1 when the file ends inside the member
    tail: bytes   # last 4 inflated bytes
    stored: int   # compressed size


def _inflate_member(stream: BinaryIO) -> _Member | None:
    """Inflate the one gzip member at the stream position, streaming, keeping only its head
    and tail; None when its data is corrupt."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    head = bytearray()
    tail = b""
    size = stored = 0
    while not inflater.eof:
        data = stream.read(RESYNC_CHUNK_BYTES)
        if not data:
            return _Member(bytes(head), -1, tail, stored)
        stored += len(data)
        while data and not inflater.eof:
            try:
                out = inflater.decompress(data, RESYNC_CHUNK_BYTES)
            except zlib.error:
                return None
            data = inflater.unconsumed_tail
            if len(head) < WARC_HEADER_MAX_BYTES_DEFAULT:
                head += out[:WARC_HEADER_MAX_BYTES_DEFAULT - len(head)]
            size += len(out)
            tail = (tail + out)[-4:]
        stored -= len(data) + len(inflater.unused_data)
    return _Member(bytes(head), size, tail, stored)


class _Tail(Enum):
    NOTHING = "nothing"
    TRUNCATED = "truncated"
    JUNK = "junk"


def _classify_tail(stream: BinaryIO, offset: int) -> _Tail:
    """What is left from `offset` to the end of the file: nothing (or whitespace), the
    beginning of a record cut off by the end of the file, or junk."""
    stream.seek(offset)
    limit = 2 * WARC_HEADER_MAX_BYTES_DEFAULT
    rest = stream.read(limit + 1).lstrip(b"\r\n\t ")
    if not rest:
        return _Tail.NOTHING
    if len(rest) > limit:
        return _Tail.JUNK
    if rest.startswith(GZIP_MAGIC) or GZIP_MAGIC.startswith(rest):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            text = inflater.decompress(rest, _RECORD_START_PROBE_BYTES)
        except zlib.error:
            return _Tail.JUNK
        if inflater.eof or inflater.unconsumed_tail:
            return _Tail.JUNK
        rest = text
        if not rest:
            return _Tail.TRUNCATED
    if (rest.startswith(b"WARC/") or b"WARC/".startswith(rest)) and b"\r\n\r\n" not in rest:
        return _Tail.TRUNCATED
    return _Tail.JUNK


def _read_warc(path: Path, max_page_bytes: int) -> Iterator[Item]:
    type_names = _fastwarc_type_names()
    block_limit = max_page_bytes + HTTP_HEADER_MAX_BYTES_DEFAULT
    ordinals = itertools.count()
    with path.open("rb") as stream:
        start: int | None = 0
        in_damage = False  # consecutive failures with no record between = one Skip
        while start is not None:
            held: _RawRecord | None = None   # one-record look-ahead
            failure: _Failure | None = None
            stream.seek(start)
            compressed = stream.read(2) == GZIP_MAGIC[:2]  # FastWARC detects it the same way
            # The generator reads `stream`; the helpers below only move the file position
            # once it has stopped.
            for item in _iter_fastwarc(stream, start, block_limit, type_names):
                if isinstance(item, _Failure):
                    failure = item
                    break
                if held is not None:
                    yield _warc_item(held, next(ordinals), max_page_bytes, last=False)
                held = item
                in_damage = False

            if failure is None:
                # FastWARC ended quietly: at the end of the file, but also (!) at a gzip
                # member whose header is damaged or cut short.  Look at what follows the
                # last record.
                tail_at = start
                if held is not None:
                    check = _check_framing(stream, held, compressed)
                    if check.framing is _Framing.SOUND and check.end is not None:
                        yield _warc_item(held, next(ordinals), max_page_bytes, last=False)
                        tail_at = check.end
                    else:
                        # Cut short by the end of the file -- or by damage, if records
                        # follow.  (A record in a single-member gzipped WARC lands here too,
                        # since its gzip member holds more than itself.)
                        later = _next_record_start(stream, held.stream_pos + 1)
                        if later is None:
                            yield _warc_item(held, next(ordinals), max_page_bytes, last=True)
                            return
                        yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                                   f"record at byte {held.stream_pos} is damaged")
                        in_damage = True
                        start = later
                        continue
                tail = _classify_tail(stream, tail_at)
                if tail is _Tail.NOTHING:
                    return
                start = _next_record_start(stream, tail_at + 1)
                if start is None and tail is _Tail.TRUNCATED:
                    yield Skip(SkipReason.TRUNCATED_ARCHIVE, next(ordinals),
                               f"file ends inside a record header at byte {tail_at}")
                elif not in_damage:
                    yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                               f"unreadable bytes at byte {tail_at}")
                in_damage = True
                continue

            if held is None:
                # Nothing readable from `start` on.
                retry_at = start + 1
                next_start = _next_record_start(stream, retry_at)
                if not in_damage:
                    if next_start is None and _classify_tail(stream, start) is _Tail.TRUNCATED:
                        yield Skip(SkipReason.TRUNCATED_ARCHIVE, next(ordinals),
                                   f"file ends inside a record header at byte {start}")
                    else:
                        yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                                   f"unreadable bytes at byte {start}: {failure.message}")
                in_damage = True
                start = next_start
                continue

            # FastWARC stopped right behind `held`.  Garbage after a sound record, or a
            # record that is itself damaged (wrong Content-Length, corrupt member)?
            check = _check_framing(stream, held, compressed)
            start = _next_record_start(stream, check.retry_at)
            logger.warning("%s: WARC damaged after byte %s (%s); resuming at %s", path,
                           held.stream_pos, failure.message, start)
            if check.framing is _Framing.SOUND and check.end is not None:
                yield _warc_item(held, next(ordinals), max_page_bytes, last=False)
                if start is None and _classify_tail(stream, check.end) is _Tail.TRUNCATED:
                    yield Skip(SkipReason.TRUNCATED_ARCHIVE, next(ordinals),
                               f"file ends inside a record header at byte {check.end}")
                else:
                    yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                               f"unreadable bytes after the record at byte {held.stream_pos}: "
                               f"{failure.message}")
            elif check.framing is _Framing.TRUNCATED and start is None:
                yield Skip(SkipReason.TRUNCATED_ARCHIVE, next(ordinals),
                           f"record at byte {held.stream_pos} ends early: file truncated")
            else:
                yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                           f"record at byte {held.stream_pos} is damaged: {failure.message}")
            in_damage = True


_TYPE_REASONS = {
    "request": SkipReason.WARC_REQUEST,
    "metadata": SkipReason.WARC_METADATA,
    "warcinfo": SkipReason.WARC_WARCINFO,
    "revisit": SkipReason.WARC_REVISIT,
}


def _warc_item(record: _RawRecord, ordinal: int, max_page_bytes: int, *, last: bool) -> Item:
    """Page or Skip for one complete-or-not WARC record."""
    if record.declared_length is None or record.block_read < record.declared_length:
        # Only the end of the file makes a block short (or cuts a header before its
        # Content-Length); anywhere else FastWARC would have failed on what follows.
        if last:
            return Skip(SkipReason.TRUNCATED_ARCHIVE, ordinal,
                        f"record at byte {record.stream_pos} ends early: file truncated")
        return Skip(SkipReason.BROKEN_RECORD, ordinal,
                    f"record at byte {record.stream_pos}: no valid Content-Length")
    if "warc-type" not in record.headers:
        return Skip(SkipReason.BROKEN_RECORD, ordinal,
                    f"record at byte {record.stream_pos}: no WARC-Type")
    if record.record_type != "response":
        reason = _TYPE_REASONS.get(record.record_type, SkipReason.WARC_OTHER_TYPE)
        return Skip(reason, ordinal, record.headers.get("warc-type", "")[:40])
    url = record.headers.get("warc-target-uri", "").strip()
    # WARC/1.1 §5.5's ABNF wrongly had <...> around the URI; some writers followed it.
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    if not url:
        return Skip(SkipReason.MISSING_TARGET_URI, ordinal)
    problem = _url_problem(url)
    if problem is not None:
        return Skip(SkipReason.BAD_URL, ordinal, problem)
    complete_block = record.block_read == len(record.block)
    response = parse_http_response(record.block, complete_block)
    if isinstance(response, str):
        return Skip(SkipReason.BAD_HTTP_HEADERS, ordinal, response)
    if not 200 <= response.status <= 299:
        return Skip(SkipReason.NON_2XX_STATUS, ordinal, str(response.status))
    media, charset = _media_type(response.last("content-type") or "")
    if media not in _HTML_TYPES and media not in _UNINFORMATIVE_TYPES:
        return Skip(SkipReason.NOT_HTML, ordinal, media[:60])
    payload = _http_payload(response, not complete_block, max_page_bytes)
    if isinstance(payload, str):
        return Skip(SkipReason.BAD_CONTENT_ENCODING, ordinal, payload)
    body, cut = payload
    if media in _UNINFORMATIVE_TYPES and _NON_SPACE.search(body) and not _looks_like_html(body):
        return Skip(SkipReason.NOT_HTML, ordinal,
                    f"Content-Type {media or 'missing'} and the body does not look like HTML")
    truncated = cut or "warc-truncated" in record.headers
    return _finish_page(url, body, charset, truncated, ordinal)


# --------------------------------------------------------------------------- JSON lines


def _reject_json_array(path: Path) -> None:
    if _peek(path, 1024).lstrip().startswith(b"["):
        raise ValueError(f"{path}: a JSON array is not supported; write one JSON object per "
                         "line (JSON lines)")


def _read_lines(stream: io.BufferedIOBase, limit: int) -> Iterator[bytes | None]:
    """Lines of at most `limit` bytes; None for a longer line, which is read past in pieces
    and never held in memory."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while True:
                piece = stream.readline(RESYNC_CHUNK_BYTES)
                if not piece or piece.endswith(b"\n"):
                    break
            yield None
            continue
        yield line


def _read_jsonl(path: Path, max_page_bytes: int) -> Iterator[Item]:
    ordinals = itertools.count()
    limit = JSON_LINE_MAX_BYTES_FACTOR_DEFAULT * max_page_bytes + 1024 * 1024
    with path.open("rb") as raw:
        is_gzip = raw.read(2) == GZIP_MAGIC[:2]
        raw.seek(0)
        stream: io.BufferedIOBase = gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip else raw
        lines = _read_lines(stream, limit)
        while True:
            try:
                line = next(lines)
            except StopIteration:
                return
            except EOFError as exc:  # gzip stream cut short
                yield Skip(SkipReason.TRUNCATED_ARCHIVE, next(ordinals), str(exc))
                return
            except (OSError, zlib.error) as exc:  # BadGzipFile, corrupt deflate data
                yield Skip(SkipReason.BROKEN_RECORD, next(ordinals),
                           f"unreadable gzip data: {exc}")
                return
            if line is None:
                yield Skip(SkipReason.OVERSIZED_LINE, next(ordinals), f"line over {limit} bytes")
                continue
            if not line.strip():
                continue
            yield _json_item(line, next(ordinals), max_page_bytes)


def _json_item(line: bytes, ordinal: int, max_page_bytes: int) -> Item:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        return Skip(SkipReason.BAD_JSON, ordinal, str(exc)[:120])
    if not isinstance(obj, dict):
        return Skip(SkipReason.BAD_JSON, ordinal, f"a JSON {type(obj).__name__}, not an object")
    for field in ("url", "html"):
        if obj.get(field) is None:
            return Skip(SkipReason.MISSING_FIELD, ordinal, field)
    url, html = obj["url"], obj["html"]
    if not isinstance(url, str) or not isinstance(html, str):
        return Skip(SkipReason.BAD_FIELD_VALUE, ordinal, "url and html must be strings")
    encoding = obj.get("encoding")
    content_type = obj.get("content_type")
    charset = obj.get("charset")
    if encoding not in (None, "base64", "text") or not isinstance(content_type, (str, type(None))) \
            or not isinstance(charset, (str, type(None))):
        return Skip(SkipReason.BAD_FIELD_VALUE, ordinal,
                    "encoding must be 'base64' or 'text'; content_type, charset strings")
    url = url.strip()
    problem = _url_problem(url) if url else "empty url"
    if problem is not None:
        return Skip(SkipReason.BAD_URL, ordinal, problem)
    http_charset: str | None
    if content_type:
        media, type_charset = _media_type(content_type)
        if media not in _HTML_TYPES and media not in _UNINFORMATIVE_TYPES:
            return Skip(SkipReason.NOT_HTML, ordinal, media[:60])
    else:
        type_charset = None
    if encoding == "base64":
        try:
            body = base64.b64decode("".join(html.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            return Skip(SkipReason.BAD_BASE64, ordinal, str(exc)[:120])
        http_charset = charset or type_charset
    else:
        # Text: we produce the bytes, so we know their charset (a <meta> saying otherwise
        # describes the page's original bytes, not these).
        body = html.encode("utf-8", errors="replace")
        http_charset = "utf-8"
    truncated = len(body) > max_page_bytes
    return _finish_page(url, body[:max_page_bytes], http_charset, truncated, ordinal)


# --------------------------------------------------------------------------- manifest


def _read_manifest(path: Path, base: Path, max_page_bytes: int) -> Iterator[Item]:
    ordinals = itertools.count()
    with path.open("rb") as stream:
        for raw_line in stream:
            try:
                line = raw_line.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                yield Skip(SkipReason.MANIFEST_BAD_LINE, next(ordinals), "not UTF-8")
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            yield _manifest_item(line, base, next(ordinals), max_page_bytes)


def _manifest_item(line: str, base: Path, ordinal: int, max_page_bytes: int) -> Item:
    fields = [field.strip() for field in line.split("\t")]
    if len(fields) != 2 or not all(fields):
        return Skip(SkipReason.MANIFEST_BAD_LINE, ordinal,
                    f"expected 'file<TAB>url', got {len(fields)} field(s)")
    file_name, url = fields
    problem = _url_problem(url)
    if problem is not None:
        return Skip(SkipReason.BAD_URL, ordinal, problem)
    if os.path.isabs(file_name):
        return Skip(SkipReason.MANIFEST_BAD_LINE, ordinal,
                    "absolute path; paths are relative to the manifest's folder")
    file_path = base / file_name
    try:
        with file_path.open("rb") as handle:
            body = handle.read(max_page_bytes + 1)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return Skip(SkipReason.MISSING_FILE, ordinal, file_name[:200])
    except OSError as exc:
        return Skip(SkipReason.UNREADABLE_FILE, ordinal, f"{file_name[:200]}: {exc.strerror}")
    truncated = len(body) > max_page_bytes
    return _finish_page(url, body[:max_page_bytes], None, truncated, ordinal)
