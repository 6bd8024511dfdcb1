"""The answer to one lookup as the bytes the API sends, spliced from the stored record.

A stored record is the related list as compact JSON (``[[url, score, [[site, weight, …],
…], fallback?, via?], …]``, :mod:`relatedpages.store.db`); the answer holds the same list
with each entry as an object.  In a format-2 database the strings are ids into the string
table and the numbers millionths (:mod:`relatedpages.store.dbstrings`):
:func:`compact_related_bytes` writes the answer straight from those, each string's JSON
kept once encoded, never building the format-1 text.  In format 1, decoding a record into
objects and encoding it again costs most of a lookup, mostly in reading and writing ~90
floats, so :func:`related_bytes` rewrites only the entries' brackets and names around the
stored bytes.  That is exact because the build
wrote the record with the very encoder the API uses (compact separators, ``ensure_ascii``
off, floats as ``repr``): the same strings and floats encode to the same bytes.  A record
the rewrite does not recognise in full (an integer score or weight, which the API writes as
a float; an empty fallback name, which it leaves out) takes the decoded route
(:func:`decoded_related`), the library's own (``RelatedPagesDB.answer``).

    >>> related_bytes(b'[["https://b.example/",2.5,[["hub.example",1.0]],"cocitation"]]', None)
    b'[{"url":"https://b.example/","score":2.5,"evidence":[["hub.example",1.0]],"fallback":"cocitation"}]'
    >>> related_bytes(b'[["https://b.example/",2,[]]]', None) is None  # an integer score
    True
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable
from typing import Any, NoReturn

from filters.spelling import spelling_variants
from relatedpages.store.db import Manifest, PartitionedDB, RelatedPagesDB, Verify
from relatedpages.store.dbformat import FormatVersion
from relatedpages.store.dbstrings import CACHE_STRINGS, MICRO

#: Part of every ETag: a change to what an answer holds for the same database changes it.
ANSWER_FORMAT = 1

#: What Flask's ``jsonify`` writes for the app (``sort_keys`` and ``ensure_ascii`` off).
encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

# a float as repr writes it (a '.' or an exponent): never an integer, which the API rewrites
_FLOAT = rb"-?\d+(?:\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)"


def _entry_pattern(string: bytes) -> re.Pattern[bytes]:
    """One entry at the position it is tried (never searched for: a string may hold
    anything), then the byte after it: ',' (another entry follows) or ']' (the list ends)."""
    evidence = rb"\[" + string + rb"," + _FLOAT + rb"(?:," + string + rb"," + string + rb")?\]"
    return re.compile(rb"\[(" + string + rb"),(" + _FLOAT + rb"),(\[(?:" + evidence + rb"(?:," + evidence
                      + rb")*)?\])(?:,(" + string + rb")(?:,(" + string + rb"))?)?\]([,\]])")


_ENTRY = _entry_pattern(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
#: The same where the record holds no backslash, so no string an escaped quote: half the
#: time (and ~99 % of the records of the real pages).
_PLAIN_ENTRY = _entry_pattern(rb'"[^"]*"')
_EMPTY_STRING = b'""'


class StoredRelatedDB(PartitionedDB[bytes]):
    """A related-pages database (what :class:`~relatedpages.store.db.RelatedPagesDB` reads)
    whose lookups return the stored JSON bytes of a record, undecoded (format 2: with its
    string ids and millionths, :attr:`compact`); safe to share between threads.
    :attr:`tag` is the ETag of its answers (:func:`generation_tag`): it comes with the
    generation, so a swap changes both at once."""

    ACCEPTS = RelatedPagesDB.ACCEPTS

    def __init__(self, path: str | os.PathLike[str], *, verify: Verify | str = Verify.SIZES):
        super().__init__(path, verify=verify)
        self.tag = generation_tag(self.manifest)
        #: whether a record holds string ids and millionths (format 2), not text
        self.compact = self.manifest.format_version == FormatVersion.BLOCKS
        #: string id -> its JSON, and stored number -> its JSON, kept once written (a dict's
        #: own lookup on a hit: most of an answer is strings and numbers seen before)
        self._json = _Written(self._string_json)
        self._numbers = _Written(_number_bytes)
        #: string ``index`` of the string table as the API encodes it (quoted, escaped,
        #: UTF-8), kept for the next lookups (up to ``CACHE_STRINGS``, then emptied)
        self.json_string: Callable[[int], bytes] = self._json.__getitem__

    def _string_json(self, index: int) -> bytes:
        assert self._strings is not None  # format 2 (compact) has its string table
        # read from the table itself: the reader's own cache of strings would hold them twice
        return encode_json(self._strings.string(index)).encode("utf-8")

    def stored(self, url: str) -> tuple[str, bytes] | None:
        """(the stored spelling that matched, its record's JSON bytes) for the normalised
        ``url`` under any of its spellings, as ``RelatedPagesDB.find`` looks; None when
        none is stored.  Raises :class:`~relatedpages.store.db.DatabaseError` for a corrupt partition."""
        found = self._lookup(url.encode("utf-8"))  # the first spelling: most lookups end here
        if found is not None:
            return url, found
        for spelling in spelling_variants(url)[1:]:
            found = self._lookup(spelling.encode("utf-8"))
            if found is not None:
                return spelling, found
        return None

    def json_number(self, value: Any) -> bytes:
        """A stored score or weight as the API writes it; millionths kept once written
        (weights repeat: 1.0, 0.5, …)."""
        if value.__class__ is not int:  # a float: not kept (1.0 and the int 1 are one key)
            return _number_bytes(value)
        return self._numbers[value]

    def malformed(self, key: str) -> NoReturn:
        """Raise :class:`~relatedpages.store.db.DatabaseError` for the record of ``key``, which does not decode:
        its partition answers nothing more (:meth:`failures`)."""
        self._corrupt(zlib.crc32(key.encode("utf-8")) % self.partitions, f"malformed record of {key}")

    def _decode_value(self, data: bytes) -> bytes:
        return data

    def _decode_compact(self, data: bytes, string: Callable[[int], str]) -> bytes:
        return data  # written by compact_related_bytes


class _Written(dict[Any, bytes]):
    """What ``write`` makes of a key, kept once made: a hit is the dict's own lookup (no
    Python call); emptied when it holds ``CACHE_STRINGS`` keys."""

    def __init__(self, write: Callable[[Any], bytes]):
        super().__init__()
        self.write = write

    def __missing__(self, key: Any) -> bytes:
        if len(self) >= CACHE_STRINGS:
            self.clear()
        text = self[key] = self.write(key)
        return text


def _number_bytes(value: Any) -> bytes:
    """A stored score or weight as the API writes it: a float's ``repr``."""
    if value.__class__ is int:
        return repr(value / MICRO).encode("ascii")
    if value.__class__ is float:
        return repr(value).encode("ascii")
    raise TypeError(f"not a stored number: {value!r}")


def compact_related_bytes(record: bytes, text: Callable[[int], bytes], limit: int | None,
                          number: Callable[[Any], bytes] = _number_bytes) -> bytes:
    """The answer's ``related`` list (its first ``limit`` entries) from a format-2
    ``record``; ``text`` gives a string id's JSON, ``number`` a stored number's.  Raises
    ``ValueError``, ``TypeError``, ``IndexError`` or ``KeyError`` when the record is
    malformed.

    >>> strings = [b'"https://b.example/"', b'"hub.example"', b'""']
    >>> compact_related_bytes(b'[[0,2500000,[[1,1000000]],2]]', strings.__getitem__, None)
    b'[{"url":"https://b.example/","score":2.5,"evidence":[["hub.example",1.0]]}]'
    """
    parts = []
    for entry in json.loads(record)[:limit]:
        evidence = []
        for item in entry[2]:
            if len(item) == 4:  # [site, weight, page, anchor]: nearly every item
                evidence.append(b"[%s,%s,%s,%s]" % (text(item[0]), number(item[1]), text(item[2]), text(item[3])))
            else:
                evidence.append(b"[" + b",".join([text(item[0]), number(item[1]), *[text(o) for o in item[2:]]])
                                + b"]")
        part = b'{"url":%s,"score":%s,"evidence":[%s]' % (text(entry[0]), number(entry[1]), b",".join(evidence))
        # the library leaves out an empty fallback or via (RelatedPagesDB.answer)
        if len(entry) >= 4 and (fallback := text(entry[3])) != _EMPTY_STRING:
            part += b',"fallback":' + fallback
        if len(entry) >= 5 and (via := text(entry[4])) != _EMPTY_STRING:
            part += b',"via":' + via
        parts.append(part + b"}")
    return b"[" + b",".join(parts) + b"]"


def related_bytes(record: bytes, limit: int | None) -> bytes | None:
    """The answer's ``related`` list (its first ``limit`` entries) rewritten from the
    stored ``record``; None when the record is not one the rewrite reproduces exactly."""
    if record == b"[]":
        return record
    parts = [b"["]
    position, count, match = 1, 0, (_ENTRY if b"\\" in record else _PLAIN_ENTRY).match
    while True:
        entry = match(record, position)
        if entry is None:
            return None
        url, score, evidence, fallback, via, after = entry.groups()
        parts.append(b'%s{"url":%s,"score":%s,"evidence":%s' % (b"," if count else b"", url, score, evidence))
        # the library leaves out an empty fallback or via (RelatedPagesDB.answer)
        if fallback is not None and fallback != _EMPTY_STRING:
            parts.append(b',"fallback":' + fallback)
        if via is not None and via != _EMPTY_STRING:
            parts.append(b',"via":' + via)
        parts.append(b"}")
        count += 1
        position = entry.end()
        if after == b"]":
            if position != len(record):
                return None
            break
        if limit is not None and count >= limit:
            break
    parts.append(b"]")
    return b"".join(parts)


def decoded_related(record: bytes, limit: int | None) -> list[dict[str, Any]]:
    """The answer's ``related`` list from ``record`` decoded, as ``RelatedPagesDB.answer``
    builds it (scores and weights as floats, empty fallback and via left out).  Raises
    ``ValueError``, ``TypeError``, ``IndexError`` or ``KeyError`` for a record that does
    not decode."""
    return [{"url": entry[0], "score": float(entry[1]),
             "evidence": [[item[0], float(item[1]), *item[2:]] for item in entry[2]],
             **({"fallback": entry[3]} if len(entry) >= 4 and entry[3] else {}),
             **({"via": entry[4]} if len(entry) >= 5 and entry[4] else {})}
            for entry in json.loads(record)[:limit]]


def answer_bytes(database: StoredRelatedDB, query: str, url: str, limit: int | None) -> bytes:
    """The JSON of ``RelatedPagesDB.answer(query, limit)``, byte for byte as the API
    encodes it (without the final line break), for ``query`` whose normalised URL is
    ``url``."""
    head = b'{"query":%s,"url":%s,"found":' % (encode_json(query).encode("utf-8"),
                                               encode_json(url).encode("utf-8"))
    found = database.stored(url)
    if found is None:
        return head + b'false,"matched":null,"related":[]}'
    matched, record = found
    if database.compact:
        try:
            related = compact_related_bytes(record, database.json_string, limit, database.json_number)
        except (UnicodeDecodeError, ValueError, TypeError, IndexError, KeyError):
            database.malformed(matched)
    elif (spliced := related_bytes(record, limit)) is not None:
        related = spliced
    else:
        try:
            related = encode_json(decoded_related(record, limit)).encode("utf-8")
        except (UnicodeDecodeError, ValueError, TypeError, IndexError, KeyError):
            database.malformed(matched)
    return head + b'true,"matched":%s,"related":%s}' % (encode_json(matched).encode("utf-8"), related)


def generation_tag(manifest: Manifest) -> str:
    """The ETag of every answer from one generation of a database: a digest of its
    manifest (its build time and every partition's checksum) and :data:`ANSWER_FORMAT`,
    so the same on every worker and every machine that serves that generation."""
    digest = hashlib.sha256(json.dumps([ANSWER_FORMAT, manifest.to_json()], sort_keys=True).encode())
    return f'"{manifest.algorithm}-{digest.hexdigest()[:20]}"'
