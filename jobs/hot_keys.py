"""Segment records → related 1's values per page on a sample: the first of the two jobs
that make a hot-key plan (the second: ``jobs.hot_key_bins``).

    python -m jobs.hot_keys -r inline|local|hadoop SEGMENTS… [--sample 0.1] [--seed 1] -o LOADS

The mapper counts, on a sample of the records (``--sample``, chosen by URL and ``--seed``:
the same records on every runner and split), the values Mapper1 of ``jobs.related`` would
give each page (``relatedpages.store.keyloads.record_values``, at the chain options given:
the same ``--preset`` and switches as the chain's); a combiner and the reducer sum them.
Output: ``page<TAB>values``, one line per cited page; the counter ``hot keys.values`` holds
their total, which the bins job needs.  ``jobs.pipeline.plan_hot_keys`` runs both and makes
the plan (``relatedpages build --hot-keys R``, ``scripts/key_skew.py --runner``).
"""
from __future__ import annotations

import os
import sys
import tempfile
from typing import Any, Iterator

from mrjob.step import MRStep

if __name__ == "__main__":
    # A Hadoop task runs this file as a script from its working folder (see jobs.related).
    sys.path.insert(0, os.getcwd())

from jobs.base import ShippedJob

from filters.anchors import AnchorWords
from relatedpages.scoring.options import add_chain_options, chain_params_from
from relatedpages.store import leftovers
from relatedpages.store.keyloads import SAMPLE_DEFAULT, is_chain_record, record_values, sampled

COUNT_GROUP = "hot keys"


class MRHotKeyCounts(ShippedJob):
    """Related 1's values per page on a sample of the segment records, and their total."""

    def configure_args(self) -> None:
        super().configure_args()
        add_chain_options(self.add_passthru_arg)
        self.add_passthru_arg(
            "--sample", type=float, default=SAMPLE_DEFAULT,
            help="the fraction of the records counted. Default: %(default)s")
        self.add_passthru_arg(
            "--seed", type=int, default=1, help="which records the sample takes. "
                                                "Default: %(default)s")

    def load_args(self, args: list[str]) -> None:
        super().load_args(args)
        if not 0 < self.options.sample <= 1:
            self.arg_parser.error(f"--sample: a fraction in (0, 1], got {self.options.sample}")
        try:
            self.link_params, self.sim_params = chain_params_from(self.options)
        except ValueError as error:
            self.arg_parser.error(str(error))

    def steps(self) -> list[MRStep]:
        return [MRStep(mapper_init=self.mapper_init_words, mapper=self.mapper_count,
                       combiner=self.combiner_sum, reducer=self.reducer_sum)]

    def mapper_init_words(self) -> None:
        # jieba's cache in a folder of this task's own, as in jobs.related's Mapper1
        self._jieba_dir = tempfile.TemporaryDirectory(prefix="relatedpages-jieba-")
        leftovers.mark(self._jieba_dir.name)  # a killed task's: the next build removes it
        self.words = AnchorWords(cache_dir=self._jieba_dir.name)

    def mapper_count(self, url: Any, record: Any) -> Iterator[tuple[str, int]]:
        """Input: url → segment record.  Output: page → its values from this record."""
        if not is_chain_record(record):  # Mapper1 rejects it too
            self.increment_counter(COUNT_GROUP, "bad_segment_record")
            return
        page = record.get("url")
        key = url if isinstance(url, str) else ""
        if not sampled(page if isinstance(page, str) else key, self.options.seed,
                       self.options.sample):
            return
        values = record_values(record, self.words, self.link_params, self.sim_params, key)
        assert values is not None  # is_chain_record
        self.increment_counter(COUNT_GROUP, "sampled_records")
        yield from values.page_loads().items()

    def combiner_sum(self, page: str, loads: Iterator[int]) -> Iterator[tuple[str, int]]:
        yield page, sum(loads)

    def reducer_sum(self, page: str, loads: Iterator[int]) -> Iterator[tuple[str, int]]:
        """Input: page → partial sums.  Output: page → its values; their total in a counter."""
        total = sum(loads)
        self.increment_counter(COUNT_GROUP, "pages")
        self.increment_counter(COUNT_GROUP, "values", total)
        yield page, total


if __name__ == "__main__":
    MRHotKeyCounts.run()
