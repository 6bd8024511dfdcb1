"""The paper's future work, measured: a mirror-site filter and citing sites weighted by
PageRank (issue 10, item 4).

Both are variants of the default preset, computed with the oracle
(:func:`relatedpages.scoring.reference.reference_related`) so that they are exactly the product
plus one change, and scored by the same code as ``relatedpages eval related`` and
``relatedpages eval topics``:

* **Mirror filter.**  A block whose links (the set of its hrefs, at least
  :data:`MIRROR_MIN_LINKS` of them, before the link filters) appear as one block on pages
  of several sites is a mirror's copy or a shared widget: it cites from one site only, the
  first of those sites in sort order (:func:`mirror_owners`, :func:`without_mirrors`).
  "Sites whose blocks repeat another site's links count once."
* **PageRank weights.**  PageRank of the site graph (a site links a site when a block of
  one of its pages links a page of the other; :func:`site_pagerank`) weights each citing
  site: a result's score becomes Σ over its citing sites of ``1 + ln(1 + n · PR(site))``
  (n = the number of sites, so an average site weighs 1 + ln 2) instead of their number
  (:func:`pagerank_weighted`).  Ties keep the default preset's order.

``scripts/eval_future_work.py`` prints both against the default preset on the hub lists'
development split and on a generated web.  Neither is in the default preset: on the
measurements in the README ("The paper's future work") the mirror filter changes nothing
measurable and the PageRank weights lose on both ground truths.
"""
from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from filters.site import site_of

#: A block counts as a mirror's copy when it has at least this many distinct links.
MIRROR_MIN_LINKS = 5
PAGERANK_DAMPING = 0.85
PAGERANK_TOLERANCE = 1e-10
PAGERANK_MAX_ITERATIONS = 200


def block_fingerprint(block: Sequence[Mapping[str, Any]]) -> str:
    """The identity of a block's links: a digest of its distinct hrefs, in sort order.

    >>> a = block_fingerprint([{"href": "http://x/"}, {"href": "http://y/"}])
    >>> a == block_fingerprint([{"href": "http://y/"}, {"href": "http://x/"}, {"href": "http://y/"}])
    True
    """
    hrefs = sorted({link["href"] for link in block})
    return hashlib.sha1("\n".join(hrefs).encode("utf-8")).hexdigest()


def mirror_owners(records: Iterable[Mapping[str, Any]],
                  min_links: int = MIRROR_MIN_LINKS) -> dict[str, str]:
    """``{fingerprint: owner site}`` of every block of ``min_links`` or more distinct links
    that pages of more than one site hold; the owner is the first of those sites.

    >>> links = [{"href": f"http://t{i}.org/"} for i in range(5)]
    >>> owners = mirror_owners([{"site": "b.org", "blocks": [links]},
    ...                         {"site": "a.org", "blocks": [links, links[:4]]},
    ...                         {"site": "c.org", "blocks": [links[:4]]}])
    >>> list(owners.values())
    ['a.org']
    """
    sites: defaultdict[str, set[str]] = defaultdict(set)
    for record in records:
        for block in record["blocks"]:
            if len({link["href"] for link in block}) >= min_links:
                sites[block_fingerprint(block)].add(record["site"])
    return {fingerprint: min(held) for fingerprint, held in sites.items() if len(held) > 1}


def without_mirrors(records: Iterable[Mapping[str, Any]],
                    owners: Mapping[str, str]) -> Iterator[dict[str, Any]]:
    """The records with every mirrored block cited from its owner: a page is split into one
    record per citing site (its own blocks, and each owner's copies), same URL.

    >>> links = [{"href": f"http://t{i}.org/"} for i in range(5)]
    >>> own = [{"href": "http://o.org/"}]
    >>> out = list(without_mirrors([{"url": "http://m.org/", "site": "m.org",
    ...                              "blocks": [links, own]}], {block_fingerprint(links): "a.org"}))
    >>> [(r["site"], len(r["blocks"])) for r in out]
    [('m.org', 1), ('a.org', 1)]
    """
    for record in records:
        by_site: dict[str, list[Any]] = {record["site"]: []}
        for block in record["blocks"]:
            owner = owners.get(block_fingerprint(block), record["site"]) if owners else record["site"]
            by_site.setdefault(owner, []).append(block)
        for site, blocks in by_site.items():
            if blocks or site == record["site"]:
                yield {**record, "site": site, "blocks": blocks}


def site_pagerank(records: Iterable[Mapping[str, Any]], damping: float = PAGERANK_DAMPING,
                  tolerance: float = PAGERANK_TOLERANCE) -> dict[str, float]:
    """PageRank of the site graph of ``records`` (edges weighted by the number of links
    from blocks of one site's pages to pages of another; dangling sites spread evenly),
    by power iteration until the L1 change is below ``tolerance``.  Sums to 1.

    >>> rank = site_pagerank([{"site": "a.org", "blocks": [[{"href": "http://b.org/"}]]},
    ...                       {"site": "c.org", "blocks": [[{"href": "http://b.org/"}]]}])
    >>> max(rank, key=rank.get), round(sum(rank.values()), 6)
    ('b.org', 1.0)
    """
    out: defaultdict[str, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    nodes: set[str] = set()
    for record in records:
        source = record["site"]
        nodes.add(source)
        for block in record["blocks"]:
            for link in block:
                target = site_of(link["href"])
                if target is not None and target != source:
                    out[source][target] += 1
                    nodes.add(target)
    ordered = sorted(nodes)
    n = len(ordered)
    if not n:
        return {}
    rank = dict.fromkeys(ordered, 1.0 / n)
    totals = {site: sum(targets.values()) for site, targets in out.items()}
    for _ in range(PAGERANK_MAX_ITERATIONS):
        dangling = sum(rank[site] for site in ordered if site not in totals)
        base = (1.0 - damping) / n + damping * dangling / n
        following = dict.fromkeys(ordered, base)
        for site, targets in out.items():
            share = damping * rank[site] / totals[site]
            for target, count in targets.items():
                following[target] += share * count
        change = sum(abs(following[site] - rank[site]) for site in ordered)
        rank = following
        if change < tolerance:
            break
    return rank


def site_weight(rank: Mapping[str, float], site: str) -> float:
    """A citing site's weight: 1 + ln(1 + n · PR), n = the number of sites (an unknown
    site has the average rank 1/n).

    >>> round(site_weight({"a": 0.5, "b": 0.5}, "a"), 4), round(site_weight({"a": 1.0}, "z"), 4)
    (1.6931, 1.6931)
    """
    n = len(rank) or 1
    return 1.0 + math.log1p(n * rank.get(site, 1.0 / n))


def pagerank_weighted(related: Mapping[str, Sequence[Sequence[Any]]], rank: Mapping[str, float],
                      k: int) -> dict[str, list[list[Any]]]:
    """Re-rank full candidate lists (every candidate, with every citing site in its
    evidence: the oracle run with ``m`` and ``evidence`` unbounded) by the summed weights
    of their citing sites; the incoming order breaks ties (a stable sort).

    >>> lists = {"p": [["x", 2, [["s1", 1.0], ["s2", 1.0]]], ["y", 1, [["big", 1.0]]]]}
    >>> [e[0] for e in pagerank_weighted(lists, {"s1": .01, "s2": .01, "big": .98}, 2)["p"]]
    ['y', 'x']
    """
    out: dict[str, list[list[Any]]] = {}
    for url, entries in related.items():
        scored = [[entry[0], round(sum(site_weight(rank, item[0]) for item in entry[2]), 6),
                   entry[2]] for entry in entries]
        scored.sort(key=lambda entry: -entry[1])
        out[url] = scored[:k]
    return out
