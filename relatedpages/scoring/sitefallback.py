"""The site fallback: a page without block evidence of its own is answered by its site.

Block co-citation answers a page from the blocks that cite it.  Two kinds of page have no
usable such evidence (issue 10, measured on the development web, seed 7):

* **no list at all**: the link filters drop the page from every block (a file such as a
  PDF, a dynamic URL), or no block cites it with another site's page;
* **diffuse evidence**: many sites cite the page, but no other page is co-cited with it by
  more than a small share of them.  An advertiser's landing page in the mixed ad blocks of
  many sites is the type: every co-cited page rests on one or two of its dozens of citing
  sites, and they are of every topic.  Formally, the page's best score (the number of
  distinct sites co-citing its first result, under the default preset's score) is below
  ``diffuse`` × its popularity (the sites linking it, templates aside:
  :func:`relatedpages.scoring.similarity.raw_counts`).  With ``diffuse`` = 0.25 no page
  cited by fewer than 5 sites is ever diffuse: the rule needs evidence to call evidence
  weak.

Such a page is answered by the **nearest page of its own site with a list that is not
weak**: its URL is chopped one path segment at a time (Dean & Henzinger 1999, the
Cocitation algorithm's "chop the URL" step, :func:`site_chops`), stopping at the site
identity (:func:`filters.site.site_of`), so ``github.com/owner/repo`` goes to
``github.com/owner`` and never to GitHub's home page.  Each entry so taken is marked
``"site"`` and names the page whose list answered (a fourth and fifth element).  A weak
page with no such site page keeps its own list (or has none).

Measured with the default preset (README, "Two presets"): on the development web (10,000
pages, seed 7) P@15 by topic 59.6 -> 97.8 %; on the development split of the hub lists
(seed 1) it answers 6 of the 1,020 test pages (3 had no block list) and moves no measure by
more than 0.002.

:func:`apply_site_fallback` is the whole step in memory (the oracle of ``jobs.related``'s
steps 3 and 4, which do the same join in MapReduce).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

#: The name of the site fallback in the entries it contributes.
SITE_SOURCE = "site"


def site_chops(url: str) -> list[str]:
    """The pages that may answer for ``url``: its path chopped one segment at a time,
    nearest first, each with and without a trailing slash (both spellings exist as
    different keys), down to the root of its site and never past the site identity.

    >>> site_chops("http://www.a.com/docs/guide/intro.pdf")  # doctest: +NORMALIZE_WHITESPACE
    ['http://www.a.com/docs/guide/', 'http://www.a.com/docs/guide', 'http://www.a.com/docs/',
     'http://www.a.com/docs', 'http://www.a.com/']
    >>> site_chops("https://github.com/psf/requests")
    ['https://github.com/psf/', 'https://github.com/psf']
    >>> site_chops("http://www.a.com/"), site_chops("http://a.com/x?id=1"), site_chops("mailto:x")
    ([], ['http://a.com/'], [])
    """
    from filters.site import site_of

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return []
    site = site_of(url)
    if site is None:
        return []
    segments = [segment for segment in parts.path.split("/") if segment]
    if parts.query and not segments:
        segments = [""]  # "/?q" chops to "/"
    chops: list[str] = []
    for keep in range(len(segments) - 1, -1, -1):
        head = "/".join(segments[:keep])
        base = f"{parts.scheme}://{parts.netloc}/{head}"
        spellings = [base] if not head else [base + "/", base]
        if site_of(spellings[0]) != site:
            break
        chops.extend(spelling for spelling in spellings if spelling != url)
    return chops


def is_weak(entries: Sequence[Sequence[Any]] | None, popularity: int, diffuse: float,
            best_sites: int | None = None) -> bool:
    """Whether a page's own block list is no answer (module doc): none, or the sites
    co-citing its best result below ``diffuse`` × ``popularity`` (``best_sites``; without
    it, the best score, which counts them under the ``sites`` score).

    >>> is_weak(None, 3, 0.25), is_weak([["b", 2.0, []]], 40, 0.25), is_weak([["b", 2.0, []]], 8, 0.25)
    (True, True, False)
    >>> is_weak([["b", 4.7, []]], 8, 0.25, best_sites=1)
    True
    """
    if not entries:
        return True
    best = float(entries[0][1]) if best_sites is None else best_sites
    return best < diffuse * popularity


def from_site(url: str, via: str, entries: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """``via``'s list as ``url``'s answer: every entry but ``url`` itself, marked.

    >>> from_site("http://a.com/x.pdf", "http://a.com/", [["http://b.com/", 3.0, []], ["http://a.com/x.pdf", 1.0, []]])
    [['http://b.com/', 3.0, [], 'site', 'http://a.com/']]
    """
    return [[*entry[:3], SITE_SOURCE, via] for entry in entries if entry[0] != url]


def apply_site_fallback(
    related: Mapping[str, Sequence[Sequence[Any]]],
    popularity: Mapping[str, int],
    pages: Iterable[str],
    diffuse: float,
    best_sites: Mapping[str, int] | None = None,
) -> dict[str, list[list[Any]]]:
    """The related lists after the site fallback, for every page of ``related`` and of
    ``pages`` (the cited pages, with or without a list), in URL order; ``best_sites``: the
    citing sites of each list's first result (:func:`is_weak`).

    >>> lists = {"http://a.com/": [["http://b.com/", 9.0, []]],
    ...          "http://a.com/ad": [["http://z.com/", 1.0, []]]}
    >>> out = apply_site_fallback(lists, {"http://a.com/ad": 30}, ["http://a.com/f.pdf"], 0.25)
    >>> out["http://a.com/ad"] == out["http://a.com/f.pdf"] == [["http://b.com/", 9.0, [], "site", "http://a.com/"]]
    True
    """
    every = sorted({*related, *pages})
    weak = {url for url in every
            if is_weak(related.get(url), popularity.get(url, 0), diffuse,
                       None if best_sites is None else best_sites.get(url, 0))}
    answers: dict[str, list[list[Any]]] = {}
    for url in every:
        answer: list[list[Any]] = []
        if url in weak:
            via = next((chop for chop in site_chops(url) if chop in related and chop not in weak),
                       None)
            if via is not None:
                answer = from_site(url, via, related[via])
        if not answer:  # not weak, no site page to answer, or its list held only this page
            answer = [list(entry) for entry in related.get(url) or ()]
        if answer:
            answers[url] = answer
    return answers
