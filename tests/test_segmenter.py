"""Segmenter: scanning, the five merge rules, robustness, and real hub pages."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import segment_bytes, segment_html, segment_record
from segmenter.adjust import (
    AdjustParams,
    MergeRule,
    SectionType,
    adjust,
    blocks_of,
    merge_rule,
    section_type,
)
from segmenter.sections import DESCRIPTION_WORDS, Link, Section, count_words
from segmenter.style import MAX_LAB_DISTANCE, colour_distance, rgb_to_lab
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
URL = "http://example.com/dir/page.html"


def hrefs(blocks):
    return [[link.href for link in block] for block in blocks]


def section(
    links: int = 0,
    words: int = 0,
    anchor_words: int = 0,
    bold: bool = False,
    background=(255, 255, 255),
    afs: float = 0.3866,
    label: str = "div",
) -> Section:
    chars = max(1, words * 5)
    return Section(
        links=tuple(Link(f"http://{label}.example/{i}", f"a{i}") for i in range(links)),
        link_count=links,
        words=words,
        anchor_words=anchor_words,
        chars=chars,
        weighted_chars=afs * chars,
        bold=bold,
        background=background,
        label=label,
    )


# -- scanning ----------------------------------------------------------------------------


def test_partitioning_tags_cut_sections_and_headings_stay_apart():
    html = """<h2>Frameworks</h2><ul><li><a href="http://a.com/">A</a></li>
    <li><a href="http://b.com/">B</a></li><li><a href="http://c.com/">C</a></li></ul>
    <h2>Databases</h2><ul><li><a href="http://d.com/">D</a></li>
    <li><a href="http://e.com/">E</a></li><li><a href="http://f.com/">F</a></li></ul>"""
    seg = segment_html(html, URL)
    assert [s.label for s in seg.sections] == ["h2", "ul", "h2", "ul"]
    assert hrefs(seg.blocks) == [
        ["http://a.com/", "http://b.com/", "http://c.com/"],
        ["http://d.com/", "http://e.com/", "http://f.com/"],
    ]


def test_links_resolved_against_url_and_first_base_and_non_web_schemes_kept_out():
    html = """<head><base href="/other/"><base href="http://ignored.example/"></head>
    <p><a href="x.html">X</a> <a href="../y.html#frag">Y</a> <a href="mailto:a@b.c">M</a>
    <a href="javascript:void(0)">J</a> <a href="//cdn.example.org/z">Z</a></p>"""
    seg = segment_html(html, URL)
    assert seg.base_url == "http://example.com/other/"
    assert hrefs(seg.blocks) == [
        ["http://example.com/other/x.html", "http://example.com/y.html", "http://cdn.example.org/z"]
    ]
    # the javascript: and mailto: links still count for the section's link count (a menu
    # of javascript: links is still a menu) but never reach a block
    assert seg.sections[0].link_count == 5


def test_script_style_and_select_contents_are_not_links_or_words():
    html = """<style>.x{color:red}</style><div><script>document.write('<a href="/s">s</a>')</script>
    <a href="/a">one</a> <a href="/b">two</a><select><option>hidden words here</option></select></div>"""
    seg = segment_html(html, URL)
    (only,) = seg.sections
    assert only.words == 2 and only.anchor_words == 2
    assert [link.anchor for link in only.links] == ["one", "two"]


def test_anchor_text_whitespace_is_collapsed_and_image_links_have_empty_anchor():
    html = '<p><a href="/a">  Big\n   <b>Name</b> </a><a href="/b"><img src="x.png" alt="logo"></a></p>'
    (block,) = segment_html(html, URL).blocks
    assert [link.anchor for link in block] == ["Big Name", ""]


def test_a_list_entry_keeps_the_text_after_its_link_as_its_description():
    """Link.text: for the link that opens a list item, the item's text after it (other
    links' anchors left out; up to a nested list), the opening separator dropped, at most
    DESCRIPTION_WORDS words; none for any other link.  The compiled and the pure-Python scan
    agree (tests/test_segmenter_same_output.py pins every real page)."""
    html = ('<ul><li><a href="/flask">Flask</a> – A micro <b>web</b> framework.'
            '<li>The <a href="/django">Django</a>: batteries included'
            '<li><a href="/gulp">gulp-coffee</a> - Compile <a href="/coffee">CoffeeScript</a> to JS'
            '<ul><li>nested</ul> after'
            '<li><a href="/bottle">Bottle</a>' + " word" * 40 + '<li><a href="/b2">B2</a></ul>'
            '<table><tr><td><a href="/t">T</a><td>in the next cell</table>'
            '<p><a href="/x">X</a> in a paragraph <a href="/y">Y</a></p>')
    texts = {link.anchor: link.text for section in segment_html(html, URL).sections
             for link in section.links}
    assert texts == {"Flask": "A micro web framework.", "Django": "", "gulp-coffee": "Compile to JS",
                     "CoffeeScript": "", "Bottle": " ".join(["word"] * DESCRIPTION_WORDS),
                     "B2": "", "T": "in the next cell", "X": "", "Y": ""}
    record = segment_record(segment_html(html, URL))
    assert record["blocks"][0][0]["text"] == "A micro web framework."
    assert "text" not in record["blocks"][0][1]  # none: the record stays as it was


def test_descriptions_on_a_real_hub_page(shared_data):
    warc = shared_data("awesomehub/awesomehub.warc.gz")
    pages = dict(_hub_pages(warc))
    url = "https://github.com/typeddjango/awesome-python-typing"
    links = {link.href: link for block in segment_bytes(pages[url], url).blocks for link in block}
    assert links["https://github.com/python/mypy"].text == "Optional static typing (PEP 484)."
    assert links["https://github.com/samuelcolvin/pydantic"].text == (
        "Data parsing using Python type hinting. Supports dataclasses.")
    described = sum(bool(link.text) for link in links.values())
    assert described > 0.8 * len(links), (described, len(links))


def test_block_links_inside_a_link_do_not_split_the_section():
    html = '<ul><li><a href="/a"><div>Title A</div><p>desc</p></a></li><li><a href="/b">B</a></li></ul>'
    assert hrefs(segment_html(html, URL).blocks) == [["http://example.com/a", "http://example.com/b"]]


def test_word_counts_cover_latin_and_chinese():
    assert count_words("The quick brown fox, 2024!") == 5
    assert count_words("新浪新闻") == 2  # two characters per word on average
    assert count_words("  ") == 0


def test_bold_background_and_font_colour_are_tracked():
    html = """<style>td.menu { background-color: #003366; color: white } .hot {font-weight: bold}</style>
    <table><tr><td class="menu"><a href="/a">A</a> <a href="/b">B</a></td>
    <td bgcolor="yellow"><font color="red">plain red text</font> <span class="hot">hot</span></td></tr></table>"""
    first, second = segment_html(html, URL).sections
    assert first.background == (0, 51, 102) and not first.bold
    # links get the browsers' link colour unless a rule says otherwise: #0000EE on navy
    assert first.afs == pytest.approx(colour_distance((0, 0, 238), (0, 51, 102)))
    assert second.background == (255, 255, 0) and second.bold
    red_on_yellow = colour_distance((255, 0, 0), (255, 255, 0))
    black_on_yellow = colour_distance((0, 0, 0), (255, 255, 0))
    # Eq. (1): afs = Σ nᵢ·bᵢ·edisᵢ / Σ nᵢ; "hot" is bold (b = 1.2)
    expected = (12 * red_on_yellow + 3 * 1.2 * black_on_yellow) / 15
    assert second.afs == pytest.approx(expected, abs=1e-4)


def test_cielab_normalisation_constant_is_the_largest_srgb_distance():
    import itertools
    import math

    corners = [(r, g, b) for r in (0, 255) for g in (0, 255) for b in (0, 255)]
    largest = max(math.dist(rgb_to_lab(a), rgb_to_lab(b)) for a, b in itertools.combinations(corners, 2))
    assert largest == pytest.approx(MAX_LAB_DISTANCE, abs=1e-3)
    assert colour_distance((0, 0, 255), (0, 255, 0)) == pytest.approx(1.0, abs=1e-4)


# -- the adjusting rules (hand-worked) ---------------------------------------------------

P = AdjustParams(t1=0.5, t2=2)


def test_rule1_link_sections_with_same_background_merge_even_if_bold():
    s = section(links=3, words=6, anchor_words=6, bold=True)
    t = section(links=4, words=8, anchor_words=7)
    assert section_type(s, P) is section_type(t, P) is SectionType.LINK
    assert merge_rule(s, t, P) is MergeRule.LINK_SAME_BACKGROUND


def test_rule1_needs_more_than_t2_links_and_ratio_above_t1():
    assert section_type(section(links=2, words=4, anchor_words=4), P) is SectionType.NON_LINK
    assert section_type(section(links=3, words=10, anchor_words=5), P) is SectionType.NON_LINK  # 0.5 is not > 0.5
    assert section_type(section(links=3, words=10, anchor_words=6), P) is SectionType.LINK


def test_rule1_different_backgrounds_fall_through_to_later_rules():
    s = section(links=3, words=6, anchor_words=6, background=(0, 0, 0))
    t = section(links=3, words=6, anchor_words=6)
    # same type, neither bold, same afs, not wordy → rule 6
    assert merge_rule(s, t, P) is MergeRule.NO_RULE


def test_rule2_bold_text_blocks_the_merge():
    heading = section(links=0, words=2, bold=True, label="h2")
    links = section(links=5, words=5, anchor_words=5, label="ul")
    assert merge_rule(heading, links, P) is MergeRule.BOLD


def test_rule3_average_font_score_gap():
    s = section(links=1, words=3, anchor_words=1, afs=0.1)
    t = section(links=3, words=3, anchor_words=3, afs=0.7)
    assert merge_rule(s, t, P) is MergeRule.FONT_SCORE
    t_close = section(links=3, words=3, anchor_words=3, afs=0.55)
    assert merge_rule(s, t_close, P) is not MergeRule.FONT_SCORE


def test_rule4_two_wordy_sections_stay_apart():
    s = section(links=1, words=11, anchor_words=1)
    t = section(links=3, words=12, anchor_words=8)
    assert merge_rule(s, t, P) is MergeRule.BOTH_WORDY


def test_rule5_merges_when_the_result_keeps_the_larger_type():
    larger_link = section(links=6, words=10, anchor_words=10)
    small_text = section(links=0, words=3)
    # merged: 10/13 anchor words > 0.5, 6 links → link, the larger's type
    assert merge_rule(larger_link, small_text, P) is MergeRule.TYPE_OF_LARGER
    small_link = section(links=3, words=3, anchor_words=3)
    larger_text = section(links=0, words=9)
    # merged: 3/12 → non-link, the larger's type → merge too
    assert merge_rule(small_link, larger_text, P) is MergeRule.TYPE_OF_LARGER
    big_link = section(links=3, words=4, anchor_words=4)
    medium_text = section(links=0, words=5)
    # merged: 4/9 → non-link, but the larger (5 words) is non-link → merge
    assert merge_rule(big_link, medium_text, P) is MergeRule.TYPE_OF_LARGER
    text_larger_link = section(links=4, words=8, anchor_words=5)
    short_text = section(links=0, words=3)
    # merged: 5/11 → non-link, the larger (8 words) is a link section → no merge
    assert merge_rule(text_larger_link, short_text, P) is MergeRule.NO_RULE


def test_rule6_same_type_non_link_sections_do_not_merge():
    assert merge_rule(section(links=1, words=3, anchor_words=1),
                      section(links=1, words=4, anchor_words=1), P) is MergeRule.NO_RULE


def test_adjust_emits_the_last_section_and_chains_merges():
    # Fig. 3 as printed never emits the last section; the intent does.
    a = section(links=3, words=3, anchor_words=3, label="a")
    b = section(links=3, words=3, anchor_words=3, label="b")
    c = section(links=0, words=2, bold=True, label="c")
    d = section(links=2, words=2, anchor_words=2, label="d")
    merged = adjust([a, b, c, d], P)
    assert [s.label for s in merged] == ["a+b", "c", "d"]
    assert [len(s.links) for s in merged] == [6, 0, 2]
    assert [len(block) for block in blocks_of(merged)] == [6, 2]
    assert adjust([], P) == []


def test_params_reject_impossible_values():
    with pytest.raises(ValueError):
        AdjustParams(t1=1.5)
    with pytest.raises(ValueError):
        AdjustParams(t2=-1)


# -- robustness --------------------------------------------------------------------------


def test_huge_text_node_before_the_links_keeps_the_links():
    body = b"<html><body><p>" + b"x " * 6_000_000 + b"</p><div><a href='/a'>a</a><a href='/b'>b</a></div></body></html>"
    assert len(body) > 12_000_000
    seg = segment_bytes(body, URL)
    assert hrefs(seg.blocks) == [["http://example.com/a", "http://example.com/b"]]


def test_twenty_thousand_deep_nesting_keeps_the_links():
    body = (b"<html><body>" + b"<span>" * 20_000 + b"<a href='/a'>a</a> <a href='/b'>b</a>"
            + b"</span>" * 20_000 + b"</body></html>")
    seg = segment_bytes(body, URL)
    assert hrefs(seg.blocks) == [["http://example.com/a", "http://example.com/b"]]
    divs = b"<div>" * 20_000 + b"<ul><li><a href='/c'>c</a><li><a href='/d'>d</a></ul>" + b"</div>" * 20_000
    assert hrefs(segment_bytes(divs, URL).blocks) == [["http://example.com/c", "http://example.com/d"]]


def test_nul_bytes_do_not_truncate_the_page():
    body = b"<p>before\x00after <a href='/a'>a\x00</a> <a href='/b'>b</a></p>"
    (block,) = segment_bytes(body, URL).blocks
    assert [link.href for link in block] == ["http://example.com/a", "http://example.com/b"]


@pytest.mark.parametrize("body", [b"", b"   ", b"<!-- only a comment -->", b"<html></html>",
                                  b"\xff\xfe\x00", b"<", b"<?xml version='1.0'?>", b"\x00" * 100])
def test_empty_and_degenerate_documents_give_no_blocks(body):
    seg = segment_bytes(body, URL)
    assert seg.blocks == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_no_input_bytes_make_the_segmenter_raise(body):
    seg = segment_bytes(body, URL)
    for block in seg.blocks:
        assert len(block) >= 2


html_fragments = st.lists(
    st.sampled_from([
        "<div>", "</div>", "<ul>", "</ul>", "<li>", "<a href='/x'>", "<a href='http://h.com/'>",
        "</a>", "<b>", "</b>", "<table>", "<tr>", "<td bgcolor='#123'>", "</td>", "<p>", "text ",
        "中文 ", "<h2>", "</h2>", "<base href='//b.com/'>", "<style>a{color:red}</style>",
        "<font color=red>", "<script>", "</script>", "<!--", "-->", "\x00", "&amp;", "<br>",
        "<a href='javascript:x'>", "<span style='background:url(x) #fff;font-weight:bold'>",
    ]),
    max_size=80,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(html_fragments)
def test_no_tag_soup_makes_the_segmenter_raise(html):
    seg = segment_html(html, URL)
    assert all(len(block) >= 2 for block in seg.blocks)
    assert sum(len(s.links) for s in seg.adjusted) == sum(len(s.links) for s in seg.sections)


# -- real pages --------------------------------------------------------------------------


def _hub_pages(warc: Path):
    from warcio.archiveiterator import ArchiveIterator

    with warc.open("rb") as handle:
        for record in ArchiveIterator(handle):
            if record.rec_type == "response":
                yield record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read()


def _links_by_heading(body: bytes, url: str) -> dict[str, set[int]]:
    """href → indices of the heading sections (h1–h6 boundaries) it appears under."""
    from lxml import etree

    from filters.urls import normalise_url

    root = etree.fromstring(body, etree.HTMLParser(huge_tree=True, encoding="utf-8"))
    heading = 0
    where: dict[str, set[int]] = {}
    for element in root.iter():
        if element.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            heading += 1
        elif element.tag == "a" and element.get("href"):
            href = normalise_url(element.get("href"), url)
            if href:
                where.setdefault(href, set()).add(heading)
    return where


def test_hub_pages_heading_sections_come_out_as_separate_blocks(shared_data):
    warc = shared_data("awesomehub/awesomehub.warc.gz")
    blocks = spanning = pages = 0
    for url, body in _hub_pages(warc):
        pages += 1
        seg = segment_bytes(body, url)
        where = _links_by_heading(body, url)
        for block in seg.blocks:
            blocks += 1
            common = set.intersection(*(where.get(link.href, set()) for link in block))
            spanning += not common
    assert pages == 550
    assert blocks > 5000
    # a block never mixes the links of two headings (measured: 0 of 16,311 blocks)
    assert spanning == 0, (spanning, blocks)


def test_heading_text_is_its_lists_and_paragraphs_up_to_a_sectioning_element():
    html = ('<nav><ul><li><a href="/1">1</a><li><a href="/2">2</a></ul></nav>'
            '<article><header><h1>Title</h1></header>'
            '<p><a href="https://a.com/">A</a> and <a href="https://b.com/">B</a></p>'
            '<ul><li><a href="https://c.com/">C</a><li><a href="https://d.com/">D</a></ul>'
            '<div class="ads"><a href="https://ad.com/1">ad</a> <a href="https://ad.com/2">ad</a></div>'
            '<h2>More</h2><ol><li><a href="https://e.com/">E</a><li><a href="https://f.com/">F</a></ol>'
            '</article><footer><ul><li><a href="/about">About</a><li><a href="/terms">Terms</a></ul>'
            '</footer>')
    seg = segment_html(html, "http://example.com/")
    # nav: above the first heading; the h1's paragraph and list (its header's end does not
    # end it); the ad box is layout; the h2's list; the footer ends the article's text
    assert seg.block_headings == [0, 1, 1, 0, 2, 0]
    assert segment_record(seg)["headings"] == seg.block_headings


def test_heading_text_on_real_pages(shared_data):
    warc = shared_data("web/aeb-pages.warc.gz")
    headings = {}
    for url, body in _hub_pages(warc):
        if "techcrunch.com/2019/11/18/new-york-state" in url or "mspoweruser.com/google-stadia" in url:
            headings[url.split("/")[2]] = segment_record(segment_bytes(body, url))["headings"]
    # the article's paragraphs under its h1 (in the article's header)
    assert headings["techcrunch.com"] == [0, 1, 1, 1]
    # the h1 in the page header titles no list: the footer's "Forums, About Us" list is not
    # its text (it was before sectioning elements ended a heading's text); 10 blocks since
    # rule 0 joins the items of a list (the trending, related and deals lists: 7 before)
    assert headings["mspoweruser.com"] == [0] * 10


# -- the command line --------------------------------------------------------------------


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "segmenter", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=guard(120))


def test_cli_json_for_one_page():
    page = REPO / "examples/tiny-web/python-hub.html"
    done = _run("--json", str(page), "--url", "https://github.com/example/awesome-python")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["url"] == "https://github.com/example/awesome-python"
    assert record["file"] == str(page)
    anchors = [[link["anchor"] for link in block] for block in record["blocks"]]
    assert ["Django", "Flask", "FastAPI", "Pyramid"] in anchors
    assert ["pandas", "NumPy", "SciPy", "Matplotlib"] in anchors
    assert all(link["pos"] == i for block in record["blocks"] for i, link in enumerate(block))


def test_cli_manifest_reads_every_line_in_one_process_and_decodes_gbk():
    done = _run("--json", "--manifest", str(REPO / "examples/tiny-web/urls.tsv"))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["url"] for r in records] == [
        "https://github.com/example/awesome-python",
        "http://www.webdir.example.com/computers/programming/",
        "https://blog.example.net/2024/flask-to-fastapi.html",
        "http://www.daohang.example.cn/",
    ]
    zh_anchors = [link["anchor"] for block in records[3]["blocks"] for link in block]
    assert "新浪新闻" in zh_anchors and "红袖添香" in zh_anchors


def test_cli_sections_explain_the_merge_decisions():
    done = _run("--sections", str(REPO / "examples/tiny-web/python-hub.html"), "--url",
                "https://github.com/example/awesome-python")
    assert done.returncode == 0, done.stderr
    assert "rule 2: bold text -> no merge" in done.stdout
    assert "sections before adjusting" in done.stdout


def test_cli_usage_errors_exit_2(tmp_path):
    assert _run("--json", str(tmp_path / "x.html")).returncode == 2  # no --url
    assert _run("--json").returncode == 2
    bad = tmp_path / "m.tsv"
    bad.write_text("only-one-column\n")
    assert _run("--json", "--manifest", str(bad)).returncode == 1
