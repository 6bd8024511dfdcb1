"""Related 1's values per page, counted record by record as Mapper1 emits them, and what
two jobs make of them for a hot-key plan: each reducer's load from the pages Hadoop's hash
places, and the pages heavy enough to be routed.

A plan (:func:`relatedpages.store.hotkeys.plan_keys`) needs every page's load for two things
only: the load each reducer gets from the pages the plan leaves to the hash, and the pages
above ``ROUTED_OF_FAIR_SHARE`` of a fair share.  So the jobs never gather the pages in one
process.  The count job (``jobs.hot_keys``) sums each page's values on a sample and the
total in a counter; the bins job (``jobs.hot_key_bins``, map-only, given the total) adds
each light page to an array of one number per chain reducer (``hotkeys.Bins``) and passes the
heavy pages on, fewer than ``reducers / routed`` in all.  :func:`plan_from_counts` sums the
arrays and packs the heavy pages: the plan :func:`plan_keys` makes from every page's load.
"""
from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from filters.anchors import AnchorWords
from filters.links import LinkFilterParams, filter_blocks
from relatedpages.scoring import similarity as sim
from relatedpages.scoring.granularity import units
from relatedpages.scoring.parameters import SimilarityParams, TieBreak
from relatedpages.store.hotkeys import PIECE_OF_FAIR_SHARE, PlanError, pack_keys

#: The fraction of the segment records a plan is counted from (only the pages' ratios
#: matter; a tenth gave 1.13 at 64 reducers on 31,250 graph pages: README, "Hot keys").
SAMPLE_DEFAULT = 0.1
#: The output keys of the bins job: a task's array, and a heavy page.
BINS, HEAVY = "bins", "heavy"


@dataclass(frozen=True)
class RecordValues:
    """What Mapper1 emits for one segment record, by page: the auxiliary values (one per
    filtered block citing a page), the cited values (one per raw (block, href) when the
    preset needs popularity; each carries the record's site), and the related pairs (each
    gives both its pages a value)."""

    aux: Counter[str]  # page -> auxiliary values
    cited: Counter[str]  # page -> cited values
    pairs: list[tuple[str, str]]  # (p1, p2): a value for p1 (with p2) and for p2 (with p1)

    @property
    def every(self) -> Counter[str]:
        """Page -> the values every piece of a split page gets a copy of (aux and cited)."""
        return self.aux + self.cited

    def page_loads(self) -> Counter[str]:
        """The values per page, with no plan."""
        loads = self.every
        for first, second in self.pairs:
            loads[first] += 1
            loads[second] += 1
        return loads


def is_chain_record(record: Any) -> bool:
    """Whether Mapper1 reads a segment record: a block list and a site."""
    return (isinstance(record, Mapping) and isinstance(record.get("blocks"), list)
            and isinstance(record.get("site"), str) and bool(record["site"]))


def record_values(record: Mapping[str, Any], words: AnchorWords, link_params: LinkFilterParams,
                  sim_params: SimilarityParams, key: str = "") -> RecordValues | None:
    """Mapper1's values for a segment record (``jobs.related.MRRelatedPages.mapper_emit_pairs``,
    value for value; ``key``, the record's input key, stands for a missing ``url``); None for
    a record Mapper1 rejects (:func:`is_chain_record`)."""
    if not is_chain_record(record):
        return None
    site = record["site"]
    unit_blocks, _ = units(record, sim_params.granularity)
    blocks, _ = filter_blocks(site, unit_blocks, words, link_params)
    aux: Counter[str] = Counter(sim.in_counts(blocks))
    cited: Counter[str] = Counter()
    if sim_params.tie_break is TieBreak.EVIDENCE or sim_params.site_fallback:
        cited.update(sim.raw_counts(unit_blocks))
    url = record.get("url")
    pairs = sim.page_pairs(site, blocks, sim_params.lam, distant_pairs=sim_params.distant_pairs,
                           page_url=url if isinstance(url, str) else key,
                           max_distance=sim_params.window, form=sim_params.proximity)
    return RecordValues(aux, cited, [(pair.p1, pair.p2) for pair in pairs])


def sampled(url: str, seed: int, fraction: float) -> bool:
    """Whether a count job counts the record of ``url``: decided by the URL and the seed
    alone (crc32), so every split of the input, on any runner, samples the same records.

    >>> sampled("http://a/", 1, 1.0), sampled("http://a/", 1, 0.0)
    (True, False)
    """
    return fraction >= 1 or zlib.crc32(f"{seed}\t{url}".encode("utf-8")) < fraction * 2**32


def plan_from_counts(rows: Iterable[tuple[Any, Any]], reducers: int, total: int | None = None,
                     piece: float = PIECE_OF_FAIR_SHARE) -> tuple[dict[str, list[int]], int]:
    """The plan for ``reducers`` from the bins job's output (its arrays and heavy pages),
    and the values counted.  Rows that do not fit (an array of another length, a page twice,
    an unknown key, values that do not add up to the count's ``total``) are a
    :class:`PlanError`: bins for other reducers, of another count, or another job's output."""
    bins = [0] * reducers
    arrays = 0
    heavy: dict[str, int] = {}
    for key, value in rows:
        if key == BINS and isinstance(value, list) and all(type(v) is int for v in value):
            if len(value) != reducers:
                raise PlanError(f"the counts are for {len(value):,} reducers, not {reducers:,}: "
                                f"count again with --reducers {reducers}")
            bins = [mine + theirs for mine, theirs in zip(bins, value)]
            arrays += 1
        elif (key == HEAVY and isinstance(value, list) and len(value) == 2
              and isinstance(value[0], str) and type(value[1]) is int):
            if value[0] in heavy:
                raise PlanError(f"page {value[0]!r} is counted twice: counts of one job only")
            heavy[value[0]] = value[1]
        else:
            raise PlanError(f"not a bins job's output line: {key!r}\t{value!r}")
    if not arrays:
        raise PlanError("no counts: the bins job's output is empty")
    counted = sum(bins) + sum(heavy.values())
    if total is not None and counted != total:
        raise PlanError(f"the bins hold {counted:,} values, the count {total:,}: "
                        "bins of another count")
    if reducers == 1 or counted == 0:
        return {}, counted
    return pack_keys(bins, heavy, reducers, piece), counted
