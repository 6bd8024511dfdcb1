"""The compiled scan changes nothing (issue 11, item 4): on every page of ``../shared/data``
the segmenter's output is the one pinned before it was compiled, through the compiled scan
and through the pure-Python fallback alike; and the compiled scan is used when built."""
from __future__ import annotations

import logging
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segmenter.scan as scan
import segmenter.style as style
from segmenter import _resolve, segment_bytes, segment_html
from segmenter.scanner import _scan_events
from segmenter.sections import count_words
from tests import segment_digests
from tests.prerequisites import missing_prerequisite

BUILT = Path(scan.__file__).with_name("native_scan" + sysconfig.get_config_var("EXT_SUFFIX"))


def _changed(shared_data) -> list[str]:
    data = shared_data("web").parent
    pinned = segment_digests.read_fixture()
    found = segment_digests.compute(segment_bytes, data)
    return sorted(key for key in pinned.keys() | found.keys() if pinned.get(key) != found.get(key))


def test_the_fixture_covers_every_page(shared_data) -> None:
    pinned = segment_digests.read_fixture()
    keys = [key for key, *_ in segment_digests.pages(shared_data("web").parent)]
    assert sorted(keys) == sorted(pinned) and len(keys) == 1894


@pytest.mark.slow
def test_every_page_segments_as_pinned(shared_data) -> None:
    """The compiled scan where it is built (the default path)."""
    assert _changed(shared_data) == []


@pytest.mark.slow
def test_the_pure_python_scan_segments_every_page_as_pinned(shared_data, monkeypatch) -> None:
    """The fallback (no compiler, another platform, a stale build): the same output."""
    monkeypatch.setattr(scan, "NATIVE", None)
    assert _changed(shared_data) == []


def _require_native() -> None:
    """The compiled scan's own tests: skipped where it is not built, failed in CI."""
    if scan.NATIVE is None:
        missing_prerequisite("the compiled scan is not built (pip install -e .)", "the compiled scan")


def test_the_compiled_scan_is_used_when_built() -> None:
    if not BUILT.is_file():
        missing_prerequisite(f"{BUILT.name} not built (pip install -e .)", "the compiled scan")
    assert scan.NATIVE is not None and Path(scan.NATIVE.__file__) == BUILT


def test_a_stale_build_is_not_used(monkeypatch, caplog) -> None:
    """An edited native_*.pyx not yet recompiled: the pure-Python scan runs instead."""
    _require_native()
    monkeypatch.setattr(scan.NATIVE, "SOURCE_SHA256", "0" * 64)
    with caplog.at_level(logging.WARNING, logger="segmenter.scan"):
        assert scan.load_native() is None
    assert "changed since it was compiled" in caplog.text


def test_nesting_deeper_than_the_compiled_stacks_falls_back_to_the_event_scan() -> None:
    """The compiled scan's stacks hold 2,040 levels; deeper, the pure-Python scan runs."""
    _require_native()
    html = "<div>" * 3000 + '<a href="/x">x</a> <a href="/y">y</a>' + "</div>" * 3000
    assert scan.NATIVE.scan(html.encode(), "http://example.com/", _resolve) is None
    assert [[link.href for link in block] for block in segment_html(html, "http://example.com/").blocks] \
        == [["http://example.com/x", "http://example.com/y"]]


def test_the_compiled_scan_recovers_from_broken_html_silently(capfd) -> None:
    """libxml2 recovers from broken markup and says nothing on stderr (a Hadoop task's log
    would fill with its messages)."""
    _require_native()
    html = b"<table><tr><td><a href='/a'>a</td></a></b><p><<<&bogus;<a href=/b>b</table></html></div>"
    result = scan.NATIVE.scan(html, "http://example.com/", _resolve)
    assert result is not None and sum(len(s.links) for s in result.sections) == 2
    assert capfd.readouterr().err == ""


def test_an_error_in_a_callback_reaches_the_caller() -> None:
    """A resolver that raises stops the parse; the compiled scan raises its error, as the
    pure-Python parser target does."""
    _require_native()

    def failing(href: str, base: str) -> str | None:
        raise RuntimeError("resolver failed")

    html = b"<ul><li><a href='a b'>a</a><li><a href='c d'>c</a></ul>"
    with pytest.raises(RuntimeError, match="resolver failed"):
        scan.NATIVE.scan(html, "http://example.com/", failing)
    # the parser context is usable again afterwards
    assert scan.NATIVE.scan(html, "http://example.com/", _resolve) is not None


def test_the_compiled_scan_runs_in_other_threads() -> None:
    """Another thread gets a parser context of its own: same sections."""
    _require_native()
    import threading

    html = ('<div class="nav"><a href="/a">A</a> <a href="/b">B</a></div><p>text '
            '<a href="/c">c</a></p>').encode()
    expected = scan.NATIVE.scan(html, "http://example.com/", _resolve)
    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(
        scan.NATIVE.scan(html, "http://example.com/", _resolve))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [expected] * 4


def test_segmenting_bytes_equals_segmenting_their_text(shared_data) -> None:
    """The UTF-8 body parsed as it is (Decoded.utf8) and the decoded text encoded again
    give the same sections, on real pages."""
    from relatedpages.corpus.ingest import Page, read_pages
    from segmenter.decode import decode_html

    warc = sorted(shared_data("web").glob("*.warc.gz"))[0]
    pages = [item for item in read_pages(warc) if isinstance(item, Page)][:60]
    kept = 0
    for page in pages:
        decoded = decode_html(page.body, page.http_charset)
        kept += decoded.utf8 is not None
        assert segment_bytes(page.body, page.url, page.http_charset).sections == \
            segment_html(decoded.text, page.url).sections
    assert kept >= 50


# -- the two scans on generated pages --------------------------------------------------

_TAGS = ("div", "p", "ul", "li", "a", "b", "span", "h2", "td", "table", "tr", "font", "style",
         "script", "nav", "footer", "base", "body", "br", "header", "strong", "img")
_ATTRIBUTES = st.dictionaries(
    st.sampled_from(("href", "class", "id", "style", "bgcolor", "color", "face", "size", "link",
                     "text", "title")),
    st.sampled_from(("", "/a", "b c", "x", "http://other.example/p", "color: red",
                     "font-weight: bold; background: #336699", "#ff0", "navy", "Arial, serif", "3",
                     "javascript:void(0)", "  d  ")),
    max_size=3)
_TEXT = st.sampled_from(("", " ", "Hello world", "新浪新闻 news", "a_b c", "x.y{color:blue}",
                         ".b c{font-weight:bold} #x{background:red}", "  \n ", "42 & more", "é"))


@st.composite
def _pages(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            tag = draw(st.sampled_from(_TAGS))
            attributes = "".join(f' {k}="{v}"' for k, v in draw(_ATTRIBUTES).items())
            parts.append(f"<{tag}{attributes}>")
        elif kind == 1:
            parts.append(f"</{draw(st.sampled_from(_TAGS))}>")
        else:
            parts.append(draw(_TEXT))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_pages())
def test_the_compiled_and_the_pure_python_scan_agree(html: str) -> None:
    _require_native()
    data = html.encode()
    native = scan.NATIVE.scan(data, "http://example.com/dir/", _resolve)
    if native is not None:
        assert native == _scan_events(data, "http://example.com/dir/", _resolve)


@given(st.text())
def test_the_compiled_word_count_is_the_regexs(text: str) -> None:
    _require_native()
    from segmenter import native_text

    assert native_text.count_words(text) == count_words(text)


@given(st.text(alphabet=st.sampled_from(" \t\n\x0b\x0c\r\x1c\x1fab.\u00a0\u3000é"), max_size=12)
       | st.text())
def test_the_compiled_anchor_collapse_is_splits_join(text: str) -> None:
    _require_native()
    from segmenter import native_text

    assert native_text.collapsed(text) == " ".join(text.split())


# near a half at the sixth decimal (where round's decimal conversion decides), and anywhere
_NEAR_HALVES = st.builds(lambda whole, nudge: (whole + 0.5) / 1e6 + nudge,
                         st.integers(0, 10**9), st.sampled_from((0.0, 1e-12, -1e-12, 5e-10, -5e-10)))


@settings(max_examples=3000, deadline=None)
@given(_NEAR_HALVES | st.floats(min_value=0, max_value=1e8) | st.floats())
def test_the_compiled_rounding_is_rounds(x: float) -> None:
    """Builder.build rounds weighted_chars as the pure scan does (round(x, 6)), in binary
    where that is exact; the same float, NaN and infinities included."""
    _require_native()
    from segmenter import native_walker

    ours, theirs = native_walker.round6(x), round(x, 6)
    assert ours == theirs or (ours != ours and theirs != theirs)


_URL_PIECES = st.sampled_from((
    "http://", "https://", "HTTP://", "http:", "//", "/", "\\", "a", "Z", "0", "1", "0x1", ".",
    "..", "-", "_", "~", "%", "%7e", "javascript:", "mailto:x", "tel:", "j", "m", "t", "%7E", "%2F", "%2f", "%41", "%C3%A9", "é", "?", "#", ":",
    ":80", ":8080", "@", "index.html", "INDEX.PHP", "default.aspx", "index.htm?x", " ", "\t",
    "example.com", "Example.com", "b.c", "x" * 64, "[::1]", "&", "=", "'", "*", "!", "$", "|"))
_URLS = st.lists(_URL_PIECES, max_size=10).map("".join)
_BASES = st.one_of(_URLS, st.sampled_from((
    "http://example.com/dir/page", "https://a.b.example/", "http://example.com:8080/x",
    "http://192.168.0.1/", "http://EXAMPLE.com/", "http://user@example.com/", "not a url")))


@settings(max_examples=2000, deadline=None)
@given(_URLS, _BASES)
def test_the_compiled_link_fast_path_is_normalise_urls(href: str, base: str) -> None:
    """The walk's C fast path for links already canonical (absolute, or root-relative on a
    canonical base) answers only where normalise_url gives the same URL."""
    _require_native()
    from segmenter import native_links

    answered, fast = native_links.canonical_link(href, base)
    if answered:
        assert fast == _resolve(href, base)


def test_the_compiled_link_fast_path_takes_the_common_links() -> None:
    _require_native()
    from segmenter import native_links

    fast = native_links.canonical_link
    assert fast("https://www.example.com/a/b.html?q=1&r=%2F", "x") == \
        (True, "https://www.example.com/a/b.html?q=1&r=%2F")
    assert fast("/news/2024/", "http://example.com/dir/page?x") == \
        (True, "http://example.com/news/2024/")
    assert fast("/a#top", "http://example.com/") == (True, "http://example.com/a")
    assert [fast(href, "http://example.com/") for href in ("#top", "javascript:void(0)",
                                                          "mailto:a@example.com")] == \
        [(True, None)] * 3
    assert [fast(href, "http://example.com/") for href in (
        "/index.html", "HTTP://example.com/", "/a/../b", "/a/%7e", "http://1.2.3.4/", "/?",
        "http://example.com", "page.html", "/a?#top", "JavaScript:x", " #top")] == \
        [(False, None)] * 11


_CSS = st.lists(st.sampled_from((
    "{", "}", ",", " ", "\n", "a", "div", ".nav", "#top", "*", "td.x#y", "div a", "a:hover",
    "p > b", "[x]", "@media screen", "color:red", "background:#fff", "font-weight:bold",
    "margin:0", ";", "/*", "*/", "é", "~", "FONT-size: 12px", "color: navy !important")),
    max_size=40).map("".join)


@settings(max_examples=1000, deadline=None)
@given(_CSS)
def test_the_compiled_sheet_reader_is_the_pure_ones(css: str) -> None:
    _require_native()
    from segmenter import native_sheets

    assert native_sheets._sheet_rules(css) == style.sheet_rules(css)


@pytest.mark.parametrize("native", [True, False])
def test_a_class_named_only_beside_an_id_still_styles(native: bool, monkeypatch) -> None:
    """``#page.x`` is indexed by its id: the class must still count as named, or the style
    memo's key drops it and the two divs below share one style."""
    if native and scan.NATIVE is None:
        pytest.skip("the compiled scan is not built")
    if not native:
        monkeypatch.setattr(scan, "NATIVE", None)
    html = ('<style>#page.x{color:red}</style><div id="page" class="x"><p>Red text</p></div>'
            '<div id="page" class="y"><p>Plain text</p></div>')
    fonts = [section.fonts for section in segment_html(html, "http://example.com/").sections]
    assert fonts == [("serif medium #ff0000",), ("serif medium #000000",)]
