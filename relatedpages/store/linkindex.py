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

* :func:`relatedpages.store.edgelist.import_edge_list` — a plain edge list,
  ``source<TAB>target`` per line, ``.gz`` or plain, of URLs or opaque node ids.
* ``jobs.linkgraph`` (MapReduce) over segment records, then :func:`build_link_index`.
  Out-links are every block's links in block order, ``block`` = index of the block in
  the record; hrefs are re-normalised (segment records hold normalised URLs already; a
  link that does not normalise is counted and dropped).
* :func:`build_link_index_from_segments` — the same in memory: the oracle of the job's
  tests, and enough for small crawls.

One record is looked up with :class:`LinkIndexDB`; the whole index is loaded as a graph
by :func:`relatedpages.store.linkload.load_link_graph` (query time), and
:func:`relatedpages.store.edgelist.graph_from_edge_list` builds the same graph straight
from an edge list, without a database.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from filters.urls import normalise_url
from relatedpages.store.db import (
    LINKS_ALGORITHM,
    PARTITIONS,
    DatabaseError,
    DatabaseProblem,
    DatabaseSummary,
    PartitionedDB,
    Verify,
)
from relatedpages.store.dbbuild import build_database, is_link_record
from relatedpages.store.linkgraph import KeyKind

#: Block number of a link whose block is unknown (edge lists).
NO_BLOCK = -1


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
