"""Tests for relatedpages.store.linkindex, edgelist and linkload: edge lists, the link index
database, load_link_graph."""
from __future__ import annotations

import doctest
import gzip
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relatedpages.store import edgelist, linkindex
from relatedpages.store.db import (
    KEY_AS_GIVEN,
    DatabaseError,
    DatabaseProblem,
    RecordRejection,
    RelatedPagesDB,
    partition_name,
)
from relatedpages.store.dbbuild import build_database, is_link_record
from relatedpages.store.dbopen import read_manifest
from relatedpages.store.edgelist import (
    EdgeRejection,
    detect_keys,
    graph_from_edge_list,
    import_edge_list,
    parse_edge_line,
    read_edge_list,
)
from relatedpages.store.linkgraph import KeyKind, LinkGraph
from relatedpages.store.linkindex import (
    LinkIndexDB,
    LinkRecord,
    StoredLink,
    build_link_index,
    build_link_index_from_segments,
    link_records_from_segments,
)
from relatedpages.store.linkload import load_link_graph


def graph_view(graph: LinkGraph) -> dict[str, tuple[bool, list[tuple[str, str, int]], list[str]]]:
    """A graph by names (independent of node numbering): crawled, out-links, parents."""
    return {
        graph.name(node): (
            bool(graph.crawled[node]),
            [(graph.name(link.target), link.anchor, link.block) for link in graph.out_links(node)],
            sorted(graph.name(int(parent)) for parent in graph.parents(node)),
        )
        for node in range(len(graph))
    }


def same_arrays(first: LinkGraph, second: LinkGraph) -> None:
    assert first.names == second.names and first.key_kind is second.key_kind
    for name in ("out_offsets", "out_targets", "out_anchors", "out_blocks", "in_offsets", "in_sources",
                 "crawled", "hosts"):
        assert np.array_equal(getattr(first, name), getattr(second, name)), name
    assert [first.anchor_texts[a] for a in first.out_anchors] == [second.anchor_texts[a] for a in second.out_anchors]


def write(path: Path, text: str) -> Path:
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("module", [linkindex, edgelist], ids=lambda module: module.__name__)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# -- the record format (relatedpages.store.db) -------------------------------------------------


@pytest.mark.parametrize("value, ok", [
    ({"out": [["http://b.example/", "B", 0], ["http://b.example/", "", 3]], "in": ["a", "b"], "crawled": True}, True),
    ({"out": [], "in": [], "crawled": False}, True),
    ({"out": [("1", "", -1)], "in": ("0",), "crawled": True}, True),  # tuples are fine
    ({"out": [], "in": [], "crawled": 1}, False),
    ({"out": [], "in": ["b", "a"], "crawled": True}, False),  # not ascending
    ({"out": [], "in": ["a", "a"], "crawled": True}, False),  # not distinct
    ({"out": [], "in": [""], "crawled": True}, False),
    ({"out": [["", "", 0]], "in": [], "crawled": True}, False),  # empty href
    ({"out": [["x", None, 0]], "in": [], "crawled": True}, False),
    ({"out": [["x", "", -2]], "in": [], "crawled": True}, False),
    ({"out": [["x", "", True]], "in": [], "crawled": True}, False),
    ({"out": [["x", ""]], "in": [], "crawled": True}, False),
    ({"out": [], "in": [], "crawled": True, "extra": 1}, False),
    ({"out": [], "crawled": True}, False),
    ([["http://b.example/", 1.0, []]], False),  # a related list is not a link record
])
def test_is_link_record(value: Any, ok: bool) -> None:
    assert is_link_record(value) is ok


def test_build_database_validates_link_records_and_keys_as_given(tmp_path: Path) -> None:
    good = {"out": [["2", "", -1]], "in": [], "crawled": True}
    records: list[tuple[Any, Any]] = [
        ("1", {"out": [], "in": [], "crawled": True}),
        ("1", good),  # the last one wins
        ("HTTP://not-normalised", {"out": [], "in": [], "crawled": False}),  # ids: kept as given
        ("", good), ("a b", good), ("a\tb", good), (None, good),
        ("3", {"out": [], "in": ["2", "1"], "crawled": False}),
        ("4", [["http://x/", 1.0, []]]),
    ]
    summary = build_database(records, tmp_path / "db", algorithm="links", parameters={"keys": "id"},
                             source=["test"], partitions=4, normalise_keys=False)
    assert summary.records == 2 and summary.read == 9
    assert dict(summary.rejected) == {
        RecordRejection.UNUSABLE_KEY: 4, RecordRejection.MALFORMED_LINKS: 2, RecordRejection.DUPLICATE_KEY: 1}
    manifest = read_manifest(tmp_path / "db")
    assert manifest.rejected == {"unusable_key": 4, "malformed_links": 2, "duplicate_key": 1}
    assert manifest.key == KEY_AS_GIVEN and manifest.algorithm == "links"
    with LinkIndexDB(tmp_path / "db") as index:
        assert index.links("1") == LinkRecord((StoredLink("2", "", -1),), (), True)
        assert index.links("HTTP://not-normalised") == LinkRecord((), (), False)
        assert index.links("http://not-normalised/") is None and index.links("") is None
        assert dict(index.records()).keys() == {"1", "HTTP://not-normalised"}


def test_related_and_link_readers_refuse_each_others_databases(tmp_path: Path) -> None:
    build_link_index([("http://a.example/", {"out": [], "in": [], "crawled": True})], tmp_path / "links",
                     keys=KeyKind.URL, source=["t"], partitions=2)
    build_database([("http://a.example/", [])], tmp_path / "related", algorithm="block", parameters={},
                   source=["t"], partitions=2)
    for reader, folder in ((RelatedPagesDB, "links"), (LinkIndexDB, "related")):
        with pytest.raises(DatabaseError) as caught:
            reader(tmp_path / folder)
        assert caught.value.problem is DatabaseProblem.NOT_A_DATABASE
        assert "holds algorithm" in str(caught.value)
    with RelatedPagesDB(tmp_path / "related") as database:
        assert database.related("http://a.example/") == []


def test_link_index_without_keys_parameter_is_corrupt(tmp_path: Path) -> None:
    build_database([("1", {"out": [], "in": [], "crawled": True})], tmp_path / "db", algorithm="links",
                   parameters={}, source=["t"], partitions=1, normalise_keys=False)
    with pytest.raises(DatabaseError, match="parameters.keys"):
        LinkIndexDB(tmp_path / "db")


# -- edge lists --------------------------------------------------------------------------


@pytest.mark.parametrize("line, expected", [
    (b"0\t1\n", ("0", "1")),
    (b"0 1", ("0", "1")),
    (b"  0   1  \r\n", ("0", "1")),
    (b"a\tb c", ("a", "b c")),  # with a tab, only tabs separate
    (b"http://a.example/ \t http://b.example/\n", ("http://a.example/", "http://b.example/")),
    (b"\xc3\xa9\t\xe4\xb8\xad", ("é", "中")),
    (b"# comment\n", None),
    (b"   # indented comment", None),
    (b"\n", None),
    (b" \t \r\n", None),
    (b"0\n", EdgeRejection.MALFORMED_LINE),
    (b"0 1 2\n", EdgeRejection.MALFORMED_LINE),
    (b"0\t1\t2\n", EdgeRejection.MALFORMED_LINE),
    (b"0\t\t1\n", EdgeRejection.MALFORMED_LINE),
    (b"\t1\n", ("1", None) and EdgeRejection.MALFORMED_LINE),
    (b"\xff\t1\n", EdgeRejection.UNDECODABLE_LINE),
])
def test_parse_edge_line(line: bytes, expected: Any) -> None:
    assert parse_edge_line(line) == expected


EDGES = """# a hand-made graph
0\t1
0\t4
0\t1
1\t0
4\t4

4\t10
9 10
bad line here
10
10\t9
"""


@pytest.mark.parametrize("name", ["edges.tsv", "edges.tsv.gz", "edges.gz-without-suffix"])
def test_read_edge_list_plain_or_gzip(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name.endswith("suffix"):
        path.write_bytes(gzip.compress(EDGES.encode()))
    else:
        write(path, EDGES)
    skipped: dict[EdgeRejection, int] = {}
    pairs = list(read_edge_list(path, skipped))
    assert pairs == [("0", "1"), ("0", "4"), ("0", "1"), ("1", "0"), ("4", "4"), ("4", "10"), ("9", "10"),
                     ("10", "9")]
    assert skipped == {EdgeRejection.MALFORMED_LINE: 2}


def test_detect_keys(tmp_path: Path) -> None:
    assert detect_keys(write(tmp_path / "a", "# x\n\nhttp://a.example/\tHTTPS://b.example/\n1\t2\n")) is KeyKind.URL
    assert detect_keys(write(tmp_path / "b", "1\t2\nhttp://a.example/\thttp://b.example/\n")) is KeyKind.ID
    assert detect_keys(write(tmp_path / "c", "http://a.example/\tb\n")) is KeyKind.ID
    assert detect_keys(write(tmp_path / "d", "# nothing\n")) is KeyKind.ID


def test_import_id_edge_list_hand_worked(tmp_path: Path) -> None:
    summary = import_edge_list(write(tmp_path / "e.tsv.gz", EDGES), tmp_path / "db", partitions=4)
    assert summary.keys is KeyKind.ID
    assert (summary.lines, summary.edges, summary.nodes) == (10, 8, 5)
    assert dict(summary.skipped) == {EdgeRejection.MALFORMED_LINE: 2, EdgeRejection.UNDECODABLE_LINE: 0,
                                     EdgeRejection.UNUSABLE_URL: 0, EdgeRejection.UNUSABLE_ID: 0}
    assert summary.database.records == 5
    manifest = read_manifest(tmp_path / "db")
    assert manifest.algorithm == "links" and manifest.parameters == {"keys": "id", "edges": 8}
    assert manifest.key == KEY_AS_GIVEN and len(manifest.partitions) == 4
    with LinkIndexDB(tmp_path / "db") as index:
        assert index.keys is KeyKind.ID and len(index) == 5
        records = {key: record.to_json() for key, record in index.records()}
    # out-links in file order with the repeat kept; in = distinct sources, byte order
    # ("10" < "4"); the self-loop 4 → 4 kept; 9 and 10 cite each other
    assert records == {
        "0": {"out": [["1", "", -1], ["4", "", -1], ["1", "", -1]], "in": ["1"], "crawled": True},
        "1": {"out": [["0", "", -1]], "in": ["0"], "crawled": True},
        "4": {"out": [["4", "", -1], ["10", "", -1]], "in": ["0", "4"], "crawled": True},
        "9": {"out": [["10", "", -1]], "in": ["10"], "crawled": True},
        "10": {"out": [["9", "", -1]], "in": ["4", "9"], "crawled": True},
    }
    line = next(line for index in range(4) for line in (tmp_path / "db" / partition_name(index)).read_bytes()
                .splitlines() if line.startswith(b"0\t"))
    assert line == b'0\t{"out":[["1","",-1],["4","",-1],["1","",-1]],"in":["1"],"crawled":true}'


def test_import_url_edge_list_normalises_and_counts(tmp_path: Path) -> None:
    text = ("HTTP://A.example:80/index.html\thttp://b.example\n"
            "http://a.example/\thttp://c.example/x/../y\n"
            "http://b.example/\tjavascript:void(0)\n"
            "http://c.example/y\thttp://a.example/ page\n"  # the space is percent-encoded
            "only-one-field\n")
    summary = import_edge_list(write(tmp_path / "u.tsv", text), tmp_path / "db", partitions=2)
    assert summary.keys is KeyKind.URL and summary.edges == 3
    assert summary.count(EdgeRejection.UNUSABLE_URL) == 1 and summary.count(EdgeRejection.MALFORMED_LINE) == 1
    assert read_manifest(tmp_path / "db").parameters["keys"] == "url"
    with LinkIndexDB(tmp_path / "db") as index:
        assert index.keys is KeyKind.URL
        record = index.links("http://A.EXAMPLE/")  # looked up normalised
        assert record is not None and record.crawled and [link.href for link in record.out] == [
            "http://b.example/", "http://c.example/y"]
        assert record.in_links == ()  # "http://a.example/ page" is another page
        page = index.links("http://a.example/%20page")
        assert page == LinkRecord((), ("http://c.example/y",), False)
        with pytest.raises(ValueError):
            index.links("mailto:someone@example.com")
    graph = load_link_graph(tmp_path / "db")
    assert graph.names == sorted(graph.names) and len(graph) == 4
    same_arrays(graph, graph_from_edge_list(tmp_path / "u.tsv"))
    # keys forced to ids: the same lines are opaque names, kept as given
    forced = import_edge_list(tmp_path / "u.tsv", tmp_path / "ids", keys="id", partitions=2)
    assert forced.keys is KeyKind.ID and forced.edges == 3 and forced.count(EdgeRejection.UNUSABLE_ID) == 1
    with pytest.raises(ValueError, match="keys"):
        import_edge_list(tmp_path / "u.tsv", tmp_path / "x", keys="names")


# -- load_link_graph ---------------------------------------------------------------------


def test_load_link_graph_hand_worked(tmp_path: Path) -> None:
    import_edge_list(write(tmp_path / "e.tsv", EDGES), tmp_path / "db", partitions=4)
    graph = load_link_graph(tmp_path / "db")
    assert graph.key_kind is KeyKind.ID
    assert graph.names == ["0", "1", "4", "9", "10"]  # numeric order: node i is the i-th id
    assert graph.children(0).tolist() == [1, 2, 1]  # 0 → 1, 4, 1
    assert graph.children(2).tolist() == [2, 4]  # 4 → 4, 10
    assert graph.parents(4).tolist() == [2, 3]  # 10 ← 4, 9
    assert graph.parents(2).tolist() == [0, 2]
    assert graph.blocks(0).tolist() == [-1, -1, -1] and graph.anchors(0) == ["", "", ""]
    assert graph.crawled.tolist() == [True] * 5
    assert graph.edges == 8
    same_arrays(graph, graph_from_edge_list(tmp_path / "e.tsv"))
    expected = LinkGraph.from_edges(read_edge_list(tmp_path / "e.tsv"))
    assert graph_view(graph) == graph_view(expected)


def test_load_link_graph_of_non_numeric_ids_and_uncrawled_targets(tmp_path: Path) -> None:
    text = "b\ta\nb\t007\n007\tz\n7\tb\n"  # "007" is not "7": names are not numbers here
    import_edge_list(write(tmp_path / "e.tsv", text), tmp_path / "db", partitions=3)
    graph = load_link_graph(tmp_path / "db")
    assert graph.names == ["007", "7", "a", "b", "z"]  # code point order
    assert graph.crawled.tolist() == [True, True, False, True, False]
    assert graph.children(3).tolist() == [2, 0]
    same_arrays(graph, graph_from_edge_list(tmp_path / "e.tsv"))


def test_load_link_graph_keeps_anchors_blocks_and_escapes(tmp_path: Path) -> None:
    quote = 'say "hi" \\ \t 中文'
    records = [
        ("http://a.example/", {"out": [["http://b.example/", quote, 0], ["http://a.example/", "", 1],
                                       ["http://b.example/", "B", 1]], "in": ["http://a.example/"],
                               "crawled": True}),
        ("http://b.example/", {"out": [], "in": ["http://a.example/"], "crawled": False}),
        ("http://c.example/", {"out": [], "in": [], "crawled": True}),  # crawled, no links
    ]
    build_link_index(records, tmp_path / "db", keys=KeyKind.URL, source=["t"], partitions=2)
    graph = load_link_graph(tmp_path / "db")
    assert graph.key_kind is KeyKind.URL and graph.names == ["http://a.example/", "http://b.example/",
                                                              "http://c.example/"]
    assert graph.anchors(0) == [quote, "", "B"] and graph.blocks(0).tolist() == [0, 1, 1]
    assert graph.crawled.tolist() == [True, False, True]
    assert graph.id_of("HTTP://B.example:80/") == 1
    assert graph.host(0) != graph.host(1)


def test_load_link_graph_reads_records_in_any_key_order_and_targets_without_records(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Written by someone else: keys in another order (the loader's fast cut does not
    # apply) and a target that has no record of its own (numbered after the keys).
    records = [
        ("1", {"crawled": True, "in": ["2"], "out": [["2", "", -1], ["5", "x", 3]]}),
        ("2", {"in": ["1"], "out": [["1", "", -1]], "crawled": True}),
        ("3", {"out": [["2", "", -1], ["99", "", -1]], "in": [], "crawled": True}),
    ]
    build_link_index(records, tmp_path / "db", keys=KeyKind.ID, source=["t"], partitions=1)
    with caplog.at_level(logging.WARNING, logger="relatedpages.store.linkload"):
        graph = load_link_graph(tmp_path / "db")
    assert "have no record" in caplog.text
    assert graph.names[:3] == ["1", "2", "3"] and sorted(graph.names[3:]) == ["5", "99"]
    view = graph_view(graph)
    assert view["1"] == (True, [("2", "", -1), ("5", "x", 3)], ["2"])
    assert view["3"] == (True, [("2", "", -1), ("99", "", -1)], [])
    assert view["99"] == (False, [], ["3"])
    # numeric keys, bare links, one target without a record: the numpy path steps aside
    build_link_index([("1", {"out": [["7", "", -1], ["2", "", -1]], "in": [], "crawled": True}),
                      ("2", {"out": [], "in": ["1"], "crawled": True})],
                     tmp_path / "db2", keys=KeyKind.ID, source=["t"], partitions=1)
    graph = load_link_graph(tmp_path / "db2")
    assert graph.names == ["1", "2", "7"] and graph.children(0).tolist() == [2, 1]


def test_load_link_graph_refuses_a_malformed_record(tmp_path: Path) -> None:
    import_edge_list(write(tmp_path / "e.tsv", EDGES), tmp_path / "db", partitions=1)
    part = tmp_path / "db" / partition_name(0)
    data = part.read_bytes()
    part.write_bytes(data.replace(b'"crawled":true}', b'"crawled":tru3}', 1))  # same size
    with pytest.raises(DatabaseError) as caught:
        load_link_graph(tmp_path / "db")
    assert caught.value.problem is DatabaseProblem.CORRUPT and "malformed link record" in str(caught.value)
    with pytest.raises(DatabaseError):  # a full check finds it before reading
        load_link_graph(tmp_path / "db", verify="full")


def test_empty_edge_list(tmp_path: Path) -> None:
    summary = import_edge_list(write(tmp_path / "e.tsv", "# nothing\n"), tmp_path / "db", partitions=2)
    assert (summary.edges, summary.nodes, summary.database.records) == (0, 0, 0)
    graph = load_link_graph(tmp_path / "db")
    assert len(graph) == 0 and graph.edges == 0
    assert len(graph_from_edge_list(tmp_path / "e.tsv")) == 0


names = st.sampled_from(["0", "1", "2", "3", "10", "11", "100", "a", "http://x.example/", "中"])
edge_lists = st.lists(st.tuples(names, names), max_size=25)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=edge_lists, numeric=st.booleans())
def test_every_way_in_gives_the_same_graph(tmp_path_factory: pytest.TempPathFactory,
                                           edges: list[tuple[str, str]], numeric: bool) -> None:
    if numeric:
        edges = [(s, t) for s, t in edges if s.isdigit() and t.isdigit()]
    folder = tmp_path_factory.mktemp("g")
    path = write(folder / "e.tsv", "".join(f"{s}\t{t}\n" for s, t in edges))
    import_edge_list(path, folder / "db", keys="id", partitions=3)
    loaded = load_link_graph(folder / "db")
    direct = graph_from_edge_list(path, keys="id")
    same_arrays(loaded, direct)
    assert graph_view(loaded) == graph_view(LinkGraph.from_edges(edges))


# -- from segment records ----------------------------------------------------------------


def segment(url: str, *blocks: list[tuple[str, str]]) -> dict[str, Any]:
    return {"url": url, "site": url.split("/")[2], "blocks": [
        [{"href": href, "anchor": anchor, "pos": pos} for pos, (href, anchor) in enumerate(block)]
        for block in blocks]}


def test_link_records_from_segments_hand_worked() -> None:
    records = [
        segment("http://a.example/", [("http://b.example/", "B"), ("HTTP://C.example:80/", "C")],
                [("http://b.example/", "B again"), ("javascript:void(0)", "js"), ("http://a.example/", "me")]),
        segment("http://b.example/", [("http://c.example/", "")]),
        {"url": "http://broken.example/"},  # no blocks
        "not a record",
        {"url": "http://d.example/", "blocks": [[{"href": 3, "anchor": "x"}, {"anchor": "no href"}]]},
    ]
    result, events = link_records_from_segments(records)
    assert result == {
        "http://a.example/": {"out": [["http://b.example/", "B", 0], ["http://c.example/", "C", 0],
                                      ["http://b.example/", "B again", 1], ["http://a.example/", "me", 1]],
                              "in": ["http://a.example/"], "crawled": True},
        "http://b.example/": {"out": [["http://c.example/", "", 0]], "in": ["http://a.example/"],
                              "crawled": True},
        "http://c.example/": {"out": [], "in": ["http://a.example/", "http://b.example/"], "crawled": False},
        "http://d.example/": {"out": [], "in": [], "crawled": True},
    }
    assert {event.value: count for event, count in events.items()} == {
        "bad_segment_record": 2, "malformed_link": 2, "unusable_href": 1, "pages_indexed": 3,
        "links_indexed": 5, "nodes_written": 4, "uncrawled_nodes_written": 1}


def test_build_link_index_from_segments_loads_like_from_pages(tmp_path: Path) -> None:
    records = [
        segment("http://a.example/", [("http://b.example/", "B")], [("http://c.example/", "C")]),
        segment("http://c.example/", [("http://a.example/", "A"), ("http://a.example/", "A2")]),
    ]
    summary, events = build_link_index_from_segments(records, tmp_path / "db", partitions=2)
    assert summary.records == 3 and events[linkindex.LinkEvent.LINKS] == 4
    graph = load_link_graph(tmp_path / "db")
    expected = LinkGraph.from_pages([
        ("http://a.example/", [("http://b.example/", "B", 0), ("http://c.example/", "C", 1)]),
        ("http://c.example/", [("http://a.example/", "A", 0), ("http://a.example/", "A2", 0)]),
    ])
    assert graph_view(graph) == graph_view(expected)


def test_stored_lines_are_compact_json(tmp_path: Path) -> None:
    build_link_index_from_segments([segment("http://a.example/", [("http://b.example/", "中")])],
                                   tmp_path / "db", partitions=1)
    lines = (tmp_path / "db" / partition_name(0)).read_bytes().splitlines()
    assert lines == [
        'http://a.example/\t{"out":[["http://b.example/","中",0]],"in":[],"crawled":true}'.encode(),
        b'http://b.example/\t{"out":[],"in":["http://a.example/"],"crawled":false}',
    ]
    assert json.loads(lines[0].split(b"\t")[1]) == {"out": [["http://b.example/", "中", 0]], "in": [],
                                                     "crawled": True}
