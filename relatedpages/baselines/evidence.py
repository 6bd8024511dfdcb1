"""Evidence for a result of a page-level method: the links that made it (issue 10, item 6).

Every method of :mod:`relatedpages.baselines.methods` relates two pages through the link
graph around them: co-citation and its extensions through the pages that link both
(*parents*), Companion and LLI also through the pages both link (*children*).  For a
query page u and a result v, the evidence is, from the graph alone:

* **shared parents**: pages linking both u and v, those that link them from one block
  first, then the closest in the page's link order (the co-citation reading: siblings
  near each other say more, Dean & Henzinger's BF window), then by name; each with v's
  anchor text on that page;
* **shared children**: pages both u and v link to, by name (bibliographic coupling, the
  out-link half of Companion's vicinity graph);
* **a direct link** between u and v (first, when there is one: Companion's vicinity holds
  u's children and parents), with its anchor text.

At most ``limit`` of each, with the full counts, so that a reader can check a result the
same way as a block co-citation result ("via PAGE «anchor»").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relatedpages.store.linkgraph import LinkGraph

EVIDENCE_LIMIT_DEFAULT = 3
#: Shared parents examined for their link positions (the closest are kept among them).
PARENTS_EXAMINED = 200

PARENT = "parent"
CHILD = "child"
LINK = "link"  # the node holds a link to the other page of the pair


@dataclass(frozen=True)
class LinkEvidence:
    """One page that relates the query and the result: a shared parent (with the result's
    anchor text there, and whether it links both from one block) or a shared child."""

    relation: str  # PARENT, CHILD or LINK
    node: int
    anchor: str = ""
    same_block: bool = False
    distance: int = 0  # parents: positions between the two links on the page (closest pair)


@dataclass(frozen=True)
class ResultEvidence:
    shared_parents: int
    shared_children: int
    items: tuple[LinkEvidence, ...]

    def as_json(self, graph: LinkGraph) -> list[list[object]]:
        """``[[relation, page URL, anchor text], …]``: the evidence of ``query --json``."""
        return [[item.relation, graph.name(item.node), item.anchor] for item in self.items]


def link_evidence(graph: LinkGraph, query: int, result: int,
                  limit: int = EVIDENCE_LIMIT_DEFAULT) -> ResultEvidence:
    """The shared parents and children of ``query`` and ``result`` (module docstring).

    >>> g = LinkGraph.from_pages([("http://h.org/", [("http://a.org/", "A", 0),
    ...     ("http://x.org/", "X", 0), ("http://b.org/", "B", 0)]),
    ...     ("http://k.org/", [("http://b.org/", "Bee", 1), ("http://a.org/", "", 1)])])
    >>> e = link_evidence(g, g.id_of("http://a.org/"), g.id_of("http://b.org/"))
    >>> e.shared_parents, [(i.relation, g.name(i.node), i.anchor, i.distance) for i in e.items]
    (2, [('parent', 'http://k.org/', 'Bee', 1), ('parent', 'http://h.org/', 'B', 2)])
    """
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit!r}")
    parents = np.intersect1d(graph.parents(query), graph.parents(result), assume_unique=True)
    children = np.intersect1d(graph.children(query), graph.children(result))
    children = children[(children != query) & (children != result)]
    ranked: list[tuple[tuple[bool, int, str], LinkEvidence]] = []
    for parent in parents[:PARENTS_EXAMINED].tolist():
        targets = graph.children(parent).tolist()
        blocks = graph.blocks(parent).tolist()
        anchors = graph.anchors(parent)
        at_query = [i for i, target in enumerate(targets) if target == query]
        at_result = [i for i, target in enumerate(targets) if target == result]
        distance, i, j = min((abs(i - j), i, j) for i in at_query for j in at_result)
        same = blocks[i] >= 0 and blocks[i] == blocks[j]
        item = LinkEvidence(PARENT, parent, anchors[j], same, distance)
        ranked.append(((not same, distance, graph.name(parent)), item))
    ranked.sort(key=lambda pair: pair[0])
    items = [LinkEvidence(LINK, source, graph.anchors(source)[where])
             for source, target in ((query, result), (result, query))
             for where in _first(graph.children(source), target)]
    items += [item for _, item in ranked[:limit]]
    shared = sorted(children.tolist(), key=graph.name)[:limit]
    items += [LinkEvidence(CHILD, child) for child in shared]
    return ResultEvidence(len(parents), len(children), tuple(items))


def _first(targets: np.ndarray, target: int) -> list[int]:
    """The position of the first link to ``target`` among ``targets`` (none: empty)."""
    found = np.flatnonzero(targets == target)
    return [int(found[0])] if len(found) else []
