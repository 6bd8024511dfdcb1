"""Writing a database (:func:`build_database`): records streamed to a spill file per
partition, each partition de-duplicated, sorted, written and fsynced in a folder beside
the target, the manifest last, then swapped in atomically (:mod:`relatedpages.store.db`
describes the format)."""
from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import itertools
import json
import logging
import math
import os
import re
import secrets
import shutil
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from filters.urls import normalise_url
from relatedpages.scoring.fallback import fill_related
from relatedpages.store import db  # the reader checks what a build wrote, before the swap
from relatedpages.store import leftovers
from relatedpages.store.dbblocks import BlockWriter, Compression
from relatedpages.store.dbformat import (
    _MAX_PARTITIONS,
    _PARTITION_NAME,
    _SPILL_BUFFER,
    ALGORITHMS,
    COMPACT_JSON,
    DATABASE_ALGORITHMS,
    FORMAT_VERSION,
    KEY_AS_GIVEN,
    KEY_NORMALISED_URL,
    LINKS_ALGORITHM,
    MANIFEST_NAME,
    PARTITIONS,
    DatabaseError,
    DatabaseProblem,
    DatabaseSummary,
    FormatVersion,
    Manifest,
    PartitionInfo,
    RecordRejection,
    STRINGS_NAME,
    partition_name,
)
from relatedpages.store.dbstrings import StringTableWriter, decode_related

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------
# Building


def build_database(
    records: Iterable[tuple[str, Any]],
    path: str | os.PathLike[str],
    *,
    algorithm: str,
    parameters: Mapping[str, Any],
    source: list[str],
    partitions: int = PARTITIONS,
    normalise_keys: bool = True,
    min_records: int = 0,
    fallback: Iterable[tuple[str, Any]] | None = None,
    fallback_source: str = "cocitation",
    fill_to: int = 0,
    format_version: int | None = None,
    compression: Compression = Compression(),
) -> DatabaseSummary:
    """Write ``records`` (page URL, related list) as a database at ``path``, atomically.

    Related lists are written in :data:`FORMAT_VERSION` (2: zstd blocks cut and
    compressed as ``compression`` says, strings as ids into one table) unless
    ``format_version`` asks for 1 (lines); a link index is always written in format 1.

    ``fallback`` records (related lists of another algorithm) answer the pages ``records``
    has no record for; each of their entries is marked with a fourth element,
    ``fallback_source``, so a reader can tell.  With ``fill_to`` > 0, a list of
    ``records`` shorter than that is filled from the fallback's list of the same page
    (:func:`relatedpages.scoring.fallback.fill_related`: the main entries first).  A
    fallback record that adds nothing to a page ``records`` answers is counted as
    ``fallback_superseded``.

    With ``min_records``, a build that ends with fewer records is not installed
    (:class:`DatabaseError`, ``COLLAPSED``): the database at ``path`` keeps answering.

    The records are streamed (memory holds one partition at a time, while it is
    sorted); URLs are normalised; a record whose URL does not normalise, or whose value
    is not a related list, is skipped and counted; of several records of one URL the
    last is kept.  An existing database at ``path`` is replaced; a folder there that is
    not a database (other files in it) is refused with :class:`DatabaseError`.  On any
    error the partial build is removed and whatever was at ``path`` stays as it was.

    The value check depends on the algorithm (:data:`VALUE_CHECKS`): a related list for
    ``block`` and ``cocitation``, a link record (:func:`is_link_record`) for ``links``.
    With ``normalise_keys=False`` (node ids of an edge list) keys are stored as given
    and must be non-empty strings without whitespace (else ``unusable_key``).
    """
    started = time.monotonic()
    path = Path(path)
    if algorithm not in DATABASE_ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}: choose from {', '.join(DATABASE_ALGORITHMS)}")
    if not 1 <= partitions < _MAX_PARTITIONS:
        raise ValueError(f"partitions must be in 1..{_MAX_PARTITIONS - 1}, not {partitions}")
    if fill_to < 0:
        raise ValueError(f"fill_to must be >= 0, not {fill_to}")
    try:
        json.dumps(dict(parameters), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"parameters must be JSON-serialisable: {error}") from error
    if isinstance(source, str) or not all(isinstance(item, str) for item in source):
        raise ValueError("source must be a list of strings")
    version = _format_version(algorithm, format_version)
    _check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    leftovers.sweep([path.parent])  # what a killed build left here (its marker says so)
    building = path.parent / f".{path.name}.building-{os.getpid()}-{secrets.token_hex(4)}"
    building.mkdir()
    try:
        leftovers.mark(building)
        check, malformed = VALUE_CHECKS[algorithm]
        unusable, duplicate = (
            (RecordRejection.UNUSABLE_URL, RecordRejection.DUPLICATE_URL) if normalise_keys
            else (RecordRejection.UNUSABLE_KEY, RecordRejection.DUPLICATE_KEY)
        )
        counts = {unusable: 0, malformed: 0, duplicate: 0}
        fallback_kept = filled = 0
        table = StringTableWriter() if version == FormatVersion.BLOCKS else None
        # format 2: the string table checks a value as it encodes it (one walk, not two)
        encode = table.encode_related if table is not None else functools.partial(_checked_json, check)
        if fallback is not None:
            if algorithm not in ALGORITHMS:
                raise ValueError(f"a fallback answers related-pages lookups, not {algorithm!r}")
            counts[RecordRejection.FALLBACK_SUPERSEDED] = 0
            _spill(
                _marked(fallback, fallback_source), building, partitions, counts, encode=encode,
                malformed=malformed, unusable=unusable, normalise_keys=normalise_keys,
                folder=_FALLBACK_SPILL)
        normalised, read = _spill(
            records, building, partitions, counts, encode=encode, malformed=malformed,
            unusable=unusable, normalise_keys=normalise_keys,
        )
        parts = []
        for index in range(partitions):
            info, duplicates, superseded, from_fallback, topped_up = _write_partition(
                building, index, fill_to, fallback_source, table, compression)
            parts.append(info)
            counts[duplicate] += duplicates
            fallback_kept += from_fallback
            filled += topped_up
            if superseded:
                counts[RecordRejection.FALLBACK_SUPERSEDED] += superseded
        (building / "spill").rmdir()
        if (building / _FALLBACK_SPILL).exists():
            (building / _FALLBACK_SPILL).rmdir()
        strings = table.write(building / STRINGS_NAME) if table is not None else None
        manifest = Manifest(
            format_version=version,
            algorithm=algorithm,
            parameters=dict(parameters),
            source=tuple(source),
            built_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            records=sum(part.records for part in parts),
            partitions=tuple(parts),
            rejected={reason.value: count for reason, count in counts.items()},
            key=KEY_NORMALISED_URL if normalise_keys else KEY_AS_GIVEN,
            strings=strings,
        )
        _write_durably(
            building / MANIFEST_NAME,
            (json.dumps(manifest.to_json(), indent=1, ensure_ascii=False) + "\n").encode("utf-8"),
        )
        _fsync_dir(building)
        if manifest.records < min_records:
            raise DatabaseError(
                DatabaseProblem.COLLAPSED, path,
                f"{manifest.records} records, fewer than the {min_records} required; "
                "the database in place is unchanged")
        problems = db.check_database(building)  # what was written, read back before the swap
        if problems:
            raise DatabaseError(DatabaseProblem.CORRUPT, path,
                                f"{problems[0]} after writing; the database in place is unchanged")
        (building / leftovers.MARKER).unlink()  # a database now, no longer a leftover
        _install(building, path)
    except BaseException as error:
        shutil.rmtree(building, ignore_errors=True)
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DatabaseError(DatabaseProblem.NO_SPACE, path, _disk_full(path.parent)) from None
        raise
    summary = DatabaseSummary(
        path=path,
        records=manifest.records,
        read=read,
        rejected=MappingProxyType(dict(counts)),
        urls_normalised=normalised,
        partitions=partitions,
        bytes=manifest.bytes,
        seconds=time.monotonic() - started,
        fallback_records=fallback_kept,
        filled_records=filled,
    )
    logger.info(
        "built %s: %s records from %s read (%s), %s bytes in %.1f s",
        path, summary.records, read, {k.value: v for k, v in counts.items() if v}, summary.bytes,
        summary.seconds,
    )
    return summary


def _format_version(algorithm: str, asked: int | None) -> FormatVersion:
    """The format a build of ``algorithm`` writes: ``asked``, or the newest it can."""
    if asked is None:
        return FORMAT_VERSION if algorithm in ALGORITHMS else FormatVersion.LINES
    if type(asked) is not int or asked not in tuple(FormatVersion):
        raise ValueError(f"format_version must be one of {', '.join(str(v.value) for v in FormatVersion)}, "
                         f"not {asked!r}")
    if asked == FormatVersion.BLOCKS and algorithm not in ALGORITHMS:
        raise ValueError(f"format {asked} holds related lists; a {algorithm!r} database is format 1")
    return FormatVersion(asked)


def _encode_json(value: Any) -> bytes:
    """A value as format 1 stores it: compact JSON, UTF-8."""
    return _DUMPS(value).encode("utf-8")


def _checked_json(check: Callable[[Any], bool], value: Any) -> bytes | None:
    """A value as format 1 stores it, or None when it fails ``check``."""
    return _DUMPS(value).encode("utf-8") if check(value) else None


def _spill(
    records: Iterable[tuple[str, Any]],
    building: Path,
    partitions: int,
    counts: dict[RecordRejection, int],
    *,
    encode: Callable[[Any], bytes | None],
    malformed: RecordRejection,
    unusable: RecordRejection,
    normalise_keys: bool,
    folder: str = "spill",
) -> tuple[int, int]:
    """Append every usable record, its value as ``encode`` stores it (None: malformed),
    to its partition's spill file, counting rejections in ``counts``; (records whose URL
    normalisation changed, records read)."""
    read = normalised_count = 0
    spill = building / folder
    spill.mkdir()
    handles = [open(spill / partition_name(i), "wb", buffering=_SPILL_BUFFER) for i in range(partitions)]
    try:
        for url, related in records:
            read += 1
            if not isinstance(url, str):
                key = None
            elif normalise_keys:
                key = normalise_url(url)
            else:
                key = url if url and not _WHITESPACE.search(url) else None
            if key is None:
                counts[unusable] += 1
                continue
            value = encode(related)
            if value is None:
                counts[malformed] += 1
                continue
            if key != url:
                normalised_count += 1
            key_bytes = key.encode("utf-8")
            handles[zlib.crc32(key_bytes) % partitions].write(b"%s\t%s\n" % (key_bytes, value))
    finally:
        for handle in handles:
            handle.close()
    return normalised_count, read


_WHITESPACE = re.compile(r"\s")
_DUMPS = COMPACT_JSON


def _is_related_list(value: Any) -> bool:
    """``[[url: str, score: finite number, [[site: str, ds: finite number], …]], …]``; an
    evidence item may add the citing page and the anchor text (both str); an entry answered
    by a fallback has a fourth element, the fallback's name, and the site fallback's a fifth,
    the page whose list answered (both str)."""
    if not isinstance(value, (list, tuple)):
        return False
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) not in (3, 4, 5):
            return False
        if not all(isinstance(text, str) for text in item[3:]):
            return False
        url, score, evidence = item[:3]
        if not isinstance(url, str) or not _is_finite_number(score) or not isinstance(evidence, (list, tuple)):
            return False
        for pair in evidence:
            if (
                not isinstance(pair, (list, tuple))
                or len(pair) not in (2, 4)
                or not isinstance(pair[0], str)
                or not _is_finite_number(pair[1])
                or not all(isinstance(text, str) for text in pair[2:])
            ):
                return False
    return True


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_link_record(value: Any) -> bool:
    """A link index value: ``{"out": [[href, anchor, block], …], "in": [source, …], "crawled": bool}``.

    ``href`` and every source are non-empty strings, ``anchor`` a string (``""``: none),
    ``block`` an integer >= -1 (-1: unknown); ``in`` holds distinct sources in ascending
    order (code points, which is UTF-8 byte order); no other keys.

    >>> is_link_record({"out": [["http://b.example/", "B", 0]], "in": [], "crawled": True})
    True
    >>> is_link_record({"out": [], "in": ["b", "a"], "crawled": False})  # not ascending
    False
    """
    if not isinstance(value, dict) or len(value) != 3:
        return False
    out, sources, crawled = value.get("out"), value.get("in"), value.get("crawled")
    if not isinstance(out, (list, tuple)) or not isinstance(sources, (list, tuple)) or not isinstance(crawled, bool):
        return False
    for link in out:
        if not isinstance(link, (list, tuple)) or len(link) != 3:
            return False
        href, anchor, block = link
        if (
            not isinstance(href, str) or not href or not isinstance(anchor, str)
            or not isinstance(block, int) or isinstance(block, bool) or block < -1
        ):
            return False
    previous = ""
    for source in sources:
        if not isinstance(source, str) or source <= previous:  # non-empty, strictly ascending
            return False
        previous = source
    return True


#: Per algorithm: the check a record's value must pass, and the reason it is counted
#: under when it fails.
VALUE_CHECKS: Mapping[str, tuple[Callable[[Any], bool], RecordRejection]] = MappingProxyType({
    "block": (_is_related_list, RecordRejection.MALFORMED_RELATED),
    "cocitation": (_is_related_list, RecordRejection.MALFORMED_RELATED),
    LINKS_ALGORITHM: (is_link_record, RecordRejection.MALFORMED_LINKS),
})


_FALLBACK_SPILL = "spill-fallback"


def _marked(records: Iterable[tuple[str, Any]], source: str) -> Iterator[tuple[str, Any]]:
    """Fallback records with ``source`` appended to each entry (malformed ones unchanged:
    the value check rejects and counts them)."""
    for url, related in records:
        if isinstance(related, list) and all(
                isinstance(entry, list) and len(entry) == 3 for entry in related):
            related = [[*entry, source] for entry in related]
        yield url, related


def _write_partition(building: Path, index: int, fill_to: int = 0, source: str = "cocitation",
                     table: StringTableWriter | None = None, compression: Compression = Compression(),
                     ) -> tuple[PartitionInfo, int, int, int, int]:
    """Sort one spill file (after its fallback spill file, if any) into its partition file,
    filling main lists shorter than ``fill_to`` from the fallback's; (its manifest entry,
    duplicates, fallback records superseded, fallback records kept whole, main records
    filled).  With a string ``table`` the values hold its ids and the file is format 2's
    blocks, cut and compressed as ``compression`` says; without, format 1's lines."""
    name = partition_name(index)
    by_key: dict[bytes, bytes] = {}
    fallback_spill = building / _FALLBACK_SPILL / name
    if fallback_spill.exists():
        for line in fallback_spill.read_bytes().split(b"\n")[:-1]:
            by_key[line[: line.index(b"\t")]] = line
        fallback_spill.unlink()
    fallback_keys = set(by_key)
    fallback_lines = dict(by_key) if fill_to else {}
    spill = building / "spill" / name
    lines = spill.read_bytes().split(b"\n")
    lines.pop()  # the empty string after the last line break
    main_keys: set[bytes] = set()
    for line in lines:
        key = line[: line.index(b"\t")]
        main_keys.add(key)
        by_key[key] = line  # later records replace earlier ones
    duplicates = len(lines) - len(main_keys)
    both = fallback_keys & main_keys
    fallback_kept = len(fallback_keys) - len(both)
    del lines
    filled = 0
    if fill_to:
        decode: Callable[[bytes], Any] = json.loads
        encode: Callable[[Any], bytes | None] = _encode_json
        if table is not None:  # merged as strings (ids compare alike), stored as ids again
            string = table.strings().__getitem__
            decode, encode = (lambda data: decode_related(data, string)), table.encode_related
        for key in sorted(both):
            main_line = by_key[key]
            fallback_line = fallback_lines[key]
            if len(json.loads(main_line[len(key) + 1:])) >= fill_to:
                continue
            main = decode(main_line[len(key) + 1:])
            merged = fill_related(key.decode("utf-8"), main, decode(fallback_line[len(key) + 1:]), fill_to, source)
            if len(merged) > len(main):
                stored = encode(merged)
                if stored is None:  # both lists passed the check when they were spilled
                    raise AssertionError(f"merged list of {key!r} does not encode")
                filled += 1
                by_key[key] = b"%s\t%s" % (key, stored)
    superseded = len(both) - filled
    del fallback_lines
    with open(building / name, "wb") as handle:
        if table is None:
            size, sha256 = _write_lines(handle, (by_key[key] for key in sorted(by_key)))
        else:
            blocks = BlockWriter(handle, compression)
            for key in sorted(by_key):
                blocks.add(by_key[key])
            size, sha256 = blocks.finish()
        handle.flush()
        os.fsync(handle.fileno())
    spill.unlink()
    return (PartitionInfo(name, len(by_key), size, sha256), duplicates, superseded,
            fallback_kept, filled)


def _write_lines(handle: IO[bytes], lines: Iterator[bytes]) -> tuple[int, str]:
    """Format 1: the lines, each ended by a line break, written in batches; (bytes, sha256)."""
    digest = hashlib.sha256()
    size = 0
    while batch := list(itertools.islice(lines, 4096)):
        data = b"\n".join(batch) + b"\n"
        digest.update(data)
        handle.write(data)
        size += len(data)
    return size, digest.hexdigest()


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_replaceable(path: Path) -> None:
    """Refuse to overwrite anything but nothing, an empty folder or a database."""
    if not os.path.lexists(path):
        return
    if not path.is_dir() or path.is_symlink():
        raise DatabaseError(
            DatabaseProblem.NOT_A_DATABASE, path, "exists and is not a folder: refusing to replace it",
            path_first=True,
        )
    strangers = sorted(
        entry.name for entry in os.scandir(path)
        if entry.name not in (MANIFEST_NAME, STRINGS_NAME) and not _PARTITION_NAME.fullmatch(entry.name)
    )
    if strangers:
        raise DatabaseError(
            DatabaseProblem.NOT_A_DATABASE, path,
            f"holds other files ({', '.join(strangers[:3])}{' …' if len(strangers) > 3 else ''}): "
            "refusing to replace it",
            path_first=True,
        )


def _disk_full(folder: Path) -> str:
    """The one line of a build that ran out of disk: where, and how much is free now that
    the partial build is removed."""
    try:
        usage = shutil.disk_usage(folder)
    except OSError:
        return f"the disk holding {folder} is full; the database in place is unchanged"
    mb = 1024 * 1024
    return (f"the disk holding {folder} is full ({usage.free / mb:,.1f} MB free of "
            f"{usage.total / mb:,.1f} MB with the partial build removed); the database in "
            "place is unchanged")


def _install(building: Path, path: Path) -> None:
    """Put the finished build at ``path``; an old database there is swapped out and deleted.

    Where the kernel can (Linux ``renameat2(RENAME_EXCHANGE)``), the two folders are
    exchanged in one atomic step: ``path`` always names a complete database.
    Elsewhere the old folder is renamed away and the new one renamed in, which leaves
    ``path`` missing for the instant between the two renames.
    """
    parent = path.parent
    if os.path.lexists(path):
        _check_replaceable(path)  # again: it may have changed while we were building
        if _exchange(building, path):
            _fsync_dir(parent)
            # ``building`` now names the old database.  Readers that opened it keep
            # their open files; nobody new finds it.
            leftovers.mark(building)  # a kill before it is gone leaves it to the next build
            shutil.rmtree(building, ignore_errors=True)
            return
        old = parent / f".{path.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
        os.rename(path, old)
        try:
            os.rename(building, path)
        except OSError:
            os.rename(old, path)
            raise
        _fsync_dir(parent)
        leftovers.mark(old)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(building, path)
        _fsync_dir(parent)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Any:
    """libc's ``renameat2``, or None where there is none (not Linux, old glibc)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange(first: Path, second: Path) -> bool:
    """Atomically swap two existing paths; False where the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # no syscall, or not on this file system
        return False
    raise OSError(code, os.strerror(code), os.fspath(second))
