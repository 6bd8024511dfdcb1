"""A count of related 1's values per page (``jobs.hot_keys``) → what a hot-key plan needs:
each chain reducer's load from the pages Hadoop's hash places, and the heavy pages.

    python -m jobs.hot_key_bins -r inline|local|hadoop LOADS… --reducers R --total N -o BINS

Map-only: each mapper adds every light page's values to an array of R numbers, one per chain
reducer (``relatedpages.store.hotkeys.Bins``: the reducer ``partition`` gives the page),
writes a heavy page (above ``ROUTED_OF_FAIR_SHARE`` of the fair share ``N / R``) as it is
(key ``"heavy"``, ``[page, values]``), and its array at the end (key ``"bins"``).  Fewer
than ``64 R`` pages are heavy, whatever the input, so the output stays small: it is read
back on the gateway, where ``relatedpages.store.keyloads.plan_from_counts`` makes the plan.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

from mrjob.step import MRStep

if __name__ == "__main__":
    # A Hadoop task runs this file as a script from its working folder (see jobs.related).
    sys.path.insert(0, os.getcwd())

from jobs.base import ShippedJob

from relatedpages.store.hotkeys import Bins
from relatedpages.store.keyloads import BINS, HEAVY

BINS_GROUP = "hot keys"


class MRHotKeyBins(ShippedJob):
    """Pages' values → each chain reducer's load from the hash, and the heavy pages."""

    def configure_args(self) -> None:
        super().configure_args()
        self.add_passthru_arg(
            "--reducers", type=int, default=None,
            help="the chain's reducer count (mapreduce.job.reduces) the plan is for. Required")
        self.add_passthru_arg(
            "--total", type=int, default=None,
            help="the values of all the pages (the count job's hot keys.values). Required")

    def load_args(self, args: list[str]) -> None:
        super().load_args(args)
        if self.options.reducers is None or self.options.reducers < 1:
            self.arg_parser.error("--reducers: the chain's reducer count, at least 1")
        if self.options.total is None or self.options.total < 0:
            self.arg_parser.error("--total: the count job's total of values (hot keys.values)")

    def steps(self) -> list[MRStep]:
        return [MRStep(mapper_init=self.mapper_init_bins, mapper=self.mapper_bin,
                       mapper_final=self.mapper_final_bins)]

    def mapper_init_bins(self) -> None:
        self.bins = Bins(self.options.reducers, self.options.total)

    def mapper_bin(self, page: Any, load: Any) -> Iterator[tuple[str, Any]]:
        """Input: page → its values.  Output: the page, if it is heavy."""
        if not isinstance(page, str) or type(load) is not int or load < 0:
            self.increment_counter(BINS_GROUP, "bad_count_line")
            return
        if self.bins.add(page, load):
            self.increment_counter(BINS_GROUP, "heavy_pages")
            yield HEAVY, [page, load]

    def mapper_final_bins(self) -> Iterator[tuple[str, Any]]:
        yield BINS, list(self.bins.bins)


if __name__ == "__main__":
    MRHotKeyBins.run()
