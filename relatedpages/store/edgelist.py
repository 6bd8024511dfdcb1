"""Edge lists (``source<TAB>target`` per line) read: imported as a link index
(:func:`import_edge_list`), or straight into a :class:`~relatedpages.store.linkgraph.LinkGraph`
(:func:`graph_from_edge_list`), the graph :func:`relatedpages.store.linkload.load_link_graph`
would load from the imported index.

The format: one edge per line, tab-separated (spaces tolerated when there is no tab; ``#``
comments and blank lines skipped), ``.gz`` or plain.  Keys are URLs (normalised with
:func:`filters.urls.normalise_url`, a field that does not normalise costs its edge, counted)
or opaque node ids (as given).  ``auto`` picks URLs when both fields of the first data line
start with ``http://`` or ``https://``.  Edges keep the file's order per source; duplicate
edges and self-loops are kept (the graph is stored as given; algorithms decide what they
ignore).  A numeric edge list (canonical decimal ids) is read into the graph with numpy.
"""
from __future__ import annotations

import gzip
import logging
import os
import re
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

import numpy as np

from filters.urls import normalise_url
from relatedpages.store.db import PARTITIONS, DatabaseSummary
from relatedpages.store.linkgraph import KeyKind, LinkGraph
from relatedpages.store.linkindex import NO_BLOCK, build_link_index

logger = logging.getLogger(__name__)

#: ``keys=`` of :func:`import_edge_list` and :func:`graph_from_edge_list`: decide from
#: the first data line.
AUTO_KEYS = "auto"
_WEB_PREFIXES = ("http://", "https://")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
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



def _sorted_names(names: list[str]) -> list[str]:
    """Numeric order when every name is a canonical decimal integer, else code points."""
    if names and all(_DECIMAL.fullmatch(name) for name in names):
        return sorted(names, key=int)
    return sorted(names)



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
