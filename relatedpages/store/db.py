"""The related-pages database: hash-partitioned, sorted, one binary search per lookup.

The output of ``jobs.related`` (or ``jobs.cocitation``) — one record per page, ``url →
[[related_url, score, [[citing_site, ds], …]], …]`` — is written once by
:func:`build_database` and then read by :class:`RelatedPagesDB`, which answers "the
related pages of URL u" with one lookup (DESIGN.md, "Related-pages database").

On disk, a database is a folder::

    manifest.json     format, version, algorithm, parameters, source, build time, and per
                      partition: file name, record count, byte size, sha256
    part-00000        url<TAB>json<LF> lines, sorted by the URL's UTF-8 bytes, URLs unique
    …
    part-00063

* ``url`` is the page URL normalised by :func:`filters.urls.normalise_url` (default
  options).  A normalised URL never holds a tab, a line break or a non-ASCII character
  (they are removed or percent-encoded), so the line needs no escaping; the sort is on
  bytes anyway, so a reader in any language can binary-search it.
* ``json`` is the related list exactly as the jobs emit it, written with compact
  separators and ``ensure_ascii=False`` (UTF-8).
* The partition of a URL is ``zlib.crc32(url.encode("utf-8")) % partitions``
  (:func:`partition_of`) — never Python's ``hash()``, which is salted per process.

The same format holds a *link index* (algorithm ``links``, :mod:`relatedpages.store.linkindex`):
one record per node, ``key → {"out": [[href, anchor, block], …], "in": [source, …],
"crawled": bool}``; its keys are normalised URLs, or node ids stored as given
(``build_database(..., normalise_keys=False)``; the manifest's ``key`` says which).
:class:`PartitionedDB` holds the lookup machinery; :class:`RelatedPagesDB` and
``linkindex.LinkIndexDB`` decode their values, and each refuses the other's databases.

Lookup (:meth:`RelatedPagesDB.related`): normalise → partition → binary search over a
read-only ``mmap`` of that partition (mapped lazily on first use, then kept).  The search
needs no index: it halves a byte range, backs up from the midpoint to the start of its
line, compares that line's URL bytes with the key, and decodes JSON only for the hit.
About ``log2(records in the partition) + 1`` probes, each touching one or two pages.

Building (:func:`build_database`) streams the records: each goes, normalised and
encoded, to a spill file per partition; then one partition at a time is read back,
de-duplicated (the last record of a URL wins), sorted in memory and written.  Everything
happens in a temporary folder beside the target, every file and the folder are fsynced,
``manifest.json`` is written last, and the folder is renamed into place.  An existing
database is replaced atomically — on Linux the two folders are exchanged in one
``renameat2(RENAME_EXCHANGE)``; elsewhere the old one is renamed away and the new one
renamed in — and then deleted; a failed build leaves the old database untouched.

Verification when a reader opens a database (:class:`Verify`):

``sizes`` (default)
    ``manifest.json`` is read and checked (format, version, one entry per partition,
    record counts add up to the total), every partition file is opened and its size
    must equal the manifest's.  O(partitions) system calls: opening takes about a
    millisecond whatever the database's size.  This catches a missing manifest, a
    missing or truncated partition, a partial copy, a wrong version; a flipped byte is
    caught only if it breaks the line structure or the hit's JSON (the lookup then
    raises :class:`DatabaseError`).  The atomic build makes these the failures a
    database in place can have; checksums are for copies and bit rot: use ``full``
    (or ``lazy``) after copying a database between machines.
``lazy``
    ``sizes`` at open, then the sha256 and record count of each partition the first
    time a lookup needs it, before answering from it.
``full``
    ``sizes`` plus the sha256 and record count of every partition at open (reads the
    whole database once).

A reader opens the manifest and all partition files through one descriptor of the
folder when it opens the database (it maps them lazily), so it stays on the generation
it verified: a later rebuild renames and deletes those files, but never changes what an
open reader sees, and a reader opening during a rebuild gets the old or the new
database, never a mix.  Once a reader has found corruption
it refuses every further lookup.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import json
import logging
import math
import mmap
import os
import re
import secrets
import shutil
import threading
import time
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import IO, Any, Generic, NoReturn, Self, TypeVar

from filters.spelling import spelling_variants
from filters.urls import normalise_url
from relatedpages.scoring.fallback import fill_related

logger = logging.getLogger(__name__)

PARTITIONS = 64
FORMAT_VERSION = 1
#: The ``format`` field of every manifest: tells a database from any other folder.
FORMAT_NAME = "relatedpages-db"
MANIFEST_NAME = "manifest.json"
#: The related-pages algorithms (what ``relatedpages build`` and the pipeline can run).
ALGORITHMS = ("block", "cocitation")
#: The algorithm name of a link index (relatedpages.store.linkindex): one link record per node.
LINKS_ALGORITHM = "links"
#: Every algorithm :func:`build_database` accepts.
DATABASE_ALGORITHMS = (*ALGORITHMS, LINKS_ALGORITHM)
#: The manifest's ``key`` line for databases whose keys are normalised URLs, and for
#: databases whose keys are stored as given (node ids of an edge list).
KEY_NORMALISED_URL = "filters.urls.normalise_url (default options), UTF-8"
KEY_AS_GIVEN = "as given (non-empty, no whitespace), UTF-8"
#: Bytes read at a time when checksumming a partition.
_CHUNK = 1 << 20
#: Write buffer of each spill file during a build (64 of them are open at once).
_SPILL_BUFFER = 1 << 16
_PARTITION_NAME = re.compile(r"part-[0-9]{5}")
_MAX_PARTITIONS = 100_000  # five digits in the file names
_OPEN_ATTEMPTS = 3


class Verify(str, Enum):
    """How much of a database a reader checks before answering (see the module doc)."""

    SIZES = "sizes"
    LAZY = "lazy"
    FULL = "full"


class DatabaseProblem(str, Enum):
    """Why a folder cannot be read as a related-pages database."""

    NOT_A_DATABASE = "not a relatedpages database"
    UNSUPPORTED_VERSION = "unsupported database version"
    PARTIAL = "partial database"
    CORRUPT = "corrupt database"
    COLLAPSED = "collapsed database not installed"


class DatabaseError(Exception):
    """A database that must not be answered from, with a one-line message.

    ``str(error)`` reads like ``corrupt database: part-00017 checksum mismatch
    (/srv/related)``; :attr:`problem` is the kind, :attr:`path` the database folder.
    """

    def __init__(self, problem: DatabaseProblem, path: Path, detail: str, *, path_first: bool = False):
        self.problem = problem
        self.path = path
        self.detail = detail
        message = f"{problem.value}: {path}: {detail}" if path_first else f"{problem.value}: {detail} ({path})"
        super().__init__(message)


class RecordRejection(str, Enum):
    """Why an input record of :func:`build_database` is not in the database."""

    UNUSABLE_URL = "unusable_url"
    """The page URL does not normalise (not http/https, no valid host …)."""
    MALFORMED_RELATED = "malformed_related"
    """The value is not a list of ``[url, finite score, [[site, ds], …]]``."""
    DUPLICATE_URL = "duplicate_url"
    """Superseded by a later record of the same normalised URL (the last one wins)."""
    MALFORMED_LINKS = "malformed_links"
    """(Link index) The value is not a link record ``{"out", "in", "crawled"}``."""
    UNUSABLE_KEY = "unusable_key"
    """(Keys as given) The key is not a non-empty string without whitespace."""
    DUPLICATE_KEY = "duplicate_key"
    """(Keys as given) Superseded by a later record of the same key (the last one wins)."""
    FALLBACK_SUPERSEDED = "fallback_superseded"
    """A fallback list (``build_database(fallback=…)``) for a page the main algorithm
    answers, that added nothing to the main list (it was full, or had every result)."""


@dataclass(frozen=True, slots=True)
class Related:
    """One related page of a lookup: its URL, score and evidence ``(citing site, DS_d)`` or
    ``(citing site, DS_d, citing page, anchor text)``."""

    url: str
    score: float
    evidence: tuple[tuple[Any, ...], ...]
    fallback: str | None = None  # the fallback algorithm that answered, if not the database's


@dataclass(frozen=True)
class PartitionInfo:
    """A partition file as the manifest records it."""

    name: str
    records: int
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """The contents of ``manifest.json`` (read-only)."""

    format_version: int
    algorithm: str
    parameters: Mapping[str, Any]
    source: tuple[str, ...]
    built_at: str
    records: int
    partitions: tuple[PartitionInfo, ...]
    rejected: Mapping[str, int]
    key: str = KEY_NORMALISED_URL

    @property
    def bytes(self) -> int:
        """Total size of the partition files."""
        return sum(part.bytes for part in self.partitions)

    def to_json(self) -> dict[str, Any]:
        """The manifest as written to ``manifest.json``."""
        return {
            "format": FORMAT_NAME,
            "format_version": self.format_version,
            "algorithm": self.algorithm,
            "parameters": dict(self.parameters),
            "source": list(self.source),
            "built_at": self.built_at,
            "records": self.records,
            "key": self.key,
            "partitioning": f"zlib.crc32(key) % {len(self.partitions)}",
            "line": "key<TAB>json<LF>, sorted by key bytes, keys unique",
            "rejected": dict(self.rejected),
            "partitions": [
                {"name": p.name, "records": p.records, "bytes": p.bytes, "sha256": p.sha256}
                for p in self.partitions
            ],
        }


@dataclass(frozen=True)
class DatabaseSummary:
    """What :func:`build_database` did."""

    path: Path
    records: int  # records in the database
    read: int  # records read from the input
    rejected: Mapping[RecordRejection, int]  # every reason of this kind of database, zero included
    urls_normalised: int  # records kept whose URL was changed by normalisation
    partitions: int
    bytes: int  # size of the partition files
    seconds: float
    fallback_records: int = 0  # records answered by the fallback (marked in their entries)
    filled_records: int = 0  # records of the main algorithm filled from the fallback

    def count(self, reason: RecordRejection) -> int:
        return self.rejected.get(reason, 0)


def partition_name(index: int) -> str:
    """File name of partition ``index``.

    >>> partition_name(17)
    'part-00017'
    """
    return f"part-{index:05d}"


def partition_of(url: str, partitions: int = PARTITIONS) -> int:
    """The partition of an already normalised URL: CRC-32 of its UTF-8 bytes, modulo.

    Stable across processes, machines and languages (unlike ``hash()``).

    >>> partition_of("http://example.com/")
    9
    >>> partition_of("http://example.com/", 4)
    1
    """
    return zlib.crc32(url.encode("utf-8")) % partitions


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
) -> DatabaseSummary:
    """Write ``records`` (page URL, related list) as a database at ``path``, atomically.

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
    _check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    building = path.parent / f".{path.name}.building-{os.getpid()}-{secrets.token_hex(4)}"
    building.mkdir()
    try:
        check, malformed = VALUE_CHECKS[algorithm]
        unusable, duplicate = (
            (RecordRejection.UNUSABLE_URL, RecordRejection.DUPLICATE_URL) if normalise_keys
            else (RecordRejection.UNUSABLE_KEY, RecordRejection.DUPLICATE_KEY)
        )
        counts = {unusable: 0, malformed: 0, duplicate: 0}
        fallback_kept = filled = 0
        if fallback is not None:
            if algorithm not in ALGORITHMS:
                raise ValueError(f"a fallback answers related-pages lookups, not {algorithm!r}")
            counts[RecordRejection.FALLBACK_SUPERSEDED] = 0
            _spill(
                _marked(fallback, fallback_source), building, partitions, counts, check=check,
                malformed=malformed, unusable=unusable, normalise_keys=normalise_keys,
                folder=_FALLBACK_SPILL)
        normalised, read = _spill(
            records, building, partitions, counts, check=check, malformed=malformed,
            unusable=unusable, normalise_keys=normalise_keys,
        )
        parts = []
        for index in range(partitions):
            info, duplicates, superseded, from_fallback, topped_up = _write_partition(
                building, index, fill_to, fallback_source)
            parts.append(info)
            counts[duplicate] += duplicates
            fallback_kept += from_fallback
            filled += topped_up
            if superseded:
                counts[RecordRejection.FALLBACK_SUPERSEDED] += superseded
        (building / "spill").rmdir()
        if (building / _FALLBACK_SPILL).exists():
            (building / _FALLBACK_SPILL).rmdir()
        manifest = Manifest(
            format_version=FORMAT_VERSION,
            algorithm=algorithm,
            parameters=dict(parameters),
            source=tuple(source),
            built_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            records=sum(part.records for part in parts),
            partitions=tuple(parts),
            rejected={reason.value: count for reason, count in counts.items()},
            key=KEY_NORMALISED_URL if normalise_keys else KEY_AS_GIVEN,
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
        problems = check_database(building)  # what was written, read back before the swap
        if problems:
            raise DatabaseError(DatabaseProblem.CORRUPT, path,
                                f"{problems[0]} after writing; the database in place is unchanged")
        _install(building, path)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
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


def _spill(
    records: Iterable[tuple[str, Any]],
    building: Path,
    partitions: int,
    counts: dict[RecordRejection, int],
    *,
    check: Callable[[Any], bool],
    malformed: RecordRejection,
    unusable: RecordRejection,
    normalise_keys: bool,
    folder: str = "spill",
) -> tuple[int, int]:
    """Append every usable record to its partition's spill file, counting rejections in
    ``counts``; (records whose URL normalisation changed, records read)."""
    read = normalised_count = 0
    spill = building / folder
    spill.mkdir()
    handles = [open(spill / partition_name(i), "wb", buffering=_SPILL_BUFFER) for i in range(partitions)]
    dumps = _DUMPS
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
            if not check(related):
                counts[malformed] += 1
                continue
            if key != url:
                normalised_count += 1
            key_bytes = key.encode("utf-8")
            handles[zlib.crc32(key_bytes) % partitions].write(
                b"%s\t%s\n" % (key_bytes, dumps(related).encode("utf-8"))
            )
    finally:
        for handle in handles:
            handle.close()
    return normalised_count, read


_WHITESPACE = re.compile(r"\s")
#: How a value is stored: compact JSON, UTF-8 as is.
_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def _is_related_list(value: Any) -> bool:
    """``[[url: str, score: finite number, [[site: str, ds: finite number], …]], …]``; an
    evidence item may add the citing page and the anchor text (both str); an entry answered
    by a fallback has a fourth element, the fallback's name (a str)."""
    if not isinstance(value, (list, tuple)):
        return False
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) not in (3, 4):
            return False
        if len(item) == 4 and not isinstance(item[3], str):
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
                     ) -> tuple[PartitionInfo, int, int, int, int]:
    """Sort one spill file (after its fallback spill file, if any) into its partition file,
    filling main lists shorter than ``fill_to`` from the fallback's; (its manifest entry,
    duplicates, fallback records superseded, fallback records kept whole, main records
    filled)."""
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
        for key in sorted(both):
            main_line = by_key[key]
            fallback_line = fallback_lines[key]
            main = json.loads(main_line[len(key) + 1:])
            if len(main) >= fill_to:
                continue
            merged = fill_related(key.decode("utf-8"), main,
                                  json.loads(fallback_line[len(key) + 1:]), fill_to, source)
            if len(merged) > len(main):
                filled += 1
                by_key[key] = b"%s\t%s" % (key, _DUMPS(merged).encode("utf-8"))
    superseded = len(both) - filled
    del fallback_lines
    digest = hashlib.sha256()
    size = 0
    with open(building / name, "wb") as handle:
        batch: list[bytes] = []
        for key in sorted(by_key):
            batch.append(by_key[key])
            if len(batch) == 4096:
                size += _write_lines(handle, digest, batch)
                batch = []
        size += _write_lines(handle, digest, batch)
        handle.flush()
        os.fsync(handle.fileno())
    spill.unlink()
    return (PartitionInfo(name, len(by_key), size, digest.hexdigest()), duplicates, superseded,
            fallback_kept, filled)


def _write_lines(handle: IO[bytes], digest: Any, lines: list[bytes]) -> int:
    if not lines:
        return 0
    data = b"\n".join(lines) + b"\n"
    digest.update(data)
    handle.write(data)
    return len(data)


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
        if entry.name != MANIFEST_NAME and not _PARTITION_NAME.fullmatch(entry.name)
    )
    if strangers:
        raise DatabaseError(
            DatabaseProblem.NOT_A_DATABASE, path,
            f"holds other files ({', '.join(strangers[:3])}{' …' if len(strangers) > 3 else ''}): "
            "refusing to replace it",
            path_first=True,
        )


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


# ---------------------------------------------------------------------------------------
# Reading


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """The checked manifest of the database at ``path`` (partition files not looked at)."""
    path = Path(path)
    folder = _open_folder(path)
    try:
        return _load_manifest(path, folder)
    finally:
        os.close(folder)


def _open_folder(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, "no such folder", path_first=True) from None
    except NotADirectoryError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, "not a folder", path_first=True) from None


def _load_manifest(path: Path, folder: int) -> Manifest:
    try:
        fd = os.open(MANIFEST_NAME, os.O_RDONLY, dir_fd=folder)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, f"no {MANIFEST_NAME}", path_first=True) from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatabaseError(DatabaseProblem.CORRUPT, path, f"{MANIFEST_NAME} is not valid JSON ({error})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise DatabaseError(
            DatabaseProblem.NOT_A_DATABASE, path, f"{MANIFEST_NAME} is not a relatedpages manifest",
            path_first=True,
        )
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise DatabaseError(
            DatabaseProblem.UNSUPPORTED_VERSION, path,
            f"format version {version!r}, this reader reads version {FORMAT_VERSION}",
        )
    try:
        return _manifest_from_json(raw)
    except (KeyError, TypeError, ValueError) as error:
        raise DatabaseError(DatabaseProblem.CORRUPT, path, f"{MANIFEST_NAME}: {error}") from None


def _open_generation(path: Path) -> tuple[Manifest, list[IO[bytes]]]:
    """The manifest and the open partition files of one and the same database.

    Everything is opened relative to one descriptor of the folder, so a rebuild that
    swaps the folder meanwhile cannot mix two generations; if the folder was swapped
    (and the old one is being deleted) while we opened it, start again on the new one.
    """
    for attempt in range(_OPEN_ATTEMPTS):
        folder = _open_folder(path)
        files: list[IO[bytes]] = []
        try:
            manifest = _load_manifest(path, folder)
            for part in manifest.partitions:
                files.append(_open_partition(path, folder, part))
            return manifest, files
        except DatabaseError:
            for handle in files:
                handle.close()
            if attempt + 1 < _OPEN_ATTEMPTS and _swapped(path, folder):
                logger.info("%s was replaced while being opened; opening the new database", path)
                continue
            raise
        finally:
            os.close(folder)
    raise AssertionError("unreachable")


def _swapped(path: Path, folder: int) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return True
    then = os.fstat(folder)
    return (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino)


def _open_partition(path: Path, folder: int, part: PartitionInfo) -> IO[bytes]:
    try:
        fd = os.open(part.name, os.O_RDONLY, dir_fd=folder)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.PARTIAL, path, f"{part.name} missing") from None
    handle = os.fdopen(fd, "rb", buffering=0)
    size = os.fstat(fd).st_size
    if size != part.bytes:
        handle.close()
        kind = DatabaseProblem.PARTIAL if size < part.bytes else DatabaseProblem.CORRUPT
        raise DatabaseError(kind, path, f"{part.name} has {size} bytes, the manifest says {part.bytes}")
    return handle


def _manifest_from_json(raw: dict[str, Any]) -> Manifest:
    def integer(value: Any, what: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{what} is not a count: {value!r}")
        return value

    parts = []
    for index, entry in enumerate(raw["partitions"]):
        name = entry["name"]
        if name != partition_name(index):
            raise ValueError(f"partition {index} is named {name!r}")
        sha256 = entry["sha256"]
        if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise ValueError(f"{name}: bad sha256 {sha256!r}")
        parts.append(PartitionInfo(
            name, integer(entry["records"], f"{name} records"), integer(entry["bytes"], f"{name} bytes"), sha256,
        ))
    if not 1 <= len(parts) < _MAX_PARTITIONS:
        raise ValueError(f"{len(parts)} partitions")
    records = integer(raw["records"], "records")
    if records != sum(part.records for part in parts):
        raise ValueError(f"records {records} is not the sum of the partitions' records")
    algorithm, parameters, source, built_at = raw["algorithm"], raw["parameters"], raw["source"], raw["built_at"]
    if not isinstance(algorithm, str) or not isinstance(parameters, dict) or not isinstance(built_at, str):
        raise ValueError("algorithm, parameters or built_at of the wrong type")
    if not isinstance(source, list) or not all(isinstance(item, str) for item in source):
        raise ValueError("source is not a list of strings")
    rejected = raw.get("rejected", {})
    key = raw.get("key", KEY_NORMALISED_URL)
    if not isinstance(key, str):
        raise ValueError("key of the wrong type")
    return Manifest(
        format_version=raw["format_version"],
        algorithm=algorithm,
        parameters=MappingProxyType(parameters),
        source=tuple(source),
        built_at=built_at,
        records=records,
        partitions=tuple(parts),
        rejected=MappingProxyType(dict(rejected)),
        key=key,
    )


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
        self._manifest, self._files = _open_generation(self._path)
        self._count = len(self._manifest.partitions)
        self._maps: list[mmap.mmap | None] = [None] * self._count
        self._ready = [False] * self._count
        self._lock = threading.Lock()
        self._failure: DatabaseError | None = None
        self._closed = False
        try:
            if self._manifest.algorithm not in self.ACCEPTS:
                raise DatabaseError(
                    DatabaseProblem.NOT_A_DATABASE, self._path,
                    f"holds algorithm {self._manifest.algorithm!r}; {type(self).__name__} reads "
                    f"{', '.join(self.ACCEPTS)}",
                    path_first=True,
                )
            if self._verify is Verify.FULL:
                for index in range(self._count):
                    self._check_contents(index)
        except BaseException:
            self.close()
            raise

    # -- public API ----------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._path

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
        For readers that load everything at once (``linkindex.load_link_graph``)."""
        mapped = self._partition(index)
        return b"" if mapped is None else mapped[:]

    def records(self) -> Iterator[tuple[str, V]]:
        """Every record, partition by partition, each partition in key order."""
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

    def check(self) -> list[str]:
        """Check every partition in full, whatever ``verify`` was: its size, sha256 and
        record count against the manifest, and that its keys are unique, in byte order and
        in their own partition (CRC-32 modulo the partition count).  Every fault found,
        one line each naming its partition (``part-00017 checksum mismatch``); an empty
        list when the database is sound.  (``relatedpages verify``.)"""
        problems: list[str] = []
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
        if not self._manifest.partitions[index].bytes:
            return []
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
        for handle in self._files:
            handle.close()
        self._files = []

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
        """The partition's map (None when empty), mapped and checked on first use."""
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise ValueError(f"lookup on a closed {type(self).__name__}")
        if self._ready[index]:
            return self._maps[index]
        with self._lock:
            if not self._ready[index]:
                if self._verify is Verify.LAZY:
                    self._check_contents(index)
                part = self._manifest.partitions[index]
                if part.bytes:
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
        return self._maps[index]

    def _check_contents(self, index: int) -> None:
        """sha256 and line count of a partition against the manifest."""
        part = self._manifest.partitions[index]
        digest = hashlib.sha256()
        lines = 0
        fd = self._files[index].fileno()
        offset = 0
        last = b""
        while True:
            chunk = os.pread(fd, _CHUNK, offset)
            if not chunk:
                break
            digest.update(chunk)
            lines += chunk.count(b"\n")
            offset += len(chunk)
            last = chunk[-1:]
        if offset != part.bytes:
            self._corrupt(index, f"has {offset} bytes, the manifest says {part.bytes}")
        if digest.hexdigest() != part.sha256:
            self._corrupt(index, "checksum mismatch")
        if lines != part.records or (offset and last != b"\n"):
            self._corrupt(index, f"has {lines} lines, the manifest says {part.records} records")

    def _corrupt(self, index: int, detail: str) -> NoReturn:
        """Record and raise: this reader answers nothing more."""
        error = DatabaseError(DatabaseProblem.CORRUPT, self._path, f"{partition_name(index)} {detail}")
        self._failure = error
        logger.error("%s", error)
        raise error


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


class _StoredDB(PartitionedDB[bytes]):
    """Any database, values undecoded: what :func:`check_database` reads."""

    def _decode_value(self, data: bytes) -> bytes:
        return data


def check_database(path: str | os.PathLike[str]) -> list[str]:
    """:meth:`PartitionedDB.check` of the database at ``path``, whatever its algorithm: every
    fault, one line each (empty: sound); a folder that does not open as a database is one
    fault (why).  ``relatedpages verify`` and every build run it."""
    try:
        with _StoredDB(path) as database:
            return database.check()
    except DatabaseError as error:
        return [str(error)]


class RelatedPagesDB(PartitionedDB[list[Related]]):
    """A read-only related-pages database; safe to share between threads.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = build_database(
    ...     [("http://a.example/", [["http://b.example/", 5.25, [["hub.example", 3.0]]]])],
    ...     folder + "/db", algorithm="block", parameters={}, source=["doctest"], partitions=4)
    >>> with RelatedPagesDB(folder + "/db") as db:
    ...     db.related("HTTP://A.example:80/index.html"), db.related("http://c.example/")
    ([Related(url='http://b.example/', score=5.25, evidence=(('hub.example', 3.0),), fallback=None)], None)
    >>> shutil.rmtree(folder)
    """

    ACCEPTS = ALGORITHMS

    def related(self, url: str) -> list[Related] | None:
        """The related pages of ``url``, best first; None when the URL is not in the database.

        ``url`` is normalised first (:func:`filters.urls.normalise_url`); a URL that does
        not normalise raises ``ValueError``.  Raises :class:`DatabaseError` when the
        partition it needs turns out to be corrupt.
        """
        key = normalise_url(url)
        if key is None:
            raise ValueError(f"not a web page URL: {url!r}")
        return self._lookup(key.encode("utf-8"))

    def find(self, url: str) -> tuple[str, list[Related]] | None:
        """(the stored URL that matched, its related pages) for ``url`` under any of its
        spellings (:func:`filters.spelling.spelling_variants`: the normalised URL first,
        then trailing slash, ``http``/``https`` and ``www.``), or ``None``.

        Raises ``ValueError`` for a URL that does not normalise, :class:`DatabaseError`
        for a corrupt partition.
        """
        key = normalise_url(url)
        if key is None:
            raise ValueError(f"not a web page URL: {url!r}")
        for spelling in spelling_variants(key):
            found = self._lookup(spelling.encode("utf-8"))
            if found is not None:
                return spelling, found
        return None

    def _decode_value(self, data: bytes) -> list[Related]:
        return [
            Related(entry[0], float(entry[1]),
                    tuple((item[0], float(item[1]), *item[2:]) for item in entry[2]),
                    entry[3] if len(entry) == 4 else None)
            for entry in json.loads(data)
        ]
