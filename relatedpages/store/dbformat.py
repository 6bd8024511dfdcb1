"""The database's on-disk format in code: partitions, names, the manifest, the errors a
reader or a build reports, and the related-list value (the format itself is described
in :mod:`relatedpages.store.db`)."""
from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any


logger = logging.getLogger(__name__)

PARTITIONS = 64


class FormatVersion(IntEnum):
    """The on-disk formats a reader reads (the manifest's ``format_version``)."""

    LINES = 1
    """``key<TAB>json<LF>`` lines, binary-searched over a map (the link index's format)."""
    BLOCKS = 2
    """zstd blocks of lines whose values hold string ids, a sparse index per partition and
    one string table (:mod:`relatedpages.store.dbblocks`, :mod:`relatedpages.store.dbstrings`);
    related-pages databases only."""


#: The format ``build_database`` writes for related lists (a link index keeps ``LINES``).
FORMAT_VERSION = FormatVersion.BLOCKS
#: The file of a ``BLOCKS`` database that holds every string of its values once.
STRINGS_NAME = "strings"
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
#: How a value is stored: compact JSON, UTF-8 as is (the HTTP API's answers splice these
#: bytes, so they must stay what this encoder writes).
COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
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
    NO_SPACE = "database not written"


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
    via: str | None = None  # the page whose list answered (the site fallback: "site")


@dataclass(frozen=True)
class PartitionInfo:
    """A partition file as the manifest records it."""

    name: str
    records: int
    bytes: int
    sha256: str


@dataclass(frozen=True)
class StringsInfo:
    """The string table of a ``BLOCKS`` database as the manifest records it."""

    count: int
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
    strings: StringsInfo | None = None  # format BLOCKS only

    @property
    def bytes(self) -> int:
        """Total size of the data files: the partitions (and the string table)."""
        return sum(part.bytes for part in self.partitions) + (self.strings.bytes if self.strings else 0)

    def to_json(self) -> dict[str, Any]:
        """The manifest as written to ``manifest.json``."""
        if self.format_version == FormatVersion.BLOCKS:
            layout = {
                "line": "key<TAB>json<LF>, sorted by key bytes, keys unique; every string of the "
                        "json an id into the string table, every number a whole count of "
                        "millionths where that is exact",
                "blocks": "zstd frames (content size, content checksum) of whole lines, then "
                          "the sparse index (a zstd frame of JSON [offsets, raw sizes, first "
                          "keys]), then 16 bytes: the index's offset (u64 LE) and b'RPDBIDX2'",
            }
        else:
            layout = {"line": "key<TAB>json<LF>, sorted by key bytes, keys unique"}
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
            **layout,
            "rejected": dict(self.rejected),
            "partitions": [
                {"name": p.name, "records": p.records, "bytes": p.bytes, "sha256": p.sha256}
                for p in self.partitions
            ],
            **({"strings": {"name": STRINGS_NAME, "count": self.strings.count, "bytes": self.strings.bytes,
                            "sha256": self.strings.sha256}} if self.strings else {}),
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
    bytes: int  # size of the data files (partitions, and the string table of format 2)
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
