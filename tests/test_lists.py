"""Every kind of link list is a block (issue 42): the scan's record of list and card groups,
rule 0 of the adjusting on each shape, what it keeps apart, ``--rules``, and the hub lists'
shapes report (``relatedpages eval lists``)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

import segmenter.scan as scan
from relatedpages.evaluation import lists as lists_report
from segmenter import AdjustParams, _resolve, segment_bytes, segment_html
from segmenter.adjust import MergeRule, list_groups, merge_rule
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
URL = "https://github.com/example/awesome-x"


def _blocks(html: str, rules: str = "lists", layout_items: int = 6) -> list[list[str]]:
    seg = segment_html(html, URL, AdjustParams(rules=rules, layout_items=layout_items))
    return [[link.anchor for link in block] for block in seg.blocks]


# -- the scan ------------------------------------------------------------------------------


@pytest.mark.parametrize("native", [True, False])
def test_the_scan_records_the_groups_and_items_around_each_section(native, monkeypatch):
    if native and scan.NATIVE is None:
        pytest.skip("the compiled scan is not built")  # the pure scan's run still checks
    if not native:
        monkeypatch.setattr(scan, "NATIVE", None)
    html = ('<ul><li><a href="/a">a</a><ul><li><a href="/x">x</a></ul>'
            '<li><p><a href="/b">b</a> text</p></ul>'
            '<div class="card"><a href="/c">c</a></div><div class=" card "><a href="/d">d</a></div>'
            '<table><tr><td><a href="/e">e</a><td><a href="/f">f</a><tr><td><a href="/g">g</a>'
            '</table>')
    result = scan.scan_html(html, "http://example.com/", _resolve)
    by_anchor = {s.links[0].anchor: s.lists for s in result.sections if s.links}
    outer = by_anchor["a"][0][0]
    assert outer[1] == "ul" and len(by_anchor["a"]) == 1
    # the sub-list's section: inside the outer list's first item, in the sub-list's only one
    assert by_anchor["x"][0] == by_anchor["a"][0] and by_anchor["x"][1][0][1] == "ul"
    # the loose item's paragraph: the outer list's second item
    assert by_anchor["b"][0][0] == outer and by_anchor["b"][0][1] != by_anchor["a"][0][1]
    # same-class cards of one parent, the class normalised: one group, two items
    assert by_anchor["c"][0][0] == by_anchor["d"][0][0] and by_anchor["c"][0][0][1:] == ("div", "card")
    assert by_anchor["c"][0][1] != by_anchor["d"][0][1]
    # a table's cells: the row is the item
    assert by_anchor["e"] == by_anchor["f"] and by_anchor["g"][0][0] == by_anchor["e"][0][0]
    assert by_anchor["g"][0][1] != by_anchor["e"][0][1]
    items = result.outline.items
    assert items[outer] == 2 and items[by_anchor["c"][0][0]] == 2 and items[by_anchor["e"][0][0]] == 2


# -- rule 0 on each shape -------------------------------------------------------------------

_ENTRIES = (("flask", "A microframework for Python."), ("django", "The most popular one."),
            ("bottle", "A fast and simple one."), ("pyramid", "A small, fast, down-to-earth one."))


def _shape(kind: str) -> str:
    """The four entries of awesome-python's Web Frameworks, as one markup shape."""
    rows = []
    for name, text in _ENTRIES:
        link = f'<a href="https://{name}.example/">{name}</a>'
        if kind == "sub-list":  # `- [flask](…)` then an indented `- [awesome-flask](…)`
            rows.append(f'<li>{link} - {text}<ul><li><a href="https://awesome-{name}.example/">'
                        f'awesome-{name}</a></li></ul></li>')
        elif kind == "loose":  # a Markdown list with blank lines between its items
            rows.append(f"<li><p>{link} - {text}</p></li>")
        elif kind == "table":
            rows.append(f"<tr><td>{link}</td><td>{text}</td></tr>")
        elif kind == "dl":
            rows.append(f"<dt>{link}</dt><dd>{text}</dd>")
        elif kind == "cards":
            rows.append(f'<div class="card">{link}<p>{text}</p>'
                        f'<p><a href="https://ci.example/{name}"><img src="b.svg"></a></p></div>')
    body = "".join(rows)
    wrap = {"sub-list": "<ul>{}</ul>", "loose": "<ul>{}</ul>", "table": "<table>{}</table>",
            "dl": "<dl>{}</dl>", "cards": '<div class="cards">{}</div>'}[kind]
    return "<h2>Web Frameworks</h2>" + wrap.format(body) + "<h2>Next</h2><p>Some prose.</p>"


@pytest.mark.parametrize("kind", ["sub-list", "loose", "table", "dl", "cards"])
def test_rule0_makes_one_block_of_every_list_shape(kind):
    blocks = _blocks(_shape(kind))
    names = [name for name, _ in _ENTRIES]
    assert len(blocks) == 1 and [a for a in blocks[0] if a in names] == names, blocks
    if kind == "sub-list":  # the entries' sub-lists go with their entries
        assert blocks[0][:2] == ["flask", "awesome-flask"]
    if kind == "cards":  # each card's badge is set aside, not a break in the list
        assert "" not in blocks[0]


@pytest.mark.parametrize("kind", ["sub-list", "loose", "table"])
def test_without_rule0_the_entries_fall_out(kind):
    """What issue 42 found: each entry is a section of one link, and such sections are
    dropped; the paper's rules and the nested partitions alone keep none of these (a dl is
    one section already: dt and dd are not partitioning tags)."""
    for rules in ("nested", "paper"):
        kept = [a for block in _blocks(_shape(kind), rules) for a in block]
        assert "flask" not in kept or "django" not in kept, (rules, kept)


def test_rule0_is_the_decision_and_the_cli_shows_it(tmp_path):
    seg = segment_html(_shape("table"), URL)
    groups = list_groups(seg.sections, AdjustParams(), seg.outline)
    first, second = [s for s in seg.sections if s.links][:2]
    assert merge_rule(first, second, AdjustParams(), groups) is MergeRule.LIST_ITEMS
    page = tmp_path / "page.html"
    page.write_text(_shape("table"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "segmenter", "--sections", str(page), "--url", URL],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 0 and "rule 0: items of one list" in done.stdout


# -- what rule 0 keeps apart ---------------------------------------------------------------


def test_a_heading_ends_a_list_s_block():
    html = ('<div class="box"><h4>Blog</h4><a href="https://a.example/">A</a></div>'
            '<div class="box"><h4>Members</h4><a href="https://b.example/">B</a></div>'
            '<div class="box"><h4>Tips</h4><a href="https://c.example/">C</a></div>')
    assert _blocks(html) == []


def test_a_layout_table_of_lists_is_not_one_list():
    column = ('<td><ul><li><a href="https://{0}1.example/">{0}1</a><li><a href="https://{0}2.example/">'
              '{0}2</a></ul></td>')
    html = "<table><tr>" + column.format("x") + column.format("y") + "</tr><tr>" + \
        column.format("z") + "</tr></table>"
    assert _blocks(html) == [["x1", "x2"], ["y1", "y2"], ["z1", "z2"]]


def test_a_long_table_of_entries_with_sub_lists_is_one_list():
    """Six rows or more (``layout_items``): the lists in the rows are the entries' own, and a
    one-link sub-list joins its neighbours; five rows stay a layout of boxes."""
    row = ('<tr><td>{0} tools</td><td>for {0}<ul><li><a href="https://{0}1.example/">{0}1</a>'
           '{1}</ul></td></tr>')
    more = '<li><a href="https://{0}2.example/">{0}2</a>'
    names = ["p", "q", "r", "s", "t", "u"]
    html = "<table>" + "".join(row.format(n, more.format(n) if n != "q" else "") for n in names) \
        + "</table>"
    assert _blocks(html) == [["p1", "p2", "q1", "r1", "r2", "s1", "s2", "t1", "t2", "u1", "u2"]]
    short = html.replace(row.format("u", more.format("u")), "")
    assert not any("q1" in block for block in _blocks(short)) and ["p1", "p2"] in _blocks(short)
    assert _blocks(html, layout_items=7) == _blocks(short) + [["u1", "u2"]]


def test_a_long_table_s_badge_column_is_set_aside_as_one_block():
    """Rows of an entry's text cell then its badge cell (image links only): from six rows
    (``layout_items``) the text cells are one list and the badges one column beside it; a
    shorter table is a layout, its rows apart; a thumbnail *before* its entry's text is the
    row's start, not a badge, and the rows stay apart."""
    row = ('<tr><td><a href="https://{0}.example/">{0}</a> - an app for {0}</td>'
           '<td><a href="https://github.com/{0}/{0}"><img src="oss.svg" alt=""></a></td></tr>')
    names = ["p", "q", "r", "s", "t", "u"]
    html = "<table>" + "".join(row.format(n) for n in names) + "</table>"
    blocks = [[link.href for link in block] for block in segment_html(html, URL).blocks]
    assert sorted(blocks) == [[f"https://github.com/{n}/{n}" for n in names],
                              [f"https://{n}.example/" for n in names]]
    assert _blocks(html, layout_items=7) == []
    thumbnail = ('<tr><td><a href="https://github.com/{0}/{0}"><img src="t.png" alt=""></a></td>'
                 '<td><a href="https://{0}.example/">{0}</a> - an app for {0}</td></tr>')
    assert _blocks("<table>" + "".join(thumbnail.format(n) for n in names) + "</table>") == []


def test_items_that_are_blocks_already_stay_apart():
    """A table of small link boxes (each cell two links or more): each box is a block."""
    cell = '<tr><td><p><a href="https://{0}.example/a">{0} a</a>, <a href="https://{0}.example/b">' \
           '{0} b</a> and more words here</p></td></tr>'
    html = "<table>" + "".join(cell.format(name) for name in ("p", "q", "r")) + "</table>"
    assert _blocks(html) == [["p a", "p b"], ["q a", "q b"], ["r a", "r b"]]


def test_prose_with_a_link_here_and_there_is_not_a_list():
    words = " ".join(["word"] * 120)
    html = "<ul>" + "".join(f'<li><p>{words} <a href="https://{n}.example/">{n}</a> {words}</p></li>'
                            for n in ("a", "b", "c")) + "</ul>"
    assert _blocks(html) == []
    assert _blocks(html.replace(words, "a short description")) == [["a", "b", "c"]]


def test_the_rules_option_is_checked(tmp_path):
    with pytest.raises(ValueError, match="lists, nested, paper"):
        AdjustParams(rules="mine")
    with pytest.raises(ValueError, match="words per link"):
        AdjustParams(list_words=-1)
    with pytest.raises(ValueError, match="items of a layout"):
        AdjustParams(layout_items=-1)
    page = tmp_path / "page.html"
    page.write_text(_shape("loose"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "segmenter", "--rules", "mine", str(page),
                           "--url", URL], cwd=REPO, capture_output=True, text=True,
                          timeout=guard(60))
    assert done.returncode == 2 and "lists, nested, paper" in done.stderr
    assert "Traceback" not in done.stderr


# -- real pages ----------------------------------------------------------------------------


def _hub_page(shared_data, suffix: str) -> tuple[str, bytes]:
    from relatedpages.corpus.ingest import Page, read_pages

    for item in read_pages(shared_data("awesomehub/awesomehub.warc.gz")):
        if isinstance(item, Page) and item.url.endswith(suffix):
            return item.url, item.body
    raise AssertionError(f"no hub page {suffix}")


def test_awesome_python_web_frameworks_is_one_block(shared_data):
    """The issue's first case: flask, django and fasthtml hold one-link sub-lists, and were
    in no block; now the section's frameworks are one block, sub-lists beside their entries."""
    url, body = _hub_page(shared_data, "vinta/awesome-python")
    seg = segment_bytes(body, url)
    flask = [block for block in seg.blocks
             if any(link.href == "https://github.com/pallets/flask" for link in block)]
    assert len(flask) == 1
    hrefs = [link.href for link in flask[0]]
    for project in ("django/django", "bottlepy/bottle", "Pylons/pyramid", "AnswerDotAI/fasthtml",
                    "humiaozuzu/awesome-flask"):
        assert f"https://github.com/{project}" in hrefs, project
    assert hrefs.index("https://github.com/humiaozuzu/awesome-flask") == \
        hrefs.index("https://github.com/pallets/flask") + 1
    # and nothing of the next section ("Web APIs")
    assert "https://github.com/encode/django-rest-framework" not in hrefs
    before = segment_bytes(body, url, params=AdjustParams(rules="nested"))
    assert not any(link.href == "https://github.com/pallets/flask"
                   for block in before.blocks for link in block)


def test_awesome_python_as_a_table_keeps_its_one_link_categories(shared_data):
    """Rendered as a table (a row per category: its name, then its sub-list), awesome-python's
    "AI & Agents" is a long table of entries: the categories of one link (hermes-agent,
    dspy) join the others instead of falling out as layout boxes' single links."""
    url, body = _hub_page(shared_data, "vinta/awesome-python")
    parsed = lists_report._parse(body.decode("utf-8"))
    assert parsed is not None
    html = etree.tostring(lists_report.render(parsed, "table"), encoding="unicode", method="html")
    for layout_items, joined in ((6, True), (10**6, False)):
        seg = segment_html(html, url, AdjustParams(layout_items=layout_items))
        for project in ("nousresearch/hermes-agent", "stanfordnlp/dspy"):
            blocks = [[link.href for link in block] for block in seg.blocks
                      if any(link.href == f"https://github.com/{project}" for link in block)]
            assert bool(blocks) is joined, (project, layout_items)
            if joined:
                assert "https://github.com/openai/openai-agents-python" in blocks[0]


def test_awesome_mac_as_a_table_keeps_its_apps_and_their_source_badges(shared_data):
    """awesome-mac rendered as a table (an app's name and description, then a cell of badge
    images, some linking to the app's source): "Text Editors" was cut at every badge cell,
    its apps in blocks of two or three; now its apps are one block and the source links
    beside them one more."""
    url, body = _hub_page(shared_data, "jaywcjlove/awesome-mac")
    parsed = lists_report._parse(body.decode("utf-8"))
    assert parsed is not None
    html = etree.tostring(lists_report.render(parsed, "table"), encoding="unicode", method="html")
    blocks = [[link.href for link in block] for block in segment_html(html, url).blocks]
    editors = [block for block in blocks if "https://www.typora.io/" in block]
    assert len(editors) == 1
    assert {"https://www.zettlr.com/", "https://marp.app/", "https://obsidian.md/",
            "https://www.mweb.im/"} <= set(editors[0])
    sources = [block for block in blocks if "https://github.com/Zettlr/Zettlr" in block]
    assert len(sources) == 1 and "https://github.com/marp-team/marp" in sources[0]
    assert sources[0] is not editors[0] and "https://www.typora.io/" not in sources[0]


# -- the shapes report ---------------------------------------------------------------------


def test_shapes_and_renderings_of_a_hub_list():
    html = ("<h2>Tools</h2><ul><li><b><a href='https://a.example/'>A</a></b> - one"
            "<ul><li><a href='https://a2.example/'>A2</a></li></ul></li>"
            "<li><a href='https://b.example/'>B</a> - two</li></ul>"
            "<h2>More</h2><p><a href='https://c.example/'>C</a> and <a href='https://d.example/'>D</a></p>")
    report = lists_report.report_page(html, URL)
    shapes = {shape: (c.links, c.kept) for shape, c in report.shapes.items() if c.links}
    assert shapes == {"li with a sub-list": (1, 1), "li": (2, 2), "p": (2, 2)}
    parser = etree.HTMLParser()
    for rendering, tags in (("table", {"table", "tr", "td"}), ("dl", {"dl", "dt", "dd"}),
                            ("cards", {"div"}), ("loose", {"ul", "li", "p"})):
        root = lists_report.render(etree.fromstring(html, parser), rendering)
        found = {element.tag for element in root.iter() if isinstance(element.tag, str)}
        assert tags <= found, rendering
        shaped = lists_report.report_page(
            etree.tostring(root, encoding="unicode", method="html"), URL)
        assert sum(c.links for c in shaped.shapes.values()) == 5
        assert all(c.kept == c.links and c.mixed == 0 for c in shaped.shapes.values()), rendering
    with pytest.raises(ValueError, match="renderings"):
        lists_report.render(etree.fromstring(html, parser), "grid")


def test_eval_lists_on_the_hub_pages(shared_data):
    """The command on the development half in two renderings; floors from its measured
    figures (README "Lists"): tight items 99.9 %, definition lists 99.9 %, nothing mixed."""
    data = shared_data("awesomehub").parent
    done = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "eval", "lists", str(data), "--render",
         "as-is,dl", "--split", "dev", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert done.returncode == 0, done.stderr
    assert "| li > p |" in done.stdout and "goal (every list shape" in done.stdout
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for rendering, shape in (("as-is", "li"), ("as-is", "li > p"), ("dl", "dt / dd")):
        counts = figures[rendering][shape]
        assert counts["links"] > 3000 and counts["kept"] >= 0.99 * counts["links"], (rendering, shape)
    assert all(c["mixed"] <= 0.02 * max(c["blocks"], 1)
               for report in figures.values() for c in report.values())
    bad = subprocess.run([sys.executable, "-m", "relatedpages.cli", "eval", "lists", str(data),
                          "--render", "grid"], cwd=REPO, capture_output=True, text=True,
                         timeout=guard(60))
    assert bad.returncode == 2 and "--render" in bad.stderr and "Traceback" not in bad.stderr
