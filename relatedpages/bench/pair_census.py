"""Where the chain's work comes from: the related pairs Mapper1 emits, and the distinct
pairs {p1, p2} Reducer1 aggregates, counted by the kind of the citing page (a generated
web's topic sidecar: ``hub``, ``spam`` for link farms, else content).

The chain's cost per page is constant only if both counts grow with the pages; a block
whose links are drawn from a population that grows with the crawl (a generated link
farm's big block links random farm pages) makes the distinct pairs grow with its square
until the window (DESIGN.md, Mapper1: ``--window``) bounds each page's neighbours.
This reads the crawl as the pipeline does (``jobs.segment``, then Mapper1's filters and
pairs), in one process, with the chain's default parameters unless given others.
"""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filters.anchors import AnchorWords
from filters.links import LinkFilterParams, filter_blocks
from filters.site import site_of
from filters.urls import normalise_url
from relatedpages.corpus.ingest import Page, read_pages
from relatedpages.scoring import similarity as sim
from relatedpages.scoring.granularity import units
from relatedpages.scoring.parameters import SimilarityParams
from segmenter import segment_bytes, segment_record

#: The kinds a generated web's sidecar gives (its topics of hubs and link farms; every other
#: topic is a content site's, or its mirror's).
HUB, SPAM, CONTENT = "hub", "spam", "content"


@dataclass
class KindCensus:
    """The pages of one kind, the related pairs their blocks emit (Mapper1's count, one per
    unordered pair), and the distinct unordered pairs among them."""

    pages: int = 0
    pairs: int = 0
    distinct: set[int] = field(default_factory=set)  # 64-bit hashes: memory, not strings


@dataclass(frozen=True)
class Census:
    by_kind: Mapping[str, KindCensus]
    distinct_all: int  # distinct pairs over every kind (a pair two kinds emit counts once)

    @property
    def pages(self) -> int:
        return sum(kind.pages for kind in self.by_kind.values())

    @property
    def pairs(self) -> int:
        return sum(kind.pairs for kind in self.by_kind.values())


def kind_of(url: str, topics: Mapping[str, str]) -> str:
    """The kind of the site serving ``url``: the topic (``corpus.generate.read_topics``) of
    its longest domain suffix the sidecar lists (``www.x.org`` → ``x.org``)."""
    parts = (url.split("://", 1)[-1].split("/", 1)[0].split(":")[0]).split(".")
    for start in range(len(parts)):
        topic = topics.get(".".join(parts[start:]))
        if topic is not None:
            return topic if topic in (HUB, SPAM) else CONTENT
    return CONTENT


def page_records(crawl: Path, keep: Callable[[str], bool] | None = None
                 ) -> Iterator[dict[str, Any]]:
    """The segment record of every page of a crawl file (or of those whose normalised URL
    ``keep`` accepts: the others are not segmented), in its order, with its normalised URL
    and site, as ``jobs.segment``'s mapper makes them (pages whose URL does not normalise
    are skipped, as there)."""
    for item in read_pages(str(crawl)):
        if not isinstance(item, Page):
            continue
        url = normalise_url(item.url)
        if url is None or (keep is not None and not keep(url)):
            continue
        record = segment_record(segment_bytes(item.body, url, item.http_charset))
        yield {**record, "url": url, "site": site_of(url)}


def pair_census(crawl: Path, topics: Mapping[str, str], link_params: LinkFilterParams,
                sim_params: SimilarityParams) -> Census:
    """Count the related pairs of every page of ``crawl`` by its kind."""
    by_kind: dict[str, KindCensus] = {HUB: KindCensus(), SPAM: KindCensus(), CONTENT: KindCensus()}
    every: set[int] = set()
    with tempfile.TemporaryDirectory(prefix="relatedpages-jieba-") as cache:
        words = AnchorWords(cache_dir=cache)
        for record in page_records(crawl):
            url, site = record["url"], record["site"]
            blocks, _ = filter_blocks(site, units(record, sim_params.granularity)[0], words,
                                      link_params)
            pairs = sim.page_pairs(site, blocks, sim_params.lam, distant_pairs=sim_params.distant_pairs,
                                   page_url=url, max_distance=sim_params.window,
                                   form=sim_params.proximity)
            census = by_kind[kind_of(url, topics)]
            census.pages += 1
            census.pairs += len(pairs)
            hashes = {hash((pair.p1, pair.p2) if pair.p1 < pair.p2 else (pair.p2, pair.p1))
                      for pair in pairs}
            census.distinct |= hashes
            every |= hashes
    return Census(by_kind, len(every))


def format_census(census: Census, name: str) -> str:
    """The census as a Markdown table, a row per kind and one for all pages."""
    pages = census.pages or 1
    rows = [f"| {name} | pages | related pairs (Mapper1) | a page | distinct pairs (Reducer1) | a page |",
            "|---|---:|---:|---:|---:|---:|"]
    for kind in (CONTENT, HUB, SPAM):
        part = census.by_kind[kind]
        rows.append(f"| {kind} | {part.pages:,} | {part.pairs:,} | {part.pairs / pages:.1f} | "
                    f"{len(part.distinct):,} | {len(part.distinct) / pages:.1f} |")
    rows.append(f"| all | {census.pages:,} | {census.pairs:,} | {census.pairs / pages:.1f} | "
                f"{census.distinct_all:,} | {census.distinct_all / pages:.1f} |")
    return "\n".join(rows)
