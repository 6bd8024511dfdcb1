"""The connectivity server's in-memory link graph: compact arrays, not dicts of lists.

Dean & Henzinger ran Companion and Cocitation on a *connectivity server* that answers
"out-links of u" and "in-links of u" fast (DESIGN.md, "Baselines").  :class:`LinkGraph`
is that server's query-time form:

* nodes are numbered ``0 .. n-1``; a node's name is a normalised URL (a graph built from a
  crawl or a URL edge list) or an opaque node id such as ``"12345"`` (``cnr-2000``);
* **out-links** in page order, as CSR arrays: ``out_offsets`` (n+1) and, per edge,
  ``out_targets``, ``out_anchors`` (an index into ``anchor_texts``, 0 = no anchor) and
  ``out_blocks`` (the link block on the citing page, -1 = unknown).  A page that links
  twice to a target keeps both edges: positions matter to BF windows;
* **in-links** as CSR arrays ``in_offsets``/``in_sources``: the distinct parents of a
  node, ascending;
* ``crawled[i]``: the node's out-links are known (a crawled page or an edge-list source),
  as opposed to a page only ever seen as a link target;
* ``hosts[i]``: a host number, for Bharat–Henzinger's edge weights, Hou & Zhang's
  "intrinsic" pages and site grouping.  What a host is, is a :class:`HostRule`: by default
  the project's site identity (:func:`filters.site.site_of`: the registered domain, with
  ``github.com/<owner>`` and the like as sites of their own — DESIGN.md's "site"), so that
  the hundreds of lists and repositories on github.com are not one host; ``url-host`` is
  the URL's host name, as in 1999.  For opaque ids every node is its own host.

Built once from pages or edges (:meth:`LinkGraph.from_pages`, :meth:`LinkGraph.from_edges`),
then read-only.  Algorithms take node numbers; :meth:`LinkGraph.id_of` turns a user's URL
into one (normalising it when the graph's names are URLs).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from filters.site import site_of
from filters.urls import normalise_url

IntArray = npt.NDArray[np.int32]
OffsetArray = npt.NDArray[np.int64]


class HostRule(str, Enum):
    """What a "host" is for the per-host rules of the baselines (module docstring)."""

    SITE = "site"  # filters.site.site_of: the project's site identity
    URL_HOST = "url-host"  # the URL's host name


HOST_RULE_DEFAULT = HostRule.SITE


class KeyKind(str, Enum):
    """What a graph's node names are."""

    URL = "url"  # normalised http(s) URLs: lookups normalise the query
    ID = "id"  # opaque node ids (e.g. "12345"): lookups match exactly


@dataclass(frozen=True)
class OutLink:
    """One out-link of a page, in page order."""

    target: int
    anchor: str
    block: int  # -1 when the graph has no blocks


class LinkGraph:
    """A read-only directed link graph in CSR form (see the module docstring)."""

    __slots__ = (
        "names", "key_kind", "_index", "out_offsets", "out_targets", "out_anchors",
        "out_blocks", "anchor_texts", "in_offsets", "in_sources", "crawled", "hosts",
        "host_names", "host_rule", "derived",
    )

    def __init__(
        self,
        names: list[str],
        key_kind: KeyKind,
        out_offsets: OffsetArray,
        out_targets: IntArray,
        out_anchors: IntArray,
        out_blocks: IntArray,
        anchor_texts: list[str],
        crawled: npt.NDArray[np.bool_],
        hosts: IntArray | None = None,
        host_names: list[str] | None = None,
        host_rule: HostRule = HOST_RULE_DEFAULT,
    ) -> None:
        n = len(names)
        if out_offsets.shape != (n + 1,) or int(out_offsets[-1]) != len(out_targets):
            raise ValueError("out_offsets must have n+1 entries ending at the edge count")
        if not len(out_targets) == len(out_anchors) == len(out_blocks):
            raise ValueError("out_targets, out_anchors and out_blocks must have one entry per edge")
        if crawled.shape != (n,):
            raise ValueError("crawled must have one entry per node")
        if not anchor_texts or anchor_texts[0] != "":
            raise ValueError('anchor_texts[0] must be "" (no anchor)')
        self.names = names
        self.key_kind = key_kind
        self._index = {name: i for i, name in enumerate(names)}
        if len(self._index) != n:
            raise ValueError("node names must be unique")
        self.out_offsets = out_offsets
        self.out_targets = out_targets
        self.out_anchors = out_anchors
        self.out_blocks = out_blocks
        self.anchor_texts = anchor_texts
        self.crawled = crawled
        self.in_offsets, self.in_sources = _invert(out_offsets, out_targets, n)
        if hosts is None:
            hosts, host_names = _hosts(names, key_kind, host_rule)
        self.hosts = hosts
        self.host_names = host_names or []
        self.host_rule = host_rule
        # what methods compute once per graph (global PageRank, distinct in-degrees), by name
        self.derived: dict[str, Any] = {}

    # -- construction ----------------------------------------------------------------

    @classmethod
    def from_pages(
        cls,
        pages: Iterable[tuple[str, Sequence[tuple[str, str, int]]]],
        *,
        key_kind: KeyKind = KeyKind.URL,
        host_rule: HostRule = HOST_RULE_DEFAULT,
    ) -> LinkGraph:
        """From crawled pages: ``(url, [(href, anchor, block), …])`` with out-links in page order.

        Names are taken as given (normalise them before); a page listed twice keeps its
        last out-links.
        """
        builder = _Builder(key_kind)
        for url, links in pages:
            builder.page(url, links)
        return builder.graph(host_rule)

    @classmethod
    def from_edges(
        cls,
        edges: Iterable[tuple[str, str]],
        *,
        key_kind: KeyKind = KeyKind.ID,
        host_rule: HostRule = HOST_RULE_DEFAULT,
    ) -> LinkGraph:
        """From ``(source, target)`` pairs; a source's out-links keep the pairs' order."""
        grouped: dict[str, list[tuple[str, str, int]]] = {}
        for source, target in edges:
            grouped.setdefault(source, []).append((target, "", -1))
        return cls.from_pages(grouped.items(), key_kind=key_kind, host_rule=host_rule)

    def with_host_rule(self, rule: HostRule) -> LinkGraph:
        """The same graph (arrays shared) with hosts by ``rule``."""
        if rule is self.host_rule:
            return self
        return LinkGraph(self.names, self.key_kind, self.out_offsets, self.out_targets,
                         self.out_anchors, self.out_blocks, self.anchor_texts, self.crawled,
                         host_rule=rule)

    # -- queries ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.names)

    @property
    def edges(self) -> int:
        return len(self.out_targets)

    def id_of(self, name: str) -> int | None:
        """The node of a URL (normalised first when names are URLs) or node id; None if absent."""
        if self.key_kind is KeyKind.URL:
            normalised = normalise_url(name)
            if normalised is None:
                return None
            name = normalised
        return self._index.get(name)

    def name(self, node: int) -> str:
        return self.names[node]

    def children(self, node: int) -> IntArray:
        """Out-link targets of ``node`` in page order (repeats kept)."""
        return self.out_targets[self.out_offsets[node]:self.out_offsets[node + 1]]

    def parents(self, node: int) -> IntArray:
        """Distinct pages linking to ``node``, ascending."""
        return self.in_sources[self.in_offsets[node]:self.in_offsets[node + 1]]

    def anchors(self, node: int) -> list[str]:
        """Anchor text of each out-link of ``node``, in page order ("" when none)."""
        start, end = self.out_offsets[node], self.out_offsets[node + 1]
        texts = self.anchor_texts
        return [texts[a] for a in self.out_anchors[start:end].tolist()]

    def blocks(self, node: int) -> IntArray:
        """Block number of each out-link of ``node`` (-1 when unknown)."""
        return self.out_blocks[self.out_offsets[node]:self.out_offsets[node + 1]]

    def out_links(self, node: int) -> list[OutLink]:
        return [
            OutLink(int(t), a, int(b))
            for t, a, b in zip(self.children(node).tolist(), self.anchors(node), self.blocks(node).tolist())
        ]

    def out_degree(self, node: int) -> int:
        return int(self.out_offsets[node + 1] - self.out_offsets[node])

    def in_degree(self, node: int) -> int:
        return int(self.in_offsets[node + 1] - self.in_offsets[node])

    def host(self, node: int) -> int:
        return int(self.hosts[node])

    def nbytes(self) -> int:
        """Bytes held by the arrays (names, anchors and the index not included)."""
        arrays = (self.out_offsets, self.out_targets, self.out_anchors, self.out_blocks,
                  self.in_offsets, self.in_sources, self.crawled, self.hosts)
        return sum(int(a.nbytes) for a in arrays)

    def __repr__(self) -> str:
        return f"<LinkGraph {len(self)} nodes, {self.edges} links, names={self.key_kind.value}>"


class Interner:
    """Numbers strings in order of first appearance: ``values[number] == string``.

    >>> names = Interner([""])
    >>> names("a"), names("b"), names("a"), names.values
    (1, 2, 1, ['', 'a', 'b'])
    """

    __slots__ = ("values", "_numbers")

    def __init__(self, initial: Iterable[str] = ()) -> None:
        self.values: list[str] = []
        self._numbers: dict[str, int] = {}
        for value in initial:
            self(value)

    def __call__(self, value: str) -> int:
        found = self._numbers.get(value)
        if found is None:
            found = self._numbers[value] = len(self.values)
            self.values.append(value)
        return found


class _Builder:
    """Accumulates pages into flat Python lists, then packs them into arrays."""

    def __init__(self, key_kind: KeyKind) -> None:
        self.key_kind = key_kind
        self.node = Interner()
        self.anchor = Interner([""])  # 0 = no anchor
        self.links: dict[int, tuple[list[int], list[int], list[int]]] = {}

    def page(self, url: str, links: Sequence[tuple[str, str, int]]) -> None:
        source = self.node(url)
        targets, anchors, blocks = [], [], []
        for href, anchor, block in links:
            targets.append(self.node(href))
            anchors.append(self.anchor(anchor))
            blocks.append(block)
        self.links[source] = (targets, anchors, blocks)

    def graph(self, host_rule: HostRule = HOST_RULE_DEFAULT) -> LinkGraph:
        n = len(self.node.values)
        degrees = np.zeros(n, dtype=np.int64)
        for source, (targets, _, _) in self.links.items():
            degrees[source] = len(targets)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degrees, out=offsets[1:])
        total = int(offsets[-1])
        out_targets = np.empty(total, dtype=np.int32)
        out_anchors = np.empty(total, dtype=np.int32)
        out_blocks = np.empty(total, dtype=np.int32)
        for source, (targets, anchors, blocks) in self.links.items():
            start, end = offsets[source], offsets[source + 1]
            out_targets[start:end] = targets
            out_anchors[start:end] = anchors
            out_blocks[start:end] = blocks
        crawled = np.zeros(n, dtype=np.bool_)
        crawled[list(self.links)] = True
        return LinkGraph(self.node.values, self.key_kind, offsets, out_targets, out_anchors,
                         out_blocks, self.anchor.values, crawled, host_rule=host_rule)


def _invert(out_offsets: OffsetArray, out_targets: IntArray, n: int) -> tuple[OffsetArray, IntArray]:
    """CSR of distinct parents per node, ascending: the transpose of the out-link graph."""
    sources = np.repeat(np.arange(n, dtype=np.int32), np.diff(out_offsets))
    if len(sources):
        # distinct (target, source) pairs, sorted by target then source; sort and mask
        # (numpy 2's np.unique hashes: 100x slower on cnr-2000's 3.2 M links)
        keys = np.sort(out_targets.astype(np.int64) * max(n, 1) + sources)
        first = np.ones(len(keys), dtype=np.bool_)
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        targets, parents = np.divmod(keys[first], max(n, 1))
    else:
        targets = parents = np.empty(0, dtype=np.int64)
    counts = np.bincount(targets, minlength=n).astype(np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, parents.astype(np.int32)


def _hosts(names: list[str], key_kind: KeyKind, rule: HostRule) -> tuple[IntArray, list[str]]:
    """Host numbers by ``rule`` (module docstring); ids: every node its own host."""
    if key_kind is KeyKind.ID:
        return np.arange(len(names), dtype=np.int32), list(names)
    host_index: dict[str, int] = {}
    hosts = np.empty(len(names), dtype=np.int32)
    for i, name in enumerate(names):
        host = _host_of(name, rule)
        hosts[i] = host_index.setdefault(host, len(host_index))
    return hosts, list(host_index)


def _host_of(url: str, rule: HostRule) -> str:
    if rule is HostRule.SITE:
        try:
            return site_of(url)
        except ValueError:  # no host (names are normalised http(s) URLs; be safe)
            return url
    return urlsplit(url).hostname or url
