"""Dean & Henzinger's STOP list (§2.1.1; slide 10): pages that never enter a vicinity graph
(Companion, D&H Cocitation), read from ``conf/stoplist.txt`` or the built-in copy, and
resolved against one graph's nodes and hosts for a query (:func:`query_stops`)."""
from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from filters.config import conf_path
from relatedpages.store.linkgraph import IntArray, KeyKind, LinkGraph

logger = logging.getLogger(__name__)

BoolArray = npt.NDArray[np.bool_]

#: Where the stoplist lives: a checkout's conf/ or an installed wheel's (may be absent on a cluster).
STOPLIST_PATH_DEFAULT = conf_path("stoplist.txt")

# The same entries as conf/stoplist.txt (tests/test_baseline_companion.py keeps them in sync).
_BUILTIN_STOPLIST = """\
http://www.yahoo.com/
http://www.microsoft.com/ie/download.html
http://www.excite.com/
http://www.altavista.com/
http://www.altavista.digital.com/
http://www.lycos.com/
http://www.infoseek.com/
http://www.hotbot.com/
http://www.webcrawler.com/
http://www.netscape.com/
http://home.netscape.com/
http://www.microsoft.com/
http://www.msn.com/
http://www.aol.com/
http://www.go.com/
http://www.looksmart.com/
http://www.snap.com/
http://www.google.com/
http://www.adobe.com/products/acrobat/readstep.html
http://www.macromedia.com/shockwave/download/
http://www.microsoft.com/windows/ie/
"""


@dataclass(frozen=True)
class Stoplist:
    """Pages that never enter a vicinity graph (Dean & Henzinger's STOP).

    One entry per line; blank lines and ``#`` comments are ignored.  On a URL graph an entry
    with a scheme is a page (normalised; ``http`` and ``https`` both match), an entry without
    one is a host (``www.yahoo.com`` stops every page on that host and its sub-hosts).  On an
    id graph an entry is a node id, matched exactly.

    >>> Stoplist.from_lines(["# portals", "http://www.yahoo.com/", "", "excite.com"]).entries
    ('http://www.yahoo.com/', 'excite.com')
    """

    entries: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for entry in self.entries:
            if not entry or entry != entry.strip() or any(c.isspace() for c in entry):
                raise ValueError(f"stoplist entries must be non-empty without spaces: {entry!r}")

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> Stoplist:
        entries: list[str] = []
        for line in lines:
            text = line.split("#", 1)[0].strip()
            if text and text not in entries:
                entries.append(text)
        return cls(tuple(entries))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Stoplist:
        with open(path, encoding="utf-8") as handle:
            return cls.from_lines(handle)

    def nodes_in(self, graph: LinkGraph) -> StopSet:
        """The graph's nodes and hosts this stoplist names (absent entries are skipped)."""
        nodes: set[int] = set()
        hosts: set[int] = set()
        host_entries: list[str] = []
        for entry in self.entries:
            if graph.key_kind is KeyKind.ID:
                found = graph.id_of(entry)
                if found is not None:
                    nodes.add(found)
            elif "://" in entry:
                rest = entry.split("://", 1)[1]
                for variant in (entry, "http://" + rest, "https://" + rest):
                    found = graph.id_of(variant)
                    if found is not None:
                        nodes.add(found)
            else:
                host_entries.append(entry.lower().strip("."))
        if host_entries:
            suffixes = tuple("." + h for h in host_entries)
            exact = set(host_entries)
            for number, host in enumerate(graph.host_names):
                if host in exact or host.endswith(suffixes):
                    hosts.add(number)
        return StopSet(np.array(sorted(nodes), dtype=np.int32), np.array(sorted(hosts), dtype=np.int32))


@dataclass(frozen=True)
class StopSet:
    """A stoplist resolved against one graph: stopped node numbers and host numbers."""

    nodes: IntArray
    hosts: IntArray

    def __len__(self) -> int:
        return len(self.nodes) + len(self.hosts)

    def contains(self, graph: LinkGraph, nodes: IntArray) -> BoolArray:
        """Which of ``nodes`` are stopped."""
        stopped = np.zeros(len(nodes), dtype=np.bool_)
        if len(self.nodes):
            stopped |= np.isin(nodes, self.nodes)
        if len(self.hosts):
            stopped |= np.isin(graph.hosts[nodes], self.hosts)
        return stopped

    def contains_node(self, graph: LinkGraph, node: int) -> bool:
        return bool(self.contains(graph, np.array([node], dtype=np.int32))[0])


NO_STOPS = StopSet(np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int32))


def builtin_stoplist() -> Stoplist:
    """The stoplist built into this module (the same as the shipped ``conf/stoplist.txt``)."""
    return Stoplist.from_lines(_BUILTIN_STOPLIST.splitlines())


@functools.cache
def default_stoplist() -> Stoplist:
    """``conf/stoplist.txt`` when present next to the package, else the built-in copy."""
    if STOPLIST_PATH_DEFAULT.is_file():
        return Stoplist.from_file(STOPLIST_PATH_DEFAULT)
    logger.info("%s not found: using the built-in stoplist", STOPLIST_PATH_DEFAULT)
    return builtin_stoplist()


def query_stops(graph: LinkGraph, node: int, stoplist: Stoplist) -> StopSet:
    """The stop set for a query on ``node``: empty when ``node`` itself is stopped (§2.1.1)."""
    if not stoplist.entries:
        return NO_STOPS
    stops = stoplist.nodes_in(graph)
    if stops.contains_node(graph, node):
        return NO_STOPS
    return stops
