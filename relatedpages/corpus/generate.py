"""A deterministic synthetic web: the bundled default input (``relatedpages generate``).

:func:`generate_crawl` writes a WARC.gz crawl of ``pages`` HTML pages and a sidecar
``<path>.topics.tsv`` (``site<TAB>topic`` for every generated site: the ground truth the
demo and the quality gate score related pages against).

The web it models
-----------------
* **Content sites** (about 85 % of the pages) in :data:`TOPICS`: nine English topics and
  three Chinese ones (Chinese site names and anchors, half of them served as GBK with a
  ``<meta charset>``).  Content site ``i`` has topic ``i mod len(TOPICS)`` and *ring
  position* ``i // len(TOPICS)``: the sites of a topic form a ring, and neighbours on the
  ring are "close" (think of sub-topics).  A site has a home page, articles and an about
  page.  Every page carries the site's templates: a header with an image link (no anchor
  text), a navigation bar (own-site links, a dynamic search link), and a footer with a
  different background holding the **registration link** (:data:`REGISTRATION_URL`, the
  same URL on every home page and ~90 % of the other pages of every site, anchor
  ``京ICP备…号``, like the paper's
  ``miibeian.gov.cn`` case), social share links (Twitter/Facebook share URLs, which the
  dynamic filter turns into the social sites' home pages), and on a third of the sites
  two "friend links" to the next two sites on the ring.  Articles have in-text dynamic
  (``?id=``) and file (``.pdf``) links, share buttons, sometimes a "Resources" list of
  nearby same-topic sites (dynamic and file variants included) and a mixed-topic ad block
  (landing pages and ``?utm_`` links of advertiser sites of every topic).
* **Hub sites** (~6 % of the pages, about three pages per hub site): portals (one
  ``<h2>`` heading per topic, then sub-headings) and topic directories (the sub-sections
  of one topic, then other topics), 5-9 headings a page.  Under each heading a ``<ul>``
  lists 5-12 sites of ONE topic, taken from a window of the topic's ring, in random
  order, with the site names as anchors; the headings of one topic on one page list
  disjoint windows.  Hubs are what block co-citation feeds on: a content site is listed
  in ~45-50 hub blocks on 30-45 hub sites (median; measured at 3,000 and 20,000 pages),
  so two sites a few ring steps apart are co-cited by many *different* sites (TS sums
  over citing sites, each capped at N).  A third of the hubs are Chinese (``…导航``) and
  list the Chinese topics.
* **Link farms** (~3 %): spam sites whose pages hold one huge block of links to other
  farm pages (above the large-block threshold S = 80) and a smaller "partners" block of
  farm home pages.  Topic ``spam``.
* **Mirrors** (~4 %): other domains serving a content or hub site's pages (their own
  URLs, the same links).  A mirror has its original's topic.

Topics in the sidecar: a content site's topic slug, ``hub`` for hubs (and their mirrors),
``spam`` for link farms.  Sites that are only linked to (the registration site, social
networks) are not generated and not in the sidecar.

Determinism and memory
----------------------
Nothing is stored per site.  Every property of site ``i`` of a kind (name, domain,
charset, page count, flags) and of page ``k`` is a pure function of ``(seed, kind, i, k)``:
names come from an affine permutation of mixed-radix word indices (unique by
construction), coin flips from BLAKE2b of a key string, and each page draws from its own
``random.Random(key string)`` (string seeds are hashed with SHA-512: the same on every
platform and every run, unlike ``hash()``).  Page counts add up to exactly ``pages``:
each kind's total is split evenly and pairs of sites trade a random number of pages.
So the crawl streams out page by page in constant memory (a small LRU cache of site
descriptions), and the WARC is byte-identical for the same ``(pages, seed)``: fixed
``WARC-Date`` (a start day derived from the seed, plus one second per record), record ids
``uuid5`` of ``(seed, record number)``, and warcio's gzip members carry no timestamp.
"""
from __future__ import annotations

import io
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

# The site model, the page writers and the vocabulary live in modules of their own; their
# names are this module's too (the import path every user, test and the README knows).
from relatedpages.corpus.generate_pages import web_pages
from relatedpages.corpus.generate_sites import _Plan, _Site, _Web, home_url, registration_url  # noqa: F401
from relatedpages.corpus.generate_vocabulary import (  # noqa: F401
    _LABELS,
    CONTENT_PAGES_PER_SITE,
    FARM_BIG_BLOCK_LINKS,
    FARM_PAGE_SHARE,
    FARM_PAGES_PER_SITE,
    FARM_PARTNER_LINKS,
    HUB_BLOCK_SITES,
    HUB_HEADINGS,
    HUB_PAGE_SHARE,
    HUB_PAGES_PER_SITE,
    HUB_TOPIC,
    MIRROR_PAGE_SHARE,
    MIRROR_PAGES_PER_SITE,
    REGISTRATION_SHARE,
    REGISTRATION_URL,
    SPAM_TOPIC,
    TOPIC_BY_SLUG,
    TOPICS,
    SiteKind,
    Topic,
)

logger = logging.getLogger(__name__)

#: The demo's crawl size: generated in under a second, segmented and related by the
#: inline runner in ~10 s; block co-citation then finds ~11 related sites per content site.
PAGES_DEFAULT = 3_000
SEED_DEFAULT = 1

TOPICS_SIDECAR_SUFFIX = ".topics.tsv"
#: Topic order of :func:`sample_queries` (English and Chinese mixed from the start).
DEMO_TOPIC_ORDER = (
    "travel", "zh-food", "programming", "cooking", "zh-travel", "photography",
    "finance", "zh-finance", "gardening", "music", "football", "health",
)  # fmt: skip


# --------------------------------------------------------------------------- WARC


@dataclass(frozen=True)
class GeneratedCrawl:
    """What :func:`generate_crawl` wrote."""

    path: Path
    topics_path: Path
    pages: int
    seed: int
    sites: int
    content_sites: int
    hub_sites: int
    hub_pages: int
    farm_sites: int
    mirror_sites: int
    topics: int
    bytes: int
    seconds: float

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")


def parse_web_sizes(text: str, least: int = 10) -> list[int]:
    """Generated web sizes given as comma-separated page counts (a script's ``--pages``),
    each at least ``least``; ValueError says what is wrong.

    >>> parse_web_sizes("31250,62500")
    [31250, 62500]
    >>> parse_web_sizes("300,many")
    Traceback (most recent call last):
    ValueError: whole numbers separated by commas, got '300,many'
    """
    try:
        sizes = [int(value) for value in text.split(",")]
    except ValueError:
        raise ValueError(f"whole numbers separated by commas, got {text!r}") from None
    if any(size < least for size in sizes):
        raise ValueError(f"at least {least} pages a web")
    return sizes


def topics_path_for(path: str | os.PathLike[str]) -> Path:
    """The sidecar of a generated crawl: ``<path>.topics.tsv``.

    >>> str(topics_path_for("out/crawl.warc.gz"))
    'out/crawl.warc.gz.topics.tsv'
    """
    return Path(str(path) + TOPICS_SIDECAR_SUFFIX)


def _warc_start(seed: int) -> datetime:
    """The first record's WARC-Date: a day of 2009 (the paper's year) chosen by the seed."""
    return datetime(2009, 1, 1, tzinfo=timezone.utc) + timedelta(days=seed % 365, hours=8)


def _write_response(writer: Any, url: str, body: bytes, charset: str, number: int,
                    seed: int, start: datetime) -> None:
    from warcio.statusandheaders import StatusAndHeaders

    http_headers = StatusAndHeaders(
        "200 OK",
        [("Content-Type", f"text/html; charset={charset}"), ("Content-Length", str(len(body)))],
        protocol="HTTP/1.1",
    )
    date = (start + timedelta(seconds=number)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"relatedpages-generate:{seed}:{number}")
    record = writer.create_warc_record(
        url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http_headers,
        warc_headers_dict={"WARC-Record-ID": f"<urn:uuid:{record_id}>", "WARC-Date": date},
    )
    writer.write_record(record)


def generate_crawl(path: str | os.PathLike[str], *, pages: int, seed: int = SEED_DEFAULT) -> GeneratedCrawl:
    """Write a synthetic crawl of ``pages`` pages to ``path`` (WARC.gz) and its topics sidecar.

    Deterministic: the same ``(pages, seed)`` gives byte-identical files.  Streams in
    constant memory.  Both files are written beside their final names and renamed into
    place at the end (an interrupted run leaves no half crawl under ``path``).  Raises
    ValueError for ``pages < 1`` or a non-int seed.
    """
    if isinstance(pages, bool) or not isinstance(pages, int) or pages < 1:
        raise ValueError(f"pages must be an int >= 1, got {pages!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")
    from warcio.warcwriter import WARCWriter

    started = time.perf_counter()
    target = Path(path)
    topics_target = topics_path_for(target)
    partial = target.with_name(target.name + ".partial")
    topics_partial = topics_target.with_name(topics_target.name + ".partial")
    target.parent.mkdir(parents=True, exist_ok=True)  # `-o out/web.warc.gz` in a fresh checkout
    web = _Web(pages, seed)
    start = _warc_start(seed)
    written = 0
    finished = False
    try:
        with open(partial, "wb") as raw, open(topics_partial, "w", encoding="utf-8", newline="\n") as sidecar:
            writer = WARCWriter(raw, gzip=True)
            last_site: _Site | None = None
            for site, url, body in web_pages(web):
                if site is not last_site:
                    sidecar.write(f"{site.domain}\t{site.topic}\n")
                    last_site = site
                _write_response(writer, url, body, site.charset, written, seed, start)
                written += 1
            size = raw.tell()
        os.replace(partial, target)
        os.replace(topics_partial, topics_target)
        finished = True
    finally:
        if not finished:  # interrupted or failed: leave nothing half-written behind
            for leftover in (partial, topics_partial):
                leftover.unlink(missing_ok=True)
    plan = web.plan
    elapsed = time.perf_counter() - started
    logger.info("generated %s pages of %s sites in %.1f s", written, plan.sites, elapsed)
    return GeneratedCrawl(
        path=target, topics_path=topics_target, pages=written, seed=seed, sites=plan.sites,
        content_sites=plan.content_sites, hub_sites=plan.hub_sites, hub_pages=plan.hub_pages,
        farm_sites=plan.farm_sites, mirror_sites=plan.mirror_sites, topics=len(TOPICS),
        bytes=size, seconds=elapsed,
    )


def iter_pages(pages: int, seed: int = SEED_DEFAULT) -> Iterator[tuple[str, str, bytes]]:
    """The crawl's pages without the WARC: ``(url, charset, html bytes)`` (for tests and
    in-process experiments)."""
    for site, url, body in web_pages(_Web(pages, seed)):
        yield url, site.charset, body


# --------------------------------------------------------------------------- ground truth


def read_topics(path: str | os.PathLike[str]) -> dict[str, str]:
    """The sidecar as ``{site: topic}``; ``path`` is the sidecar or the crawl it belongs to."""
    return dict(_sidecar_rows(path))


def _sidecar_rows(path: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """``(site, topic)`` rows of a sidecar (or of a crawl's sidecar); ValueError naming the
    line for anything else."""
    sidecar = Path(path)
    if not str(sidecar).endswith(TOPICS_SIDECAR_SUFFIX):
        sidecar = topics_path_for(sidecar)
    with open(sidecar, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            site, tab, topic = line.rstrip("\n").partition("\t")
            if not tab or not site or not topic or "\t" in topic:
                raise ValueError(f"{sidecar}:{number}: expected site<TAB>topic, got {line!r}")
            yield site, topic


def sample_queries(path: str | os.PathLike[str], k: int = 4) -> list[str]:
    """Home pages of ``k`` content sites of different topics, to query in a demo.

    ``path`` is the crawl or its sidecar.  Topics in :data:`DEMO_TOPIC_ORDER` (English and
    Chinese mixed); the first site of each topic in the sidecar; past one site per topic,
    the second of each, and so on.  Reads only as far into the sidecar as it needs.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    by_topic: dict[str, list[str]] = {slug: [] for slug in DEMO_TOPIC_ORDER}
    rounds = -(-k // len(DEMO_TOPIC_ORDER)) if k else 0
    for site, topic in _sidecar_rows(path):
        if topic in by_topic and len(by_topic[topic]) < rounds:
            by_topic[topic].append(site)
            if all(len(sites) >= rounds for sites in by_topic.values()):
                break
    queries = [home_url(sites[r]) for r in range(rounds) for slug in DEMO_TOPIC_ORDER
               if len(sites := by_topic[slug]) > r]
    return queries[:k]


@dataclass(frozen=True)
class TopicPrecision:
    """Same-topic share of the related pages of content sites' home pages."""

    queries: int  # content home pages in the sidecar
    answered: int  # ... that have at least one related page
    results: int  # related pages listed for them
    same_topic: int  # ... whose site has the query's topic
    template: int  # ... that are the registration link

    @property
    def precision(self) -> float:
        return self.same_topic / self.results if self.results else 0.0

    @property
    def coverage(self) -> float:
        return self.answered / self.queries if self.queries else 0.0


def topic_precision(
    related: Mapping[str, Sequence[Sequence[Any]]],
    topics: Mapping[str, str],
    *,
    site_of: Callable[[str], str] | None = None,
) -> TopicPrecision:
    """Score related pages against the sidecar: for every content site (a topic of
    :data:`TOPICS`) with its home page in ``related`` (``{url: [[related_url, ...], ...]}``),
    the share of its related pages on sites of the same topic."""
    if site_of is None:
        from filters.site import site_of as default_site_of

        site_of = default_site_of
    queries = answered = results = same = template = 0
    for site, topic in topics.items():
        if topic not in TOPIC_BY_SLUG:
            continue
        queries += 1
        entries = related.get(home_url(site))
        if not entries:
            continue
        answered += 1
        for entry in entries:
            results += 1
            url = entry[0]
            if url == REGISTRATION_URL:
                template += 1
            if topics.get(site_of(url)) == topic:
                same += 1
    return TopicPrecision(queries, answered, results, same, template)
