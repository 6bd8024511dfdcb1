"""Format-2 (``BLOCKS``) partitions: one partition's sorted lines in zstd blocks, found
through a sparse index at the end of the file (written by
:mod:`relatedpages.store.dbbuild`, read by :mod:`relatedpages.store.db`).

A partition file::

    block 0 … block n-1   zstd frames, each with its content size and content checksum,
                          of whole ``key<TAB>value<LF>`` lines in key order, cut after
                          :attr:`Compression.block_bytes` (8 KiB) of lines
    index                 one zstd frame of the JSON ``[offsets, sizes, first keys]``: the
                          n + 1 offsets of the blocks (the last is the index's own), the
                          uncompressed size of each block, and its first key
    trailer               16 bytes: the index's offset (u64 LE), then ``b"RPDBIDX2"``

An empty partition is an empty file.  A reader reads a partition's index once, with the
file's last 16 KiB (one read); a lookup then bisects the first keys, reads one block
(one ``pread``, ~2.5 KB), decompresses it (~8 KiB) and finds ``<LF>key<TAB>`` in it.  Every
block carries zstd's checksum of its content, so a flipped byte in a block is refused when
the block is decompressed, whatever ``verify`` was; the manifest's sha256 of the whole
file catches it too (``relatedpages verify``).
"""
from __future__ import annotations

import bisect
import hashlib
import json
import os
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import zstandard

from relatedpages.store.dbformat import partition_name

BLOCK_BYTES_DEFAULT = 8 * 1024
LEVEL_DEFAULT = 3
_TRAILER = struct.Struct("<Q8s")
_TRAILER_MAGIC = b"RPDBIDX2"
#: The tail read when a partition is first used: the trailer and, nearly always, the index.
_TAIL_READ = 16 * 1024


class BlockError(ValueError):
    """A partition file that does not read as format 2; the message names where."""


@dataclass(frozen=True)
class Compression:
    """How a format-2 build cuts and compresses blocks.  ``block_bytes``: the lines of a
    block, uncompressed (a block ends with the line that reaches it); ``level``: zstd's."""

    block_bytes: int = BLOCK_BYTES_DEFAULT
    level: int = LEVEL_DEFAULT

    def __post_init__(self) -> None:
        if not 256 <= self.block_bytes <= 1 << 26:
            raise ValueError(f"block_bytes must be in 256..{1 << 26}, not {self.block_bytes}")
        if not 1 <= self.level <= 22:
            raise ValueError(f"level must be a zstd level in 1..22, not {self.level}")


class BlockWriter:
    """Writes one partition file: :meth:`add` each line (key order, no line break), then
    :meth:`finish` writes the last block, the index and the trailer."""

    def __init__(self, handle: IO[bytes], compression: Compression):
        self._handle = handle
        self._block_bytes = compression.block_bytes
        self._compress = zstandard.ZstdCompressor(
            level=compression.level, write_checksum=True, write_content_size=True).compress
        self._lines: list[bytes] = []
        self._pending = 0
        self._size = 0
        self._offsets = [0]
        self._sizes: list[int] = []
        self._first_keys: list[str] = []
        self._digest = hashlib.sha256()
        self.records = 0

    def add(self, line: bytes) -> None:
        self._lines.append(line)
        self._pending += len(line) + 1
        self.records += 1
        if self._pending >= self._block_bytes:
            self._flush()

    def _flush(self) -> None:
        if not self._lines:
            return
        raw = b"\n".join(self._lines) + b"\n"
        first = self._lines[0]
        self._first_keys.append(first[:first.index(b"\t")].decode("utf-8"))
        self._sizes.append(len(raw))
        self._write(self._compress(raw))
        self._offsets.append(self._size)
        self._lines, self._pending = [], 0

    def _write(self, data: bytes) -> None:
        self._digest.update(data)
        self._handle.write(data)
        self._size += len(data)

    def finish(self) -> tuple[int, str]:
        """Write what is left, the index and the trailer; (bytes written, their sha256).
        No lines: nothing is written (an empty file)."""
        self._flush()
        if not self.records:
            return 0, self._digest.hexdigest()
        index_at = self._size
        index = json.dumps([self._offsets, self._sizes, self._first_keys], separators=(",", ":"))
        self._write(self._compress(index.encode("utf-8")))
        self._write(_TRAILER.pack(index_at, _TRAILER_MAGIC))
        return self._size, self._digest.hexdigest()


_local = threading.local()


def _decompress(frame: bytes) -> bytes:
    """One zstd frame, decompressed by this thread's decompressor (they are not shared)."""
    try:
        decompressor = _local.decompressor
    except AttributeError:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor()
    data: bytes = decompressor.decompress(frame)
    return data


class BlockPartition:
    """One format-2 partition file, read through its descriptor with ``pread`` (safe to
    share between threads).  Opening reads its index; every method raises
    :class:`BlockError` on what does not read."""

    def __init__(self, fd: int, size: int):
        self._fd = fd
        tail_size = min(size, _TAIL_READ)
        tail = os.pread(fd, tail_size, size - tail_size)
        if len(tail) < _TRAILER.size or tail[-8:] != _TRAILER_MAGIC:
            raise BlockError("does not end with a block index")
        (index_at, _) = _TRAILER.unpack_from(tail, len(tail) - _TRAILER.size)
        index_end = size - _TRAILER.size
        if not 0 <= index_at < index_end:
            raise BlockError(f"block index at byte {index_at} is outside the file")
        if index_at >= size - tail_size:
            frame = tail[index_at - (size - tail_size):len(tail) - _TRAILER.size]
        else:
            frame = os.pread(fd, index_end - index_at, index_at)
        try:
            offsets, sizes, first_keys = json.loads(_decompress(frame))
        except (zstandard.ZstdError, UnicodeDecodeError, ValueError, TypeError) as error:
            raise BlockError(f"block index does not read ({error})") from None
        if not (isinstance(offsets, list) and isinstance(sizes, list) and isinstance(first_keys, list)
                and len(offsets) == len(sizes) + 1 == len(first_keys) + 1 and offsets[0] == 0
                and offsets[-1] == index_at
                and all(isinstance(n, int) and n > 0 for n in sizes)
                and all(isinstance(key, str) for key in first_keys)
                and all(isinstance(a, int) and isinstance(b, int) and a < b for a, b in zip(offsets, offsets[1:]))):
            raise BlockError("block index does not describe the blocks before it")
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # one block a lookup: no read-ahead
        self._offsets: list[int] = offsets
        self._sizes: list[int] = sizes
        self._first_keys = [key.encode("utf-8") for key in first_keys]

    @property
    def blocks(self) -> int:
        return len(self._sizes)

    def block(self, number: int) -> bytes:
        """Block ``number``'s lines, decompressed and checked (zstd's checksum, its size,
        its last line break)."""
        start, end = self._offsets[number], self._offsets[number + 1]
        frame = os.pread(self._fd, end - start, start)
        try:
            # the size first: a flipped bit there must not make zstd allocate terabytes
            if zstandard.frame_content_size(frame) != self._sizes[number]:
                raise BlockError(f"block {number} at byte {start} does not hold the size the index says")
            data = _decompress(frame)
        except zstandard.ZstdError as error:
            raise BlockError(f"block {number} at byte {start} does not decompress ({error})") from None
        if not data.endswith(b"\n"):
            raise BlockError(f"block {number} at byte {start} does not end with a line break")
        return data

    def find(self, key: bytes) -> bytes | None:
        """The stored value of ``key`` in this partition, or None."""
        number = bisect.bisect_right(self._first_keys, key) - 1
        if number < 0:
            return None
        data = self.block(number)
        if data.startswith(key + b"\t"):
            start = 0
        else:
            start = data.find(b"\n" + key + b"\t") + 1
            if not start:
                return None
        start += len(key) + 1
        return data[start:data.index(b"\n", start)]

    def lines(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order."""
        for number in range(self.blocks):
            data = self.block(number)
            for line in data[:-1].split(b"\n"):
                key, tab, value = line.partition(b"\t")
                if not tab:
                    raise BlockError(f"block {number} at byte {self._offsets[number]} has a line without a tab")
                yield key, value

    def records(self) -> int:
        """The number of lines of every block (each block decompressed and checked)."""
        return sum(self.block(number).count(b"\n") for number in range(self.blocks))

    def order_problems(self, index: int, partitions: int) -> list[str]:
        """The first fault of the keys: a line without a tab, a key out of order or
        repeated, a block whose first key is not the index's, a key of another partition."""
        name = partition_name(index)
        previous: bytes | None = None
        for number in range(self.blocks):
            where = f"{name} block {number} at byte {self._offsets[number]}"
            try:
                data = self.block(number)
            except BlockError as error:
                return [f"{name} {error}"]
            for position, line in enumerate(data[:-1].split(b"\n")):
                tab = line.find(b"\t")
                if tab < 0:
                    return [f"{where}: line {position} has no tab"]
                key = line[:tab]
                if position == 0 and key != self._first_keys[number]:
                    return [f"{where}: its first key is not the index's"]
                if previous is not None and key <= previous:
                    return [f"{where}: key {position} is " + ("a duplicate" if key == previous else "out of order")]
                if zlib.crc32(key) % partitions != index:
                    return [f"{where}: key {position} belongs to {partition_name(zlib.crc32(key) % partitions)}"]
                previous = key
        return []
