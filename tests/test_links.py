"""Tests for filters.links: each filter by hand in the paper's order, properties, real hubs."""
from __future__ import annotations

import doctest
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from filters import links
from filters.anchors import AnchorWords
from filters.links import (
    DYNAMIC_EXTENSIONS,
    FILE_EXTENSIONS,
    LARGE_BLOCK_DEFAULT,
    FilteredLink,
    FilterEvent,
    LinkFilter,
    LinkFilterParams,
    filter_blocks,
    is_file_link,
    path_extension,
    site_home,
)
from filters.site import SiteIdentity, site_of
from filters.urls import NormaliseOptions, classify_url

E = FilterEvent
PAGE = "example.org"  # the citing page's site in the hand-worked cases

# Each link ends in exactly one of these; each well-formed block in one of BLOCK_FATES.
LINK_FATES = (
    E.LINK_IN_LARGE_BLOCK, E.MALFORMED, E.EMPTY_HREF, E.NON_WEB, E.UNPARSABLE, E.FILE,
    E.SINGLETON, E.EMPTY_ANCHOR, E.COMMON_SITE, E.KEPT,
)  # fmt: skip
BLOCK_FATES = (E.BLOCK_TOO_LARGE, E.BLOCK_MALFORMED, E.BLOCK_EMPTIED, E.BLOCK_KEPT)


@pytest.fixture(scope="module")
def analyser(tmp_path_factory: pytest.TempPathFactory) -> AnchorWords:
    return AnchorWords(tmp_path_factory.mktemp("jieba"))


def block(*links_: tuple[str, str]) -> list[dict[str, Any]]:
    """A block record: (href, anchor) pairs with positions 0, 1, …"""
    return [{"href": href, "anchor": anchor, "pos": pos} for pos, (href, anchor) in enumerate(links_)]


def run(
    analyser: AnchorWords,
    blocks: Sequence[Sequence[Mapping[str, object]]],
    page_site: str = PAGE,
    **switches: Any,
) -> tuple[list[list[tuple[str, int]]], dict[str, int]]:
    """filter_blocks, with results as (url, pos) lists and counts keyed by counter name."""
    kept, counts = filter_blocks(page_site, blocks, analyser, LinkFilterParams(**switches))
    return [[(link.url, link.pos) for link in b] for b in kept], {
        event.value: n for event, n in counts.items()
    }


def test_doctests() -> None:
    result = doctest.testmod(links)
    assert result.attempted > 0 and result.failed == 0


def test_counter_names_are_fixed_snake_case() -> None:
    values = [event.value for event in FilterEvent]
    assert len(set(values)) == len(values)
    for value in values:
        assert value.replace("_", "").isalpha() and value == value.lower()
    assert set(LINK_FATES) | set(BLOCK_FATES) | {E.DYNAMIC, E.NORMALISED} == set(FilterEvent)


# --------------------------------------------------------------------------------------
# Parameters


def test_params_defaults() -> None:
    params = LinkFilterParams()
    assert params.large_block == LARGE_BLOCK_DEFAULT == 80
    assert params.file and params.dynamic and params.normalise and params.singleton
    assert params.empty_anchor and params.common_site


@pytest.mark.parametrize(
    "kwargs",
    [
        {"large_block": -1},
        {"large_block": True},
        {"large_block": 80.0},
        {"file": "yes"},
        {"common_site": 1},
        {"normalise_options": None},
    ],
)
def test_params_reject_impossible_values(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        LinkFilterParams(**kwargs)


def test_extension_lists() -> None:
    assert {"pdf", "mp3", "zip", "jpg", "json", "xml", "rss"} <= FILE_EXTENSIONS
    assert {"js", "css"}.isdisjoint(FILE_EXTENSIONS)  # project names, not files
    assert {"html", "htm", "php"}.isdisjoint(FILE_EXTENSIONS)
    assert DYNAMIC_EXTENSIONS == {"php", "asp", "aspx", "jsp", "cgi", "pl", "do", "action", "cfm"}


# --------------------------------------------------------------------------------------
# 1. Large block filter (S = 80)


def _many(n: int) -> list[dict[str, Any]]:
    return block(*[(f"https://site{i}.com/", f"Site {i}") for i in range(n)])


def test_large_block_of_81_links_dropped_whole(analyser: AnchorWords) -> None:
    kept, counts = run(analyser, [_many(81)])
    assert kept == []
    assert counts == {"block_too_large": 1, "link_in_large_block": 81}


def test_block_of_80_links_kept(analyser: AnchorWords) -> None:
    kept, counts = run(analyser, [_many(80)])
    assert kept == [[(f"https://site{i}.com/", i) for i in range(80)]]
    assert counts == {"link_kept": 80, "block_kept": 1}


def test_large_block_counts_links_as_segmented(analyser: AnchorWords) -> None:
    # 75 good links + 6 mailto: 81 as segmented, so dropped although 75 would pass.
    links_ = _many(75) + block(*[(f"mailto:x{i}@a.com", "mail") for i in range(6)])
    kept, counts = run(analyser, [links_])
    assert kept == [] and counts == {"block_too_large": 1, "link_in_large_block": 81}


def test_large_block_threshold_and_switch(analyser: AnchorWords) -> None:
    assert run(analyser, [_many(3)], large_block=2)[1] == {
        "block_too_large": 1,
        "link_in_large_block": 3,
    }
    kept, counts = run(analyser, [_many(200)], large_block=0)  # 0 disables the filter
    assert len(kept[0]) == 200 and counts == {"link_kept": 200, "block_kept": 1}


# --------------------------------------------------------------------------------------
# 2. Non-web schemes, empty hrefs, unparsable URLs, malformed records (always on)


def test_non_web_and_unparsable_removed(analyser: AnchorWords) -> None:
    kept, counts = run(
        analyser,
        [
            block(
                ("javascript:void(0)", "Menu"),
                ("mailto:someone@example.com", "Mail us"),
                ("tel:+4412345", "Call"),
                ("ftp://ftp.example.net/pub/", "FTP"),
                ("https://good.com/a", "Good"),
                ("#top", "Top"),
                ("", "Nothing"),
                ("http://bad host.com/", "Bad"),
                ("http://example.com:99999/", "Bad port"),
                ("relative/page.html", "Relative"),
            )
        ],
    )
    assert kept == [[("https://good.com/a", 4)]]
    assert counts == {
        "link_non_web_scheme": 4,
        "link_empty_href": 2,
        "link_unparsable": 3,
        "link_kept": 1,
        "block_kept": 1,
    }


def test_malformed_records_counted_not_raised(analyser: AnchorWords) -> None:
    good = {"href": "https://good.com/", "anchor": "Good", "pos": 7}
    kept, counts = run(
        analyser,
        [
            [
                "not a link",  # type: ignore[list-item]
                {"anchor": "no href", "pos": 0},
                {"href": "https://a.com/", "anchor": None, "pos": 1},
                {"href": "https://a.com/", "anchor": "bool pos", "pos": True},
                {"href": "https://a.com/", "anchor": "negative", "pos": -1},
                {"href": b"https://a.com/", "anchor": "bytes", "pos": 2},
                good,
            ],
            "a string, not a block",  # type: ignore[list-item]
            {"href": "https://a.com/"},  # type: ignore[list-item]
            [],
        ],
    )
    assert kept == [[("https://good.com/", 7)]]
    assert counts == {
        "link_malformed": 6,
        "link_kept": 1,
        "block_kept": 1,
        "block_malformed": 2,
        "block_emptied_by_filters": 1,
    }


# --------------------------------------------------------------------------------------
# 3. File filter


def test_file_links_removed(analyser: AnchorWords) -> None:
    b = block(
        ("https://a.com/paper.pdf", "Paper"),
        ("https://b.com/song.MP3", "Song"),
        ("https://c.com/slides.pdf?download=1", "Slides"),
        ("https://d.com/logo.png", "Logo"),
        ("https://e.com/report.html", "Report"),
        ("https://f.com/pdf/", "PDF folder"),
    )
    kept, counts = run(analyser, [b])
    assert kept == [[("https://e.com/report.html", 4), ("https://f.com/pdf/", 5)]]
    assert counts == {"link_to_file": 4, "link_kept": 2, "block_kept": 1}
    kept, counts = run(analyser, [b], file=False, dynamic=False)
    assert [url for url, _ in kept[0]] == [link["href"] for link in b]
    assert counts == {"link_kept": 6, "block_kept": 1}


# --------------------------------------------------------------------------------------
# 4. Dynamic filter


def test_dynamic_links_to_site_home(analyser: AnchorWords) -> None:
    b = block(
        ("http://a.com/x.php?id=1", "A"),
        ("https://github.com/owner/repo/issues?q=1", "Issues"),
        ("http://c.com/cgi-bin/search.cgi", "Search"),
        ("https://news.d.co.uk/list?page=2", "List"),
        ("https://e.com/page?", "Empty query"),  # no query string: not dynamic
    )
    kept, counts = run(analyser, [b])
    assert kept == [
        [
            ("http://a.com/", 0),
            ("https://github.com/owner", 1),
            ("http://c.com/", 2),
            ("https://news.d.co.uk/", 3),
            ("https://e.com/page", 4),
        ]
    ]
    assert counts == {
        "link_dynamic_to_site_home": 4,
        "link_changed_by_normalisation": 1,  # "/page?" -> "/page"
        "link_kept": 5,
        "block_kept": 1,
    }
    kept, counts = run(analyser, [b], dynamic=False, normalise=False)
    assert [url for url, _ in kept[0]] == [link["href"] for link in b]
    assert counts == {"link_kept": 5, "block_kept": 1}


def test_dynamic_links_of_one_site_collapse_to_one(analyser: AnchorWords) -> None:
    b = block(("http://a.com/x.php?id=1", "One"), ("http://a.com/x.php?id=2", "Two"))
    kept, counts = run(analyser, [b])
    assert kept == [[("http://a.com/", 0)]]
    assert counts == {
        "link_dynamic_to_site_home": 2,
        "link_repeated_in_block": 1,
        "link_kept": 1,
        "block_kept": 1,
    }


@pytest.mark.parametrize(
    ("url", "home"),
    [
        ("http://a.com/x.php?id=1", "http://a.com/"),
        ("https://github.com/owner/repo/issues?q=1", "https://github.com/owner"),
        ("https://github.com/Owner/repo?tab=readme", "https://github.com/Owner"),
        ("https://github.com/search?q=x", "https://github.com/search"),
        ("https://github.com/?q=x", "https://github.com/"),
        ("https://sourceforge.net/projects/foo/files/?page=2", "https://sourceforge.net/projects/foo"),
        ("https://medium.com/@user/post?source=rss", "https://medium.com/@user"),
        ("http://127.0.0.1:8080/a.jsp", "http://127.0.0.1:8080/"),
        ("http://[::1]/a.asp", "http://[::1]/"),
    ],
)
def test_site_home(url: str, home: str) -> None:
    home_from = site_home(url, site_of(url))
    assert home_from == home
    assert site_of(home) == site_of(url)


# --------------------------------------------------------------------------------------
# 5. Normalisation filter


def test_normalisation_counted_when_it_changes_the_url(analyser: AnchorWords) -> None:
    b = block(
        ("http://a.com/index.html", "A"),
        ("http://b.com/", "B"),
        ("HTTP://WWW.C.COM:80/x/../y", "C"),
    )
    kept, counts = run(analyser, [b])
    assert kept == [[("http://a.com/", 0), ("http://b.com/", 1), ("http://www.c.com/y", 2)]]
    assert counts == {"link_changed_by_normalisation": 2, "link_kept": 3, "block_kept": 1}
    kept, counts = run(analyser, [b], normalise_options=NormaliseOptions(remove_www=True))
    assert kept[0][2] == ("http://c.com/y", 2)
    kept, counts = run(analyser, [b], normalise=False)
    assert kept == [
        [("http://a.com/index.html", 0), ("http://b.com/", 1), ("HTTP://WWW.C.COM:80/x/../y", 2)]
    ]
    assert counts == {"link_kept": 3, "block_kept": 1}


# --------------------------------------------------------------------------------------
# 6. Singleton filter


def test_singleton_keeps_first_occurrence(analyser: AnchorWords) -> None:
    b = block(
        ("https://a.com/", "First"),
        ("https://b.com/", "B"),
        ("https://a.com/", "Second"),
        ("https://a.com/index.html", "Third, after normalisation"),
    )
    kept, counts = filter_blocks(PAGE, [b], analyser)
    assert [(link.url, link.anchor, link.pos) for link in kept[0]] == [
        ("https://a.com/", "First", 0),
        ("https://b.com/", "B", 1),
    ]
    assert dict(counts) == {
        E.NORMALISED: 1,
        E.SINGLETON: 2,
        E.KEPT: 2,
        E.BLOCK_KEPT: 1,
    }
    kept_urls, counts_ = run(analyser, [b], singleton=False)
    assert [pos for _, pos in kept_urls[0]] == [0, 1, 2, 3]
    assert counts_ == {"link_changed_by_normalisation": 1, "link_kept": 4, "block_kept": 1}


def test_singleton_is_per_block(analyser: AnchorWords) -> None:
    b = block(("https://a.com/", "A"))
    kept, counts = run(analyser, [b, b])
    assert kept == [[("https://a.com/", 0)], [("https://a.com/", 0)]]
    assert counts == {"link_kept": 2, "block_kept": 2}


# --------------------------------------------------------------------------------------
# 7. Empty anchor filter


def test_empty_anchor_removed(analyser: AnchorWords) -> None:
    b = block(
        ("https://a.com/", ""),  # image link
        ("https://b.com/", "   \n "),
        ("https://c.com/", "\u00bb"),
        ("https://d.com/", "___"),
        ("https://e.com/", "the"),  # only a stop word: has text, kept with no words
        ("https://f.com/", "  Flask \n docs "),
    )
    kept, counts = filter_blocks(PAGE, [b], analyser)
    assert [(link.url, link.anchor, link.words, link.pos) for link in kept[0]] == [
        ("https://e.com/", "the", frozenset(), 4),
        ("https://f.com/", "Flask docs", frozenset({"flask", "doc"}), 5),
    ]
    assert dict(counts) == {E.EMPTY_ANCHOR: 4, E.KEPT: 2, E.BLOCK_KEPT: 1}
    kept_urls, counts_ = run(analyser, [b], empty_anchor=False)
    assert [pos for _, pos in kept_urls[0]] == [0, 1, 2, 3, 4, 5]
    assert counts_ == {"link_kept": 6, "block_kept": 1}


# --------------------------------------------------------------------------------------
# 8. Common site filter


def test_same_site_links_removed(analyser: AnchorWords) -> None:
    b = block(
        ("http://www.a.com/x", "Same host family"),
        ("http://blog.a.com/", "Subdomain"),
        ("http://a.co.uk/", "Other country"),
        ("https://foo.github.io/", "Pages site"),
    )
    kept, counts = run(analyser, [b], page_site="a.com")
    assert kept == [[("http://a.co.uk/", 2), ("https://foo.github.io/", 3)]]
    assert counts == {"link_same_site_as_page": 2, "link_kept": 2, "block_kept": 1}
    kept, counts = run(analyser, [b], page_site="a.com", common_site=False)
    assert len(kept[0]) == 4 and counts == {"link_kept": 4, "block_kept": 1}


def test_github_owner_is_the_site(analyser: AnchorWords) -> None:
    page_site = site_of("https://github.com/sindresorhus/awesome")
    b = block(
        ("https://github.com/sindresorhus/awesome-nodejs", "Node.js"),
        ("https://github.com/vinta/awesome-python", "Python"),
        ("https://github.com/avelino/awesome-go", "Go"),
    )
    kept, counts = filter_blocks(page_site, [b], analyser)
    assert [(link.url, link.site) for link in kept[0]] == [
        ("https://github.com/vinta/awesome-python", "github.com/vinta"),
        ("https://github.com/avelino/awesome-go", "github.com/avelino"),
    ]
    assert dict(counts) == {E.COMMON_SITE: 1, E.KEPT: 2, E.BLOCK_KEPT: 1}
    # Without the multi-tenant rules every GitHub link is the page's own site.
    no_rules = SiteIdentity(())
    kept, counts = filter_blocks(
        site_of("https://github.com/sindresorhus/awesome", no_rules), [b], analyser, identity=no_rules
    )
    assert kept == [] and dict(counts) == {E.COMMON_SITE: 3, E.BLOCK_EMPTIED: 1}


# --------------------------------------------------------------------------------------
# All filters together: order, positions, empty blocks


def test_positions_preserved_and_empty_blocks_dropped(analyser: AnchorWords) -> None:
    blocks = [
        block(("https://a.com/", "A"), ("mailto:x@y.z", "Mail"), ("https://b.com/", "B")),
        block(("https://example.org/about", "About"), ("https://c.com/f.pdf", "File")),
        block(
            ("https://c.com/", ""),
            ("https://d.com/", "D"),
            ("https://d.com/", "D again"),
            ("https://e.com/", "E"),
        ),
    ]
    kept, counts = run(analyser, blocks)
    assert kept == [
        [("https://a.com/", 0), ("https://b.com/", 2)],
        [("https://d.com/", 1), ("https://e.com/", 3)],
    ]
    assert counts == {
        "link_non_web_scheme": 1,
        "link_same_site_as_page": 1,
        "link_to_file": 1,
        "link_empty_anchor": 1,
        "link_repeated_in_block": 1,
        "link_kept": 4,
        "block_kept": 2,
        "block_emptied_by_filters": 1,
    }


def test_order_singleton_before_empty_anchor(analyser: AnchorWords) -> None:
    # The image link comes first: the singleton filter keeps it (first occurrence), then the
    # empty-anchor filter removes it, so the text link to the same URL is gone too.
    b = block(("https://a.com/", ""), ("https://a.com/", "A"))
    kept, counts = run(analyser, [b])
    assert kept == []
    assert counts == {
        "link_repeated_in_block": 1,
        "link_empty_anchor": 1,
        "block_emptied_by_filters": 1,
    }


def test_order_file_before_dynamic(analyser: AnchorWords) -> None:
    b = block(("https://a.com/get.pdf?id=3", "Get"), ("https://b.com/get.php?f=x.pdf", "B"))
    kept, counts = run(analyser, [b])
    assert kept == [[("https://b.com/", 1)]]
    assert counts == {
        "link_to_file": 1,
        "link_dynamic_to_site_home": 1,
        "link_kept": 1,
        "block_kept": 1,
    }


def test_all_switches_off_keeps_every_web_link_unchanged(analyser: AnchorWords) -> None:
    b = block(
        ("http://a.com/index.html", ""),
        ("http://a.com/index.html", "again"),
        ("http://example.org/x.php?id=1", "own site, dynamic"),
        ("http://b.com/f.pdf", "file"),
        ("mailto:x@y.z", "mail"),
    )
    off: dict[str, Any] = {
        "large_block": 0,
        "file": False,
        "dynamic": False,
        "normalise": False,
        "singleton": False,
        "empty_anchor": False,
        "common_site": False,
    }
    kept, counts = run(analyser, [b], **off)
    assert kept == [[(link["href"], link["pos"]) for link in b[:4]]]
    assert counts == {"link_non_web_scheme": 1, "link_kept": 4, "block_kept": 1}


def test_filtered_link_is_frozen(analyser: AnchorWords) -> None:
    kept, _ = filter_blocks(PAGE, [block(("https://a.com/", "Python Libraries"))], analyser)
    link = kept[0][0]
    assert link == FilteredLink(
        "https://a.com/", "a.com", "Python Libraries", frozenset({"python", "librari"}), 0
    )
    with pytest.raises(AttributeError):
        link.url = "https://b.com/"  # type: ignore[misc]


def test_chinese_anchor_words(analyser: AnchorWords) -> None:
    kept, _ = filter_blocks(
        "sina.com.cn",
        [block(("https://news.sohu.com/", "搜狐新闻中心"), ("https://www.qq.com/", "腾讯网"))],
        analyser,
    )
    assert kept[0][0].words == {"搜狐", "新闻", "中心"} and kept[0][0].site == "sohu.com"
    assert kept[0][1].site == "qq.com"


# --------------------------------------------------------------------------------------
# Properties: never raises; invariants of the output and the counters

_hosts = st.sampled_from(
    ["a.com", "www.a.com", "b.org", "example.org", "github.com", "sites.google.com", "[::1]"]
)
_paths = st.sampled_from(
    ["", "/", "/x", "/index.html", "/f.pdf", "/x.php", "/owner", "/owner/repo", "/site/n/p"]
)
_urlish = st.builds(
    lambda scheme, host, path, query, tail: f"{scheme}{host}{path}{query}{tail}",
    st.sampled_from(["http://", "https://", "HTTP://", "javascript:", "mailto:", "", "//"]),
    _hosts,
    _paths,
    st.sampled_from(["", "?", "?q=1", "#frag"]),
    st.text(max_size=3),
)
_good_link = st.fixed_dictionaries(
    {
        "href": st.integers(min_value=0, max_value=3).flatmap(
            lambda i: st.text() if i == 0 else _urlish
        ),
        "anchor": st.one_of(st.text(), st.sampled_from(["", "the", "Python 教程", "»", "Docs"])),
        "pos": st.integers(min_value=0, max_value=200),
    }
)
_bad_link = st.one_of(
    st.dictionaries(
        st.sampled_from(["href", "anchor", "pos"]), st.one_of(st.none(), st.text(), st.integers())
    ),
    st.text(max_size=2),
    st.none(),
)
# Mostly well-formed links (about 9 in 10), some malformed records.
_link = st.integers(min_value=0, max_value=9).flatmap(lambda i: _bad_link if i == 0 else _good_link)
_block = st.lists(_link, max_size=12)
_blocks = st.lists(
    st.integers(min_value=0, max_value=9).flatmap(
        lambda i: st.text(max_size=2) if i == 0 else _block
    ),
    max_size=5,
)
_params = st.builds(
    LinkFilterParams,
    large_block=st.integers(min_value=0, max_value=10),
    file=st.booleans(),
    dynamic=st.booleans(),
    normalise=st.booleans(),
    singleton=st.booleans(),
    empty_anchor=st.booleans(),
    common_site=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(
    page_site=st.one_of(st.sampled_from(["a.com", "example.org", "github.com/owner"]), st.text()),
    blocks=_blocks,
)
def test_default_filters_invariants(
    analyser: AnchorWords, page_site: str, blocks: list[Any]
) -> None:
    kept, counts = filter_blocks(page_site, blocks, analyser)
    _check_counts(blocks, kept, counts)
    for out in kept:
        assert out, "empty blocks are dropped"
        urls = [link.url for link in out]
        assert len(set(urls)) == len(urls)
        for link in out:
            assert link.site != page_site
            assert link.site == site_of(link.url)
            assert classify_url(link.url) == link.url  # normalised: a fixed point
            assert any(ch.isalnum() for ch in link.anchor)
            # words may be empty (an anchor of stop words only has text, so it is kept)
            assert link.words == analyser.words(link.anchor)
            assert link.anchor == " ".join(link.anchor.split())


@settings(max_examples=200, deadline=None)
@given(params=_params, blocks=_blocks)
def test_any_switches_never_raise(
    analyser: AnchorWords, params: LinkFilterParams, blocks: list[Any]
) -> None:
    kept, counts = filter_blocks("a.com", blocks, analyser, params)
    _check_counts(blocks, kept, counts)


# A task's LinkFilter remembers each href's fate: pages drawn from a small pool of hrefs
# (so most are hits), under any switches and a cache from none to two hrefs (evictions).
_pool_href = st.sampled_from([
    "http://a.com/", "HTTP://A.com/index.html", "http://a.com/x.php?id=1", "https://b.org/doc.pdf",
    "mailto:me@b.org", "javascript:void(0)", "", "#top", "relative.html", "http://[::1",
    "http://b.org/a/../b", "https://github.com/owner/repo", "https://github.com/other/x?q=1",
    "http://c.net/list?page=2", "http://c.net:99999/", "http://example.org/self",
])
_pool_link = st.fixed_dictionaries(
    {
        "href": _pool_href,
        "anchor": st.sampled_from(["", "the", "Python 教程", "»", "Docs", "A  home"]),
        "pos": st.integers(min_value=0, max_value=30),
    }
)
_pool_pages = st.lists(
    st.tuples(
        st.sampled_from(["a.com", "example.org", "github.com/owner", "b.org"]),
        st.lists(st.lists(st.one_of(_pool_link, _bad_link), max_size=8), max_size=4),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(params=_params, pages=_pool_pages, cache_size=st.sampled_from([0, 1, 2, 1 << 15]))
def test_link_filter_equals_filter_blocks_page_after_page(
    analyser: AnchorWords, params: LinkFilterParams, pages: list[Any], cache_size: int
) -> None:
    link_filter = LinkFilter(analyser, params, cache_size=cache_size)
    for page_site, blocks in pages:
        assert link_filter(page_site, blocks) == filter_blocks(page_site, blocks, analyser, params)


def test_link_filter_rejects_a_bad_cache_size(analyser: AnchorWords) -> None:
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(ValueError, match="cache_size"):
            LinkFilter(analyser, cache_size=bad)  # type: ignore[arg-type]


def _check_counts(
    blocks: list[Any], kept: list[list[FilteredLink]], counts: Counter[FilterEvent]
) -> None:
    well_formed = [b for b in blocks if isinstance(b, list)]
    assert sum(counts[e] for e in BLOCK_FATES) == len(blocks)
    assert counts[E.BLOCK_MALFORMED] == len(blocks) - len(well_formed)
    assert sum(counts[e] for e in LINK_FATES) == sum(len(b) for b in well_formed)
    assert counts[E.BLOCK_KEPT] == len(kept)
    assert counts[E.KEPT] == sum(len(b) for b in kept)
    assert all(n > 0 for n in counts.values())
    # Positions come from the input records, never renumbered.
    input_positions = {link.get("pos") for b in well_formed for link in b if isinstance(link, dict)}
    assert all(link.pos in input_positions for b in kept for link in b)


# --------------------------------------------------------------------------------------
# Real data: GitHub-hosted hub pages (awesome lists)


HUB_SAMPLE_STEP = 2


@pytest.fixture(scope="module")
def hub_pages(shared_data: Any) -> list[tuple[str, list[list[dict[str, Any]]]]]:
    from relatedpages.corpus.ingest import Page, read_pages
    from segmenter import blocks_as_json, segment_bytes

    path: Path = shared_data("awesomehub/awesomehub.warc.gz")
    pages = []
    for item in read_pages(path):
        # Every second page (275 of 550) keeps the test at a few seconds.
        if isinstance(item, Page) and item.ordinal % HUB_SAMPLE_STEP == 0:
            segmentation = segment_bytes(item.body, item.url, item.http_charset)
            pages.append((segmentation.url, blocks_as_json(segmentation.blocks)))
    assert len(pages) >= 100
    return pages


def _filter_hubs(
    pages: list[tuple[str, list[list[dict[str, Any]]]]],
    analyser: AnchorWords,
    identity: SiteIdentity | None,
) -> tuple[Counter[FilterEvent], int]:
    total: Counter[FilterEvent] = Counter()
    github_kept = 0
    for url, blocks in pages:
        kept, counts = filter_blocks(site_of(url, identity), blocks, analyser, identity=identity)
        total += counts
        github_kept += sum(link.site.startswith("github.com") for b in kept for link in b)
    return total, github_kept


def test_hub_links_survive_the_common_site_filter(
    hub_pages: list[tuple[str, list[list[dict[str, Any]]]]], analyser: AnchorWords
) -> None:
    url = hub_pages[0][0]
    assert site_of(url) == "github.com/" + url.split("/")[3].lower()

    counts, github_kept = _filter_hubs(hub_pages, analyser, None)
    reaching = counts[E.COMMON_SITE] + counts[E.KEPT]
    # With github.com/<owner> as the site, a hub's links to other owners' repositories are
    # other sites: only links to the hub owner's own pages are dropped (measured 1.5 %).
    assert counts[E.COMMON_SITE] < 0.05 * reaching
    assert github_kept > 0.3 * counts[E.KEPT]  # many of the kept links are repositories
    assert counts[E.BLOCK_TOO_LARGE] > 0 and counts[E.LINK_IN_LARGE_BLOCK] > 0

    # The contrast: a plain registered-domain identity makes every github.com link the
    # page's own site, so every GitHub link is dropped and half of the links are lost.
    no_rules = SiteIdentity(())
    counts_plain, github_kept_plain = _filter_hubs(hub_pages, analyser, no_rules)
    assert github_kept_plain == 0
    assert counts_plain[E.COMMON_SITE] >= github_kept + counts[E.COMMON_SITE] - 0.01 * reaching
    assert counts_plain[E.KEPT] < 0.6 * counts[E.KEPT]


def test_link_filter_on_hub_pages_equals_filter_blocks(
    hub_pages: list[tuple[str, list[list[dict[str, Any]]]]], analyser: AnchorWords
) -> None:
    # Real pages, one LinkFilter across all of them (as a map task), with and without a
    # site identity; a small cache, so that hrefs are evicted and parsed again.
    for identity in (None, SiteIdentity(())):
        link_filter = LinkFilter(analyser, identity=identity, cache_size=64)
        for url, blocks in hub_pages:
            page_site = site_of(url, identity)
            assert link_filter(page_site, blocks) == filter_blocks(
                page_site, blocks, analyser, identity=identity
            )


class _NoSiteFor(SiteIdentity):
    """An identity that finds no site for one host (a parsed URL always has one with the
    real identities: this reaches the filters' guard)."""

    def site_of(self, url: str) -> str:
        if "//nosite.example/" in url:
            raise ValueError(f"no site for {url}")
        return super().site_of(url)


def test_a_link_without_a_site_is_unparsable_after_the_singleton_filter(
    analyser: AnchorWords,
) -> None:
    identity = _NoSiteFor(())
    page = [block(("http://nosite.example/", "A"), ("http://nosite.example/", "again"),
                  ("http://b.org/", "B"))]
    expected_counts = {E.UNPARSABLE: 1, E.SINGLETON: 1, E.KEPT: 1, E.BLOCK_KEPT: 1}
    link_filter = LinkFilter(analyser, identity=identity)
    for _ in range(2):  # the second time from the cache
        for kept, counts in (link_filter("a.com", page),
                             filter_blocks("a.com", page, analyser, identity=identity)):
            assert [[link.url for link in b] for b in kept] == [["http://b.org/"]]
            assert counts == expected_counts


def test_project_names_ending_in_js_or_css_are_pages_on_hub_pages(
    hub_pages: list[tuple[str, list[list[dict[str, Any]]]]], analyser: AnchorWords
) -> None:
    # Next.js, Chart.js, animate.css …: on the real hub pages every link whose last segment
    # ends in .js or .css is a project's page and reaches co-citation; the file filter still
    # drops the papers, images and archives the same pages link.
    named, kept_named, files = 0, 0, Counter[str]()
    for url, blocks in hub_pages:
        kept, _ = filter_blocks(site_of(url), blocks, analyser)
        kept_urls = {link.url for b in kept for link in b}
        assert not any(is_file_link(kept_url) for kept_url in kept_urls)
        for b in blocks:
            for link in b:
                extension = path_extension(link["href"]) if link["href"].startswith("http") else ""
                if extension in ("js", "css"):
                    named += 1
                    kept_named += link["href"] in kept_urls
                elif extension in FILE_EXTENSIONS:
                    files[extension] += 1
    assert named > 50
    assert kept_named > 0.8 * named  # the rest: in blocks of more than S links, repeated, own site
    assert files["pdf"] > 20 and sum(files.values()) > 40


def test_a_description_gives_context_words_and_a_bad_one_is_malformed(analyser: AnchorWords) -> None:
    """A link record's ``text`` (its description, segmenter.sections.Link) becomes the
    link's context words; a ``text`` that is not a str makes the record malformed."""
    described = [{"href": "https://a.com/", "anchor": "A", "pos": 0, "text": "An HTTP client"},
                 {"href": "https://b.com/", "anchor": "B", "pos": 1},
                 {"href": "https://c.com/", "anchor": "C", "pos": 2, "text": ["not", "text"]}]
    kept, events = filter_blocks(PAGE, [described], analyser, LinkFilterParams())
    assert [(link.url, link.context) for link in kept[0]] == [
        ("https://a.com/", analyser.words("An HTTP client")), ("https://b.com/", frozenset())]
    assert analyser.words("An HTTP client") == {"http", "client"}
    assert events[FilterEvent.MALFORMED] == 1
