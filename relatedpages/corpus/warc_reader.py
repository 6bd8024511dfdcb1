"""The WARC reader of ingest: one job, a WARC / WARC.gz file -> pages and skips, in order.

:func:`read_pages` (:mod:`relatedpages.corpus.ingest`) dispatches WARC inputs to
:func:`_read_warc`; HTTP payloads are parsed by :mod:`relatedpages.corpus.http_payload` and
every page passes the shared checks of :mod:`relatedpages.corpus.records`.

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

import itertools
import logging
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import BinaryIO

from relatedpages.corpus.http_payload import (
    HTTP_HEADER_MAX_BYTES_DEFAULT,
    _http_payload,
    parse_http_response,
)
from relatedpages.corpus.records import (
    _HTML_TYPES,
    _NON_SPACE,
    _UNINFORMATIVE_TYPES,
    GZIP_MAGIC,
    RESYNC_CHUNK_BYTES,
    Item,
    Skip,
    SkipReason,
    _finish_page,
    _looks_like_html,
    _media_type,
    _url_problem,
)

logger = logging.getLogger(__name__)

WARC_HEADER_MAX_BYTES_DEFAULT = 256 * 1024
"""Longest WARC header block FastWARC will parse (its default, 32 KB, is below what some
crawlers write for long URLs and outlinks)."""


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
