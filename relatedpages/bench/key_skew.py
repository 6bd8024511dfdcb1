"""Reducer input skew of the chain's first job, predicted from its keys: which reducer
Hadoop gives each key, and how much the hottest keys weigh as the reducers multiply.

Related 1's key is a cited page; its reducer reads, per page, one auxiliary value per
filtered block citing it, one cited value per raw (block, href) when the preset needs
popularity, and one pair value per related pair it belongs to (Mapper1,
``jobs.related.MRRelatedPages.mapper_emit_pairs``).  :func:`key_loads` counts those values
key by key, as Mapper1 makes them (with or without a hot-key plan);
``relatedpages.store.hotkeys.partition`` is Hadoop's partitioner.  Together they give each
reducer's input records without a cluster, at any number of reducers (``tests/test_hadoop.py``
checks the partitioner against Hadoop's; the MiniCluster's job histories agree).

A key cannot be split by a partitioner: when the hottest key's values exceed a reducer's
fair share (all values over the reducers), the skew is at least their ratio, whatever the
hash (:attr:`Skew.floor`).
"""
from __future__ import annotations

import json
import random
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from filters.anchors import AnchorWords
from filters.links import LinkFilterParams
from relatedpages.bench.pair_census import page_records
from relatedpages.scoring.options import preset_link_params
from relatedpages.scoring.parameters import Preset, SimilarityParams, preset_params
from relatedpages.store import hotkeys
from relatedpages.store.hotkeys import partition
from relatedpages.store.keyloads import record_values

#: A key of related 1: a page, or ``(page, label)`` under a plan (``relatedpages.store.hotkeys``).
Key = Union[str, tuple[str, int]]


def key_loads(records: Iterable[Mapping[str, Any]], link_params: LinkFilterParams,
              sim_params: SimilarityParams,
              plan: Mapping[str, Sequence[int]] | None = None) -> Counter[Key]:
    """Related 1's input records per key (cited page) for these segment records, counted as
    Mapper1 emits them: auxiliary, cited (under the evidence tie-break or the site
    fallback) and pair values; with a hot-key ``plan``, per key Mapper1 writes under it.  Records Mapper1 rejects add nothing."""
    plan = plan or {}
    loads: Counter[Key] = Counter()

    def add_every(counts: Mapping[str, int]) -> None:
        for page, count in counts.items():
            for key in hotkeys.every_key(page, plan):
                loads[key if isinstance(key, str) else (key[0], key[1])] += count

    def add_pair(page: str, other: str) -> None:
        key = hotkeys.pair_key(page, other, plan)
        loads[key if isinstance(key, str) else (key[0], key[1])] += 1

    with tempfile.TemporaryDirectory(prefix="relatedpages-jieba-") as cache:
        words = AnchorWords(cache_dir=cache)
        for record in records:
            values = record_values(record, words, link_params, sim_params)
            if values is None:
                continue
            add_every(values.every)
            for first, second in values.pairs:
                add_pair(first, second)
                add_pair(second, first)
    return loads


@dataclass(frozen=True)
class Foldable:
    """What a combiner on related 1's map side could fold, records split over ``tasks`` map
    tasks: within a task, a page's auxiliary values (Reducer1 only counts them: in_p) into
    one, and its cited values from one citing site (Reducer1 counts each site's run:
    popularity) into one; pair values differ value by value and stay."""

    tasks: int
    values: int  # Mapper1's values: related 1's map output records
    aux: int
    cited: int
    after: int  # the values left after folding in every task
    hottest: str  # the page with the most values
    hottest_values: int
    hottest_after: int

    @property
    def pairs(self) -> int:
        return self.values - self.aux - self.cited


def combiner_fold(records: Sequence[Mapping[str, Any]], link_params: LinkFilterParams,
                  sim_params: SimilarityParams, tasks: int) -> Foldable:
    """:class:`Foldable` for these segment records, split in order into ``tasks`` runs of
    equal length (as Hadoop splits a file), counted as Mapper1 emits them."""
    size = max(1, -(-len(records) // max(tasks, 1)))
    loads: Counter[str] = Counter()
    folded: Counter[str] = Counter()
    aux = cited = 0
    with tempfile.TemporaryDirectory(prefix="relatedpages-jieba-") as cache:
        words = AnchorWords(cache_dir=cache)
        for start in range(0, len(records), size):
            aux_pages: set[str] = set()
            cited_from: set[tuple[str, str]] = set()
            for record in records[start:start + size]:
                values = record_values(record, words, link_params, sim_params)
                if values is None:
                    continue
                loads.update(values.page_loads())
                aux += sum(values.aux.values())
                cited += sum(values.cited.values())
                aux_pages.update(values.aux)
                cited_from.update((page, record["site"]) for page in values.cited)
                for first, second in values.pairs:
                    folded[first] += 1
                    folded[second] += 1
            folded.update(aux_pages)
            folded.update(page for page, _ in cited_from)
    page, most = (hottest(loads, 1) or [("", 0)])[0]
    return Foldable(tasks, sum(loads.values()), aux, cited, sum(folded.values()), page,
                    most, folded[page])


def page_loads(records: Iterable[Mapping[str, Any]], link_params: LinkFilterParams,
               sim_params: SimilarityParams) -> Counter[str]:
    """:func:`key_loads` without a plan: every key is a page."""
    return Counter({str(key): load for key, load in
                    key_loads(records, link_params, sim_params).items()})


@dataclass(frozen=True)
class Skew:
    """Each reducer's input records at one number of reducers, and the hottest key's."""

    reducers: int
    records: tuple[int, ...]  # per reducer
    hottest: int  # the largest single key's records

    @property
    def mean(self) -> float:
        return sum(self.records) / self.reducers

    @property
    def skew(self) -> float:
        """The largest reducer's input over the mean (1.0: even)."""
        return max(self.records) / self.mean if self.mean else 1.0

    @property
    def floor(self) -> float:
        """The skew no partitioner can go under without splitting a key: the hottest key's
        records over the mean (at least 1)."""
        return max(1.0, self.hottest / self.mean) if self.mean else 1.0


def reducer_skew(loads: Mapping[Any, int], reducers: int) -> Skew:
    """Each reducer's input records when Hadoop partitions ``loads``' keys over
    ``reducers``."""
    records = [0] * reducers
    for key, load in loads.items():
        records[partition(key, reducers)] += load
    return Skew(reducers, tuple(records), max(loads.values(), default=0))


def plan_and_predict(records: Sequence[Mapping[str, Any]], reducers: int, seed: int,
                     sample: float = 0.1, link_params: LinkFilterParams | None = None,
                     sim_params: SimilarityParams | None = None
                     ) -> tuple[dict[str, list[int]], tuple[float, float]]:
    """A hot-key plan for ``reducers`` made from a seeded ``sample`` of the records (the
    chain's defaults unless given parameters), and related 1's skew over all of them
    without and with it."""
    if link_params is None or sim_params is None:
        link_params, sim_params = default_chain_params()
    rng = random.Random(seed)
    sampled = [record for record in records if rng.random() < sample] if sample < 1 else records
    plan = hotkeys.plan_keys(page_loads(sampled, link_params, sim_params), reducers)
    return plan, predicted_skew(records, reducers, plan, link_params, sim_params)


def predicted_skew(records: Sequence[Mapping[str, Any]], reducers: int,
                   plan: Mapping[str, Sequence[int]], link_params: LinkFilterParams | None = None,
                   sim_params: SimilarityParams | None = None) -> tuple[float, float]:
    """Related 1's reducer skew over the records without and with ``plan`` (the chain's
    defaults unless given parameters)."""
    if link_params is None or sim_params is None:
        link_params, sim_params = default_chain_params()
    without = reducer_skew(key_loads(records, link_params, sim_params), reducers).skew
    with_plan = (reducer_skew(key_loads(records, link_params, sim_params, plan), reducers).skew
                 if plan else without)
    return without, with_plan


def default_chain_params() -> tuple[LinkFilterParams, SimilarityParams]:
    """The chain's parameters at its defaults (what ``jobs.related`` gets without flags)."""
    return preset_link_params(Preset.DEFAULT), preset_params(Preset.DEFAULT)


def hottest(loads: Mapping[Any, int], count: int) -> list[tuple[Any, int]]:
    """The ``count`` keys with the most records, most first (ties by key)."""
    return sorted(loads.items(), key=lambda item: (-item[1], str(item[0])))[:count]


def format_skew(rows: Sequence[tuple[str, Skew]],
                planned: Sequence[tuple[int, Skew]]) -> str:
    """A Markdown table: per (input, reducers) the skew and its floor, then with a plan
    (the pages it routes, the skew)."""
    lines = ["| input | reducers | records a reducer (mean) | hottest key | skew (max/mean) "
             "| floor (hottest/mean) | pages routed by the plan | skew with the plan |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, row), (pages, split) in zip(rows, planned):
        lines.append(f"| {name} | {row.reducers:,} | {row.mean:,.0f} | {row.hottest:,} | "
                     f"{row.skew:.2f} | {row.floor:.2f} | {pages:,} | {split.skew:.2f} |")
    return "\n".join(lines)


def read_segment_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a segment job's output file (``url<TAB>record`` lines); lines that
    are not a record are skipped, as Mapper1 skips them."""
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            _, tab, value = line.partition("\t")
            try:
                record = json.loads(value) if tab else None
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


def segment_crawl(crawl: Path) -> Iterator[dict[str, Any]]:
    """The segment records ``jobs.segment`` makes of a crawl file, in one process (each URL
    once: the last record of it wins, as in the job's reducer)."""
    yield from {record["url"]: record for record in page_records(crawl)}.values()
