"""Segment records → related pages by traditional co-citation (the paper's baseline).

    python -m jobs.cocitation -r inline|local|hadoop SEGMENTS… -o OUT

Dean & Henzinger's Cocitation over the whole corpus, as the paper ran it on Hadoop: whole
pages (no blocks, no anchors, no caps), siblings = the links at most BF/2 positions
around each link, degree = number of distinct citing pages; normalisation and the site
rules of block co-citation (relatedpages.scoring.cocitation explains the choice of filters).

One step: the mapper emits, per sibling pair {u, v} of a page, u → (v, site, page,
distance, v's anchor) and v → (u, site, page, distance, u's anchor); the values of u arrive
sorted (SORT_VALUES), so the reducer counts degrees, keeps each citing site's strongest
citing page (the nearest siblings) and the top M in constant memory.  Output, one line per
page with at least one related page, the same records as ``jobs.related``:
``"<url>"\\t[[related_url, degree, [[citing_site, pages, citing_page, anchor], …]], …]`` —
best first, at most M, each degree >= --min-degree.
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

from filters.links import LinkFilterParams
from relatedpages.scoring import cocitation as cc
from relatedpages.scoring.cocitation import CocitationEvent
from relatedpages.scoring.parameters import EVIDENCE_DEFAULT, M_DEFAULT

FILTER_GROUP = "filters"
COCITATION_GROUP = "cocitation"


class MRCocitation(ShippedJob):
    """Traditional co-citation: segment records in, ranked related pages out."""

    # The values of a page reach the reducer sorted by their encoded bytes, so each
    # sibling's values form one run (relatedpages.scoring.cocitation, "intermediate values").
    SORT_VALUES = True

    def configure_args(self) -> None:
        super().configure_args()
        arg = self.add_passthru_arg
        arg("--bf", type=int, default=cc.BF_DEFAULT,
            help="BF: siblings are the links at most BF/2 positions before or after a link "
                 "(even). Default: %(default)s")
        arg("--m", type=int, default=M_DEFAULT,
            help="M: related pages kept per page. Default: %(default)s")
        arg("--min-degree", type=int, default=cc.MIN_DEGREE_DEFAULT,
            help="minimum co-citation degree (distinct citing pages). Default: %(default)s")
        arg("--evidence", type=int, default=EVIDENCE_DEFAULT,
            help="citing sites kept as evidence per result. Default: %(default)s")
        defaults = cc.TRADITIONAL_LINK_FILTERS
        arg("--large-block", type=int, default=defaults.large_block,
            help="S: drop blocks with more links (0: keep all; the traditional algorithm "
                 "has no blocks). Default: %(default)s")
        # One switch per link filter; the default is the traditional algorithm's choice.
        for name in cc.SWITCHABLE_FILTERS:
            on = getattr(defaults, name)
            flag = name.replace("_", "-")
            arg(f"--no-{flag}-filter" if on else f"--{flag}-filter", dest=f"{name}_filter",
                action="store_false" if on else "store_true", default=on,
                help=f"switch the {name.replace('_', ' ')} filter {'off' if on else 'on'}")

    def load_args(self, args: list[str]) -> None:
        super().load_args(args)
        options = self.options
        try:
            switches: dict[str, Any] = {
                name: getattr(options, f"{name}_filter") for name in cc.SWITCHABLE_FILTERS
            }
            link_filters = LinkFilterParams(
                large_block=options.large_block, singleton=False, **switches
            )
            self.params = cc.CocitationParams(
                bf=options.bf, m=options.m, min_degree=options.min_degree,
                evidence=options.evidence, link_filters=link_filters,
            )
        except ValueError as error:
            self.arg_parser.error(str(error))

    def steps(self) -> list[MRStep]:
        return [MRStep(mapper=self.mapper_emit_siblings, reducer=self.reducer_top_cocited)]

    def _count(self, event: CocitationEvent, amount: int = 1) -> None:
        if amount:
            self.increment_counter(COCITATION_GROUP, event.value, amount)

    def mapper_emit_siblings(self, url: str, record: Any) -> Iterator[tuple[str, list[Any]]]:
        """Input: url → segment record.  Output, per sibling pair {u, v} of the page (at
        most BF/2 apart, different sites), u → (v, site, page, distance, v's anchor) and
        v → (u, site, page, distance, u's anchor)."""
        if not isinstance(record, dict) or not isinstance(record.get("blocks"), list):
            self._count(CocitationEvent.BAD_SEGMENT_RECORD)
            return
        page, site = record.get("url"), record.get("site")
        if not isinstance(page, str) or not page or not isinstance(site, str) or not site:
            self._count(CocitationEvent.BAD_SEGMENT_RECORD)
            return
        blocks, events = cc.cocitation_links(site, record["blocks"], self.params)
        for event, count in events.items():
            self.increment_counter(FILTER_GROUP, event.value, count)
        siblings = cc.page_siblings(blocks, self.params.bf)
        self._count(CocitationEvent.LINK_REPEATED_IN_PAGE, siblings.repeated)
        self._count(CocitationEvent.SAME_SITE_SIBLINGS, siblings.same_site)
        self._count(CocitationEvent.SIBLING_PAIRS, len(siblings.pairs))
        if not siblings.pairs:
            self._count(CocitationEvent.PAGE_WITHOUT_SIBLINGS)
        yield from siblings.values(site, page)

    def reducer_top_cocited(
        self, url: str, values: Iterator[Any]
    ) -> Iterator[tuple[str, list[Any]]]:
        """Input: u → (v, citing site, citing page, distance, anchor), sorted (by v, site,
        page).  Output: u → at most M (v, degree, evidence), degree >= min degree, best
        first, ties by URL; the evidence names each citing site's strongest citing page and
        v's anchor there.  One pass, constant memory: running counts and a bounded heap."""
        entries, counts = cc.top_cocited(
            cc.cocited_degrees(self._decoded(values), self.params.evidence), self.params
        )
        for event, count in counts.items():
            self._count(event, count)
        if entries:
            self._count(CocitationEvent.PAGES_WITH_RELATED)
            yield url, entries

    def _decoded(self, values: Iterator[Any]) -> Iterator[cc.SiblingValue]:
        for value in values:
            try:
                yield cc.decode_sibling_value(value)
            except ValueError:
                self._count(CocitationEvent.BAD_INTERMEDIATE_VALUE)


if __name__ == "__main__":
    MRCocitation.run()
