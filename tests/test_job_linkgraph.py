"""jobs.linkgraph: segment records → link records, equal to the in-memory oracle."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jobrun import run_job, write_segments
from jobs.linkgraph import MRLinkGraph
from relatedpages.store.linkgraph import KeyKind, LinkGraph
from relatedpages.store.linkindex import (
    LinkIndexDB,
    build_link_index,
    build_link_index_from_segments,
    link_records_from_segments,
)
from relatedpages.store.linkload import load_link_graph


def page(url: str, *blocks: list[tuple[str, str]]) -> dict[str, Any]:
    return {"url": url, "site": url.split("/")[2], "blocks": [
        [{"href": href, "anchor": anchor, "pos": pos} for pos, (href, anchor) in enumerate(block)]
        for block in blocks]}


def run_linkgraph(inputs: list[Path], runner: str = "inline") -> tuple[dict[Any, Any], dict[str, int]]:
    output, counters = run_job(MRLinkGraph, inputs, runner)
    return output, counters.get("linkgraph", {})


def test_hand_worked_corpus(tmp_path: Path) -> None:
    records = [
        page("http://a.example/",
             [("http://b.example/", "Bee"), ("http://c.example/", "Sea")],
             [("http://b.example/", "Bee again"), ("javascript:void(0)", "menu"), ("http://a.example/", "home")]),
        page("http://b.example/", [("HTTP://C.example:80/index.html", "")]),  # re-normalised
        page("http://e.example/"),  # a page without blocks: crawled, no out-links
    ]
    path = write_segments(tmp_path / "seg.jsonl", records)
    with path.open("a") as handle:
        handle.write('"http://bad.example/"\t{"url": "http://bad.example/"}\n')  # no blocks
        handle.write('"http://bad2.example/"\t[1, 2]\n')
        handle.write('"http://d.example/"\t{"url": "http://d.example/", "blocks": [[{"anchor": "x"}]]}\n')
    output, counters = run_linkgraph([path])
    assert output == {
        "http://a.example/": {"out": [["http://b.example/", "Bee", 0], ["http://c.example/", "Sea", 0],
                                      ["http://b.example/", "Bee again", 1], ["http://a.example/", "home", 1]],
                              "in": ["http://a.example/"], "crawled": True},
        "http://b.example/": {"out": [["http://c.example/", "", 0]], "in": ["http://a.example/"], "crawled": True},
        "http://c.example/": {"out": [], "in": ["http://a.example/", "http://b.example/"], "crawled": False},
        "http://d.example/": {"out": [], "in": [], "crawled": True},
        "http://e.example/": {"out": [], "in": [], "crawled": True},
    }
    assert counters == {"bad_segment_record": 2, "malformed_link": 1, "unusable_href": 1, "pages_indexed": 4,
                        "links_indexed": 5, "nodes_written": 5, "uncrawled_nodes_written": 1}
    oracle, events = link_records_from_segments(
        [json.loads(line.split("\t", 1)[1]) for line in path.read_text().splitlines()])
    assert output == oracle
    assert {event.value: count for event, count in events.items()} == counters


def test_the_same_page_in_two_inputs_keeps_one_out_list(tmp_path: Path) -> None:
    first = write_segments(tmp_path / "one.jsonl", [page("http://a.example/", [("http://z.example/", "Z")])])
    second = write_segments(tmp_path / "two.jsonl", [page("http://a.example/", [("http://y.example/", "Y")])])
    for inputs in ([first, second], [second, first]):
        output, counters = run_linkgraph(inputs)
        # '[["http://y…' sorts before '[["http://z…': that list is kept, whatever the input order,
        # and only its target gets an in-link
        assert output == {
            "http://a.example/": {"out": [["http://y.example/", "Y", 0]], "in": [], "crawled": True},
            "http://y.example/": {"out": [], "in": ["http://a.example/"], "crawled": False},
        }
        assert counters["duplicate_page_record"] == 1


@pytest.fixture(scope="module")
def aeb_segments(shared_data: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    """Real segment records: jobs.segment over the aeb-pages crawl."""
    from jobs.segment import MRSegment

    warc = shared_data("web/aeb-pages.warc.gz")
    job = MRSegment(["-r", "inline", "--no-conf", str(warc)])
    with job.make_runner() as runner:
        runner.run()
        records = [record for _, record in job.parse_output(runner.cat_output())]
    return records, write_segments(tmp_path_factory.mktemp("aeb") / "seg.jsonl", records)


def test_real_segments_inline_and_local_equal_the_oracle(aeb_segments: Any, tmp_path: Path) -> None:
    records, path = aeb_segments
    inline, inline_counters = run_linkgraph([path])
    local, local_counters = run_linkgraph([path], runner="local")
    oracle, events = link_records_from_segments(records)
    assert inline == oracle
    assert json.dumps(local, sort_keys=True) == json.dumps(inline, sort_keys=True)
    assert inline_counters == local_counters == {event.value: count for event, count in events.items()}
    pages = len(records)
    assert inline_counters["pages_indexed"] == pages
    # every link of every page: its blocks' and those in no block (issue 13, item 6)
    in_blocks = sum(len(block) for record in records for block in record["blocks"])
    loose = sum(len(record["loose"]) for record in records)
    assert loose > 0.1 * in_blocks  # real pages have many links outside blocks
    assert inline_counters["links_indexed"] == in_blocks + loose
    assert sum(record["crawled"] for record in inline.values()) == pages
    # every in-link is an out-link of its source, and the other way round
    cited = {(source, node) for node, record in inline.items() for source in record["in"]}
    citing = {(node, href) for node, record in inline.items() for href, _, _ in record["out"]}
    assert cited == citing


def test_job_output_as_database_loads_like_from_pages(aeb_segments: Any, tmp_path: Path) -> None:
    records, path = aeb_segments
    output, _ = run_linkgraph([path])
    summary = build_link_index(output.items(), tmp_path / "db", keys=KeyKind.URL, source=[str(path)])
    assert summary.records == len(output)
    assert sum(summary.rejected.values()) == 0
    graph = load_link_graph(tmp_path / "db")
    def page_order(record: dict[str, Any]) -> list[tuple[str, str, int]]:
        """Every link of the page in page order: the loose ones (block -1) before block `at`."""
        links: list[tuple[str, str, int]] = []
        for number in range(len(record["blocks"]) + 1):
            links += [(link["href"], link["anchor"], -1) for link in record["loose"] if link["at"] == number]
            if number < len(record["blocks"]):
                links += [(link["href"], link["anchor"], number) for link in record["blocks"][number]]
        return links

    expected = LinkGraph.from_pages((record["url"], page_order(record)) for record in records)
    assert len(graph) == len(expected) and graph.edges == expected.edges
    for node in range(len(expected)):
        mine = graph.id_of(expected.name(node))
        assert mine is not None and bool(graph.crawled[mine]) == bool(expected.crawled[node])
        assert [(graph.name(link.target), link.anchor, link.block) for link in graph.out_links(mine)] == [
            (expected.name(link.target), link.anchor, link.block) for link in expected.out_links(node)]
    # the in-memory build writes the very same database
    build_link_index_from_segments(records, tmp_path / "oracle")
    with LinkIndexDB(tmp_path / "db") as job_db, LinkIndexDB(tmp_path / "oracle") as oracle_db:
        assert list(job_db.records()) == list(oracle_db.records())
