"""Segment records from a real link graph: the block co-citation chain's input without a crawl.

``../shared/data/graphs/cnr-2000`` is a real web graph (325,557 pages, 3.2 M links) without
URLs or HTML.  To measure the chain on real link structure at several sizes (issue 14), each
page of a seeded sample of the graph's pages that have links becomes a segment record
(DESIGN.md) whose one block is its successor list in the graph's order; every node gets a
URL of its own site, ``http://www.p<node>.org/`` (the graph names no hosts, so no two pages
share a site: every link is a cross-site citation, and no site-level damping applies).
Sizes above the graph's pages with links (issue 14 asks for at least a million) sample from
disjoint copies of it (``tile``): the same link structure repeated, node ids offset per copy.

    >>> successors = {0: [1, 2], 1: [2], 3: [0, 1, 2]}
    >>> [record["url"] for record in graph_records(successors, sample_sources(successors, 2, 1))]
    ['http://www.p0.org/', 'http://www.p3.org/']
    >>> next(graph_records(successors, [0]))["blocks"]
    [[{'href': 'http://www.p1.org/', 'anchor': '', 'pos': 0}, {'href': 'http://www.p2.org/', 'anchor': '', 'pos': 1}]]
"""
from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from filters.site import site_of


def read_successors(path: Path) -> dict[int, list[int]]:
    """``source<TAB>target`` lines (gzip or plain; ``#`` comments) → successors per source, in
    file order.  A malformed line is a ValueError naming it."""
    opener = gzip.open if path.suffix == ".gz" else open
    successors: dict[int, list[int]] = {}
    with opener(path, "rt", encoding="ascii") as lines:  # type: ignore[operator]
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 2 or not all(field.isdigit() for field in fields):
                raise ValueError(f"{path}:{number}: expected 'source<TAB>target' node ids")
            successors.setdefault(int(fields[0]), []).append(int(fields[1]))
    return successors


def sample_sources(successors: Mapping[int, Sequence[int]], pages: int, seed: int) -> list[int]:
    """``pages`` pages with links, drawn by ``Random(seed)`` (all of them when there are
    fewer), in node order: a smaller sample is not a prefix of a larger one, and the graph's
    id order (crawl order, its dense and sparse regions) does not decide the size's shape."""
    sources = sorted(successors)
    if pages >= len(sources):
        return sources
    return sorted(random.Random(seed).sample(sources, pages))


class Tiled(Mapping[int, Sequence[int]]):
    """``copies`` disjoint copies of a graph, made on lookup: node ``n`` of copy ``k`` is
    ``n + k * span`` (``span``: the largest node id + 1), and its successors are the
    original's, offset the same.  No link joins two copies, so every copy's pages are
    co-cited exactly as in the original: a copy adds pages, not structure (its popular pages
    are as popular as the original's, not more).

    >>> tiled = Tiled({0: [1], 1: [0, 2]}, 2)
    >>> sorted(tiled), tiled[4], len(tiled)
    ([0, 1, 3, 4], [3, 5], 4)
    """

    def __init__(self, successors: Mapping[int, Sequence[int]], copies: int) -> None:
        if copies < 1:
            raise ValueError("at least one copy")
        self.base = successors
        self.copies = copies
        self.span = max((max([source, *targets]) for source, targets in successors.items()),
                        default=0) + 1

    def __getitem__(self, node: int) -> Sequence[int]:
        copy, original = divmod(node, self.span)
        if not 0 <= copy < self.copies or original not in self.base:
            raise KeyError(node)
        offset = copy * self.span
        return [target + offset for target in self.base[original]]

    def __iter__(self) -> Iterator[int]:
        for copy in range(self.copies):
            offset = copy * self.span
            for node in self.base:
                yield node + offset

    def __len__(self) -> int:
        return self.copies * len(self.base)


def tile(successors: Mapping[int, Sequence[int]], pages: int) -> Mapping[int, Sequence[int]]:
    """The graph itself when it has ``pages`` pages with links, else the fewest disjoint
    copies of it that have (``Tiled``).

    >>> len(tile({0: [1], 1: [0]}, 2)), len(tile({0: [1], 1: [0]}, 5))
    (2, 6)
    """
    if pages <= len(successors) or not successors:
        return successors
    return Tiled(successors, math.ceil(pages / len(successors)))


def node_url(node: int) -> str:
    return f"http://www.p{node}.org/"


def graph_records(successors: Mapping[int, Sequence[int]], sources: Sequence[int]
                  ) -> Iterator[dict[str, Any]]:
    """The segment record of each source: one block of its successors, no headings, no
    loose links."""
    for source in sources:
        url = node_url(source)
        block = [{"href": node_url(target), "anchor": "", "pos": position}
                 for position, target in enumerate(successors[source])]
        yield {"url": url, "site": site_of(url), "blocks": [block], "headings": [0], "loose": []}


def record_line(record: Mapping[str, Any]) -> str:
    """A segment record as ``jobs.segment`` writes it and the chain reads it: the page URL and
    the record, JSON, tab-separated (StandardJSONProtocol), with its newline.

    >>> record_line({"url": "http://www.p1.org/", "blocks": []})
    '"http://www.p1.org/"\\t{"url":"http://www.p1.org/","blocks":[]}\\n'
    """
    return (json.dumps(record["url"]) + "\t"
            + json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
