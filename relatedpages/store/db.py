"""The related-pages database: hash-partitioned, sorted, one search per lookup.

The output of ``jobs.related`` (or ``jobs.cocitation``) — one record per page, ``url →
[[related_url, score, [[citing_site, ds], …]], …]`` — is written once by
:func:`relatedpages.store.dbbuild.build_database` and then read by :class:`RelatedPagesDB`,
which answers "the related pages of URL u" with one lookup (DESIGN.md, "Related-pages
database").

On disk, a database is a folder::

    manifest.json     format, version, algorithm, parameters, source, build time, and per
                      data file: name, record count, byte size, sha256
    part-00000        the records of partition 0, sorted by key bytes, keys unique
    …
    part-00063
    strings           (format 2) every string of the values, once

* the key is the page URL normalised by :func:`filters.urls.normalise_url` (default
  options).  A normalised URL never holds a tab, a line break or a non-ASCII character
  (they are removed or percent-encoded), so a line needs no escaping; the sort is on
  bytes anyway, so a reader in any language can search it.
* The partition of a URL is ``zlib.crc32(url.encode("utf-8")) % partitions``
  (:func:`partition_of`) — never Python's ``hash()``, which is salted per process.
* Format 1 (:attr:`FormatVersion.LINES`): a partition is ``url<TAB>json<LF>`` lines, the
  json the related list exactly as the jobs emit it (compact separators, UTF-8).  A
  lookup binary-searches a read-only ``mmap`` of the partition: it halves a byte range,
  backs up to the start of a line, compares its URL; ``log2(records) + 1`` probes.
* Format 2 (:attr:`FormatVersion.BLOCKS`, what a build writes by default): the same
  lines, their values holding string ids and millionths
  (:mod:`relatedpages.store.dbstrings`), in zstd blocks with a sparse index at the end of
  each partition (:mod:`relatedpages.store.dbblocks`).  A lookup reads one block (one
  ``pread``), decompresses it and finds the line; ~240 bytes a record on the real pages,
  against ~2,200 in format 1.

The link index (algorithm ``links``, :mod:`relatedpages.store.linkindex`) keeps format 1:
one record per node, ``key → {"out": [[href, anchor, block], …], "in": [source, …],
"crawled": bool}``; its keys are normalised URLs, or node ids stored as given
(``build_database(..., normalise_keys=False)``; the manifest's ``key`` says which).
:class:`~relatedpages.store.dbread.PartitionedDB` holds the lookup machinery of both
formats; :class:`RelatedPagesDB` and ``linkindex.LinkIndexDB`` decode their values, and
each refuses the other's databases.

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
    record counts add up to the total), every data file is opened and its size
    must equal the manifest's.  O(partitions) system calls: opening takes about a
    millisecond whatever the database's size.  This catches a missing manifest, a
    missing or truncated partition, a partial copy, a wrong version; a flipped byte is
    caught in format 1 only if it breaks the line structure or the hit's JSON, in format
    2 whenever it is in a block the lookup reads (zstd's checksum of every block; the
    lookup then raises :class:`DatabaseError`), not in the string table.  The atomic build makes these the failures a
    database in place can have; checksums are for copies and bit rot: use ``full``
    (or ``lazy``) after copying a database between machines.
``lazy``
    ``sizes`` at open, then the sha256 and record count of each partition (and of the
    string table) the first time a lookup needs it, before answering from it.
``full``
    ``sizes`` plus the sha256 and record count of every partition at open (reads the
    whole database once).

A reader opens the manifest and all partition files through one descriptor of the
folder when it opens the database (:mod:`relatedpages.store.dbopen`; it maps them
lazily), so it stays on the generation
it verified: a later rebuild renames and deletes those files, but never changes what an
open reader sees, and a reader opening during a rebuild gets the old or the new
database, never a mix.  Once a reader has found a partition corrupt it refuses every
further lookup in that partition (:meth:`PartitionedDB.failures` lists them) and keeps
answering from the others, each checked on its own; a corrupt string table stops every
lookup.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from filters.spelling import spelling_variants
from filters.urls import normalise_url

# The format lives in a module of its own; its public names are this module's too (the
# import path every user and the README knows).  The build (relatedpages.store.dbbuild)
# imports this module, to read back what it wrote: never the other way round.
from relatedpages.store.dbformat import (  # noqa: F401
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
    FormatVersion,
    Manifest,
    PartitionInfo,
    RecordRejection,
    Related,
    STRINGS_NAME,
    StringsInfo,
    Verify,
    partition_name,
    partition_of,
)
# The lookup machinery, shared with the link index, lives in a module of its own.
from relatedpages.store.dbread import PartitionedDB  # noqa: F401
from relatedpages.store.dbstrings import MICRO

logger = logging.getLogger(__name__)


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

    def _decode_compact(self, data: bytes, string: Callable[[int], str]) -> list[Related]:
        # The lookups' inner loop: the format-2 list straight into Related objects, each
        # string from the reader's cache when it is there ("" is looked up again: harmless).
        recent = self._recent
        related = []
        for entry in json.loads(data):
            evidence: list[tuple[Any, ...]] = []
            for item in entry[2]:
                weight = item[1]
                weight = weight / MICRO if weight.__class__ is int else float(weight)
                if len(item) == 4:
                    site, page, anchor = item[0], item[2], item[3]
                    evidence.append((recent(site) or string(site), weight, recent(page) or string(page),
                                     recent(anchor) or string(anchor)))
                else:
                    evidence.append((string(item[0]), weight, *[string(text) for text in item[2:]]))
            url, score = entry[0], entry[1]
            related.append(Related(
                recent(url) or string(url), score / MICRO if score.__class__ is int else float(score),
                tuple(evidence), string(entry[3]) if len(entry) >= 4 else None,
                string(entry[4]) if len(entry) >= 5 else None))
        return related

    def _decode_value(self, data: bytes) -> list[Related]:
        return [
            Related(entry[0], float(entry[1]),
                    tuple((item[0], float(item[1]), *item[2:]) for item in entry[2]),
                    entry[3] if len(entry) >= 4 else None, entry[4] if len(entry) >= 5 else None)
            for entry in json.loads(data)
        ]
