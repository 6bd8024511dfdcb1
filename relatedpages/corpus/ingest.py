"""Crawl records -> pages: WARC / WARC.gz, JSON lines, or a folder of HTML files + TSV manifest.

:func:`read_pages` streams one input file and yields, in file order, a :class:`Page` for
every HTML page and a :class:`Skip` (with a :class:`SkipReason`) for every record that is not
one.  Each item carries an ``ordinal`` (its record index within the file) so the job can
apply "last record wins" across files; nothing is de-duplicated and URLs are only stripped
of surrounding whitespace here (the job normalises them with ``filters.urls``).

Where each job lives: format detection, :func:`expand_inputs`, the :func:`read_pages`
dispatch, and the JSON lines and manifest readers here; the record types and shared checks in
:mod:`relatedpages.corpus.records`; the WARC reader with its recovery layer (and why it is
built on FastWARC) in :mod:`relatedpages.corpus.warc_reader`; HTTP payload parsing in
:mod:`relatedpages.corpus.http_payload`.  The names other code imports from here are
re-exported (``__all__``).
"""
from __future__ import annotations

import base64
import binascii
import gzip
import io
import itertools
import json
import os
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from relatedpages.corpus.http_payload import HTTP_HEADER_MAX_BYTES_DEFAULT, parse_http_response
from relatedpages.corpus.records import (
    _HTML_TYPES,
    _UNINFORMATIVE_TYPES,
    BINARY_SHARE_DEFAULT,
    BINARY_SNIFF_BYTES,
    GZIP_MAGIC,
    MAX_PAGE_BYTES_DEFAULT,
    RESYNC_CHUNK_BYTES,
    InputFormat,
    Item,
    Note,
    Page,
    Skip,
    SkipReason,
    _finish_page,
    _media_type,
    _url_problem,
    binary_reason,
)
from relatedpages.corpus.warc_reader import WARC_HEADER_MAX_BYTES_DEFAULT, _read_warc

__all__ = [
    "BINARY_SHARE_DEFAULT", "BINARY_SNIFF_BYTES", "GZIP_MAGIC", "HTTP_HEADER_MAX_BYTES_DEFAULT",
    "JSON_LINE_MAX_BYTES_FACTOR_DEFAULT", "MAX_PAGE_BYTES_DEFAULT", "RESYNC_CHUNK_BYTES",
    "WARC_HEADER_MAX_BYTES_DEFAULT", "InputFormat", "Item", "Note", "Page", "Skip", "SkipReason",
    "binary_reason", "expand_inputs", "input_format", "parse_http_response", "read_pages",
]

JSON_LINE_MAX_BYTES_FACTOR_DEFAULT = 8
"""A JSON line may be this many times ``max_page_bytes`` (+1 MiB) long: base64 costs 4/3,
JSON ``\\uXXXX`` escapes up to 6x.  Longer lines are skipped, streamed past, never loaded."""

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
