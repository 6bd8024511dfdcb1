"""The site model of the synthetic web: how many sites of each kind a crawl has, and
every property of a site (name, domain, charset, page count, friends, mirror original)
and of its page URLs, as pure functions of ``(seed, kind, index)``
(:mod:`relatedpages.corpus.generate` describes the web)."""
from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from relatedpages.corpus.generate_vocabulary import (
    _EN_ADJECTIVES,
    _EN_HUB_NOUNS,
    _EN_HUB_SUFFIXES,
    _EN_SUFFIXES,
    _EN_TLDS,
    _SPAM_WORDS,
    _ZH_ADJECTIVES,
    _ZH_HUB_NOUNS,
    _ZH_SUFFIXES,
    _ZH_TLDS,
    CONTENT_PAGES_PER_SITE,
    FARM_PAGE_SHARE,
    FARM_PAGES_PER_SITE,
    HUB_BLOCK_SITES,
    HUB_PAGE_SHARE,
    HUB_PAGES_PER_SITE,
    HUB_TOPIC,
    MIRROR_PAGE_SHARE,
    MIRROR_PAGES_PER_SITE,
    REGISTRATION_URL,
    SPAM_TOPIC,
    TOPICS,
    SiteKind,
)


# --------------------------------------------------------------------------- hashing


def _hash64(key: str) -> int:
    """A 64-bit hash of a key string: stable across runs and platforms (unlike hash())."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def _coin(key: str, probability: float) -> bool:
    return _hash64(key) < probability * 2**64


def _rng(key: str) -> random.Random:
    """A generator of its own for one key (string seeds are hashed with SHA-512)."""
    return random.Random(key)


def _coprime_multiplier(modulus: int, key: str) -> int:
    """A multiplier coprime with ``modulus`` (so ``a*x + b mod m`` permutes range(m))."""
    if modulus <= 1:
        return 1
    candidate = _hash64(key) % modulus or 1
    while math.gcd(candidate, modulus) != 1:
        candidate = candidate % (modulus - 1) + 1
    return candidate


def _split_evenly(total: int, count: int, index: int, key: str) -> int:
    """The share of ``total`` pages of site ``index`` of ``count`` sites: even shares, then
    sites ``2j`` and ``2j + 1`` trade a random number of pages (sum unchanged, each >= 1)."""
    base, extra = divmod(total, count)

    def share(i: int) -> int:
        return base + (1 if i < extra else 0)

    partner = index ^ 1
    if partner >= count:
        return share(index)
    low, high = min(index, partner), max(index, partner)
    room = min(share(low), share(high)) - 1
    trade = _hash64(f"{key}:{low}") % (room + 1) if room > 0 else 0
    return share(index) + (trade if index == low else -trade)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class _Plan:
    """How many sites of each kind and how many pages they share (a function of N)."""

    pages: int
    content_sites: int
    content_pages: int
    hub_sites: int
    hub_pages: int
    farm_sites: int
    farm_pages: int
    mirror_sites: int
    mirror_pages: int

    @classmethod
    def for_pages(cls, pages: int) -> _Plan:
        hub = round(pages * HUB_PAGE_SHARE)
        farm = round(pages * FARM_PAGE_SHARE)
        mirror = round(pages * MIRROR_PAGE_SHARE)
        content = pages - hub - farm - mirror
        return cls(
            pages=pages,
            content_sites=max(1, round(content / CONTENT_PAGES_PER_SITE)),
            content_pages=content,
            hub_sites=math.ceil(hub / HUB_PAGES_PER_SITE),
            hub_pages=hub,
            farm_sites=math.ceil(farm / FARM_PAGES_PER_SITE),
            farm_pages=farm,
            mirror_sites=math.ceil(mirror / MIRROR_PAGES_PER_SITE),
            mirror_pages=mirror,
        )

    @property
    def sites(self) -> int:
        return self.content_sites + self.hub_sites + self.farm_sites + self.mirror_sites

    def ring_size(self, topic: int) -> int:
        """Content sites of topic number ``topic`` (sites ``topic``, ``topic + T``, ...)."""
        count = len(TOPICS)
        return max(0, (self.content_sites - topic + count - 1) // count)


# --------------------------------------------------------------------------- sites


@dataclass(frozen=True)
class _Site:
    """One generated site: everything its pages need, derived from (seed, kind, index)."""

    kind: SiteKind
    index: int
    domain: str  # registered domain = the site identity (filters.site.site_of)
    name: str
    language: str
    charset: str
    topic: str  # sidecar topic
    pages: int
    icp: str
    friends: tuple[int, ...] = ()  # content site indices in the footer (friend links)
    original: _Site | None = None  # what a mirror copies

    @property
    def home(self) -> str:
        return home_url(self.domain)


class _Web:
    """The site and page functions of one (pages, seed) crawl."""

    def __init__(self, pages: int, seed: int) -> None:
        self.seed = seed
        self.plan = _Plan.for_pages(pages)
        self.key = f"relatedpages-generate:{seed}"
        # Bounded: hub blocks touch random sites; nothing grows with the crawl.
        self.content_site = functools.lru_cache(maxsize=4096)(self._content_site)
        self.hub_site = functools.lru_cache(maxsize=256)(self._hub_site)
        self.farm_site = functools.lru_cache(maxsize=1024)(self._farm_site)

    # -- site descriptions

    def _name_parts(self, kind: str, group: int, position: int,
                    lists: Sequence[Sequence[Any]]) -> tuple[list[Any], int]:
        """Words for the ``position``-th name of ``group``: a permuted mixed-radix number
        over ``lists`` (unique for positions < the number of combinations), plus a
        repeat number (0 for the first round of combinations)."""
        combos = math.prod(len(options) for options in lists)
        multiplier = _coprime_multiplier(combos, f"{self.key}:{kind}:{group}:mult")
        offset = _hash64(f"{self.key}:{kind}:{group}:off") % combos
        number = (multiplier * (position % combos) + offset) % combos
        words = []
        for options in lists:
            number, digit = divmod(number, len(options))
            words.append(options[digit])
        return words, position // combos

    def _content_site(self, index: int) -> _Site:
        topic_number = index % len(TOPICS)
        topic = TOPICS[topic_number]
        ring = index // len(TOPICS)
        key = f"{self.key}:content:{index}"
        pages = _split_evenly(self.plan.content_pages, self.plan.content_sites, index,
                              f"{self.key}:content-pages")
        nouns = list(zip(topic.nouns, topic.slugs))
        if topic.language == "en":
            (adjective, (noun, noun_slug), suffix), repeat = self._name_parts(
                "content", topic_number, ring, (_EN_ADJECTIVES, nouns, _EN_SUFFIXES))
            name = f"{adjective} {noun} {suffix}"
            label = f"{adjective}-{noun_slug}-{suffix}".lower()
            tld = _EN_TLDS[_hash64(key + ":tld") % len(_EN_TLDS)]
            charset = "utf-8"
        else:
            (adjective, (noun, noun_slug), suffix), repeat = self._name_parts(
                "content", topic_number, ring, (_ZH_ADJECTIVES, nouns, _ZH_SUFFIXES))
            name = f"{adjective[0]}{noun}{suffix[0]}"
            label = f"{adjective[1]}-{noun_slug}-{suffix[1]}"
            tld = _ZH_TLDS[_hash64(key + ":tld") % len(_ZH_TLDS)]
            charset = "gbk" if _coin(key + ":gbk", 0.5) else "utf-8"
        if repeat:
            label += f"-{repeat + 1}"
            name += f" {repeat + 1}"
        size = self.plan.ring_size(topic_number)
        friends: tuple[int, ...] = ()
        if size > 3 and _coin(key + ":friends", 1 / 3):
            friends = tuple(((ring + step) % size) * len(TOPICS) + topic_number for step in (1, 2))
        return _Site(SiteKind.CONTENT, index, label + tld, name, topic.language, charset,
                     topic.slug, pages, self._icp(key), friends)

    def _icp(self, key: str) -> str:
        return f"京ICP备{_hash64(key + ':icp') % 90_000_000 + 10_000_000:08d}号"

    def _hub_site(self, index: int) -> _Site:
        key = f"{self.key}:hub:{index}"
        pages = _split_evenly(self.plan.hub_pages, self.plan.hub_sites, index,
                              f"{self.key}:hub-pages")
        language = "zh" if index % 3 == 2 else "en"  # a third of the hubs: 3 of 12 topics
        if language == "en":
            (adjective, noun, suffix), repeat = self._name_parts(
                "hub", 0, index // 3 * 2 + index % 3, (_EN_ADJECTIVES, _EN_HUB_NOUNS, _EN_HUB_SUFFIXES))
            name = f"{adjective} {noun} {suffix}"
            label = f"{adjective}-{noun}-{suffix}".lower()
            tld = _EN_TLDS[_hash64(key + ":tld") % len(_EN_TLDS)]
            charset = "utf-8"
        else:
            (adjective, noun), repeat = self._name_parts("hub", 1, index // 3, (_ZH_ADJECTIVES, _ZH_HUB_NOUNS))
            name = f"{adjective[0]}{noun[0]}"
            label = f"{adjective[1]}-{noun[1]}"
            tld = _ZH_TLDS[_hash64(key + ":tld") % len(_ZH_TLDS)]
            charset = "gbk" if _coin(key + ":gbk", 0.5) else "utf-8"
        if repeat:
            label += f"-{repeat + 1}"
            name += f" {repeat + 1}"
        return _Site(SiteKind.HUB, index, label + tld, name, language, charset, HUB_TOPIC,
                     pages, self._icp(key))

    def _farm_site(self, index: int) -> _Site:
        key = f"{self.key}:farm:{index}"
        rng = _rng(key)
        words = rng.sample(_SPAM_WORDS, 2)
        label = f"{words[0]}-{words[1]}-{index + 1}"
        pages = _split_evenly(self.plan.farm_pages, self.plan.farm_sites, index,
                              f"{self.key}:farm-pages")
        tld = (".info", ".biz", ".net")[index % 3]
        return _Site(SiteKind.FARM, index, label + tld, f"{words[0].title()} {words[1].title()} {index + 1}",
                     "en", "utf-8", SPAM_TOPIC, pages, self._icp(key))

    def mirror_site(self, index: int) -> _Site:
        """Mirror ``index``: every fourth copies a hub site, the others content sites."""
        plan = self.plan
        key = f"{self.key}:mirror:{index}"
        if plan.hub_sites and index % 4 == 3:
            position = index // 4
            step = _coprime_multiplier(plan.hub_sites, f"{self.key}:hub-mirror-step")
            original = self.hub_site((position * step + 1) % plan.hub_sites)
            round_ = position // plan.hub_sites
        else:
            position = index - (index // 4 if plan.hub_sites else 0)
            step = _coprime_multiplier(plan.content_sites, f"{self.key}:mirror-step")
            original = self.content_site((position * step) % plan.content_sites)
            round_ = position // plan.content_sites
        label, _, tld = original.domain.partition(".")
        label = f"{label}-mirror{round_ + 1 if round_ else ''}"
        tld = ".org" if tld == "org" else ".net"
        pages = _split_evenly(plan.mirror_pages, plan.mirror_sites, index, f"{self.key}:mirror-pages")
        return _Site(SiteKind.MIRROR, index, label + tld, original.name, original.language,
                     original.charset, original.topic, pages, original.icp, original.friends,
                     original)

    def sites(self) -> Iterator[_Site]:
        """Every site, in crawl order: content sites, hubs, link farms, mirrors."""
        plan = self.plan
        for index in range(plan.content_sites):
            yield self.content_site(index)
        for index in range(plan.hub_sites):
            yield self.hub_site(index)
        for index in range(plan.farm_sites):
            yield self.farm_site(index)
        for index in range(plan.mirror_sites):
            yield self.mirror_site(index)

    # -- page URLs

    @staticmethod
    def article_path(site: _Site, k: int) -> str:
        if site.language == "zh":
            return f"/news/{k:04d}.html"
        return f"/articles/{k}-{site.topic}-story.html"

    def page_path(self, site: _Site, k: int) -> str:
        """Path of page ``k`` of a site (0 = home; the last of >= 3 pages: about)."""
        base = site.original if site.original is not None else site
        if k == 0:
            return "/"
        if k == site.pages - 1 and site.pages >= (4 if base.kind is SiteKind.HUB else 3):
            return "/about.html"
        if base.kind is SiteKind.HUB:
            return f"/directory/{k}.html"
        if base.kind is SiteKind.FARM:
            return f"/page-{k}.html"
        return self.article_path(base, k)

    # -- link targets

    def window(self, topic_number: int, rng: random.Random, start: int | None = None,
               room: int | None = None) -> tuple[list[_Site], int]:
        """5-12 sites of one topic from a window of its ring (a hub block's list), in
        random order, and the number of ring positions the window spans.

        The window spans two positions more than it lists; it starts at ring position
        ``start`` (random when None) and spans at most ``room`` positions (default: the
        whole ring), so the blocks of one page can list disjoint windows."""
        size = self.plan.ring_size(topic_number)
        room = size if room is None else min(room, size)
        if room <= 0:
            return [], 0
        wanted = rng.randint(*HUB_BLOCK_SITES)
        span = min(room, wanted + 2)
        first = rng.randrange(size) if start is None else start
        positions = [(first + step) % size for step in range(span)]
        chosen = rng.sample(positions, min(wanted, span))
        return [self.content_site(p * len(TOPICS) + topic_number) for p in chosen], span

    def neighbours(self, site: _Site, count: int, rng: random.Random) -> list[_Site]:
        """Up to ``count`` sites within 4 ring steps of a content site (its Resources)."""
        topic_number = site.index % len(TOPICS)
        size = self.plan.ring_size(topic_number)
        ring = site.index // len(TOPICS)
        steps = [s for s in range(-4, 5) if s and (ring + s) % size != ring] if size > 1 else []
        positions = sorted({(ring + s) % size for s in steps})
        chosen = rng.sample(positions, min(count, len(positions)))
        return [self.content_site(p * len(TOPICS) + topic_number) for p in chosen]

    def advertiser(self, rng: random.Random) -> _Site | None:
        """A random advertiser: a content site of any topic (one in four advertises)."""
        for _ in range(16):
            index = rng.randrange(self.plan.content_sites)
            if _coin(f"{self.key}:content:{index}:advertiser", 0.25):
                return self.content_site(index)
        return None


def home_url(site: str) -> str:
    """The home page URL of a generated site (its registered domain, with ``www.``).

    >>> home_url("sunny-travel-notes.com")
    'http://www.sunny-travel-notes.com/'
    """
    return f"http://www.{site}/"


def registration_url() -> str:
    """The template link found on most pages of every site (never a related page).

    >>> registration_url()
    'http://www.miibeian.gov.cn/'
    """
    return REGISTRATION_URL
