"""The related-pages database: hash-partitioned, sorted, one binary search per lookup.

The output of ``jobs.related`` (or ``jobs.cocitation``) — one record per page, ``url →
[[related_url, score, [[citing_site, ds], …]], …]`` — is written once by
:func:`relatedpages.store.dbbuild.build_database` and then read by :class:`RelatedPagesDB`,
which answers "the related pages of URL u" with one lookup (DESIGN.md, "Related-pages
database").

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

Building (:func:`~relatedpages.store.dbbuild.build_database`) streams the records: each
goes, normalised and encoded, to a spill file per partition; then one partition at a time
is read back, de-duplicated (the last record of a URL wins), sorted in memory and written.
Everything happens in a temporary folder beside the target, every file and the folder are
fsynced, ``manifest.json`` is written last, and the folder is renamed into place.  An
existing database is replaced atomically — on Linux the two folders are exchanged in one
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
folder when it opens the database (:mod:`relatedpages.store.dbopen`; it maps them
lazily), so it stays on the generation
it verified: a later rebuild renames and deletes those files, but never changes what an
open reader sees, and a reader opening during a rebuild gets the old or the new
database, never a mix.  Once a reader has found corruption
it refuses every further lookup.
"""
from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import threading
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, NoReturn, Self, TypeVar

from filters.spelling import spelling_variants
from filters.urls import normalise_url

# The format lives in a module of its own; its public names are this module's too (the
# import path every user and the README knows).  The build (relatedpages.store.dbbuild)
# imports this module, to read back what it wrote: never the other way round.
from relatedpages.store.dbformat import (  # noqa: F401
    _CHUNK,
    ALGORITHMS,
    DATABASE_ALGORITHMS,
    FORMAT_NAME,
    FORMAT_VERSION,
    KEY_AS_GIVEN,
    KEY_NORMALISED_URL,
    LINKS_ALGORITHM,
    MANIFEST_NAME,
    PARTITIONS,
    DatabaseError,
    DatabaseProblem,
    DatabaseSummary,
    Manifest,
    PartitionInfo,
    RecordRejection,
    Related,
    Verify,
    partition_name,
    partition_of,
)
from relatedpages.store.dbopen import _open_generation

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
        For readers that load everything at once (``linkload.load_link_graph``)."""
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

    >>> import shutil, tempfile
    >>> from relatedpages.store.dbbuild import build_database
    >>> folder = tempfile.mkdtemp()
    >>> _ = build_database(
    ...     [("http://a.example/", [["http://b.example/", 5.25, [["hub.example", 3.0]]]])],
    ...     folder + "/db", algorithm="block", parameters={}, source=["doctest"], partitions=4)
    >>> with RelatedPagesDB(folder + "/db") as db:
    ...     db.related("HTTP://A.example:80/index.html"), db.related("http://c.example/")
    ([Related(url='http://b.example/', score=5.25, evidence=(('hub.example', 3.0),), fallback=None, via=None)], None)
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

    def answer(self, query: str, limit: int | None = None) -> dict[str, Any]:
        """The answer to one lookup as ``relatedpages query --json`` prints it (and
        ``relatedpages serve`` returns it): the query, its normalised URL, whether it was
        found, the stored spelling that matched, and at most ``limit`` results with their
        evidence (``fallback`` on entries a fallback answered or filled; ``via``, the
        page of the same site whose list answered, on the site fallback's).

        Raises ``ValueError`` for a URL that does not normalise.

        >>> import shutil, tempfile
        >>> from relatedpages.store.dbbuild import build_database
        >>> folder = tempfile.mkdtemp()
        >>> _ = build_database([("https://a.example/", [["https://b.example/", 2.0, [["hub.example", 1.0]]]])],
        ...                    folder + "/db", algorithm="block", parameters={}, source=[], partitions=2)
        >>> with RelatedPagesDB(folder + "/db") as db:
        ...     db.answer("http://www.a.example")
        {'query': 'http://www.a.example', 'url': 'http://www.a.example/', 'found': True, 'matched': 'https://a.example/', 'related': [{'url': 'https://b.example/', 'score': 2.0, 'evidence': [['hub.example', 1.0]]}]}
        >>> shutil.rmtree(folder)
        """
        url = normalise_url(query)
        if url is None:
            raise ValueError(f"not a web page URL: {query!r}")
        found = self.find(url)
        matched, related = found if found is not None else (None, None)
        return {
            "query": query, "url": url, "found": related is not None, "matched": matched,
            "related": [{"url": r.url, "score": r.score, "evidence": [list(e) for e in r.evidence],
                         **({"fallback": r.fallback} if r.fallback else {}),
                         **({"via": r.via} if r.via else {})}
                        for r in (related or [])[:limit]],
        }

    def _decode_value(self, data: bytes) -> list[Related]:
        return [
            Related(entry[0], float(entry[1]),
                    tuple((item[0], float(item[1]), *item[2:]) for item in entry[2]),
                    entry[3] if len(entry) >= 4 else None, entry[4] if len(entry) >= 5 else None)
            for entry in json.loads(data)
        ]
