"""Traditional co-citation (relatedpages.scoring.cocitation, jobs.cocitation): hand-worked cases,
the job equals the in-memory oracle, runners agree, real hub pages."""
from __future__ import annotations

import json
import random
import string
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from filters.links import LinkFilterParams
from jobrun import run_job, write_segments
from jobs.cocitation import MRCocitation
from relatedpages.scoring.cocitation import (
    TRADITIONAL_LINK_FILTERS,
    CocitationParams,
    cocited_degrees,
    decode_sibling_value,
    encode_sibling_value,
    page_siblings,
    reference_cocitation,
)


def run_cocitation(inputs: list[Path], args: list[str] = (), runner: str = "inline"):
    return run_job(MRCocitation, [*args, *inputs], runner)


def page(url: str, site: str, *blocks: list) -> dict:
    """A segment record; a link is a URL (anchor "x") or a (URL, anchor) tuple."""
    def link(pos: int, item) -> dict:
        href, anchor = item if isinstance(item, tuple) else (item, "x")
        return {"href": href, "anchor": anchor, "pos": pos}
    return {"url": url, "site": site,
            "blocks": [[link(pos, item) for pos, item in enumerate(block)] for block in blocks]}


def site_url(letter: str) -> str:
    return f"http://{letter}-site.com/"


def related_urls(output: dict, url: str) -> list[str]:
    return [entry[0] for entry in output.get(url, [])]


def degrees(output: dict, url: str) -> dict[str, float]:
    return {entry[0]: entry[1] for entry in output.get(url, [])}


def run_and_check(tmp_path: Path, records: list[dict], args: list[str] = (),
                  params: CocitationParams = CocitationParams()):
    output, counters = run_cocitation([write_segments(tmp_path / "seg.jsonl", records)], args)
    assert output == reference_cocitation(records, params)
    return output, counters


# -- hand-worked cases --------------------------------------------------------------------


def test_siblings_are_the_bf_over_2_links_before_and_after(tmp_path):
    # links a..j at positions 0..9, cited by two directory pages: degree 2 for siblings
    links = [site_url(letter) for letter in "abcdefghij"]
    records = [page(f"http://dir{n}.org/", f"dir{n}.org", links[:5], links[5:]) for n in range(2)]
    output, counters = run_and_check(tmp_path, records)
    # a at 0: 4 after it (b..e), not f at distance 5 -- blocks do not matter
    assert related_urls(output, links[0]) == links[1:5]
    # e at 4: 4 before and 4 after, across the block boundary
    assert related_urls(output, links[4]) == links[0:4] + links[5:9]
    # j at 9: the 4 before it
    assert related_urls(output, links[9]) == links[5:9]
    assert set(degrees(output, links[4]).values()) == {2.0}
    # 10 links, window 4: 9 + 8 + 7 + 6 + 5 * 1 ... = sum(min(4, 9 - i)) pairs per page
    assert counters["cocitation"]["sibling_pairs"] == 2 * sum(min(4, 9 - i) for i in range(10))
    # --bf 2: only the immediate neighbours
    narrow, _ = run_and_check(tmp_path, records, ["--bf", "2"], CocitationParams(bf=2))
    assert related_urls(narrow, links[4]) == [links[3], links[5]]


def test_degree_counts_distinct_citing_pages_without_caps(tmp_path):
    u, v, w = site_url("u"), site_url("v"), site_url("w")
    records = [
        # one page citing u and v twice, in two blocks: one page, degree 1
        page("http://p1.org/", "p1.org", [u, v], [u, v, w]),
        # two pages of one site: two pages (no per-site cap in the traditional algorithm)
        page("http://p2.org/a", "p2.org", [u, (v, "Vee  one")]),
        page("http://p2.org/b", "p2.org", [(v, "Vee two"), (u, "You")]),
    ]
    output, counters = run_and_check(tmp_path, records, ["--min-degree", "1"],
                                     CocitationParams(min_degree=1))
    (top, second) = output[u]
    # each site's evidence: its citing page (both p2.org pages put u and v side by side: the
    # smaller URL) and v's anchor on it, whitespace collapsed
    assert top == [v, 3.0, [["p2.org", 2.0, "http://p2.org/a", "Vee one"],
                            ["p1.org", 1.0, "http://p1.org/", "x"]]]
    # w at position 2 after dedupe of [u, v, u, v, w]
    assert second == [w, 1.0, [["p1.org", 1.0, "http://p1.org/", "x"]]]
    # the other way round, u's anchor on the page
    assert output[v][0] == [u, 3.0, [["p2.org", 2.0, "http://p2.org/a", "x"],
                                     ["p1.org", 1.0, "http://p1.org/", "x"]]]
    assert counters["cocitation"]["link_repeated_in_page"] == 2
    # the same record twice in the input (two segment files) is still one citing page
    twice, _ = run_cocitation([write_segments(tmp_path / "a.jsonl", records),
                               write_segments(tmp_path / "b.jsonl", records)], ["--min-degree", "1"])
    assert twice == output


def test_template_link_beside_everything_is_not_capped(tmp_path):
    # the paper's miibeian.gov.cn case: a site's 30 pages carry a registration link next
    # to a sponsor link -- traditional co-citation rates them related with degree 30
    records = [page(f"http://big.example.com/{i}", "big.example.com",
                    [("http://beian.example.cn/", "ICP 123"), ("http://sponsor.example.net/", "Sponsor")])
               for i in range(30)]
    output, _ = run_and_check(tmp_path, records)
    assert output["http://sponsor.example.net/"] == [
        ["http://beian.example.cn/", 30.0,
         [["big.example.com", 30.0, "http://big.example.com/0", "ICP 123"]]]]


def test_evidence_names_the_citing_page_where_the_pair_sits_nearest(tmp_path):
    u, v = site_url("u"), site_url("v")
    fill = [site_url(letter) for letter in "abc"]
    records = [
        # the smaller URL, but v three links after u
        page("http://dir.org/a", "dir.org", [u, *fill, (v, "far")]),
        # v right after u: the strongest citation of dir.org, whatever the input order
        page("http://dir.org/z", "dir.org", [u, (v, "near"), *fill]),
        page("http://other.org/", "other.org", [(v, "V"), u]),
    ]
    for order in (records, records[::-1]):
        output, _ = run_and_check(tmp_path, order)
        assert output[u][0] == [v, 3.0, [["dir.org", 2.0, "http://dir.org/z", "near"],
                                         ["other.org", 1.0, "http://other.org/", "V"]]]


def test_same_site_links_are_removed_before_the_window_and_never_pair(tmp_path):
    own = [f"http://dir.org/nav{i}" for i in range(6)]  # the citing site's navigation
    x1, x2 = "http://x.com/one", "http://x.com/two"  # two pages of one other site
    a, b = site_url("a"), site_url("b")
    links = [a, *own, b, x1, x2]
    records = [page(f"http://dir.org/{n}", "dir.org", links) for n in range(2)]
    output, counters = run_and_check(tmp_path, records)
    # the navigation links are gone, so a and b (7 apart as segmented) are neighbours
    assert related_urls(output, a) == [b, x1, x2]
    assert related_urls(output, x1) == [a, b]  # not x2: same site
    assert counters["filters"]["link_same_site_as_page"] == 2 * 6
    assert counters["cocitation"]["same_site_siblings_skipped"] == 2  # {x1, x2} per page
    assert "http://dir.org/nav0" not in output
    # switched off, the navigation links are pages like any other and fill the window
    kept, _ = run_and_check(tmp_path, records, ["--no-common-site-filter"],
                            CocitationParams(link_filters=LinkFilterParams(
                                large_block=0, file=False, dynamic=False, singleton=False,
                                empty_anchor=False, common_site=False)))
    assert b not in related_urls(kept, a)
    # the navigation links are one site: siblings of other sites' pages, never of each other
    assert related_urls(kept, own[0]) == [a]
    assert related_urls(kept, own[5]) == [b, x1, x2]


def test_top_m_by_degree_then_url(tmp_path):
    u = site_url("u")
    # c and b co-cited with u by 3 pages, a and d by 2, e by 1
    lists = [[u, site_url("c"), site_url("b"), site_url("a")],
             [site_url("b"), site_url("c"), u, site_url("d")],
             [site_url("d"), site_url("a"), site_url("c"), site_url("b"), u],
             [u, site_url("e")]]
    records = [page(f"http://p{n}.org/", f"p{n}.org", links) for n, links in enumerate(lists)]
    output, counters = run_and_check(tmp_path, records, ["--m", "3"], CocitationParams(m=3))
    assert [(url, degree) for url, degree, _ in output[u]] == [
        (site_url("b"), 3.0), (site_url("c"), 3.0), (site_url("a"), 2.0)]  # a before d
    everything, _ = run_and_check(tmp_path, records, ["--min-degree", "1"],
                                  CocitationParams(min_degree=1))
    assert related_urls(everything, u)[-1] == site_url("e")
    assert counters["cocitation"]["candidates_below_min_degree"] > 0


def test_block_cocitation_filters_are_off_but_switchable(tmp_path):
    pdf, dynamic, image = "http://f.com/paper.pdf", "http://g.com/item?id=7", site_url("i")
    links = [site_url("a"), pdf, dynamic, (image, ""), site_url("b")]
    records = [page(f"http://p{n}.org/", f"p{n}.org", links) for n in range(2)]
    output, _ = run_and_check(tmp_path, records)
    assert related_urls(output, site_url("a")) == [site_url("b"), pdf, dynamic, image]
    args = ["--file-filter", "--dynamic-filter", "--empty-anchor-filter"]
    filtered = LinkFilterParams(large_block=0, singleton=False)
    output, counters = run_and_check(tmp_path, records, args,
                                     CocitationParams(link_filters=filtered))
    assert related_urls(output, site_url("a")) == [site_url("b"), "http://g.com/"]
    assert counters["filters"]["link_to_file"] == 2


def test_bad_records_are_counted_not_fatal(tmp_path):
    path = tmp_path / "seg.jsonl"
    links = [site_url("a"), site_url("b")]
    write_segments(path, [page(f"http://p{n}.org/", f"p{n}.org", links) for n in range(2)])
    with path.open("a") as handle:
        handle.write('"http://bad/"\t{"url": "http://bad/"}\n')
        handle.write('"http://bad2/"\t[1, 2]\n')
        handle.write('"http://bad3/"\t{"url": 3, "site": "bad3", "blocks": []}\n')
        handle.write('"http://bad4/"\t{"url": "http://bad4/", "site": "", "blocks": []}\n')
        handle.write('"http://p9.org/"\t{"url": "http://p9.org/", "site": "p9.org", '
                     '"blocks": [7, [{"href": 1}]]}\n')
    output, counters = run_cocitation([path])
    with pytest.raises(ValueError):  # a value of the format before the citing page's anchor
        decode_sibling_value([site_url("b"), "p0.org", "http://p0.org/"])
    assert output == {site_url("a"): [[site_url("b"), 2.0, [["p0.org", 1.0, "http://p0.org/", "x"],
                                                            ["p1.org", 1.0, "http://p1.org/", "x"]]]],
                      site_url("b"): [[site_url("a"), 2.0, [["p0.org", 1.0, "http://p0.org/", "x"],
                                                            ["p1.org", 1.0, "http://p1.org/", "x"]]]]}
    assert counters["cocitation"]["bad_segment_record"] == 4
    assert counters["filters"]["block_malformed"] == 1
    assert counters["filters"]["link_malformed"] == 1
    assert counters["cocitation"]["page_without_sibling_pairs"] == 1


@pytest.mark.parametrize("args, message", [
    (["--bf", "7"], "bf must be even"),
    (["--bf", "0"], "bf must be >= 2"),
    (["--min-degree", "0"], "min_degree must be >= 1"),
    (["--m", "0"], "m must be >= 1"),
    (["--large-block", "-1"], "large_block must be an int >= 0"),
])
def test_bad_arguments_are_usage_errors(args, message):
    # mrjob turns arg_parser.error into ValueError when the job is built from a list
    # (into a usage message and exit status 2 on the command line)
    with pytest.raises(ValueError, match=message):
        MRCocitation(["--no-conf", *args])


def test_traditional_filters_are_the_documented_ones():
    filters = TRADITIONAL_LINK_FILTERS
    assert (filters.normalise, filters.common_site) == (True, True)
    assert (filters.large_block, filters.file, filters.dynamic, filters.empty_anchor) == (0, False, False, False)


# -- library: windows and the streaming reducer ----------------------------------------------


class _Link:
    def __init__(self, url: str, site: str) -> None:
        self.url, self.site = url, site


def test_page_siblings_window_counts_positions_after_dedupe():
    a, b, c, d = (_Link(f"http://{x}.com/", f"{x}.com") for x in "abcd")
    siblings = page_siblings([[a, b, a, c], [b, d]], bf=4)
    assert siblings.links == (a.url, b.url, c.url, d.url)
    assert siblings.repeated == 2
    assert siblings.pairs == ((a.url, b.url), (a.url, c.url), (b.url, c.url), (b.url, d.url),
                              (c.url, d.url))
    with pytest.raises(ValueError):
        page_siblings([[a]], bf=3)


urls = st.sampled_from(["http://a.com/", "http://a.com/é", "http://a.com/\"q", "http://a.com/z",
                        "http://中文.cn/", "http://a.com"])
sibling_values = st.lists(st.tuples(urls, st.sampled_from(["s.org", "t.org", "ü.org"]), urls,
                                    st.integers(min_value=1, max_value=12),
                                    st.sampled_from(["", "A", "b", "中文", "\"q"])),
                          max_size=30)


@settings(max_examples=60, deadline=None)
@given(sibling_values, st.integers(min_value=0, max_value=3), st.randoms())
def test_streamed_degrees_equal_set_counts_in_byte_sorted_order(values, evidence, rnd):
    # what mrjob/Hadoop do with SORT_VALUES: sort the encoded lines by bytes
    encoded = [json.dumps(encode_sibling_value(*value)) for value in values]
    rnd.shuffle(encoded)
    streamed = cocited_degrees((decode_sibling_value(json.loads(line)) for line in sorted(encoded)),
                               evidence)
    got = {c.url: (c.degree, c.evidence) for c in streamed}
    pages: defaultdict[str, set] = defaultdict(set)
    nearest: dict[tuple[str, str], tuple[int, str, str]] = {}
    for other, site, citing, distance, anchor in values:
        pages[other].add((site, citing))
        nearest[other, site] = min(nearest.get((other, site), (distance, citing, anchor)),
                                   (distance, citing, anchor))
    expected = {}
    for other, cited in pages.items():
        by_site: defaultdict[str, int] = defaultdict(int)
        for site, _ in cited:
            by_site[site] += 1
        best = sorted(by_site.items(), key=lambda item: (-item[1], item[0]))[:evidence]
        expected[other] = (len(cited), tuple((site, n, *nearest[other, site][1:]) for site, n in best))
    assert got == expected


# -- the job equals the oracle -------------------------------------------------------------

corpus_links = st.sampled_from([f"http://{host}.com/{path}" for host in "abcdefg" for path in ("", "x")]
                               + ["http://a.com/x.pdf", "http://b.com/?id=1", "javascript:void(0)"])
anchors = st.sampled_from(["alpha", "", "Beta", "»"])
blocks = st.lists(st.lists(st.tuples(corpus_links, anchors), min_size=1, max_size=7), min_size=1, max_size=3)
corpora = st.lists(st.tuples(st.sampled_from("abcdef"), blocks), min_size=1, max_size=8)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(corpora, st.sampled_from([2, 4, 8]), st.integers(min_value=1, max_value=3),
       st.integers(min_value=1, max_value=4), st.booleans())
def test_job_equals_the_oracle_on_random_corpora(tmp_path, corpus, bf, min_degree, m, all_filters):
    records = []
    for number, (citing, page_blocks) in enumerate(corpus):
        # citing sites overlap the linked hosts: the common-site filter has work to do
        site = f"{citing}.com" if number % 2 else f"{citing}-citer.org"
        records.append(page(f"http://{site}/p{number}", site, *page_blocks))
    args = ["--bf", str(bf), "--min-degree", str(min_degree), "--m", str(m), "--evidence", "2"]
    link_filters = TRADITIONAL_LINK_FILTERS
    if all_filters:
        args += ["--large-block", "5", "--file-filter", "--dynamic-filter", "--empty-anchor-filter"]
        link_filters = LinkFilterParams(large_block=5, singleton=False)
    params = CocitationParams(bf=bf, m=m, min_degree=min_degree, evidence=2, link_filters=link_filters)
    output, _ = run_cocitation([write_segments(tmp_path / "seg.jsonl", records)], args)
    assert output == reference_cocitation(records, params)


def small_corpus() -> list[dict]:
    rng = random.Random(7)
    hosts = [f"http://{name}.example/" for name in string.ascii_lowercase[:12]] + ["http://新闻.cn/"]
    return [page(f"http://dir{n}.org/", f"dir{n}.org", rng.sample(hosts, 6), rng.sample(hosts, 4))
            for n in range(12)]


def test_inline_and_local_runners_give_identical_output(tmp_path):
    segments = write_segments(tmp_path / "seg.jsonl", small_corpus())
    inline, inline_counters = run_cocitation([segments])
    local, local_counters = run_cocitation([segments], runner="local")
    assert inline  # the corpus does co-cite pages
    assert json.dumps(inline, sort_keys=True) == json.dumps(local, sort_keys=True)
    assert inline_counters == local_counters


# -- real pages ------------------------------------------------------------------------------


def hub_records(warc: Path, pages: int) -> list[dict]:
    """Segment records of the first `pages` pages of a crawl, as jobs.segment makes them."""
    from filters.site import site_of
    from filters.urls import normalise_url
    from relatedpages.corpus.ingest import Skip, read_pages
    from segmenter import blocks_as_json, segment_bytes

    records: dict[str, dict] = {}
    for item in read_pages(warc):
        if len(records) == pages:
            break
        if isinstance(item, Skip):
            continue
        url = normalise_url(item.url)
        if url is None:
            continue
        blocks = blocks_as_json(segment_bytes(item.body, url, item.http_charset).blocks)
        records[url] = {"url": url, "site": site_of(url), "blocks": blocks}
    return list(records.values())


def test_real_hub_pages_job_equals_oracle(shared_data, tmp_path):
    records = hub_records(shared_data("awesomehub/awesomehub.warc.gz"), 120)
    assert len(records) == 120
    output, counters = run_cocitation([write_segments(tmp_path / "seg.jsonl", records)])
    assert output == reference_cocitation(records)
    assert len(output) > 100
    cocitation = counters["cocitation"]
    assert cocitation["pages_with_related"] == len(output)
    assert cocitation["cocited_candidates"] > cocitation["candidates_below_min_degree"] > 0
    assert counters["filters"]["link_kept"] > 10_000
    assert "link_in_large_block" not in counters["filters"]  # no blocks: nothing dropped
    assert all(entry[1] >= 2.0 and len(entries) <= 15
               for entries in output.values() for entry in entries)
    assert_evidence_is_on_the_citing_pages(output, records)


def page_anchors(record: dict) -> dict[str, set[str]]:
    """A segment record's links, read afresh: normalised URL → its anchor texts there."""
    from filters.urls import normalise_url

    anchors: defaultdict[str, set[str]] = defaultdict(set)
    for block in record["blocks"]:
        for link in block:
            url = normalise_url(link["href"])
            if url is not None:
                anchors[url].add(" ".join(link["anchor"].split()))
    return anchors


def assert_evidence_is_on_the_citing_pages(output: dict, records: list[dict]) -> None:
    """Every evidence item names a page of its citing site that links both pages, and the
    related page's anchor text really on it."""
    by_url = {record["url"]: record for record in records}
    checked = 0
    for url, entries in output.items():
        for related, _degree, evidence in entries:
            for site, _pages, citing, anchor in evidence:
                record = by_url[citing]
                assert record["site"] == site
                anchors = page_anchors(record)
                assert url in anchors and anchor in anchors[related], (url, related, citing)
                checked += 1
    assert checked
