"""The whole link index loaded into a :class:`~relatedpages.store.linkgraph.LinkGraph`
(numpy CSR arrays) for the literature's methods at query time (:func:`load_link_graph`).

Node numbers follow the sorted keys — numerically when every key is a canonical decimal
integer (so node ``i`` of ``cnr-2000`` is id ``"i"``), by code points otherwise — so a
graph loaded from an index does not depend on the partitioning.  The partitions are read
by the cheapest path their records allow: numpy for bare links to numeric ids, one regular
expression for links without anchors and blocks, JSON otherwise.
"""
from __future__ import annotations

import json
import logging
import os
import re
from array import array
from itertools import chain

import numpy as np

from relatedpages.store.db import DatabaseError, DatabaseProblem, Verify, partition_name
from relatedpages.store.dbbuild import is_link_record
from relatedpages.store.linkgraph import Interner, KeyKind, LinkGraph
from relatedpages.store.linkindex import NO_BLOCK, LinkIndexDB, _canonical

logger = logging.getLogger(__name__)

_NOT_DECIMAL_LINE = re.compile(rb"^(?!(?:0|[1-9][0-9]*)$)", re.MULTILINE)
_KEY = re.compile(rb"^([^\t\n]*)\t", re.MULTILINE)


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
