"""Segment records → the connectivity server's link index records.

    python -m jobs.linkgraph -r inline|local|hadoop SEGMENTS… -o OUT

Per page its ordered out-links with anchor text and block number, per node its in-links
(relatedpages.store.linkindex explains the record).  Two steps:

1. the mapper reads a segment record and emits page → its out-links (every block's links
   in block order, block = index of the block, hrefs re-normalised); the reducer keeps
   one out-list per page (several segment outputs may hold the same page:
   ``linkindex.choose_out_links``) and emits it, plus target → citing page once per
   distinct target;
2. the reducer gathers, per node, its out-list (none: not crawled) and its citing pages.

Output, one line per node seen as a page or a link target:
``"<url>"\\t{"out": [[href, anchor, block], …], "in": [source, …], "crawled": bool}`` —
``in`` distinct and ascending.  ``linkindex.build_link_index`` writes it as a database.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

from mrjob.step import MRStep

if __name__ == "__main__":
    # A Hadoop task runs this file as a script from its working folder, where DIRS put the
    # project's packages: make them importable whatever PYTHONPATH the node sets.
    sys.path.insert(0, os.getcwd())

from jobs.base import ShippedJob

from relatedpages.store.linkindex import LinkEvent, choose_out_links, link_record, page_out_links

LINKGRAPH_GROUP = "linkgraph"
OUT_TAG = "out"
IN_TAG = "in"


class MRLinkGraph(ShippedJob):
    """Segment records in, one link record per node out."""

    def steps(self) -> list[MRStep]:
        return [
            MRStep(mapper=self.mapper_page_out_links, reducer=self.reducer_one_out_list),
            MRStep(reducer=self.reducer_link_record),
        ]

    def _count(self, event: LinkEvent, amount: int = 1) -> None:
        if amount:
            self.increment_counter(LINKGRAPH_GROUP, event.value, amount)

    def mapper_page_out_links(self, url: Any, record: Any) -> Iterator[tuple[str, list[list[Any]]]]:
        """Input: url → segment record.  Output: page → [[href, anchor, block], …]."""
        events: dict[LinkEvent, int] = {}
        found = page_out_links(record, events)
        for event, count in events.items():
            self._count(event, count)
        if found is not None:
            yield found

    def reducer_one_out_list(
        self, page: str, outs: Iterator[list[list[Any]]]
    ) -> Iterator[tuple[str, list[Any]]]:
        """Input: page → its out-lists (one per segment record of it).  Output: page →
        ["out", out-list], and target → ["in", page] per distinct target."""
        out, others = choose_out_links(outs)
        self._count(LinkEvent.DUPLICATE_PAGE_RECORD, others)
        yield page, [OUT_TAG, out]
        for target in dict.fromkeys(href for href, _, _ in out):
            yield target, [IN_TAG, page]

    def reducer_link_record(self, node: str, values: Iterator[list[Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
        """Input: node → ["out", out-list] (crawled pages) and ["in", page] per citing
        page.  Output: node → {"out", "in", "crawled"}."""
        out: list[list[Any]] | None = None
        sources = []
        for tag, value in values:
            if tag == OUT_TAG:
                out = value
            else:
                sources.append(value)
        self._count(LinkEvent.NODES)
        if out is None:
            self._count(LinkEvent.UNCRAWLED_NODES)
        yield node, link_record(out, sources)


if __name__ == "__main__":
    MRLinkGraph.run()
