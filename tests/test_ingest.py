"""relatedpages.corpus.ingest: WARC / JSON lines / manifest -> pages, every skip with its reason.

WARC inputs are built with warcio's WARCWriter (one gzip member per record, like Common
Crawl), then damaged byte by byte.  Each malformed-input test asserts the exact pages read
and the exact skip reasons, in order (cf. commoncrawl/cc-pyspark's tests).
"""
from __future__ import annotations

import base64
import gzip
import io
import json
import random
import zlib
from collections import Counter
from pathlib import Path

import brotli
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from relatedpages.corpus.ingest import (
    InputFormat,
    Page,
    Skip,
    SkipReason,
    input_format,
    read_pages,
)

HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>page %d</p></body></html>"


def page_html(number: int) -> bytes:
    return HTML % number


# --------------------------------------------------------------------------- building WARCs


def response(url: str, body: bytes, *, status: str = "200 OK",
             content_type: str | None = "text/html; charset=utf-8",
             headers: list[tuple[str, str]] | None = None,
             warc_headers: dict[str, str] | None = None) -> bytes:
    """One uncompressed WARC response record, written by warcio."""
    http_headers = [("Content-Type", content_type)] if content_type is not None else []
    http_headers += headers or []
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    record = writer.create_warc_record(
        url, "response", payload=io.BytesIO(body), length=len(body),
        http_headers=StatusAndHeaders(status, http_headers, protocol="HTTP/1.1"),
        warc_headers_dict=warc_headers or {})
    writer.write_record(record)
    return out.getvalue()


def other_record(kind: str, url: str = "http://example.com/") -> bytes:
    """An uncompressed warcinfo / request / metadata / revisit / resource record."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=False)
    if kind == "warcinfo":
        record = writer.create_warcinfo_record("test.warc.gz", {"software": "tests"})
    elif kind == "request":
        request = StatusAndHeaders("GET / HTTP/1.1", [("Host", "example.com")],
                                   is_http_request=True)
        record = writer.create_warc_record(url, "request", payload=io.BytesIO(b""),
                                           http_headers=request)
    elif kind == "metadata":
        record = writer.create_warc_record(url, "metadata", payload=io.BytesIO(b"fetchTime: 1"),
                                           warc_content_type="application/warc-fields")
    elif kind == "revisit":
        record = writer.create_revisit_record(
            url, "sha1:AAAA", url, "2020-01-01T00:00:00Z",
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                          protocol="HTTP/1.1"))
    elif kind == "resource":
        record = writer.create_warc_record(url, "resource", payload=io.BytesIO(page_html(0)),
                                           warc_content_type="text/html")
    else:
        raise AssertionError(kind)
    writer.write_record(record)
    return out.getvalue()


def raw_record(fields: list[tuple[str, str]], block: bytes) -> bytes:
    """A hand-made uncompressed record (for headers warcio refuses to write)."""
    head = "WARC/1.0\r\n" + "".join(f"{name}: {value}\r\n" for name, value in fields)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


def http_block(body: bytes, *lines: str, status: str = "HTTP/1.1 200 OK") -> bytes:
    return ("\r\n".join([status, *lines]) + "\r\n\r\n").encode("latin-1") + body


RESPONSE_FIELDS = [("WARC-Type", "response"), ("WARC-Date", "2020-01-01T00:00:00Z"),
                   ("WARC-Record-ID", "<urn:uuid:00000000-0000-0000-0000-000000000000>"),
                   ("Content-Type", "application/http; msgtype=response")]


def raw_response(url: str | None, block: bytes) -> bytes:
    fields = list(RESPONSE_FIELDS)
    if url is not None:
        fields.append(("WARC-Target-URI", url))
    return raw_record(fields, block)


def archive(records: list[bytes], gz: bool) -> tuple[bytes, list[int]]:
    """Concatenate records (each its own gzip member when `gz`); also their offsets."""
    members = [gzip.compress(record, mtime=0) if gz else record for record in records]
    offsets = [0]
    for member in members:
        offsets.append(offsets[-1] + len(member))
    return b"".join(members), offsets


def write(tmp_path: Path, data: bytes, gz: bool, name: str = "input") -> Path:
    path = tmp_path / (name + (".warc.gz" if gz else ".warc"))
    path.write_bytes(data)
    return path


def pages_of(items: list[Page | Skip]) -> list[tuple[str, bytes]]:
    return [(item.url, item.body) for item in items if isinstance(item, Page)]


def skips_of(items: list[Page | Skip]) -> list[SkipReason]:
    return [item.reason for item in items if isinstance(item, Skip)]


def read_all(path: Path, **kwargs) -> list[Page | Skip]:
    items = list(read_pages(path, **kwargs))
    assert [item.ordinal for item in items] == list(range(len(items)))
    return items


def good(number: int) -> bytes:
    return response(f"http://example.com/{number}", page_html(number))


def expected_pages(*numbers: int) -> list[tuple[str, bytes]]:
    return [(f"http://example.com/{n}", page_html(n)) for n in numbers]


GZ = pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])


# --------------------------------------------------------------------------- well-formed


@GZ
def test_clean_archive_yields_every_page_in_order(tmp_path: Path, gz: bool) -> None:
    data, _ = archive([good(n) for n in range(4)], gz)
    items = read_all(write(tmp_path, data, gz))
    assert pages_of(items) == expected_pages(0, 1, 2, 3)
    assert skips_of(items) == []
    assert all(item.http_charset == "utf-8" and not item.truncated for item in items
               if isinstance(item, Page))


def test_warcio_reads_our_test_archives(tmp_path: Path) -> None:
    """Sanity check of the builders: a reference reader sees the same records."""
    data, _ = archive([good(0), other_record("request"), good(1)], gz=True)
    with io.BytesIO(data) as stream:
        assert [r.rec_type for r in ArchiveIterator(stream)] == ["response", "request",
                                                                  "response"]


@GZ
def test_non_response_records_are_skipped_by_type(tmp_path: Path, gz: bool) -> None:
    records = [other_record("warcinfo"), other_record("request"), good(0),
               other_record("metadata"), other_record("revisit"), other_record("resource"),
               good(1)]
    items = read_all(write(tmp_path, archive(records, gz)[0], gz))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.WARC_WARCINFO, SkipReason.WARC_REQUEST,
                               SkipReason.WARC_METADATA, SkipReason.WARC_REVISIT,
                               SkipReason.WARC_OTHER_TYPE]


def test_status_and_content_type_filters(tmp_path: Path) -> None:
    records = [
        response("http://e.com/404", page_html(1), status="404 Not Found"),
        response("http://e.com/301", b"", status="301 Moved Permanently"),
        response("http://e.com/pdf", b"%PDF-1.4 ...", content_type="application/pdf"),
        response("http://e.com/png", b"\x89PNG\r\n\x1a\n...", content_type="image/png"),
        response("http://e.com/txt", b"plain text", content_type="text/plain"),
        response("http://e.com/xhtml", page_html(2), content_type="application/xhtml+xml"),
        response("http://e.com/html", page_html(3),
                 content_type='TEXT/HTML; Charset="ISO-8859-1"'),
        response("http://e.com/206", page_html(4), status="206 Partial Content"),
    ]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert pages_of(items) == [("http://e.com/xhtml", page_html(2)),
                               ("http://e.com/html", page_html(3)),
                               ("http://e.com/206", page_html(4))]
    assert [item.http_charset for item in items if isinstance(item, Page)] == [
        None, "ISO-8859-1", "utf-8"]
    assert skips_of(items) == [SkipReason.NON_2XX_STATUS, SkipReason.NON_2XX_STATUS,
                               SkipReason.NOT_HTML, SkipReason.NOT_HTML, SkipReason.NOT_HTML]


@pytest.mark.parametrize("body", [
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj",
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    b"GIF89a\x01\x00\x01\x00",
    b"\xff\xd8\xff\xe0\x00\x10JFIF",
    b"PK\x03\x04\x14\x00\x00\x00",
    gzip.compress(b"<html>compressed but not declared</html>"),
    b"<html>" + bytes(range(32)) * 40,  # control bytes
], ids=["pdf", "png", "gif", "jpeg", "zip", "gzip", "control-bytes"])
def test_binary_bodies_labelled_html_are_skipped(tmp_path: Path, body: bytes) -> None:
    records = [good(0), response("http://e.com/bin", body), good(1)]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.BINARY_BODY]


def test_utf16_html_is_not_binary(tmp_path: Path) -> None:
    body = "<html><body>hello</body></html>".encode("utf-16-le")
    items = read_all(write(tmp_path, archive([response("http://e.com/", body)], True)[0], True))
    assert pages_of(items) == [("http://e.com/", body)]


def test_missing_content_type_is_sniffed(tmp_path: Path) -> None:
    records = [
        response("http://e.com/html", b"  \n<!doctype html><title>x</title>", content_type=None),
        response("http://e.com/div", b"<div class=a>x</div>", content_type=None),
        response("http://e.com/text", b"just some words", content_type=None),
        response("http://e.com/octet", b"<html><body>x</body></html>",
                 content_type="application/octet-stream"),
        response("http://e.com/json", b'{"a": 1}', content_type=""),
    ]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert [url for url, _ in pages_of(items)] == ["http://e.com/html", "http://e.com/div",
                                                   "http://e.com/octet"]
    assert skips_of(items) == [SkipReason.NOT_HTML, SkipReason.NOT_HTML]


def _chunked(data: bytes, size: int = 7) -> bytes:
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(("headers", "encode"), [
    ([("Content-Encoding", "gzip")], gzip.compress),
    ([("Content-Encoding", "x-gzip")], gzip.compress),
    ([("Content-Encoding", "deflate")], zlib.compress),
    ([("Content-Encoding", "deflate")], _raw_deflate),
    ([("Content-Encoding", "br")], brotli.compress),
    ([("Content-Encoding", "identity")], lambda data: data),
    ([("Transfer-Encoding", "chunked")], _chunked),
    ([("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")],
     lambda data: _chunked(gzip.compress(data))),
    ([("Content-Encoding", "gzip, br")], lambda data: brotli.compress(gzip.compress(data))),
    # Stored de-chunked with the header kept (some crawlers): used as is.
    ([("Transfer-Encoding", "chunked")], lambda data: data),
], ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw", "br", "identity", "chunked",
        "chunked+gzip", "gzip,br", "chunked-header-only"])
def test_http_encodings_are_undone(tmp_path: Path, headers, encode) -> None:
    body = page_html(7) * 50
    records = [response("http://e.com/", encode(body), headers=headers)]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert pages_of(items) == [("http://e.com/", body)]


def test_bad_content_encoding(tmp_path: Path) -> None:
    noise = random.Random(1).randbytes(2000)
    records = [
        # Declared gzip but stored decoded (crawler already undid it): kept as is.
        response("http://e.com/decoded", page_html(1), headers=[("Content-Encoding", "gzip")]),
        response("http://e.com/corrupt", noise, headers=[("Content-Encoding", "gzip")]),
        response("http://e.com/zstd", noise, headers=[("Content-Encoding", "zstd")]),
        response("http://e.com/brotli", noise, headers=[("Content-Encoding", "br")]),
    ]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert pages_of(items) == [("http://e.com/decoded", page_html(1))]
    assert skips_of(items) == [SkipReason.BAD_CONTENT_ENCODING] * 3


def test_gzip_bomb_is_cut_at_the_size_cap(tmp_path: Path) -> None:
    bomb = gzip.compress(b"<html>" + b" " * 50_000_000)
    records = [response("http://e.com/", bomb, headers=[("Content-Encoding", "gzip")])]
    items = read_all(write(tmp_path, archive(records, True)[0], True), max_page_bytes=1000)
    assert len(items) == 1 and isinstance(items[0], Page)
    assert (len(items[0].body), items[0].truncated) == (1000, True)


# --------------------------------------------------------------------------- broken records


@GZ
def test_missing_target_uri(tmp_path: Path, gz: bool) -> None:
    records = [good(0), raw_response(None, http_block(page_html(9), "Content-Type: text/html")),
               good(1)]
    items = read_all(write(tmp_path, archive(records, gz)[0], gz))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.MISSING_TARGET_URI]


def test_urls_are_only_stripped_never_normalised(tmp_path: Path) -> None:
    block = http_block(page_html(1), "Content-Type: text/html")
    records = [
        raw_response("  HTTP://Example.COM/a/../b?x=1#frag \t", block),
        raw_response("<http://example.com/bracketed>", block),  # WARC/1.1 ABNF erratum
        raw_response("http://example.com/with space", block),
        raw_response("", block),
        raw_response("not a url", block),
        raw_response("dns:example.com", block),
        raw_response("/relative/path", block),
        raw_response("http://[::1/", block),
    ]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert [url for url, _ in pages_of(items)] == ["HTTP://Example.COM/a/../b?x=1#frag",
                                                   "http://example.com/bracketed",
                                                   "http://example.com/with space"]
    assert skips_of(items) == [SkipReason.MISSING_TARGET_URI] + [SkipReason.BAD_URL] * 4


@GZ
def test_non_http_payload_in_a_response_record(tmp_path: Path, gz: bool) -> None:
    records = [good(0),
               raw_response("http://e.com/nothttp", b"<html>no HTTP headers at all</html>"),
               raw_response("http://e.com/empty", b""),
               raw_response("http://e.com/status", http_block(b"<p>x</p>", status="HTTP/1.1 abc")),
               raw_response("http://e.com/endless", b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000),
               good(1)]
    items = read_all(write(tmp_path, archive(records, gz)[0], gz))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.BAD_HTTP_HEADERS] * 4


def test_lenient_http_headers_are_accepted(tmp_path: Path) -> None:
    records = [
        raw_response("http://e.com/lf", b"HTTP/1.1 200 OK\nContent-Type: text/html\n\n"
                     + page_html(1)),
        raw_response("http://e.com/junkline", http_block(page_html(2), "Content-Type: text/html",
                                                         "this line has no colon")),
        raw_response("http://e.com/folded", http_block(page_html(3), "Content-Type: text/html;",
                                                       "  charset=gbk")),
        raw_response("http://e.com/http2", http_block(page_html(4), "content-type: text/html",
                                                      status="HTTP/2 200")),
        raw_response("http://e.com/nobody", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"),
    ]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert pages_of(items) == [("http://e.com/lf", page_html(1)),
                               ("http://e.com/junkline", page_html(2)),
                               ("http://e.com/folded", page_html(3)),
                               ("http://e.com/http2", page_html(4))]
    assert [p.http_charset for p in items if isinstance(p, Page)] == [None, None, "gbk", None]
    assert skips_of(items) == [SkipReason.EMPTY_BODY]


@GZ
def test_record_without_warc_type(tmp_path: Path, gz: bool) -> None:
    fields = [f for f in RESPONSE_FIELDS if f[0] != "WARC-Type"]
    fields.append(("WARC-Target-URI", "http://e.com/x"))
    records = [good(0), raw_record(fields, http_block(page_html(5), "Content-Type: text/html")),
               good(1)]
    items = read_all(write(tmp_path, archive(records, gz)[0], gz))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


@GZ
def test_truncated_last_record(tmp_path: Path, gz: bool) -> None:
    data, offsets = archive([good(n) for n in range(4)], gz)
    cut = offsets[3] + (offsets[4] - offsets[3]) // 2  # the last gzip member cut in half
    items = read_all(write(tmp_path, data[:cut], gz))
    assert pages_of(items) == expected_pages(0, 1, 2)
    assert skips_of(items) == [SkipReason.TRUNCATED_ARCHIVE]


@GZ
def test_truncated_inside_the_warc_header(tmp_path: Path, gz: bool) -> None:
    data, offsets = archive([good(n) for n in range(3)], gz)
    items = read_all(write(tmp_path, data[:offsets[2] + (30 if not gz else 20)], gz))
    assert pages_of(items) == expected_pages(0, 1)
    assert skips_of(items) == [SkipReason.TRUNCATED_ARCHIVE]


@GZ
def test_garbage_between_records(tmp_path: Path, gz: bool) -> None:
    data, offsets = archive([good(n) for n in range(4)], gz)
    damaged = data[:offsets[2]] + b"GARBAGE \x00\xff junk\r\n\r\n" + data[offsets[2]:]
    items = read_all(write(tmp_path, damaged, gz))
    assert pages_of(items) == expected_pages(0, 1, 2, 3)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]
    assert isinstance(items[2], Skip)  # where the garbage is


@GZ
def test_garbage_before_the_first_and_after_the_last_record(tmp_path: Path, gz: bool) -> None:
    data, _ = archive([good(n) for n in range(3)], gz)
    items = read_all(write(tmp_path, b"leading junk" + data + b"trailing junk\n", gz))
    assert pages_of(items) == expected_pages(0, 1, 2)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD, SkipReason.BROKEN_RECORD]
    assert isinstance(items[0], Skip) and isinstance(items[-1], Skip)


def test_corrupt_gzip_member_loses_only_its_record(tmp_path: Path) -> None:
    data, offsets = archive([good(n) for n in range(4)], True)
    middle = offsets[1] + (offsets[2] - offsets[1]) // 2
    damaged = bytearray(data)
    damaged[middle:middle + 8] = b"\x00" * 8
    items = read_all(write(tmp_path, bytes(damaged), True))
    assert pages_of(items) == expected_pages(0, 2, 3)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


def test_gzip_member_cut_in_the_middle_of_the_file(tmp_path: Path) -> None:
    data, offsets = archive([good(n) for n in range(4)], True)
    middle = offsets[1] + (offsets[2] - offsets[1]) // 2
    items = read_all(write(tmp_path, data[:middle] + data[offsets[2]:], True))
    assert pages_of(items) == expected_pages(0, 2, 3)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


@pytest.mark.parametrize("junk", [b"\x17\xc5Q\x18}", b"\x04F\xf8\xb4", b"\x08\x00"],
                         ids=["fname-fcomment", "fextra", "fname"])
def test_damaged_gzip_member_header_loses_only_its_record(tmp_path: Path, junk: bytes) -> None:
    """Bytes inserted into a gzip header's flag byte make FastWARC stop *quietly* (as at
    the end of the file); the records after it must still be read."""
    data, offsets = archive([good(n) for n in range(5)], True)
    damaged = data[:offsets[2] + 3] + junk + data[offsets[2] + 3:]
    items = read_all(write(tmp_path, damaged, True))
    assert pages_of(items) == expected_pages(0, 1, 3, 4)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


def test_single_gzip_member_warc(tmp_path: Path) -> None:
    """`gzip file.warc` (one member for the whole file) is read too."""
    data, _ = archive([good(n) for n in range(4)], False)
    items = read_all(write(tmp_path, gzip.compress(data), True))
    assert pages_of(items) == expected_pages(0, 1, 2, 3)
    assert skips_of(items) == []


def test_large_records_are_streamed(tmp_path: Path) -> None:
    big = b"<html><body>" + random.Random(3).randbytes(3_000_000).hex().encode() + b"</body></html>"
    records = [good(0), response("http://e.com/big", big), good(1)]
    path = write(tmp_path, archive(records, True)[0], True)
    assert pages_of(read_all(path)) == [expected_pages(0)[0], ("http://e.com/big", big),
                                        expected_pages(1)[0]]
    capped = read_all(path, max_page_bytes=1_000_000)
    assert [(p.url, len(p.body), p.truncated) for p in capped if isinstance(p, Page)] == [
        ("http://example.com/0", len(page_html(0)), False), ("http://e.com/big", 1_000_000, True),
        ("http://example.com/1", len(page_html(1)), False)]


@GZ
@pytest.mark.parametrize("delta", [+40, -40], ids=["too-long", "too-short"])
def test_wrong_content_length_loses_only_its_record(tmp_path: Path, gz: bool,
                                                    delta: int) -> None:
    wrong = good(1)
    length = wrong.split(b"Content-Length: ", 1)[1].split(b"\r\n", 1)[0]
    wrong = wrong.replace(b"Content-Length: " + length,
                          b"Content-Length: %d" % (int(length) + delta), 1)
    items = read_all(write(tmp_path, archive([good(0), wrong, good(2), good(3)], gz)[0], gz))
    assert pages_of(items) == expected_pages(0, 2, 3)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


def test_payload_containing_a_warc_record_is_not_split(tmp_path: Path) -> None:
    """A page whose HTML shows a WARC record: after damage nearby, the resync scan must
    not start a record inside that page's payload."""
    inner = good(99)
    shown = b"<html><body><pre>" + inner + b"</pre></body></html>"
    records = [good(0), response("http://e.com/about-warc", shown)]
    data, _ = archive(records, False)
    items = read_all(write(tmp_path, data + b"junk\r\n" + good(2), False))
    assert pages_of(items) == expected_pages(0) + [("http://e.com/about-warc", shown)] + \
        expected_pages(2)
    assert skips_of(items) == [SkipReason.BROKEN_RECORD]


@GZ
def test_not_a_warc_at_all(tmp_path: Path, gz: bool) -> None:
    data = page_html(1) * 100
    items = read_all(write(tmp_path, gzip.compress(data) if gz else data, gz))
    assert items == [Skip(SkipReason.BROKEN_RECORD, 0, items[0].detail)]


@GZ
def test_empty_file(tmp_path: Path, gz: bool) -> None:
    assert read_all(write(tmp_path, b"", gz)) == []


def test_size_cap_truncates_and_keeps_the_page(tmp_path: Path) -> None:
    big = b"<html><body>" + b"x" * 5000 + b"</body></html>"
    records = [response("http://e.com/big", big), good(1),
               response("http://e.com/crawler-cut", page_html(2),
                        warc_headers={"WARC-Truncated": "length"})]
    items = read_all(write(tmp_path, archive(records, True)[0], True), max_page_bytes=1000)
    assert [(p.url, len(p.body), p.truncated) for p in items if isinstance(p, Page)] == [
        ("http://e.com/big", 1000, True), ("http://example.com/1", len(page_html(1)), False),
        ("http://e.com/crawler-cut", len(page_html(2)), True)]
    assert items[0].body == big[:1000]


def test_empty_bodies_are_skipped(tmp_path: Path) -> None:
    records = [response("http://e.com/empty", b""),
               response("http://e.com/blank", b" \r\n\t "),
               response("http://e.com/204", b"", status="204 No Content")]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert skips_of(items) == [SkipReason.EMPTY_BODY] * 3


def test_duplicate_urls_are_all_yielded_with_increasing_ordinals(tmp_path: Path) -> None:
    records = [response("http://e.com/", page_html(1)), good(5),
               response("http://e.com/", page_html(2))]
    items = read_all(write(tmp_path, archive(records, True)[0], True))
    assert [(p.url, p.body, p.ordinal) for p in items if isinstance(p, Page)] == [
        ("http://e.com/", page_html(1), 0), ("http://example.com/5", page_html(5), 1),
        ("http://e.com/", page_html(2), 2)]


# --------------------------------------------------------------------------- properties

_SMALL = [good(n) for n in range(3)]
_SMALL_ARCHIVES = {gz: archive(_SMALL, gz) for gz in (True, False)}
_PROPERTY = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPERTY
@given(gz=st.booleans(), fraction=st.floats(0, 1))
def test_a_cut_anywhere_keeps_every_complete_record(tmp_path: Path, gz: bool,
                                                    fraction: float) -> None:
    data, offsets = _SMALL_ARCHIVES[gz]
    cut = int(len(data) * fraction)
    items = read_all(write(tmp_path, data[:cut], gz, name=f"cut{cut}"))
    complete = sum(1 for end in offsets[1:] if end <= cut)
    pages = pages_of(items)
    assert pages == expected_pages(*range(len(pages)))  # a prefix, nothing altered
    assert len(pages) >= complete
    assert skips_of(items) in ([], [SkipReason.TRUNCATED_ARCHIVE])
    assert len(items) <= complete + 1


@_PROPERTY
@given(gz=st.booleans(), junk=st.binary(min_size=1, max_size=300), where=st.integers(1, 2))
def test_junk_between_records_never_loses_a_page(tmp_path: Path, gz: bool, junk: bytes,
                                                 where: int) -> None:
    data, offsets = _SMALL_ARCHIVES[gz]
    damaged = data[:offsets[where]] + junk + data[offsets[where]:]
    items = read_all(write(tmp_path, damaged, gz, name="junk"))
    assert pages_of(items) == expected_pages(0, 1, 2)
    assert skips_of(items) in ([], [SkipReason.BROKEN_RECORD])


@_PROPERTY
@given(gz=st.booleans(), position=st.floats(0, 1), value=st.integers(0, 255))
def test_any_damaged_byte_never_raises(tmp_path: Path, gz: bool, position: float,
                                       value: int) -> None:
    data, _ = _SMALL_ARCHIVES[gz]
    damaged = bytearray(data)
    damaged[min(int(position * len(data)), len(data) - 1)] = value
    items = read_all(write(tmp_path, bytes(damaged), gz, name="flip"))
    assert len(pages_of(items)) >= 1  # one byte damages at most one of three records


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize(("name", "fmt"), [
    ("CC-MAIN-20240101-00000.warc.gz", InputFormat.WARC),
    ("x.WARC", InputFormat.WARC),
    ("pages.jsonl", InputFormat.JSONL),
    ("pages.jsonl.gz", InputFormat.JSONL),
    ("pages.json", InputFormat.JSONL),
    ("manifest.tsv", InputFormat.MANIFEST),
])
def test_input_format_from_name(name: str, fmt: InputFormat) -> None:
    assert input_format(name) is fmt


def test_unknown_extension_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "pages.pdf"
    path.write_bytes(b"WARC/1.0\r\n")
    with pytest.raises(ValueError, match="unknown input format"):
        read_pages(path)


def test_ambiguous_names_are_sniffed(tmp_path: Path) -> None:
    warc = tmp_path / "part-00000.gz"
    warc.write_bytes(archive([good(0)], True)[0])
    jsonl = tmp_path / "input-abc"
    jsonl.write_text('{"url": "http://e.com/", "html": "<p>x</p>"}\n')
    unknown = tmp_path / "mystery"
    unknown.write_bytes(b"hello")
    assert input_format(warc) is InputFormat.WARC
    assert input_format(jsonl) is InputFormat.JSONL
    assert pages_of(read_all(warc)) == expected_pages(0)
    with pytest.raises(ValueError):
        input_format(unknown)


def test_bad_parameters_are_usage_errors(tmp_path: Path) -> None:
    path = write(tmp_path, archive([good(0)], True)[0], True)
    with pytest.raises(ValueError, match="max_page_bytes"):
        read_pages(path, max_page_bytes=0)
    array = tmp_path / "pages.json"
    array.write_text('[{"url": "http://e.com/", "html": "x"}]')
    with pytest.raises(ValueError, match="JSON array"):
        read_pages(array)


# --------------------------------------------------------------------------- JSON lines


def _jsonl(tmp_path: Path, lines: list[str | dict], name: str = "pages.jsonl") -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path = tmp_path / name
    data = (text + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def test_jsonl_text_and_base64(tmp_path: Path) -> None:
    chinese = '<html><head><meta charset="gbk"></head><body>中文页面</body></html>'
    traditional = "<html><body>中文頁面</body></html>"
    path = _jsonl(tmp_path, [
        {"url": " http://e.com/text ", "html": chinese},
        {"url": "http://e.com/b64", "html": base64.b64encode(chinese.encode("gbk")).decode(),
         "encoding": "base64", "charset": "gbk"},
        {"url": "http://e.com/b64ct", "encoding": "base64",
         "content_type": "text/html; charset=big5",
         "html": base64.encodebytes(traditional.encode("big5")).decode()},  # with newlines
        {"url": "http://e.com/b64raw", "encoding": "base64",
         "html": base64.b64encode(page_html(1)).decode()},
    ])
    items = read_all(path)
    assert [(p.url, p.body, p.http_charset) for p in items if isinstance(p, Page)] == [
        # Text was decoded already: its bytes are ours, UTF-8, whatever the meta says.
        ("http://e.com/text", chinese.encode("utf-8"), "utf-8"),
        ("http://e.com/b64", chinese.encode("gbk"), "gbk"),
        ("http://e.com/b64ct", traditional.encode("big5"), "big5"),
        ("http://e.com/b64raw", page_html(1), None),
    ]


def test_jsonl_bad_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, [
        {"url": "http://e.com/1", "html": "<p>one</p>"},
        '{"url": "http://e.com/broken", "html": ',
        "",
        "   ",
        '["not", "an", "object"]',
        {"html": "<p>no url</p>"},
        {"url": "http://e.com/nohtml"},
        {"url": None, "html": "<p>x</p>"},
        {"url": 5, "html": "<p>x</p>"},
        {"url": "http://e.com/b64", "html": "!!!not base64!!!", "encoding": "base64"},
        {"url": "http://e.com/enc", "html": "<p>x</p>", "encoding": "hex"},
        {"url": "http://e.com/pdf", "html": "x", "content_type": "application/pdf"},
        {"url": "not a url", "html": "<p>x</p>"},
        {"url": "http://e.com/empty", "html": ""},
        "[" * 100_000,
        {"url": "http://e.com/2", "html": "<p>two</p>"},
    ])
    items = read_all(path)
    assert pages_of(items) == [("http://e.com/1", b"<p>one</p>"), ("http://e.com/2", b"<p>two</p>")]
    assert skips_of(items) == [
        SkipReason.BAD_JSON, SkipReason.BAD_JSON, SkipReason.MISSING_FIELD,
        SkipReason.MISSING_FIELD, SkipReason.MISSING_FIELD, SkipReason.BAD_FIELD_VALUE,
        SkipReason.BAD_BASE64, SkipReason.BAD_FIELD_VALUE, SkipReason.NOT_HTML,
        SkipReason.BAD_URL, SkipReason.EMPTY_BODY, SkipReason.BAD_JSON]


def test_jsonl_not_utf8_and_lone_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    path.write_bytes(b'{"url": "http://e.com/latin1", "html": "caf\xe9"}\n'
                     b'{"url": "http://e.com/surrogate", "html": "<p>\\ud800</p>"}\n')
    items = read_all(path)
    assert pages_of(items) == [("http://e.com/surrogate", b"<p>?</p>")]
    assert skips_of(items) == [SkipReason.BAD_JSON]


def test_jsonl_gz_and_its_truncation(tmp_path: Path) -> None:
    noise = random.Random(0)
    lines = [{"url": f"http://e.com/{n}",
              "html": f"<p>{n}</p>" + "".join(noise.choices("abcdefghij", k=20_000))}
             for n in range(5)]
    path = _jsonl(tmp_path, lines, name="pages.jsonl.gz")
    assert [url for url, _ in pages_of(read_all(path))] == [f"http://e.com/{n}" for n in range(5)]
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - 40])
    items = read_all(path)
    assert [url for url, _ in pages_of(items)] == [f"http://e.com/{n}" for n in range(4)]
    assert skips_of(items) == [SkipReason.TRUNCATED_ARCHIVE]


def test_jsonl_oversized_line_is_skipped_and_the_next_one_read(tmp_path: Path) -> None:
    # max_page_bytes=10 -> line limit 8*10 + 1 MiB.
    path = _jsonl(tmp_path, [{"url": "http://e.com/huge", "html": "x" * 2_000_000},
                             {"url": "http://e.com/small", "html": "<p>small page</p>"}])
    items = read_all(path, max_page_bytes=10)
    assert [(p.url, p.body, p.truncated) for p in items if isinstance(p, Page)] == [
        ("http://e.com/small", b"<p>small p", True)]
    assert skips_of(items) == [SkipReason.OVERSIZED_LINE]


# --------------------------------------------------------------------------- manifest


def test_manifest_reads_files_relative_to_its_folder(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "a.html").write_bytes(page_html(1))
    (tmp_path / "b.html").write_bytes("<p>é</p>".encode("cp1252"))
    manifest = tmp_path / "pages.tsv"
    manifest.write_text("# file\turl\n\nsite/a.html\thttp://e.com/a\r\n"
                        "  # indented comment\nb.html\t http://e.com/b \n")
    items = read_all(manifest)
    assert [(p.url, p.body, p.http_charset) for p in items if isinstance(p, Page)] == [
        ("http://e.com/a", page_html(1), None), ("http://e.com/b", "<p>é</p>".encode("cp1252"),
                                                 None)]


def test_manifest_problems_are_counted(tmp_path: Path) -> None:
    (tmp_path / "ok.html").write_bytes(page_html(1))
    (tmp_path / "empty.html").write_bytes(b"")
    (tmp_path / "image.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    (tmp_path / "folder").mkdir()
    manifest = tmp_path / "pages.tsv"
    manifest.write_bytes(
        b"missing.html\thttp://e.com/missing\n"
        b"folder\thttp://e.com/folder\n"
        b"just-one-field\n"
        b"a\tb\tc\n"
        b"ok.html\t\n"
        b"/etc/hostname\thttp://e.com/abs\n"
        b"ok.html\tnot-a-url\n"
        b"empty.html\thttp://e.com/empty\n"
        b"image.html\thttp://e.com/image\n"
        b"caf\xe9.html\thttp://e.com/latin1\n"
        b"ok.html\thttp://e.com/ok\n")
    items = read_all(manifest)
    assert pages_of(items) == [("http://e.com/ok", page_html(1))]
    assert skips_of(items) == [
        SkipReason.MISSING_FILE, SkipReason.MISSING_FILE, SkipReason.MANIFEST_BAD_LINE,
        SkipReason.MANIFEST_BAD_LINE, SkipReason.MANIFEST_BAD_LINE,
        SkipReason.MANIFEST_BAD_LINE, SkipReason.BAD_URL, SkipReason.EMPTY_BODY,
        SkipReason.BINARY_BODY, SkipReason.MANIFEST_BAD_LINE]


def test_manifest_base_dir_and_size_cap(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "big.html").write_bytes(b"<p>" + b"y" * 500 + b"</p>")
    manifest = tmp_path / "input-XYZ.tsv"  # mapper_raw's renamed local copy
    manifest.write_text("big.html\thttp://e.com/big\n")
    items = read_all(manifest, base_dir=tmp_path / "pages", max_page_bytes=100)
    assert [(p.url, len(p.body), p.truncated) for p in items if isinstance(p, Page)] == [
        ("http://e.com/big", 100, True)]


# --------------------------------------------------------------------------- real archives


@pytest.mark.parametrize(("relative", "pages", "first_url"), [
    ("web/trafilatura-pages.warc.gz", 953, "http://archiv.krimiblog.de/?p=2895"),
    ("web/aeb-pages.warc.gz", 181,
     "https://www.wsj.com/articles/google-stadia-microsoft-xcloud-apple-arcade-so-many-ways-"
     "to-playand-pay-11574168580"),
    ("awesomehub/awesomehub.warc.gz", 550, "https://github.com/0pandadev/awesome-windows"),
])
def test_real_archives(shared_data, relative: str, pages: int, first_url: str) -> None:
    """Observed: every record of the three real archives is a 200 text/html response with a
    distinct URL; no skips at all."""
    items = read_all(shared_data(relative))
    found = [item for item in items if isinstance(item, Page)]
    assert Counter(type(item).__name__ for item in items) == Counter({"Page": pages})
    assert found[0].url == first_url
    assert len({page.url for page in found}) == pages
    assert all(page.body and not page.truncated for page in found)
    if relative.startswith("awesomehub"):
        assert {page.http_charset for page in found} == {"utf-8"}
        assert all(page.url.startswith("https://github.com/") for page in found)
    else:
        assert {page.http_charset for page in found} == {None}


def test_real_archive_url_with_a_space_is_kept_verbatim(shared_data) -> None:
    """warcio would rewrite this Target-URI (space -> %20); we leave it to the job's URL
    normaliser."""
    urls = {item.url for item in read_pages(shared_data("web/trafilatura-pages.warc.gz"))
            if isinstance(item, Page)}
    assert any(url.startswith("https://schwimmverband.at/news-artikel tx_news_pi1")
               for url in urls)
