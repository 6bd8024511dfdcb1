"""The connectivity server's store: a link index in the partitioned database format.

Dean & Henzinger's Companion and Cocitation run on a *connectivity server* that answers
"out-links of u" and "in-links of u" (DESIGN.md, "Baselines").  Its on-disk form is a
database of :mod:`relatedpages.store.db` (64 crc32 partitions of sorted ``key<TAB>json`` lines,
manifest with sha256, atomic build) whose manifest algorithm is ``links`` and whose
parameters say what the keys are (``"keys": "url"`` or ``"id"``).  One record per node::

    key → {"out": [[href, anchor, block], …], "in": [source, …], "crawled": bool}

* ``out``: the node's out-links **in page order**, repeats kept (a page that links twice
  to a target has two entries: positions matter to the BF windows of D&H); ``anchor``
  is the anchor text (``""``: none), ``block`` the index of the link block on the page
  (``-1``: unknown, as in an edge list);
* ``in``: the distinct nodes linking to it, ascending (code points = UTF-8 bytes, the
  database's own key order); a page linking to itself is its own source;
* ``crawled``: its out-links are known (a crawled page, or a source of the edge list) —
  a node only ever seen as a link target has ``"out": [], "crawled": false``.

Every node that appears as a source or a target has a record, so ``in`` and ``out``
name only keys of the index.

Three ways in, one format:

* :func:`import_edge_list` — a plain edge list, ``source<TAB>target`` per line (spaces
  tolerated when there is no tab; ``#`` comments and blank lines skipped), ``.gz`` or
  plain.  Keys are URLs (normalised with :func:`filters.urls.normalise_url`, a field that
  does not normalise costs its edge, counted) or opaque node ids (as given).  ``auto``
  picks URLs when both fields of the first data line start with ``http://`` or
  ``https://``.  Edges keep the file's order per source; duplicate edges and self-loops
  are kept (the graph is stored as given; algorithms decide what they ignore).
* ``jobs.linkgraph`` (MapReduce) over segment records, then :func:`build_link_index`.
  Out-links are every block's links in block order, ``block`` = index of the block in
  the record; hrefs are re-normalised (segment records hold normalised URLs already; a
  link that does not normalise is counted and dropped).
* :func:`build_link_index_from_segments` — the same in memory: the oracle of the job's
  tests, and enough for small crawls.

Query-time form: :func:`load_link_graph` reads every partition into a
:class:`relatedpages.store.linkgraph.LinkGraph` (numpy CSR arrays).  Node numbers follow the
sorted keys — numerically when every key is a canonical decimal integer (so node ``i``
of ``cnr-2000`` is id ``"i"``), by code points otherwise — so a graph loaded from an
index does not depend on the partitioning.  :func:`graph_from_edge_list` builds the same
graph straight from an edge list (a numpy fast path for numeric ids) without a database.
"""
from __future__ import annotations

import gzip
import json
import logging
import os
import re
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from enum import Enum
from itertools import chain
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

import numpy as np

from filters.urls import normalise_url
from relatedpages.store.db import (
    LINKS_ALGORITHM,
    PARTITIONS,
    DatabaseError,
    DatabaseProblem,
    DatabaseSummary,
    PartitionedDB,
    Verify,
    partition_name,
)
from relatedpages.store.dbbuild import build_database, is_link_record
from relatedpages.store.linkgraph import Interner, KeyKind, LinkGraph

logger = logging.getLogger(__name__)

#: ``keys=`` of :func:`import_edge_list` and :func:`graph_from_edge_list`: decide from
#: the first data line.
AUTO_KEYS = "auto"
#: Block number of a link whose block is unknown (edge lists).
NO_BLOCK = -1
_WEB_PREFIXES = ("http://", "https://")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_NOT_DECIMAL_LINE = re.compile(rb"^(?!(?:0|[1-9][0-9]*)$)", re.MULTILINE)
_KEY = re.compile(rb"^([^\t\n]*)\t", re.MULTILINE)
_WHITESPACE = re.compile(r"\s")
# A line that is not "id id" with canonical decimal ids.  (Searched line by line: one
# fullmatch of a repeated group over millions of lines would stack ~1 GB in re.)
_NOT_NUMERIC_EDGE = re.compile(rb"^(?!(?:0|[1-9][0-9]*)[ \t]+(?:0|[1-9][0-9]*)[ \t\r]*$)", re.MULTILINE)
_COMMENT_OR_BLANK = re.compile(rb"^(?:[ \t\r]*|[ \t]*#[^\n]*)\n", re.MULTILINE)


class EdgeRejection(str, Enum):
    """Why an edge-list line gives no edge (``#`` comments and blank lines are not errors)."""

    MALFORMED_LINE = "malformed_line"
    """Not exactly two non-empty fields (tab-separated, or whitespace when no tab)."""
    UNDECODABLE_LINE = "undecodable_line"
    """Not UTF-8."""
    UNUSABLE_URL = "unusable_url"
    """(URL keys) A field that :func:`filters.urls.normalise_url` rejects."""
    UNUSABLE_ID = "unusable_id"
    """(Id keys) A field with whitespace inside (possible with tab-separated fields)."""


class LinkEvent(str, Enum):
    """Counters of building a link index from segment records (group ``linkgraph``)."""

    BAD_SEGMENT_RECORD = "bad_segment_record"
    """Not a segment record: no dict, no usable ``url``, ``blocks`` not a list of lists."""
    MALFORMED_LINK = "malformed_link"
    """A link that is not ``{"href": str, "anchor": str, …}``: dropped."""
    UNUSABLE_HREF = "unusable_href"
    """A link whose href does not normalise: dropped."""
    DUPLICATE_PAGE_RECORD = "duplicate_page_record"
    """Another record of the same page (several segment outputs): one is kept (see
    :func:`choose_out_links`)."""
    PAGES = "pages_indexed"
    LINKS = "links_indexed"
    NODES = "nodes_written"
    UNCRAWLED_NODES = "uncrawled_nodes_written"


@dataclass(frozen=True, slots=True)
class StoredLink:
    """One out-link as the index stores it."""

    href: str
    anchor: str
    block: int  # -1: unknown


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """The index's record of one node (see the module doc)."""

    out: tuple[StoredLink, ...]
    in_links: tuple[str, ...]
    crawled: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "out": [[link.href, link.anchor, link.block] for link in self.out],
            "in": list(self.in_links),
            "crawled": self.crawled,
        }

    @classmethod
    def from_json(cls, value: Any) -> LinkRecord:
        """Raises ``ValueError`` when ``value`` is not a link record."""
        if not is_link_record(value):
            raise ValueError("not a link record")
        return cls(
            tuple(StoredLink(href, anchor, block) for href, anchor, block in value["out"]),
            tuple(value["in"]),
            value["crawled"],
        )


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`import_edge_list` did."""

    edges_path: Path
    keys: KeyKind
    lines: int  # data lines read: every line but comments and blank lines
    edges: int  # edges in the index
    nodes: int
    skipped: Mapping[EdgeRejection, int]  # every reason, zero included
    database: DatabaseSummary
    seconds: float

    def count(self, reason: EdgeRejection) -> int:
        return self.skipped.get(reason, 0)


# ---------------------------------------------------------------------------------------
# Edge lists


class _EdgeFile:
    """An edge list opened for reading, gunzipped when it starts with the gzip magic
    bytes (whatever its name)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.raw: IO[bytes] = open(path, "rb")
        magic = self.raw.read(2)
        self.raw.seek(0)
        self.handle: gzip.GzipFile | IO[bytes] = (
            gzip.GzipFile(fileobj=self.raw, mode="rb") if magic == b"\x1f\x8b" else self.raw
        )

    def __enter__(self) -> gzip.GzipFile | IO[bytes]:
        return self.handle

    def __exit__(self, *exc: object) -> None:
        self.handle.close()
        self.raw.close()


def parse_edge_line(line: bytes) -> tuple[str, str] | EdgeRejection | None:
    """One line of an edge list: the two fields, a rejection, or None (comment, blank).

    >>> parse_edge_line(b"12\\t345\\n"), parse_edge_line(b"12 345"), parse_edge_line(b"# ids")
    (('12', '345'), ('12', '345'), None)
    >>> parse_edge_line(b"http://a.example/ x\\thttp://b.example/\\r\\n")
    ('http://a.example/ x', 'http://b.example/')
    >>> parse_edge_line(b"1 2 3"), parse_edge_line(b"1\\t\\t2"), parse_edge_line(b"\\xff\\t1")
    (<EdgeRejection.MALFORMED_LINE: 'malformed_line'>, <EdgeRejection.MALFORMED_LINE: 'malformed_line'>, <EdgeRejection.UNDECODABLE_LINE: 'undecodable_line'>)
    """
    stripped = line.strip()
    if not stripped or stripped.startswith(b"#"):
        return None
    fields = [field.strip() for field in stripped.split(b"\t")] if b"\t" in stripped else stripped.split()
    if len(fields) != 2 or not fields[0] or not fields[1]:
        return EdgeRejection.MALFORMED_LINE
    try:
        return fields[0].decode("utf-8"), fields[1].decode("utf-8")
    except UnicodeDecodeError:
        return EdgeRejection.UNDECODABLE_LINE


def read_edge_list(
    path: str | os.PathLike[str], skipped: MutableMapping[EdgeRejection, int] | None = None
) -> Iterator[tuple[str, str]]:
    """The ``(source, target)`` pairs of an edge list (``.gz`` or plain), fields as given.

    Each line that gives no edge is counted in ``skipped`` (when given) under its
    :class:`EdgeRejection`; ``#`` comments and blank lines are skipped silently.
    """
    with _EdgeFile(path) as handle:
        for line in handle:
            parsed = parse_edge_line(line)
            if parsed is None:
                continue
            if isinstance(parsed, EdgeRejection):
                if skipped is not None:
                    skipped[parsed] = skipped.get(parsed, 0) + 1
                continue
            yield parsed


def looks_like_urls(source: str, target: str) -> bool:
    """Both fields start with ``http://`` or ``https://`` (any case): an URL edge list.

    >>> looks_like_urls("http://a.example/", "HTTPS://b.example/x"), looks_like_urls("1", "http://b/")
    (True, False)
    """
    return all(field[:8].lower().startswith(_WEB_PREFIXES) for field in (source, target))


def detect_keys(path: str | os.PathLike[str]) -> KeyKind:
    """URL keys when the first data line's two fields look like http(s) URLs, else ids
    (also for a file without data lines)."""
    for source, target in read_edge_list(path):
        return KeyKind.URL if looks_like_urls(source, target) else KeyKind.ID
    return KeyKind.ID


def _key_kind(keys: KeyKind | str, path: str | os.PathLike[str]) -> KeyKind:
    if keys == AUTO_KEYS:
        return detect_keys(path)
    try:
        return KeyKind(keys)
    except ValueError:
        raise ValueError(f"keys must be {AUTO_KEYS!r}, 'url' or 'id', not {keys!r}") from None


class _Interned:
    """Names → node numbers in order of first appearance; edges as two int32 arrays."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self.sources = array("i")
        self.targets = array("i")
        self.pairs = 0  # pairs read, usable or not

    def node(self, name: str) -> int:
        found = self.index.get(name)
        if found is None:
            found = self.index[name] = len(self.names)
            self.names.append(name)
        return found


def _intern_edges(
    pairs: Iterable[tuple[str, str]], kind: KeyKind, skipped: MutableMapping[EdgeRejection, int]
) -> _Interned:
    """Edges with usable names (URLs normalised, each distinct raw name once)."""
    interned = _Interned()
    cache: dict[str, int | None] = {}  # raw field → node, None when unusable
    node, add_source, add_target = interned.node, interned.sources.append, interned.targets.append
    for source, target in pairs:
        interned.pairs += 1
        ends = []
        for field in (source, target):
            if field in cache:
                ends.append(cache[field])
                continue
            if kind is KeyKind.URL:
                name = normalise_url(field)
            else:
                name = None if _WHITESPACE.search(field) else field
            cache[field] = found = None if name is None else node(name)
            ends.append(found)
        first, second = ends
        if first is None or second is None:
            reason = EdgeRejection.UNUSABLE_URL if kind is KeyKind.URL else EdgeRejection.UNUSABLE_ID
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        add_source(first)
        add_target(second)
    return interned


def import_edge_list(
    edges_path: str | os.PathLike[str],
    db_path: str | os.PathLike[str],
    *,
    keys: KeyKind | str = AUTO_KEYS,
    partitions: int = PARTITIONS,
) -> ImportSummary:
    """Build the link index of an edge list at ``db_path`` (atomically; see the module doc).

    ``keys``: ``"url"``, ``"id"`` or ``"auto"``.  Memory holds the interned names and the
    edges as int32 arrays while the records are streamed into
    :func:`relatedpages.store.dbbuild.build_database` (cnr-2000, 3.2 M edges: ~12 s, peak RSS
    ~210 MB, a 94 MB database).
    """
    started = time.monotonic()
    kind = _key_kind(keys, edges_path)
    skipped: dict[EdgeRejection, int] = {reason: 0 for reason in EdgeRejection}
    interned = _intern_edges(read_edge_list(edges_path, skipped), kind, skipped)
    names = interned.names
    n = len(names)
    sources = np.frombuffer(interned.sources, dtype=np.int32) if len(interned.sources) else np.empty(0, np.int32)
    targets = np.frombuffer(interned.targets, dtype=np.int32) if len(interned.targets) else np.empty(0, np.int32)
    out_offsets, out_targets = _group(sources, targets, n, distinct=False)
    in_offsets, in_sources = _group(targets, sources, n, distinct=True)

    def records() -> Iterator[tuple[str, dict[str, Any]]]:
        for node, name in enumerate(names):
            out = out_targets[out_offsets[node]:out_offsets[node + 1]].tolist()
            parents = in_sources[in_offsets[node]:in_offsets[node + 1]].tolist()
            yield name, {
                "out": [[names[t], "", NO_BLOCK] for t in out],
                "in": sorted(names[s] for s in parents),
                "crawled": bool(out),
            }

    database = build_link_index(
        records(), db_path, keys=kind, source=[os.fspath(edges_path)], partitions=partitions,
        parameters={"edges": len(targets)},
    )
    data_lines = interned.pairs + skipped[EdgeRejection.MALFORMED_LINE] + skipped[EdgeRejection.UNDECODABLE_LINE]
    summary = ImportSummary(
        edges_path=Path(edges_path),
        keys=kind,
        lines=data_lines,
        edges=len(targets),
        nodes=n,
        skipped=MappingProxyType(skipped),
        database=database,
        seconds=time.monotonic() - started,
    )
    logger.info("imported %s: %s nodes, %s edges, skipped %s, in %.1f s", edges_path, n, len(targets),
                {k.value: v for k, v in skipped.items() if v}, summary.seconds)
    return summary


def _group(
    keys: np.ndarray, values: np.ndarray, n: int, *, distinct: bool
) -> tuple[np.ndarray, np.ndarray]:
    """CSR of ``values`` grouped by ``keys`` (0..n-1): in input order (stable), or
    distinct and ascending."""
    if distinct and len(keys):
        pairs = np.sort(keys.astype(np.int64) * n + values)
        first = np.ones(len(pairs), dtype=np.bool_)
        np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
        pairs = pairs[first]  # distinct; np.unique is ~100x slower on numpy 2.4 (hashing)
        keys, values = pairs // n, (pairs % n).astype(np.int32)
    else:
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=offsets[1:])
    return offsets, values


# ---------------------------------------------------------------------------------------
# Segment records


def page_out_links(
    record: Any, events: MutableMapping[LinkEvent, int]
) -> tuple[str, list[list[Any]]] | None:
    """A segment record's page URL and out-links ``[[href, anchor, block], …]``.

    Out-links are all of the page's links in page order: every block's links, ``block`` =
    the block's index in the record, and between them the links in no block (the record's
    ``loose`` links, ``block`` = -1) where the page has them (``at`` = the blocks before).
    Companion and Cocitation read the links around a link in the page, not only those of
    its block.  hrefs are re-normalised (dropped and counted when they do not).  Returns
    None (counting ``bad_segment_record``) when the record is not a segment record.

    >>> events = {}
    >>> page_out_links({"url": "http://p.example/", "blocks": [[{"href": "http://a.example/", "anchor": "A"}]],
    ...                 "loose": [{"href": "http://z.example/", "anchor": "Z", "at": 1},
    ...                           {"href": "http://x.example/", "anchor": "X", "at": 0}]}, events)[1]
    [['http://x.example/', 'X', -1], ['http://a.example/', 'A', 0], ['http://z.example/', 'Z', -1]]
    """
    if not isinstance(record, dict):
        _count(events, LinkEvent.BAD_SEGMENT_RECORD)
        return None
    url, blocks = record.get("url"), record.get("blocks")
    page = normalise_url(url) if isinstance(url, str) else None
    if page is None or not isinstance(blocks, list) or not all(isinstance(block, list) for block in blocks):
        _count(events, LinkEvent.BAD_SEGMENT_RECORD)
        return None
    loose: dict[int, list[Any]] = {}
    given = record.get("loose", [])
    for link in given if isinstance(given, list) else [None]:
        at = link.get("at") if isinstance(link, dict) else None
        if isinstance(at, int) and not isinstance(at, bool) and 0 <= at <= len(blocks):
            loose.setdefault(at, []).append(link)
        else:
            _count(events, LinkEvent.MALFORMED_LINK)
    out: list[list[Any]] = []
    for number in range(len(blocks) + 1):
        in_order = [(-1, link) for link in loose.get(number, ())]
        if number < len(blocks):
            in_order += [(number, link) for link in blocks[number]]
        for block, link in in_order:
            href = link.get("href") if isinstance(link, dict) else None
            anchor = link.get("anchor", "") if isinstance(link, dict) else None
            if not isinstance(href, str) or not isinstance(anchor, str):
                _count(events, LinkEvent.MALFORMED_LINK)
                continue
            target = normalise_url(href)
            if target is None:
                _count(events, LinkEvent.UNUSABLE_HREF)
                continue
            out.append([target, anchor, block])
    _count(events, LinkEvent.PAGES)
    _count(events, LinkEvent.LINKS, len(out))
    return page, out


def _count(events: MutableMapping[LinkEvent, int], event: LinkEvent, amount: int = 1) -> None:
    if amount:
        events[event] = events.get(event, 0) + amount


def _canonical(out: list[list[Any]]) -> str:
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def choose_out_links(candidates: Iterable[list[list[Any]]]) -> tuple[list[list[Any]], int]:
    """Of several out-link lists of one page, the one whose compact JSON sorts first —
    any fixed rule would do; this one does not depend on input order.  (chosen, others).

    >>> choose_out_links([[["http://b/", "", 0]], [["http://a/", "", 0]]])
    ([['http://a/', '', 0]], 1)
    """
    chosen: list[list[Any]] | None = None
    chosen_key = ""
    seen = 0
    for out in candidates:
        seen += 1
        key = _canonical(out)
        if chosen is None or key < chosen_key:
            chosen, chosen_key = out, key
    if chosen is None:
        raise ValueError("no out-link list to choose from")
    return chosen, seen - 1


def link_record(out: list[list[Any]] | None, sources: Iterable[str]) -> dict[str, Any]:
    """The stored value of a node: its out-links (None: not crawled) and its sources."""
    return {"out": out or [], "in": sorted(set(sources)), "crawled": out is not None}


def link_records_from_segments(
    segment_records: Iterable[Any],
) -> tuple[dict[str, dict[str, Any]], dict[LinkEvent, int]]:
    """The link index of segment records, in memory: node → value, and the counts.
    (What ``jobs.linkgraph`` computes; its tests' oracle.)"""
    events: dict[LinkEvent, int] = {}
    pages: dict[str, list[list[list[Any]]]] = {}
    for record in segment_records:
        found = page_out_links(record, events)
        if found is not None:
            pages.setdefault(found[0], []).append(found[1])
    outs: dict[str, list[list[Any]]] = {}
    for page, candidates in pages.items():
        outs[page], others = choose_out_links(candidates)
        _count(events, LinkEvent.DUPLICATE_PAGE_RECORD, others)
    sources: dict[str, set[str]] = {}
    for page, out in outs.items():
        for href, _, _ in out:
            sources.setdefault(href, set()).add(page)
    result = {}
    for node in sorted(outs.keys() | sources.keys()):
        result[node] = link_record(outs.get(node), sources.get(node, ()))
        _count(events, LinkEvent.NODES)
        if node not in outs:
            _count(events, LinkEvent.UNCRAWLED_NODES)
    return result, events


def build_link_index(
    records: Iterable[tuple[str, Any]],
    db_path: str | os.PathLike[str],
    *,
    keys: KeyKind,
    source: list[str],
    parameters: Mapping[str, Any] | None = None,
    partitions: int = PARTITIONS,
) -> DatabaseSummary:
    """Write link records (node → ``{"out", "in", "crawled"}``, e.g. the output of
    ``jobs.linkgraph``) as a link index; records that are not link records are counted
    as ``malformed_links``.  URL keys are normalised, id keys stored as given."""
    return build_database(
        records, db_path, algorithm=LINKS_ALGORITHM,
        parameters={"keys": KeyKind(keys).value, **(parameters or {})}, source=source,
        partitions=partitions, normalise_keys=KeyKind(keys) is KeyKind.URL,
    )


def build_link_index_from_segments(
    segment_records: Iterable[Any],
    db_path: str | os.PathLike[str],
    *,
    source: list[str] | None = None,
    partitions: int = PARTITIONS,
) -> tuple[DatabaseSummary, dict[LinkEvent, int]]:
    """The link index of segment records built in memory (small crawls, tests)."""
    records, events = link_records_from_segments(segment_records)
    summary = build_link_index(
        records.items(), db_path, keys=KeyKind.URL, source=source or ["segment records"],
        partitions=partitions,
    )
    return summary, events


# ---------------------------------------------------------------------------------------
# Reading


class LinkIndexDB(PartitionedDB[LinkRecord]):
    """A read-only link index; safe to share between threads.

    >>> import shutil, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = build_link_index([("1", {"out": [["2", "", -1]], "in": [], "crawled": True}),
    ...                       ("2", {"out": [], "in": ["1"], "crawled": False})],
    ...                      folder + "/links", keys=KeyKind.ID, source=["doctest"], partitions=2)
    >>> with LinkIndexDB(folder + "/links") as index:
    ...     index.keys, index.links("2"), index.links("3")
    (<KeyKind.ID: 'id'>, LinkRecord(out=(), in_links=('1',), crawled=False), None)
    >>> shutil.rmtree(folder)
    """

    ACCEPTS = (LINKS_ALGORITHM,)

    def __init__(self, path: str | os.PathLike[str], *, verify: Verify | str = Verify.SIZES):
        super().__init__(path, verify=verify)
        try:
            self.keys = KeyKind(self.manifest.parameters.get("keys"))
        except ValueError:
            self.close()
            raise DatabaseError(
                DatabaseProblem.CORRUPT, self.path, "link index manifest without parameters.keys 'url' or 'id'"
            ) from None

    def links(self, name: str) -> LinkRecord | None:
        """The record of a node; None when absent.  URL indexes normalise ``name`` first
        (``ValueError`` when it does not normalise); id indexes match it exactly."""
        if self.keys is KeyKind.URL:
            key = normalise_url(name)
            if key is None:
                raise ValueError(f"not a web page URL: {name!r}")
            name = key
        if not name:
            return None
        return self._lookup(name.encode("utf-8"))

    def _decode_value(self, data: bytes) -> LinkRecord:
        return LinkRecord.from_json(json.loads(data))


def _sorted_names(names: list[str]) -> list[str]:
    """Numeric order when every name is a canonical decimal integer, else code points."""
    if names and all(_DECIMAL.fullmatch(name) for name in names):
        return sorted(names, key=int)
    return sorted(names)


def load_link_graph(db_path: str | os.PathLike[str], *, verify: Verify | str = Verify.SIZES) -> LinkGraph:
    """The whole link index as a :class:`LinkGraph` (numpy CSR arrays; see the module doc).

    Two passes over the partitions: the keys (node numbering), then the out-lists, one
    JSON document per partition (or, for edge-list indexes — no anchors, no blocks, no
    escapes — one regular expression).  The stored ``in`` lists are not read: the graph
    derives its in-links from the out-links.  A record that is not a link record raises
    :class:`DatabaseError` (corrupt).
    """
    with LinkIndexDB(db_path, verify=verify) as index:
        keys: list[bytes] = []
        for part in range(index.partitions):
            data = index.partition_data(part)
            keys.extend(_KEY.findall(data))
        keys, numeric = _sorted_keys(keys)
        node_of = {key: i for i, key in enumerate(keys)}
        names = [key.decode("utf-8") for key in keys]
        numeric_keys = np.array([int(key) for key in keys], dtype=np.int64) if numeric else None
        del keys
        reader = _OutLists(node_of, len(names), numeric_keys)
        for part in range(index.partitions):
            data = index.partition_data(part)
            if not data:
                continue
            try:
                reader.read_partition(data)
            except (ValueError, KeyError, TypeError, OverflowError) as error:
                raise DatabaseError(
                    DatabaseProblem.CORRUPT, index.path,
                    f"{partition_name(part)} holds a malformed link record ({error!r})",
                ) from None
        key_kind = index.keys
    if reader.extra:
        logger.warning("%s: %s link targets have no record of their own", db_path, len(reader.extra))
    return _assemble(names + reader.extra, key_kind, reader)


def _sorted_keys(keys: list[bytes]) -> tuple[list[bytes], bool]:
    """Numeric order when every key is a canonical decimal integer (and True), else
    bytes (= code points) order."""
    if keys and not _NOT_DECIMAL_LINE.search(b"\n".join(keys)):
        return sorted(keys, key=int), True
    return sorted(keys), False


_OUT_PREFIX = b'{"out":'
_IN_KEY = b',"in":['
_CRAWLED_SUFFIX = {True: b',"crawled":true}', False: b',"crawled":false}'}
# A whole line as the builders here write it (see _out_part for why the cut is safe).
_RECORD = re.compile(
    rb'^([^\t\n]+)\t\{"out":(\[[^\n]*?\]),"in":\[[^\n]*\],"crawled":(true|false)\}$', re.MULTILINE
)
_BARE_LINK_END = b'","",-1]'  # an out-link without anchor and block, in compact JSON
_BARE_LINK = re.compile(rb'\["([^"]*)","",-1\]')
# Out-lists of bare links to canonical decimal ids, joined by commas: [["12","",-1],…],[]
# A bare link to a canonical decimal id, in compact JSON: ["12","",-1]
_NUMERIC_LINK = re.compile(rb'\["(?:0|[1-9][0-9]*)","",-1\]')


def _out_part(value: bytes) -> tuple[bytes, bool]:
    """The JSON of a record's out-list, and its crawled flag, without decoding its ``in``
    list (half the bytes).  Records written as ``{"out":…,"in":…,"crawled":…}`` (the
    builders here) are cut: in valid JSON the bytes ``,"in":[`` can only be that key, as
    an unescaped quote never occurs inside a string.  Others are decoded and re-encoded.
    Raises ``ValueError`` when the value is not a link record.
    """
    if value.startswith(_OUT_PREFIX):
        cut = value.find(_IN_KEY)
        if cut > 0:
            for known, suffix in _CRAWLED_SUFFIX.items():
                if value.endswith(suffix):
                    return value[len(_OUT_PREFIX):cut], known
    record = json.loads(value)
    if not is_link_record(record):
        raise ValueError("not a link record")
    return _canonical(record["out"]).encode("utf-8"), record["crawled"]


class _OutLists:
    """Out-lists of records, flattened in reading order: the columns of the CSR arrays
    before they are put in node order (:func:`_assemble`)."""

    def __init__(self, node_of: dict[bytes, int], n: int, numeric_keys: np.ndarray | None) -> None:
        self.node_of = node_of
        self.n = n
        self.numeric_keys = numeric_keys  # the keys as ascending integers, when they all are
        self.extra: list[str] = []  # targets without a record (not written by our builders)
        self.anchor = Interner([""])  # 0 = no anchor
        self.record_nodes = array("i")  # nodes in the order their records were read
        self.degrees = array("q")
        self.targets, self.anchors, self.blocks = array("i"), array("i"), array("i")
        self.crawled_nodes = array("i")

    def read_partition(self, data: bytes) -> None:
        nodes, parts, crawled = self._split_records(data)
        self.record_nodes.extend(nodes)
        self.crawled_nodes.extend(node for node, known in zip(nodes, crawled) if known)
        blob = b",".join(parts)
        if self.numeric_keys is not None and self._numeric_targets(blob):
            # cnr-2000 and the like: numpy parses the ids, no Python object per link
            self.degrees.extend(part.count(b"[") - 1 for part in parts)
            return
        if b"\\" not in blob:
            # No escapes: a quote always delimits a string, so '",' ends the href and the
            # anchor of each link, twice a link.  When every link ends '","",-1]' (edge
            # lists), the hrefs are all this partition needs: one regex, no JSON objects.
            links = blob.count(b'",') // 2
            if blob.count(_BARE_LINK_END) == links:
                hrefs = _BARE_LINK.findall(blob)
                if len(hrefs) == links:
                    self.degrees.extend(part.count(b'",') // 2 for part in parts)
                    self._add_targets(hrefs)
                    self.anchors.frombytes(bytes(4 * links))
                    self.blocks.extend(array("i", [NO_BLOCK]) * links)
                    return
        outs = json.loads(b"[" + blob + b"]")
        del blob, parts
        self.degrees.extend(map(len, outs))
        flat = list(chain.from_iterable(outs))
        del outs
        if not flat:
            return
        texts: tuple[str, ...]
        hrefs_text, texts, numbers = zip(*flat)
        del flat
        self._add_targets([href.encode("utf-8") for href in hrefs_text])
        if any(texts):
            self.anchors.extend(map(self.anchor, texts))
        else:
            self.anchors.frombytes(bytes(4 * len(texts)))  # every anchor ""
        self.blocks.extend(numbers)

    def _split_records(self, data: bytes) -> tuple[list[int], list[bytes], list[bool]]:
        """Per record of a partition: its node, the JSON of its out-list, crawled."""
        records = _RECORD.findall(data)
        if len(records) == data.count(b"\n"):  # every record cut by the one expression
            keys, outs, flags = zip(*records) if records else ((), (), ())
            return list(map(self.node_of.__getitem__, keys)), list(outs), [flag == b"true" for flag in flags]
        nodes: list[int] = []
        parts: list[bytes] = []
        crawled: list[bool] = []
        for line in data.split(b"\n")[:-1]:
            tab = line.index(b"\t")
            nodes.append(self.node_of[line[:tab]])
            part, known = _out_part(line[tab + 1:])
            parts.append(part)
            crawled.append(known)
        return nodes, parts, crawled

    def _numeric_targets(self, blob: bytes) -> bool:
        """The targets of out-lists (JSON, joined by commas) when every link is a bare
        link to a numeric key; False (nothing added) otherwise."""
        assert self.numeric_keys is not None
        rest, links = _NUMERIC_LINK.subn(b"", blob)
        if rest.strip(b"[],"):  # valid JSON with nothing but brackets left: all links bare, numeric
            return False
        ids = np.fromstring(blob.replace(_BARE_LINK_END, b" ").translate(None, b'[]",'), dtype=np.int64, sep=" ")
        if len(ids) != links:
            return False
        nodes = np.searchsorted(self.numeric_keys, ids)
        if len(ids) and not (nodes.max() < self.n and np.array_equal(self.numeric_keys[nodes], ids)):
            return False  # a target without a record: the general path numbers it
        self.targets.frombytes(nodes.astype(np.int32).tobytes())
        self.anchors.frombytes(bytes(4 * len(ids)))
        self.blocks.extend(array("i", [NO_BLOCK]) * len(ids))
        return True

    def _add_targets(self, hrefs: list[bytes]) -> None:
        before = len(self.targets)
        try:
            self.targets.extend(map(self.node_of.__getitem__, hrefs))
        except KeyError:  # a target without a record: numbered after the keys
            del self.targets[before:]
            self.targets.extend(map(self._target, hrefs))

    def _target(self, href: bytes) -> int:
        found = self.node_of.get(href)
        if found is None:
            found = self.node_of[href] = self.n + len(self.extra)
            self.extra.append(href.decode("utf-8"))
        return found


def _assemble(names: list[str], key_kind: KeyKind, lists: _OutLists) -> LinkGraph:
    """Edges grouped by record (in reading order) → CSR in node order, by one gather."""
    n = len(names)
    nodes = np.frombuffer(lists.record_nodes, dtype=np.int32) if lists.record_nodes else np.empty(0, np.int32)
    degree = np.frombuffer(lists.degrees, dtype=np.int64) if lists.degrees else np.empty(0, np.int64)
    starts = np.zeros(len(degree), dtype=np.int64)
    if len(degree):
        np.cumsum(degree[:-1], out=starts[1:])
    per_node = np.zeros(n, dtype=np.int64)
    per_node[nodes] = degree
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(per_node, out=offsets[1:])
    order = np.argsort(nodes, kind="stable")
    # edge e of the CSR comes from starts[record] + (e - offsets[node]) of the read order
    gather = np.repeat(starts[order] - offsets[nodes[order]], degree[order]) + np.arange(int(offsets[-1]))

    def column(values: array[int]) -> np.ndarray:
        flat = np.frombuffer(values, dtype=np.int32) if len(values) else np.empty(0, np.int32)
        return np.ascontiguousarray(flat[gather])

    crawled = np.zeros(n, dtype=np.bool_)
    if lists.crawled_nodes:
        crawled[np.frombuffer(lists.crawled_nodes, dtype=np.int32)] = True
    return LinkGraph(names, key_kind, offsets, column(lists.targets), column(lists.anchors),
                     column(lists.blocks), lists.anchor.values, crawled)


# ---------------------------------------------------------------------------------------
# Straight from an edge list


def graph_from_edge_list(path: str | os.PathLike[str], *, keys: KeyKind | str = AUTO_KEYS) -> LinkGraph:
    """The graph :func:`load_link_graph` would load from :func:`import_edge_list` of the
    same file, without a database.  A numeric edge list (canonical decimal ids, one
    ``a b`` pair per line, comments and blank lines allowed) is parsed with numpy."""
    kind = _key_kind(keys, path)
    if kind is KeyKind.ID:
        with _EdgeFile(path) as handle:
            data = handle.read()
        data = _COMMENT_OR_BLANK.sub(b"", data if data.endswith(b"\n") or not data else data + b"\n")
        if not _NOT_NUMERIC_EDGE.search(data[:-1]):
            return _numeric_graph(data)
        del data
    skipped: dict[EdgeRejection, int] = {}
    interned = _intern_edges(read_edge_list(path, skipped), kind, skipped)
    names = _sorted_names(interned.names)
    renumber = np.empty(len(names), dtype=np.int32)
    position = {name: i for i, name in enumerate(names)}
    renumber[:] = [position[name] for name in interned.names]
    del position
    sources = renumber[np.frombuffer(interned.sources, dtype=np.int32)] if len(interned.sources) else np.empty(0, np.int32)
    targets = renumber[np.frombuffer(interned.targets, dtype=np.int32)] if len(interned.targets) else np.empty(0, np.int32)
    return _edge_graph(names, kind, sources, targets)


def _numeric_graph(data: bytes) -> LinkGraph:
    ids = np.fromstring(data, dtype=np.int64, sep=" ")  # any whitespace separates
    del data
    present = np.zeros(int(ids.max()) + 1 if len(ids) else 0, dtype=np.bool_)
    present[ids] = True  # ids are numbered in ascending order, like load_link_graph's keys
    nodes = np.flatnonzero(present)
    number = np.cumsum(present, dtype=np.int64) - 1
    pairs = number[ids].astype(np.int32).reshape(-1, 2)
    del ids, present, number
    names = [str(value) for value in nodes.tolist()]
    return _edge_graph(names, KeyKind.ID, pairs[:, 0], pairs[:, 1])


def _edge_graph(names: list[str], kind: KeyKind, sources: np.ndarray, targets: np.ndarray) -> LinkGraph:
    n = len(names)
    offsets, out_targets = _group(sources, targets, n, distinct=False)
    crawled = np.zeros(n, dtype=np.bool_)
    crawled[sources] = True
    edges = len(out_targets)
    return LinkGraph(names, kind, offsets, np.ascontiguousarray(out_targets, dtype=np.int32),
                     np.zeros(edges, dtype=np.int32), np.full(edges, NO_BLOCK, dtype=np.int32), [""], crawled)
