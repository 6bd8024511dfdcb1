"""The page HTML writers of the synthetic web: the text, the site templates (header,
navigation, footer with the registration, share and friend links) and the content
(home, article, about), hub, link-farm pages (mirrors render their original's pages),
and every page of a web's site model rendered in crawl order (:func:`web_pages`)."""
from __future__ import annotations

import functools
import html
import random
from collections.abc import Iterator
from urllib.parse import quote

from relatedpages.corpus.generate_vocabulary import (
    _EN_COMMON,
    _EN_SUBHEADINGS,
    _LABELS,
    _SPAM_WORDS,
    _ZH_COMMON,
    _ZH_SUBHEADINGS,
    FARM_BIG_BLOCK_LINKS,
    FARM_PARTNER_LINKS,
    HUB_BLOCK_SITES,
    HUB_HEADINGS,
    REGISTRATION_SHARE,
    REGISTRATION_URL,
    SPAM_TOPIC,
    TOPIC_BY_SLUG,
    TOPICS,
    SiteKind,
)

from relatedpages.corpus.generate_sites import _rng, _Site, _Web


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


def web_pages(web: _Web) -> Iterator[tuple[_Site, str, bytes]]:
    """Every page of ``web``: (site, URL, encoded HTML), site by site in crawl order."""
    for site in web.sites():
        for k in range(site.pages):
            url = f"http://www.{site.domain}{web.page_path(site, k)}"
            text = render_page(web, site, k, url)
            yield site, url, text.encode(site.charset)


def render_page(web: _Web, site: _Site, k: int, url: str) -> str:
    """The HTML of page ``k`` of ``site`` (at ``url``)."""
    base = site.original if site.original is not None else site
    # A mirror's page k draws exactly what its original's page k draws.
    rng = _rng(f"{web.key}:page:{base.kind.value}:{base.index}:{k}")
    page = _Page(web, site, base, k, url, rng)
    path = web.page_path(site, k)
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
