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

import functools
import hashlib
import html
import io
import logging
import math
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import quote

logger = logging.getLogger(__name__)

#: The registration (template) link on most pages of every site (the paper's example).
REGISTRATION_URL = "http://www.miibeian.gov.cn/"
#: Share of the pages that carry the registration link in their footer (home pages always).
REGISTRATION_SHARE = 0.9

#: The demo's crawl size: generated in under a second, segmented and related by the
#: inline runner in ~10 s; block co-citation then finds ~11 related sites per content site.
PAGES_DEFAULT = 3_000
SEED_DEFAULT = 1
#: Share of the pages on hub sites, link farms and mirror sites; the rest are content sites.
HUB_PAGE_SHARE = 0.06
FARM_PAGE_SHARE = 0.03
MIRROR_PAGE_SHARE = 0.04
#: Average pages per site of each kind.
CONTENT_PAGES_PER_SITE = 14
HUB_PAGES_PER_SITE = 3
FARM_PAGES_PER_SITE = 5
MIRROR_PAGES_PER_SITE = 6
#: Sites listed under one hub heading (uniform in this range).
HUB_BLOCK_SITES = (5, 12)
#: Headings per portal / directory page (uniform in this range).
HUB_HEADINGS = (5, 9)
#: Links in a link farm's big block: above the large-block filter's S = 80.
FARM_BIG_BLOCK_LINKS = (90, 140)
FARM_PARTNER_LINKS = (10, 20)

TOPICS_SIDECAR_SUFFIX = ".topics.tsv"
HUB_TOPIC = "hub"
SPAM_TOPIC = "spam"
#: Topic order of :func:`sample_queries` (English and Chinese mixed from the start).
DEMO_TOPIC_ORDER = (
    "travel", "zh-food", "programming", "cooking", "zh-travel", "photography",
    "finance", "zh-finance", "gardening", "music", "football", "health",
)  # fmt: skip


class SiteKind(str, Enum):
    """What a generated site is."""

    CONTENT = "content"
    HUB = "hub"
    FARM = "farm"
    MIRROR = "mirror"


# --------------------------------------------------------------------------- vocabulary


@dataclass(frozen=True)
class Topic:
    """A topic: sidecar slug, language, heading, site-name nouns and text vocabulary.

    Chinese topics carry the pinyin of each noun (for domain names) in ``slugs``."""

    slug: str
    language: str  # "en" | "zh"
    heading: str
    nouns: tuple[str, ...]
    slugs: tuple[str, ...]
    vocabulary: tuple[str, ...]


def _en(slug: str, heading: str, nouns: str, vocabulary: str) -> Topic:
    names = tuple(nouns.split())
    return Topic(slug, "en", heading, names, tuple(n.lower() for n in names), tuple(vocabulary.split()))


def _zh(slug: str, heading: str, nouns: Sequence[tuple[str, str]], vocabulary: str) -> Topic:
    return Topic(slug, "zh", heading, tuple(n for n, _ in nouns), tuple(p for _, p in nouns),
                 tuple(vocabulary.split()))


TOPICS: tuple[Topic, ...] = (
    _en("travel", "Travel", "Travel Trips Journeys Backpacking Voyages",
        "itinerary hostel flight passport beach mountain island museum train visa luggage "
        "hiking cruise resort tour map airport village coast road trip guidebook"),
    _en("cooking", "Cooking", "Kitchen Recipes Cooking Baking Cuisine",
        "recipe oven flour butter garlic sauce pasta bread soup spice dough simmer roast "
        "grill salad dessert pastry broth herbs onion tomato chocolate"),
    _en("finance", "Personal Finance", "Money Finance Investing Savings Budget",
        "budget savings pension stocks bonds mortgage interest dividend portfolio tax loan "
        "credit debt index fund retirement inflation expenses income broker"),
    _en("programming", "Programming", "Code Programming Developer Software Compiler",
        "python compiler function variable debugger algorithm library framework database "
        "query server deploy testing refactor syntax module thread cache api"),
    _en("gardening", "Gardening", "Garden Gardening Plants Roses Seeds",
        "soil compost seedling tomato roses pruning mulch greenhouse bulbs perennial "
        "watering fertiliser orchard herbs lawn hedge weeds harvest shrub"),
    _en("photography", "Photography", "Photo Photography Camera Lens Shutter",
        "aperture shutter lens exposure tripod portrait landscape sensor flash zoom "
        "focus lighting editing raw histogram bokeh darkroom film prints"),
    _en("music", "Music", "Music Guitar Jazz Melody Vinyl",
        "guitar chords melody rhythm album concert piano drums vinyl band songwriting "
        "lyrics tempo jazz blues orchestra festival harmony scales"),
    _en("football", "Football", "Football Soccer Goal League Striker",
        "league goal striker midfield transfer penalty derby stadium coach tactics "
        "season fixtures keeper referee cup champions squad kit"),
    _en("health", "Health & Fitness", "Fitness Health Running Yoga Workout",
        "workout running yoga stretching marathon protein cardio strength nutrition "
        "sleep posture recovery training gym calories hydration pilates"),
    _zh("zh-travel", "旅游", (("旅游", "lvyou"), ("旅行", "lvxing"), ("游记", "youji"),
                             ("自驾游", "zijiayou")),
        "景点 门票 酒店 攻略 机票 古镇 海岛 线路 签证 导游 行程 民宿 自驾 风景 美食 火车 徒步"),
    _zh("zh-food", "美食", (("美食", "meishi"), ("菜谱", "caipu"), ("厨房", "chufang"),
                           ("小吃", "xiaochi")),
        "菜谱 做法 家常菜 红烧肉 饺子 面条 火锅 烘焙 甜点 调料 食材 汤 蒸 炒 炖 小吃 早餐"),
    _zh("zh-finance", "财经", (("财经", "caijing"), ("理财", "licai"), ("股票", "gupiao"),
                              ("基金", "jijin")),
        "股票 基金 理财 银行 利率 债券 投资 收益 保险 行情 市场 指数 分红 贷款 证券 黄金 外汇"),
)
TOPIC_BY_SLUG: Mapping[str, Topic] = {topic.slug: topic for topic in TOPICS}

_EN_ADJECTIVES = tuple(
    "Sunny Blue Happy Urban Wild Little Golden Modern Simple Daily Smart Quiet Bright Green "
    "Red Silver Northern Southern Eastern Western Global Local Open Free Grand Tiny Big Clever "
    "Honest Lucky Rapid Royal Secret Solid True Vintage Young Ancient Crystal Hidden".split()
)
_EN_SUFFIXES = tuple("Notes Guide Hub World Journal Corner Place Zone Lab Central Insider Diaries".split())
_ZH_ADJECTIVES = (
    ("快乐", "kuaile"), ("阳光", "yangguang"), ("开心", "kaixin"), ("天天", "tiantian"),
    ("中华", "zhonghua"), ("东方", "dongfang"), ("大众", "dazhong"), ("自由", "ziyou"),
    ("幸福", "xingfu"), ("金色", "jinse"), ("绿色", "lvse"), ("时尚", "shishang"),
    ("精彩", "jingcai"), ("老友", "laoyou"), ("蓝天", "lantian"), ("星空", "xingkong"),
    ("江南", "jiangnan"), ("北方", "beifang"), ("南方", "nanfang"), ("城市", "chengshi"),
)
_ZH_SUFFIXES = (
    ("网", "wang"), ("之家", "zhijia"), ("在线", "zaixian"), ("天地", "tiandi"),
    ("论坛", "luntan"), ("频道", "pindao"), ("社区", "shequ"), ("大全", "daquan"),
)
_EN_HUB_NOUNS = tuple("Links Directory Portal Bookmarks Index Webguide".split())
_EN_HUB_SUFFIXES = tuple("Online Net Web Central Pages List".split())
_ZH_HUB_NOUNS = (("导航", "daohang"), ("网址", "wangzhi"), ("网址大全", "wangzhidaquan"),
                 ("书签", "shuqian"))
_EN_SUBHEADINGS = tuple(
    "Popular|Editor's picks|New sites|Blogs|Guides|Communities|Resources|Top rated|"
    "Beginners|Reviews|News|Tools".split("|")
)
_ZH_SUBHEADINGS = tuple("热门 推荐 新站 博客 论坛 资讯 排行 工具 入门 精选".split())
_EN_COMMON = tuple(
    "the a of and to in for with on this that our best new how why what is are was from "
    "your more about guide tips today week year first great simple easy".split()
)
_ZH_COMMON = tuple("我们 今天 这个 一个 最新 推荐 分享 经验 方法 如何 为什么 大家 非常 简单 可以".split())
_SPAM_WORDS = tuple(
    "cheap pills casino loans replica watches viagra poker bonus free win cash prize "
    "discount outlet bargain deals online best".split()
)
_EN_TLDS = (".com", ".com", ".com", ".net", ".org", ".io")
_ZH_TLDS = (".cn", ".com.cn", ".com", ".net.cn")

_LABELS = {
    "en": {
        "home": "Home", "articles": "Articles", "about": "About", "search": "Search",
        "contact": "Contact", "privacy": "Privacy", "tweet": "Tweet", "share": "Share on Facebook",
        "email": "Email", "resources": "Resources", "ads": "Advertisement", "friends": "Friends:",
        "follow": "Follow us:", "latest": "Latest articles", "more": "read more",
        "pdf": "Download the PDF guide", "older": "older post", "suggest": "Suggest a site",
        "updated": "This directory is edited by volunteers and updated every week; "
                   "sites are listed free of charge after a review of their content.",
        "copyright": "All rights reserved.", "about_text": "About us",
    },
    "zh": {
        "home": "首页", "articles": "文章", "about": "关于我们", "search": "搜索",
        "contact": "联系我们", "privacy": "隐私政策", "tweet": "推特", "share": "分享到脸书",
        "email": "邮件", "resources": "相关网站", "ads": "广告", "friends": "友情链接：",
        "follow": "关注我们：", "latest": "最新文章", "more": "阅读全文",
        "pdf": "下载PDF攻略", "older": "往期文章", "suggest": "提交网站",
        "updated": "本导航由网友推荐整理，每周更新一次，所有网站经过审核后免费收录，欢迎提交优秀网站。",
        "copyright": "版权所有", "about_text": "关于我们",
    },
}

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

    # -- pages

    def pages(self) -> Iterator[tuple[_Site, str, bytes]]:
        """Every page: (site, URL, encoded HTML)."""
        for site in self.sites():
            for k in range(site.pages):
                url = f"http://www.{site.domain}{self.page_path(site, k)}"
                text = self.render(site, k, url)
                yield site, url, text.encode(site.charset)

    def render(self, site: _Site, k: int, url: str) -> str:
        base = site.original if site.original is not None else site
        # A mirror's page k draws exactly what its original's page k draws.
        rng = _rng(f"{self.key}:page:{base.kind.value}:{base.index}:{k}")
        page = _Page(self, site, base, k, url, rng)
        path = self.page_path(site, k)
        if path == "/about.html":
            page.about()
        elif base.kind is SiteKind.HUB:
            page.hub(portal=(k == 0))
        elif base.kind is SiteKind.FARM:
            page.farm()
        elif k == 0:
            page.home()
        else:
            page.article()
        return page.finish()

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


@functools.cache
def _word_pool(language: str, topic: str) -> tuple[str, ...]:
    """Words to draw text from, each list repeated so that topic words and common words
    are drawn about equally often (``random.choices`` on a flat pool is fast)."""
    common = _ZH_COMMON if language == "zh" else _EN_COMMON
    if topic == SPAM_TOPIC:
        vocabulary = _SPAM_WORDS
    elif topic in TOPIC_BY_SLUG:
        vocabulary = TOPIC_BY_SLUG[topic].vocabulary
    else:  # hubs: a little of every topic of their language
        vocabulary = tuple(w for t in TOPICS if t.language == language for w in t.vocabulary[:4])
    return vocabulary * len(common) + common * len(vocabulary)


def _e(text: str) -> str:
    return html.escape(text, quote=False)


class _Page:
    """Builds one page's HTML (a list of string pieces)."""

    def __init__(self, web: _Web, site: _Site, base: _Site, k: int, url: str,
                 rng: random.Random) -> None:
        self.web = web
        self.site = site  # the site serving the page (a mirror serves its original's pages)
        self.base = base
        self.k = k
        self.url = url
        self.rng = rng
        self.labels = _LABELS[site.language]
        self.out: list[str] = []

    # -- text

    def words(self, count: int) -> str:
        """A sentence of ``count`` words: topic vocabulary and common words, about half each."""
        picks = self.rng.choices(_word_pool(self.base.language, self.base.topic), k=count)
        if self.base.language == "zh":
            return "，".join("".join(picks[i:i + 4]) for i in range(0, len(picks), 4)) + "。"
        return " ".join(picks).capitalize() + "."

    def title(self) -> str:
        if self.base.language == "zh":
            return self.words(6).rstrip("。")
        return self.words(self.rng.randint(4, 8)).rstrip(".").title()

    # -- templates

    def head(self, title: str) -> None:
        site = self.site
        lang = "zh-CN" if site.language == "zh" else "en"
        self.out.append(
            f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="{site.charset}">\n'
            f"<title>{_e(title)} - {_e(site.name)}</title>\n</head>\n<body>\n"
        )

    def header_and_nav(self) -> None:
        labels = self.labels
        search = "/search.php?q=&amp;lang=" + self.site.language
        self.out.append(
            f'<div id="header"><a href="/"><img src="/img/logo.png" alt=""></a> '
            f"<span>{_e(self.site.name)}</span></div>\n"
            f'<div id="nav"><ul><li><a href="/">{labels["home"]}</a></li>'
            f'<li><a href="{self.web.page_path(self.site, 1)}">{labels["articles"]}</a></li>'
            f'<li><a href="/about.html">{labels["about"]}</a></li>'
            f'<li><a href="{search}">{labels["search"]}</a></li>'
            f'<li><a href="/contact.html">{labels["contact"]}</a></li></ul></div>\n'
        )

    def footer(self) -> None:
        """The footer template: own links, the registration link, social share links and
        (a third of the sites) two friend links, all in one block with its own background."""
        labels, site, rng = self.labels, self.site, self.rng
        quoted = quote(self.url, safe="")
        parts = [
            f'<div id="footer" style="background-color:#eeeeee">&copy; 2009 {_e(site.name)} '
            f'{labels["copyright"]} <a href="/about.html">{labels["about_text"]}</a> | '
            f'<a href="/privacy.html">{labels["privacy"]}</a>'
        ]
        if rng.random() < REGISTRATION_SHARE or self.k == 0:  # every site's home has it
            parts.append(f' | <a href="{REGISTRATION_URL}">{site.icp}</a>')
        parts.append(
            f'<br>{labels["follow"]} <a href="https://twitter.com/intent/tweet?url={quoted}">Twitter</a> '
            f'<a href="https://www.facebook.com/sharer/sharer.php?u={quoted}">Facebook</a>'
        )
        if site.friends:
            parts.append(f'<br>{labels["friends"]} ')
            for index in site.friends:
                friend = self.web.content_site(index)
                parts.append(f'<a href="{friend.home}">{_e(friend.name)}</a> ')
        parts.append("</div>\n</body>\n</html>\n")
        self.out.append("".join(parts))

    def finish(self) -> str:
        self.footer()
        return "".join(self.out)

    def share_buttons(self) -> None:
        quoted = quote(self.url, safe="")
        labels = self.labels
        weibo = (f' <a href="http://service.weibo.com/share/share.php?url={quoted}">微博</a>'
                 if self.site.language == "zh" else "")
        self.out.append(
            f'<div class="share"><a href="https://twitter.com/intent/tweet?url={quoted}">{labels["tweet"]}</a> '
            f'<a href="https://www.facebook.com/sharer/sharer.php?u={quoted}">{labels["share"]}</a> '
            f'<a href="mailto:?subject={quoted}">{labels["email"]}</a>{weibo}</div>\n'
        )

    # -- page types

    def home(self) -> None:
        site, labels = self.base, self.labels
        self.head(site.name)
        self.header_and_nav()
        self.out.append(f"<h1>{_e(site.name)}</h1>\n<p>{_e(self.words(self.rng.randint(30, 60)))}</p>\n")
        self.out.append(f"<h2>{labels['latest']}</h2>\n<ul>")
        for k in range(1, min(site.pages, 9)):
            self.out.append(f'<li><a href="{self.web.article_path(site, k)}">{_e(self.title())}</a></li>')
        self.out.append("</ul>\n")

    def article(self) -> None:
        rng, labels, site = self.rng, self.labels, self.base
        title = self.title()
        self.head(title)
        self.header_and_nav()
        self.out.append(f"<h1>{_e(title)}</h1>\n")
        for _ in range(rng.randint(2, 4)):
            self.out.append(f"<p>{_e(self.words(rng.randint(25, 70)))}</p>\n")
        self.out.append(
            f'<p>{_e(self.words(12))} <a href="/article.php?id={rng.randint(1, 999)}">{labels["older"]}</a> '
            f'<a href="/files/{site.topic}-guide-{rng.randint(1, 20)}.pdf">{labels["pdf"]}</a></p>\n'
        )
        self.share_buttons()
        if rng.random() < 0.3:
            self.resources()
        if rng.random() < 0.35:
            self.ads()

    def resources(self) -> None:
        rng = self.rng
        self.out.append(f"<h3>{self.labels['resources']}</h3>\n<ul>")
        for other in self.web.neighbours(self.base, rng.randint(2, 4), rng):
            roll = rng.random()
            if roll < 0.2:
                href = f"{other.home}index.php?ref={self.site.domain}"  # dynamic -> home
            elif roll < 0.3:
                href = f"{other.home}index.html"  # normalised -> home
            else:
                href = other.home
            self.out.append(f'<li><a href="{href}">{_e(other.name)}</a>')
            if roll > 0.9:
                self.out.append(f' (<a href="{other.home}docs/brochure.pdf">PDF</a>)')
            self.out.append("</li>")
        self.out.append("</ul>\n")

    def ads(self) -> None:
        """A mixed-topic ad block: advertisers of any topic, landing pages or tracked links."""
        rng = self.rng
        pieces = [f'<div class="ads" style="background-color:#fff8dc"><span>{self.labels["ads"]}</span>']
        for _ in range(rng.randint(3, 4)):
            advertiser = self.web.advertiser(rng)
            if advertiser is None:
                continue
            campaign = rng.randint(1, 3)
            if rng.random() < 0.6:
                href = f"{advertiser.home}offers/campaign-{campaign}.html"
            else:
                href = f"{advertiser.home}?utm_source=ads&amp;utm_campaign={campaign}"
            pieces.append(f' <a href="{href}">{_e(advertiser.name)}</a>')
        pieces.append("</div>\n")
        self.out.append("".join(pieces))

    def about(self) -> None:
        self.head(self.labels["about"])
        self.header_and_nav()
        self.out.append(f"<h1>{self.labels['about']}</h1>\n<p>{_e(self.words(self.rng.randint(40, 80)))}</p>\n")

    def hub(self, *, portal: bool) -> None:
        rng, site, web = self.rng, self.base, self.web
        topics = [n for n, t in enumerate(TOPICS) if t.language == site.language]
        subheadings = _ZH_SUBHEADINGS if site.language == "zh" else _EN_SUBHEADINGS
        count = rng.randint(*HUB_HEADINGS)
        # Candidate headings, in page order; those whose topic has no ring positions left
        # on this page are skipped, until `count` blocks are out.  A portal has one heading
        # per topic, then second and third rounds with sub-headings; a directory page has
        # the sub-sections of its topic first, then other topics ("see also").
        order = rng.sample(topics, len(topics))
        candidates: list[tuple[int, str]] = []
        if portal:
            for round_ in range(3):
                for topic in order:
                    heading = TOPICS[topic].heading
                    if round_:
                        heading += f" - {rng.choice(subheadings)}"
                    candidates.append((topic, heading))
        else:
            primary = order[0]
            for sub in rng.sample(subheadings, len(subheadings)):
                candidates.append((primary, f"{TOPICS[primary].heading} - {sub}"))
            candidates.extend((topic, TOPICS[topic].heading) for topic in order[1:])
        title = site.name if portal else TOPICS[candidates[0][0]].heading
        self.head(title)
        self.header_and_nav()
        self.out.append(f"<h1>{_e(title)}</h1>\n<p>{_e(self.words(rng.randint(20, 40)))}</p>\n")
        if rng.random() < 0.3:  # a strip of logos: image links without anchor text
            self.out.append('<div class="logos">')
            for other in web.window(candidates[0][0], rng)[0][:4]:
                self.out.append(f'<a href="{other.home}"><img src="/logos/{other.index}.png" alt=""></a>')
            self.out.append("</div>\n")
        # Headings of the same topic on one page list consecutive, disjoint windows: a
        # page pairs two sites once (Definition 1), so overlapping lists would only add
        # to in_p (Eq. 13).
        cursor: dict[int, tuple[int, int]] = {}  # topic -> (next ring position, positions left)
        blocks = 0
        for topic, heading in candidates:
            if blocks == count:
                break
            size = web.plan.ring_size(topic)
            if topic in cursor:
                start, room = cursor[topic]
                if room < HUB_BLOCK_SITES[0]:
                    continue
            else:
                start, room = (rng.randrange(size) if size else 0), size
            listed, span = web.window(topic, rng, start, room)
            cursor[topic] = (start + span, room - span)
            if len(listed) < 2:
                continue
            blocks += 1
            self.out.append(f"<h2>{_e(heading)}</h2>\n<ul>")
            for other in listed:
                roll = rng.random()
                href = other.home if roll < 0.85 else f"{other.home}index.php?from=directory"
                self.out.append(f'<li><a href="{href}">{_e(other.name)}</a></li>')
            self.out.append("</ul>\n")
        self.out.append(f'<div class="note"><p>{self.labels["updated"]}</p></div>\n')

    def farm(self) -> None:
        rng, web = self.rng, self.web
        title = " ".join(rng.sample(_SPAM_WORDS, 5)).title()
        self.head(title)
        self.header_and_nav()
        self.out.append(f"<h1>{_e(title)}</h1>\n<p>{_e(self.words(rng.randint(40, 80)))}</p>\n")
        farms = web.plan.farm_sites
        self.out.append("<h2>Top sites</h2>\n<ul>")
        for _ in range(rng.randint(*FARM_BIG_BLOCK_LINKS)):
            other = web.farm_site(rng.randrange(farms))
            k = rng.randrange(max(1, other.pages))
            anchor = " ".join(rng.sample(_SPAM_WORDS, 3))
            self.out.append(f'<li><a href="http://www.{other.domain}{web.page_path(other, k)}">{anchor}</a></li>')
        self.out.append("</ul>\n<h2>Partners</h2>\n<ul>")
        for _ in range(rng.randint(*FARM_PARTNER_LINKS)):
            other = web.farm_site(rng.randrange(farms))
            self.out.append(f'<li><a href="{other.home}">{_e(other.name)}</a></li>')
        self.out.append("</ul>\n")


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
            for site, url, body in web.pages():
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
    for site, url, body in _Web(pages, seed).pages():
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
