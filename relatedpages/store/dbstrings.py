"""The string table of a format-2 (``BLOCKS``) database: every string of the related lists
stored once, and the related lists stored with ids into it (their blocks are
:mod:`relatedpages.store.dbblocks`'s).

A related list ``[[url, score, [[site, weight, page?, anchor?], …], fallback?, via?], …]``
is stored as the same compact JSON with every string replaced by its id (its number in
the table) and every number by a whole count of millionths where that count gives the
number back exactly (the jobs write six decimals: ``3.162882`` → ``3162882``), else by the
float itself (``1e-07`` stays ``1e-07``; JSON keeps integers and floats apart, so the
reader knows which).  Ids are numbered in order of first use, so the same input always
gives the same table.  On the real pages a result URL or an anchor text occurs ~15 times
and a citing site ~1,400 times: stored once, a record needs ~60 bytes of strings instead
of ~1,000.

The file ``strings``::

    header   16 bytes: b"RPSTR2", the offset width w (u16 LE: 4, or 8 when the file
             passes 4 GiB), the number of strings n (u64 LE)
    offsets  n + 1 offsets of w bytes (LE) from the start of the file: string i is the
             bytes [offsets[i], offsets[i + 1])
    strings  UTF-8, back to back

A reader maps it and slices one string per id (no decompression, no copy per process: the
page cache holds it once for every reader), and asks the kernel to read it ahead when it
opens it, since nearly every lookup touches it.  Compressing the table too (in blocks of
32 strings) would save ~30 bytes a record but cost every lookup ~25 block decompressions
(docs/reference/database.md).
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import sys
from array import array
from math import isfinite
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Callable, Literal

from relatedpages.store.dbformat import COMPACT_JSON, StringsInfo

_MAGIC = b"RPSTR2"
_HEADER = struct.Struct("<6sHQ")
#: Numbers are stored in millionths where that is exact (six decimals, as the jobs write).
MICRO = 1_000_000
#: Below this magnitude ``round(x * 1e6)`` is the nearest count of millionths (far from 2**53).
_EXACT_BELOW = 1e9
#: Strings a reader keeps decoded (~10 MB of the real pages' strings): every citing site
#: and page, the popular results.
CACHE_STRINGS = 1 << 16
#: The string table is read ahead at open up to this size (the real pages': ~10 MB).
PREFETCH_MAX_BYTES = 256 * 1024 * 1024


def _is_number(value: Any) -> bool:
    return value.__class__ is float or (isinstance(value, (int, float)) and not isinstance(value, bool))


def stored_number(value: float) -> int | float:
    """How a score or weight is stored: its millionths when that is exact, else a float.

    >>> stored_number(3.162882), stored_number(2), stored_number(1e-07), stored_number(5e12)
    (3162882, 2000000, 1e-07, 5000000000000.0)
    """
    if -_EXACT_BELOW < value < _EXACT_BELOW:
        micro = round(value * MICRO)
        if micro / MICRO == value:
            return micro
    return float(value)


class StringTableWriter:
    """The strings of a database being built, numbered in order of first use, and the
    related lists encoded with their ids (:meth:`encode_related`); :meth:`write` writes
    the table.  Holds every distinct string in memory (~30 MB for the real pages' 250,000)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def intern(self, text: str) -> int:
        """The id of ``text``, numbered now if it is new."""
        return self._ids.setdefault(text, len(self._ids))

    def strings(self) -> list[str]:
        """Every string, by id (a copy: strings interned later are not in it)."""
        return list(self._ids)

    def encode_related(self, value: Any) -> bytes | None:
        """A related list as stored: its compact JSON with ids for strings and millionths
        for numbers, UTF-8; None when ``value`` is not a related list.  The check is made on
        the way, by the rule of ``dbbuild._is_related_list`` (tests/test_dbblocks.py holds
        them to the same answers): one walk over the value instead of two, which keeps a
        format-2 build as fast as a format-1 build.

        >>> table = StringTableWriter()
        >>> table.encode_related([["http://b.example/", 2.5, [["hub.example", 1.25, "http://hub.example/", "B"]]],
        ...                       ["http://c.example/", 1, [["hub.example", 0.5]], "cocitation"]])
        b'[[0,2500000,[[1,1250000,2,3]]],[4,1000000,[[1,500000]],5]]'
        >>> table.encode_related([["http://b.example/", float("nan"), []]]) is None
        True
        """
        if not isinstance(value, (list, tuple)):
            return None
        ids = self._ids
        intern = ids.setdefault
        entries = []
        for entry in value:
            if not isinstance(entry, (list, tuple)) or not 3 <= len(entry) <= 5:
                return None
            url, score, evidence = entry[0], entry[1], entry[2]
            if not isinstance(url, str) or not isinstance(evidence, (list, tuple)):
                return None
            if not _is_number(score) or not isfinite(score):
                return None
            if -_EXACT_BELOW < score < _EXACT_BELOW and (micro := round(score * MICRO)) / MICRO == score:
                score = micro
            else:
                score = float(score)
            stored = [intern(url, len(ids)), score]  # numbered in reading order: the URL first
            items = []
            for item in evidence:
                if not isinstance(item, (list, tuple)) or len(item) not in (2, 4):
                    return None
                site, weight = item[0], item[1]
                if not isinstance(site, str) or not _is_number(weight) or not isfinite(weight):
                    return None
                if -_EXACT_BELOW < weight < _EXACT_BELOW and (micro := round(weight * MICRO)) / MICRO == weight:
                    weight = micro
                else:
                    weight = float(weight)
                if len(item) == 4:
                    page, anchor = item[2], item[3]
                    if not isinstance(page, str) or not isinstance(anchor, str):
                        return None
                    items.append([intern(site, len(ids)), weight, intern(page, len(ids)), intern(anchor, len(ids))])
                else:
                    items.append([intern(site, len(ids)), weight])
            stored.append(items)
            for text in entry[3:]:
                if not isinstance(text, str):
                    return None
                stored.append(intern(text, len(ids)))
            entries.append(stored)
        return COMPACT_JSON(entries).encode("utf-8")

    def write(self, path: Path) -> StringsInfo:
        """Write the table to ``path`` (fsynced); its manifest entry."""
        data = bytearray()  # the strings once more, back to back: never one object per string
        ends = array("Q")
        for text in self._ids:
            data += text.encode("utf-8")
            ends.append(len(data))
        count = len(ends)
        width = 4 if _HEADER.size + 4 * (count + 1) + len(data) < 2**32 else 8
        start = _HEADER.size + width * (count + 1)
        offsets = array("I" if width == 4 else "Q", [start])
        offsets.extend(start + end for end in ends)
        del ends
        if sys.byteorder != "little":
            offsets.byteswap()
        digest = hashlib.sha256()
        size = 0
        with open(path, "wb") as handle:
            for chunk in (_HEADER.pack(_MAGIC, width, count), offsets.tobytes(), data):
                digest.update(chunk)
                handle.write(chunk)
                size += len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        return StringsInfo(count, size, digest.hexdigest())


class StringTable:
    """The string table of an open database, mapped: :meth:`string` is string ``i``.
    Raises ``ValueError`` at open when the file is not a string table of ``count`` strings
    in ``size`` bytes; safe to share between threads."""

    def __init__(self, handle: IO[bytes], count: int, size: int):
        self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        try:
            if self._map is None or size < _HEADER.size:
                raise ValueError("is shorter than its header")
            magic, width, stored = _HEADER.unpack_from(self._map)
            if magic != _MAGIC or width not in (4, 8):
                raise ValueError("is not a string table")
            if stored != count:
                raise ValueError(f"holds {stored} strings, the manifest says {count}")
            end = _HEADER.size + width * (count + 1)
            if end > size:
                raise ValueError(f"has {size} bytes, too few for {count} offsets")
            if size <= PREFETCH_MAX_BYTES and hasattr(mmap, "MADV_WILLNEED"):
                self._map.madvise(mmap.MADV_WILLNEED)  # read ahead now: nearly every lookup needs it
            code: Literal["I", "Q"] = "I" if width == 4 else "Q"
            self._view: memoryview | None = None
            if sys.byteorder == "little":
                self._view = memoryview(self._map)[_HEADER.size:end].cast(code)
                self._offsets: Sequence[int] = self._view
            else:
                swapped = array(code, self._map[_HEADER.size:end])
                swapped.byteswap()
                self._offsets = swapped
        except BaseException:
            if self._map is not None:
                self._map.close()
            raise
        self._count, self._size, self._width = count, size, width

    def __len__(self) -> int:
        return self._count

    def string(self, index: int) -> str:
        """String ``index`` (``IndexError`` past the end)."""
        offsets = self._offsets
        return self._map[offsets[index]:offsets[index + 1]].decode("utf-8")  # type: ignore[index]

    def strings(self) -> tuple[Callable[[int], str | None], Callable[[int], str]]:
        """(``recent``, ``string``): ``string(i)`` is string i, kept in a cache of the
        strings read last; ``recent(i)`` is string i if the cache holds it, else None (a
        dict's ``get``: the lookups' inner loop calls it first, ~4 times cheaper than a
        slice of the map and a decode).  The cache holds up to :data:`CACHE_STRINGS`
        strings and is emptied when full; safe to share between threads."""
        offsets, data = self._offsets, self._map
        assert data is not None
        cache: dict[int, str] = {}

        def string(index: int) -> str:
            text = data[offsets[index]:offsets[index + 1]].decode("utf-8")
            if len(cache) >= CACHE_STRINGS:
                cache.clear()
            cache[index] = text
            return text

        return cache.get, string

    def problems(self) -> list[str]:
        """Faults of the table's structure (the sha256 is checked by the reader): offsets
        that do not start after the offsets, decrease or end elsewhere than the file's
        end; a string that is not UTF-8.  The first one, or an empty list."""
        offsets, count = self._offsets, self._count
        if offsets[0] != _HEADER.size + self._width * (count + 1):
            return ["strings: the first string does not start after the offsets"]
        if offsets[count] != self._size:
            return [f"strings: the last string ends at byte {offsets[count]}, the file has {self._size}"]
        for index in range(self._count):
            if offsets[index + 1] < offsets[index]:
                return [f"strings: offset {index + 1} is before offset {index}"]
            try:
                self.string(index)
            except UnicodeDecodeError:
                return [f"strings: string {index} is not UTF-8"]
        return []

    def close(self) -> None:
        if self._view is not None:
            self._view.release()
            self._view = None
        if self._map is not None:
            self._map.close()
            self._map = None


def decode_related(data: bytes, string: Callable[[int], str]) -> list[list[Any]]:
    """A stored related list back as the format-1 list: strings for ids, floats for
    millionths (raises ``ValueError``, ``TypeError`` or ``IndexError`` when malformed)."""
    entries = []
    for entry in json.loads(data):
        evidence = [[string(item[0]), _number(item[1]), *[string(text) for text in item[2:]]] for item in entry[2]]
        entries.append([string(entry[0]), _number(entry[1]), evidence, *[string(text) for text in entry[3:]]])
    return entries


def format1_json(data: bytes, string: Callable[[int], str]) -> bytes:
    """A stored related list as format 1 stores it: compact JSON, UTF-8, floats as ``repr``."""
    return COMPACT_JSON(decode_related(data, string)).encode("utf-8")


def _number(value: int | float) -> float:
    if value.__class__ is int:
        return value / MICRO
    if value.__class__ is float:
        return value
    raise TypeError(f"not a stored number: {value!r}")
