"""The lookup machinery every kind of database shares (:class:`PartitionedDB`): one
generation of a database folder opened, each partition mapped (format 1) or its block index
read (format 2) on first use, checked as ``verify`` says, and searched; the records and the
full check (:mod:`relatedpages.store.db` describes the formats and the checks)."""
from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import threading
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, NoReturn, Self, TypeVar

from relatedpages.store.dbblocks import BlockError, BlockPartition
from relatedpages.store.dbformat import (
    _CHUNK,
    DATABASE_ALGORITHMS,
    STRINGS_NAME,
    DatabaseError,
    DatabaseProblem,
    FormatVersion,
    Manifest,
    Verify,
    partition_name,
)
from relatedpages.store.dbopen import _open_generation
from relatedpages.store.dbstrings import StringTable, format1_json

logger = logging.getLogger(__name__)


V = TypeVar("V")


class PartitionedDB(ABC, Generic[V]):
    """A read-only partitioned database whose values decode to ``V``; safe to share
    between threads.

    The lookup machinery of every kind of database (the module doc): subclasses say
    which manifest algorithms they read (:attr:`ACCEPTS`) and how a value decodes
    (:meth:`_decode_value`): :class:`RelatedPagesDB` (related lists) and
    ``relatedpages.store.linkindex.LinkIndexDB`` (link records).  A database of another
    algorithm is refused at open with ``not a relatedpages database``.
    """

    #: The manifest algorithms this reader answers from.
    ACCEPTS: tuple[str, ...] = DATABASE_ALGORITHMS

    def __init__(self, path: str | os.PathLike[str], *, verify: Verify | str = Verify.SIZES):
        self._path = Path(path)
        self._verify = Verify(verify)
        self._manifest, self._files, self._strings_file = _open_generation(self._path)
        self._count = len(self._manifest.partitions)
        self._blocks = self._manifest.format_version == FormatVersion.BLOCKS
        self._maps: list[mmap.mmap | None] = [None] * self._count  # format 1
        self._parts: list[BlockPartition | None] = [None] * self._count  # format 2
        self._ready = [False] * self._count
        self._lock = threading.Lock()
        self._failure: DatabaseError | None = None  # the string table's: every record needs it
        self._failed: dict[int, DatabaseError] = {}  # the partitions found corrupt
        self._closed = False
        self._strings: StringTable | None = None
        self._string: Callable[[int], str] = _no_strings  # format 2: the string of an id
        self._recent: Callable[[int], str | None] = _no_recent  # … if recently read, else None
        self._strings_checked = False
        try:
            if self._manifest.algorithm not in self.ACCEPTS:
                raise DatabaseError(
                    DatabaseProblem.NOT_A_DATABASE, self._path,
                    f"holds algorithm {self._manifest.algorithm!r}; {type(self).__name__} reads "
                    f"{', '.join(self.ACCEPTS)}",
                    path_first=True,
                )
            if self._strings_file is not None and self._manifest.strings is not None:
                try:
                    self._strings = StringTable(self._strings_file, self._manifest.strings.count,
                                                self._manifest.strings.bytes)
                except ValueError as error:
                    self._corrupt_strings(str(error))
                self._recent, self._string = self._strings.strings()
            if self._verify is Verify.FULL:
                self._check_strings()
                for index in range(self._count):
                    self._check_contents(index)
        except BaseException:
            self.close()
            raise

    # -- public API ----------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._path

    def failures(self) -> list[str]:
        """What this reader has found corrupt since it opened, one line each (``part-00017
        checksum mismatch``); lookups there raise :class:`DatabaseError`, the other
        partitions keep answering (a fault of the string table stops every lookup)."""
        found = [] if self._failure is None else [self._failure.detail]
        return found + [self._failed[index].detail for index in sorted(self._failed)]

    @property
    def manifest(self) -> Manifest:
        return self._manifest

    def __len__(self) -> int:
        return self._manifest.records

    @property
    def partitions(self) -> int:
        return self._count

    def partition_data(self, index: int) -> bytes:
        """The whole (checked, as ``verify`` says) contents of partition ``index``:
        ``key<TAB>json<LF>`` lines in key order; ``b""`` when the partition is empty.
        For readers that load everything at once (``linkload.load_link_graph``); a
        format-2 partition is given as format 1 would store it."""
        if self._blocks:
            part = self._block_partition(index)
            if part is None:
                return b""
            try:
                return b"".join(b"%s\t%s\n" % (key, format1_json(value, self._string))
                                for key, value in part.lines())
            except BlockError as error:
                self._corrupt(index, str(error))
            except (UnicodeDecodeError, TypeError, ValueError, IndexError):
                self._corrupt(index, "holds a malformed record")
        mapped = self._partition(index)
        return b"" if mapped is None else mapped[:]

    def records(self) -> Iterator[tuple[str, V]]:
        """Every record, partition by partition, each partition in key order."""
        if self._blocks:
            yield from self._block_records()
            return
        for index in range(self._count):
            mapped = self._partition(index)
            if mapped is None:
                continue
            start = 0
            size = len(mapped)
            while start < size:
                end = mapped.find(b"\n", start)
                tab = mapped.find(b"\t", start, end)
                if tab < 0:
                    self._corrupt(index, f"line at byte {start} has no tab")
                yield mapped[start:tab].decode("utf-8"), self._decode(index, mapped, start, tab, end)
                start = end + 1

    def _block_records(self) -> Iterator[tuple[str, V]]:
        for index in range(self._count):
            part = self._block_partition(index)
            if part is None:
                continue
            try:
                for key, value in part.lines():
                    yield key.decode("utf-8"), self._decode_compact(value, self._string)
            except BlockError as error:
                self._corrupt(index, str(error))
            except (UnicodeDecodeError, TypeError, ValueError, IndexError):
                self._corrupt(index, "holds a malformed record")

    def check(self) -> list[str]:
        """Check every partition in full, whatever ``verify`` was: its size, sha256 and
        record count against the manifest, and that its keys are unique, in byte order and
        in their own partition (CRC-32 modulo the partition count); in format 2 also every
        block (zstd's checksum of its content, its size, its first key against the index)
        and the string table (sha256, offsets, UTF-8).  Every fault found, one line each
        naming its partition (``part-00017 checksum mismatch``) or file (``strings
        checksum mismatch``); an empty list when the database is sound.  (``relatedpages
        verify``.)"""
        problems: list[str] = []
        if self._strings is not None:
            try:
                self._check_strings()
            except DatabaseError as error:
                problems.append(error.detail)
            else:
                problems += self._strings.problems()
        for index in range(self._count):
            try:
                self._check_contents(index)
            except DatabaseError as error:
                problems.append(error.detail)
                continue
            problems += self._order_problems(index)
        return problems

    def _order_problems(self, index: int) -> list[str]:
        """Key order, uniqueness and partition of a partition whose contents checked out,
        read through a map of its own (no copy in memory; the reader's maps, and the
        refusal after a fault elsewhere, are left alone)."""
        size = self._manifest.partitions[index].bytes
        if not size:
            return []
        if self._blocks:
            try:
                return BlockPartition(self._files[index].fileno(), size).order_problems(index, self._count)
            except BlockError as error:
                return [f"{partition_name(index)} {error}"]
        with mmap.mmap(self._files[index].fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _key_order_problems(data, index, self._count)

    def close(self) -> None:
        """Unmap and close every partition (further lookups raise ``ValueError``)."""
        self._closed = True
        self._ready = [False] * self._count
        for index, mapped in enumerate(self._maps):
            if mapped is not None:
                mapped.close()
                self._maps[index] = None
        self._parts = [None] * self._count
        if self._strings is not None:
            self._strings.close()
            self._strings = None
        for handle in self._files:
            handle.close()
        self._files = []
        if self._strings_file is not None:
            self._strings_file.close()
            self._strings_file = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self._path)!r}, records={len(self)}, verify={self._verify.value!r})"

    # -- lookup --------------------------------------------------------------------------

    def _lookup(self, key: bytes) -> V | None:
        index = zlib.crc32(key) % self._count
        if self._blocks:
            return self._lookup_block(index, key)
        if self._ready[index] and self._failure is None:
            mapped = self._maps[index]
        else:
            mapped = self._partition(index)
        if mapped is None:
            return None
        # Binary search over bytes: [lo, hi) holds the start of every line that may still
        # be the key's; lo is always a line start, hi a line start or the end.
        find, rfind = mapped.find, mapped.rfind
        lo, hi = 0, len(mapped)
        while lo < hi:
            mid = (lo + hi) // 2
            start = rfind(b"\n", lo, mid) + 1 or lo  # start of the line holding mid
            end = find(b"\n", start)
            tab = find(b"\t", start, end)
            if tab < 0:
                self._corrupt(index, f"line at byte {start} has no tab")
            line_key = mapped[start:tab]
            if line_key < key:
                lo = end + 1
            elif line_key > key:
                hi = start
            else:
                return self._decode(index, mapped, start, tab, end)
        return None

    def _lookup_block(self, index: int, key: bytes) -> V | None:
        """Format 2: bisect the partition's index, decompress one block, find the line."""
        part = self._parts[index] if self._ready[index] and self._failure is None else self._block_partition(index)
        if part is None:
            return None
        try:
            value = part.find(key)
            return None if value is None else self._decode_compact(value, self._string)
        except BlockError as error:
            self._corrupt(index, str(error))
        except (UnicodeDecodeError, TypeError, ValueError, IndexError):
            self._corrupt(index, f"malformed record of {key.decode('utf-8', 'replace')}")

    def _decode_compact(self, data: bytes, string: Callable[[int], str]) -> V:
        """A format-2 value (ids for strings, millionths for numbers) → ``V``; ``string``
        is the string of an id.  By default the value is rebuilt as format 1 stores it
        and given to :meth:`_decode_value`, so a reader written for format 1 reads format 2
        unchanged; :class:`RelatedPagesDB` decodes it directly.  Raises ``ValueError``,
        ``TypeError`` or ``IndexError`` when malformed."""
        return self._decode_value(format1_json(data, string))

    def _decode(self, index: int, mapped: mmap.mmap, start: int, tab: int, end: int) -> V:
        try:
            return self._decode_value(mapped[tab + 1 : end])
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError, ValueError):
            self._corrupt(index, f"malformed record at byte {start}")

    @abstractmethod
    def _decode_value(self, data: bytes) -> V:
        """A value's JSON bytes → ``V``; raises ``ValueError`` or ``TypeError`` when malformed."""

    # -- partitions ----------------------------------------------------------------------

    def _partition(self, index: int) -> mmap.mmap | None:
        """Format 1: the partition's map (None when empty), mapped and checked on first use."""
        self._prepare(index)
        return self._maps[index]

    def _block_partition(self, index: int) -> BlockPartition | None:
        """Format 2: the partition (None when empty), its index read and checked on first use."""
        self._prepare(index)
        return self._parts[index]

    def _prepare(self, index: int) -> None:
        if self._failure is not None:
            raise self._failure
        if index in self._failed:
            raise self._failed[index]
        if self._closed:
            raise ValueError(f"lookup on a closed {type(self).__name__}")
        if self._ready[index]:
            return
        with self._lock:
            if not self._ready[index]:
                if self._verify is Verify.LAZY:
                    self._check_strings()
                    self._check_contents(index)
                part = self._manifest.partitions[index]
                if part.bytes and self._blocks:
                    try:
                        self._parts[index] = BlockPartition(self._files[index].fileno(), part.bytes)
                    except BlockError as error:
                        self._corrupt(index, str(error))
                elif part.bytes:
                    mapped = mmap.mmap(self._files[index].fileno(), 0, access=mmap.ACCESS_READ)
                    if hasattr(mapped, "madvise"):
                        mapped.madvise(mmap.MADV_RANDOM)  # binary search: no read-ahead
                    if mapped[-1:] != b"\n" or part.records == 0:
                        mapped.close()
                        self._corrupt(index, "does not end with a line break")
                    self._maps[index] = mapped
                elif part.records:
                    self._corrupt(index, "is empty")
                self._ready[index] = True

    def _check_contents(self, index: int) -> None:
        """sha256 and record count of a partition against the manifest (format 2: every
        block decompressed, so checked by zstd too)."""
        part = self._manifest.partitions[index]
        fd = self._files[index].fileno()
        size, sha256, lines, last = _digest(fd)
        if size != part.bytes:
            self._corrupt(index, f"has {size} bytes, the manifest says {part.bytes}")
        if sha256 != part.sha256:
            self._corrupt(index, "checksum mismatch")
        if self._blocks:
            try:
                records = BlockPartition(fd, size).records() if size else 0
            except BlockError as error:
                self._corrupt(index, str(error))
            if records != part.records:
                self._corrupt(index, f"has {records} records, the manifest says {part.records}")
        elif lines != part.records or (size and last != b"\n"):
            self._corrupt(index, f"has {lines} lines, the manifest says {part.records} records")

    def _check_strings(self) -> None:
        """sha256 of the string table against the manifest (format 2), once."""
        if self._strings_checked or self._strings_file is None or self._manifest.strings is None:
            return
        size, sha256, _, _ = _digest(self._strings_file.fileno())
        if size != self._manifest.strings.bytes:
            self._corrupt_strings(f"has {size} bytes, the manifest says {self._manifest.strings.bytes}")
        if sha256 != self._manifest.strings.sha256:
            self._corrupt_strings("checksum mismatch")
        self._strings_checked = True

    def _corrupt_strings(self, detail: str) -> NoReturn:
        error = DatabaseError(DatabaseProblem.CORRUPT, self._path, f"{STRINGS_NAME} {detail}")
        self._failure = error
        logger.error("%s", error)
        raise error

    def _corrupt(self, index: int, detail: str) -> NoReturn:
        """Record and raise: this reader answers nothing more from partition ``index``
        (the others are checked on their own: their sha256 at open, zstd's checksum of
        every block read)."""
        error = DatabaseError(DatabaseProblem.CORRUPT, self._path, f"{partition_name(index)} {detail}")
        # no lock (_prepare may hold it): _failed is set first, and _prepare reads it first
        self._failed.setdefault(index, error)
        self._ready[index] = False
        logger.error("%s", error)
        raise error


def _no_recent(index: int) -> str | None:
    return None


def _no_strings(index: int) -> str:
    raise IndexError(f"string {index} of a database without a string table")


def _digest(fd: int) -> tuple[int, str, int, bytes]:
    """(bytes, sha256, line breaks, last byte) of a whole file, read in chunks."""
    digest = hashlib.sha256()
    lines = offset = 0
    last = b""
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            break
        digest.update(chunk)
        lines += chunk.count(b"\n")
        offset += len(chunk)
        last = chunk[-1:]
    return offset, digest.hexdigest(), lines, last


def _key_order_problems(data: Any, index: int, partitions: int) -> list[str]:
    """The first fault of a partition's ``key<TAB>…`` lines: a line without a tab, a key
    out of order or repeated, a key of another partition; empty when none."""
    name = partition_name(index)
    previous: bytes | None = None
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        tab = data.find(b"\t", start, end)
        if tab < 0:
            return [f"{name} line at byte {start} has no tab"]
        key = data[start:tab]
        if previous is not None and key <= previous:
            return [f"{name} key at byte {start} is "
                    + ("a duplicate" if key == previous else "out of order")]
        if zlib.crc32(key) % partitions != index:
            return [f"{name} key at byte {start} belongs to "
                    f"{partition_name(zlib.crc32(key) % partitions)}"]
        previous, start = key, end + 1
    return []
