"""The synthetic web's fixed inputs: its size parameters (page shares, pages per site,
block sizes), the registration link, the site kinds, the topics and the word lists and
labels that names and text are drawn from (:mod:`relatedpages.corpus.generate`)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

#: The registration (template) link on most pages of every site (the paper's example).
REGISTRATION_URL = "http://www.miibeian.gov.cn/"
#: Share of the pages that carry the registration link in their footer (home pages always).
REGISTRATION_SHARE = 0.9

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

HUB_TOPIC = "hub"
SPAM_TOPIC = "spam"


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
