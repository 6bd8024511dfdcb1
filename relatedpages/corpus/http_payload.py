"""HTTP payload parsing for ingest: one job, a WARC response block -> status, headers, body.

Sits between the WARC reader (:mod:`relatedpages.corpus.warc_reader`, which hands over each
response record's block) and the shared page checks (:mod:`relatedpages.corpus.records`):
lenient header parsing (:func:`parse_http_response`), then chunked Transfer-Encoding and
gzip / deflate / br Content-Encoding undone under the page size cap (:func:`_http_payload`).
"""
from __future__ import annotations

import logging
import re
import zlib
from dataclasses import dataclass

from relatedpages.corpus.records import _looks_like_html, binary_reason

logger = logging.getLogger(__name__)

HTTP_HEADER_MAX_BYTES_DEFAULT = 64 * 1024
"""The HTTP header block of a WARC response must end within this many bytes."""

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
