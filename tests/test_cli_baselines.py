"""The baselines' commands: linkgraph import/build, query --links, equivalent-links, moved,
authorities — answers worked out by hand on tiny graphs, and one real crawl."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from relatedpages.cli import main
from relatedpages.store.linkindex import build_link_index_from_segments
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent

# Parents 1, 5, 6 cite 2 and 3; 1 and 6 also 4 (page order as listed).
ID_EDGES = """# a tiny graph
1\t2
1\t3
1\t4
5\t2
5\t3
6\t2
6\t3
6\t4
this line has three fields
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def answers(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def related(record: dict[str, Any]) -> list[tuple[str, float]]:
    return [(item["url"], item["score"]) for item in record["related"]]


@pytest.fixture(scope="module")
def id_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ids")
    edges = folder / "edges.tsv"
    edges.write_text(ID_EDGES)
    assert main(["linkgraph", "import", "--edges", str(edges), "--db", str(folder / "db")]) == 0
    return folder / "db"


@pytest.fixture(scope="module")
def url_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The id graph with URLs http://n<i>.example/, a gzipped edge list, keys detected."""
    import gzip

    folder = tmp_path_factory.mktemp("urls")
    lines = []
    for line in ID_EDGES.splitlines():
        fields = line.split("\t")
        lines.append("\t".join(f"HTTP://N{f}.example:80/" for f in fields) if len(fields) == 2 else line)
    lines.append("http://n1.example/\tmailto:someone@example.com")  # not a web page: skipped
    edges = folder / "edges.tsv.gz"
    edges.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    assert main(["linkgraph", "import", "--edges", str(edges), "--db", str(folder / "db")]) == 0
    return folder / "db"


# -- linkgraph import --------------------------------------------------------------------


def test_import_prints_a_summary_with_every_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edges = tmp_path / "edges.tsv"
    edges.write_text(ID_EDGES)
    status, out, _ = run(capsys, "linkgraph", "import", "--edges", str(edges), "--db", str(tmp_path / "db"))
    assert status == 0
    summary = dict(line.strip().rsplit(None, 1) for line in out.splitlines()[1:] if "time" not in line
                   and "size" not in line)
    assert summary == {"keys": "id", "data lines": "9", "edges": "8", "nodes": "6",
                       "skipped malformed_line": "1", "skipped undecodable_line": "0",
                       "skipped unusable_url": "0", "skipped unusable_id": "0", "database records": "6"}
    manifest = json.loads((tmp_path / "db" / "manifest.json").read_text())
    assert manifest["algorithm"] == "links" and manifest["parameters"]["keys"] == "id"


def test_import_of_urls_normalises_and_counts(url_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((url_index / "manifest.json").read_text())
    assert manifest["parameters"]["keys"] == "url" and manifest["records"] == 6
    status, _, err = run(capsys, "linkgraph", "import", "--edges", "no/such.tsv", "--db", "x")
    assert status == 2 and err.strip() == "relatedpages: error: no such edge list: no/such.tsv"


# -- query --links -------------------------------------------------------------------------

# Companion on node 2 (ids: every node its own host, so Bharat–Henzinger weights are all 1):
# vicinity = parents 1, 5, 6 and their siblings 3, 4; hubs 1, 5, 6 → authorities 2, 3, 4 with
# MᵀM = [[3,3,2],[3,3,2],[2,2,2]]: a2 = a3 = x, a4 = r·x with r² + 2r − 2 = 0, r = √3 − 1.
_X = 1 / math.sqrt(2 + (math.sqrt(3) - 1) ** 2)
HAND_WORKED = {
    # query 2: co-cited with 3 by 1, 5, 6 and with 4 by 1, 6
    ("companion", "2"): [("3", _X), ("4", (math.sqrt(3) - 1) * _X)],
    ("dh-cocitation", "2"): [("3", 3.0), ("4", 2.0)],
    ("extended-cocitation", "2"): [("3", 3.0), ("4", 2.0)],  # back degrees ≥ δ = 2, no children
    ("lli", "2"): [("3", 1.0), ("4", 1.0)],  # ε = 0.5 keeps k = 1: every row is parallel to u'
    # query 5 has no parents, children 2 and 3; their other parents 1 and 6 co-cite both
    ("companion", "5"): [("2", 1 / math.sqrt(2)), ("3", 1 / math.sqrt(2))],
    ("dh-cocitation", "5"): [],
    ("extended-cocitation", "5"): [("1", 2.0), ("6", 2.0)],  # forward degrees
    ("lli", "5"): [("1", 1.0), ("6", 1.0)],
    # P(2) = {1, 5, 6}: 3 shares all three (P(3) = {1, 5, 6}), 4 two of them (P(4) = {1, 6})
    ("cosine-cocitation", "2"): [("3", 1.0), ("4", 2 / math.sqrt(6))],
    ("cosine-cocitation", "5"): [],
    # SimRank: 1, 5, 6 have no parents (similar to themselves only): s(2, 3) = C/(3·3) · 3,
    # s(2, 4) = C/(3·2) · 2, both C/3 (ties by name); 5 has no parents
    ("simrank", "2"): [("3", 0.8 / 3), ("4", 0.8 / 3)],
    ("simrank", "5"): [],
}


# (query, result) -> evidence: the shared parents, closest links first (1 has 2, 3, 4 at
# positions 0, 1, 2), then by name; shared children; a direct link first.  No anchors.
HAND_EVIDENCE = {
    ("2", "3"): [["parent", "1", ""], ["parent", "5", ""], ["parent", "6", ""]],
    ("2", "4"): [["parent", "1", ""], ["parent", "6", ""]],
    ("5", "2"): [["link", "5", ""]],
    ("5", "3"): [["link", "5", ""]],
    ("5", "1"): [["child", "2", ""], ["child", "3", ""]],
    ("5", "6"): [["child", "2", ""], ["child", "3", ""]],
}


@pytest.mark.parametrize("algorithm", ["companion", "dh-cocitation", "extended-cocitation", "lli",
                                       "cosine-cocitation", "simrank"])
def test_each_algorithm_answers_by_hand(id_index: Path, algorithm: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "query", "--links", str(id_index), "--algorithm", algorithm, "--json", "2", "5")
    assert status == 0
    two, five = answers(out)
    for record, query in ((two, "2"), (five, "5")):
        assert set(record) == {"query", "url", "found", "related", "algorithm", "reason"}
        assert (record["query"], record["url"], record["found"], record["algorithm"]) == (query, query, True, algorithm)
        expected = HAND_WORKED[algorithm, query]
        assert [url for url, _ in related(record)] == [url for url, _ in expected]
        assert [score for _, score in related(record)] == pytest.approx([score for _, score in expected], abs=1e-9)
        for item in record["related"]:  # the links that made the result (by hand, below)
            assert item["evidence"] == HAND_EVIDENCE[query, item["url"]]
    assert two["reason"] is None
    assert five["reason"] == ("no_parents" if algorithm in ("dh-cocitation", "cosine-cocitation", "simrank")
                              else None)
    assert f"loaded link index {id_index}: 6 nodes, 8 links, id keys" in err


@pytest.mark.parametrize("algorithm", ["ppr", "green"])
def test_walks_answer_from_the_cli_as_the_library(id_index: Path, algorithm: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # the walks' values are checked against networkx in tests/test_baseline_walks.py
    from relatedpages.baselines.methods import PAGE_METHODS
    from relatedpages.baselines.walks import WalkParams
    from relatedpages.store.linkload import load_link_graph

    status, out, _ = run(capsys, "query", "--links", str(id_index), "--algorithm", algorithm,
                         "--json", "--restart", "0.3", "--direction", "out", "1")
    assert status == 0
    graph = load_link_graph(str(id_index))
    expected = PAGE_METHODS[algorithm].answer(graph, graph.id_of("1"),
                                              WalkParams(restart=0.3, direction="out"))
    printed = related(answers(out)[0])
    assert [url for url, _ in printed] == [graph.name(item.node) for item in expected.related]
    assert [score for _, score in printed] == pytest.approx([item.score for item in expected.related])
    # out-links only: from 1, the walk reaches 2, 3 and 4 (dead ends: it restarts at 1)
    assert {url for url, _ in related(answers(out)[0])} == {"2", "3", "4"}
    status, _, err = run(capsys, "query", "--links", str(id_index), "--algorithm", algorithm,
                         "--direction", "sideways", "1")
    assert status == 2 and "direction" in err


def test_flags_reach_the_parameters(id_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from relatedpages.baselines.lli import LLIParams, lli
    from relatedpages.store.linkload import load_link_graph

    def top(*flags: str) -> list[tuple[str, float]]:
        status, out, _ = run(capsys, "query", "--links", str(id_index), "--json", *flags, "2")
        assert status == 0
        return related(answers(out)[0])

    assert top("--algorithm", "extended-cocitation", "--delta", "3") == [("3", 3.0)]
    # BF = 1: the one link after each parent's link to 2 — always 3 (4 is never a sibling)
    assert top("--algorithm", "dh-cocitation", "--siblings", "1") == [("3", 3.0)]
    assert top("--algorithm", "companion", "--max-results", "1") == [("3", pytest.approx(_X))]
    # ε = 0.99: k = the full rank, 3 and 4 no longer coincide
    graph = load_link_graph(id_index)
    node = graph.id_of("2")
    assert node is not None
    oracle = [(graph.name(s.node), s.score) for s in lli(graph, node, LLIParams(epsilon=0.99)).related]
    wide = top("--algorithm", "lli", "--epsilon", "0.99")
    assert wide == oracle and wide[0][0] == "3" and wide[1][1] < wide[0][1] < 1.0


def test_text_output_and_input_file(id_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listing = tmp_path / "queries.txt"
    listing.write_text("# ids\n2\n\n77\n")
    status, out, err = run(capsys, "query", "--links", str(id_index), "--algorithm", "dh-cocitation",
                           "--input", str(listing), "5")
    assert status == 0
    assert out.splitlines() == [
        "", "5   [dh-cocitation]", "  no related pages (no_parents)",
        "", "2   [dh-cocitation]", "   1.    3.000  3", "              via 1",
        "   2.    2.000  4", "              via 1",
        "", "77   [dh-cocitation]", "  not in the link index",
    ]
    assert "answered 3 queries with dh-cocitation" in err


def test_unknown_and_malformed_urls(url_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "query", "--links", str(url_index), "--algorithm", "companion", "--json",
                           "http://N2.example", "http://%zz", "http://nowhere.example/")
    assert status == 2  # the malformed URL; the others are answered
    assert "relatedpages: error: malformed URL: http://%zz" in err.splitlines()
    known, unknown = answers(out)
    assert known["url"] == "http://n2.example/" and known["query"] == "http://N2.example"
    assert related(known)[0] == ("http://n3.example/", pytest.approx(_X))
    assert unknown == {"query": "http://nowhere.example/", "url": "http://nowhere.example/", "found": False,
                       "algorithm": "companion", "related": [], "reason": "unknown_url"}


def test_a_stoplisted_page_is_never_returned(url_index: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    stoplist = tmp_path / "stop.txt"
    stoplist.write_text("# hosts\nn3.example\n")
    status, out, _ = run(capsys, "query", "--links", str(url_index), "--algorithm", "companion", "--json",
                         "--stoplist", str(stoplist), "http://n2.example/")
    assert status == 0
    # without 3, the authorities are 2 (excluded: the query) and 4, both cited by 1 and 6
    assert [url for url, _ in related(answers(out)[0])] == ["http://n4.example/"]


@pytest.mark.parametrize("argv, message", [
    (["--algorithm", "lli", "2"], "only with --links"),
    (["--parents", "3", "2"], "--parents: only with --links"),
])
def test_db_takes_no_baseline_flags(id_index: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                    message: str) -> None:
    status, _, err = run(capsys, "query", "--db", str(id_index), *argv)
    assert status == 2 and message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["2"], "--links needs --algorithm"),
    (["--algorithm", "companion", "--epsilon", "0.3", "2"], "--epsilon does not apply to companion"),
    (["--algorithm", "lli", "--epsilon", "1.5", "2"], "epsilon must be in (0, 1)"),
    (["--algorithm", "extended-cocitation", "--delta", "1.5", "2"], "whole number"),
    (["--algorithm", "lli", "--no-chop-urls", "2"], "--no-chop-urls does not apply to lli"),
    (["--algorithm", "companion"], "no URL to query"),
])
def test_usage_errors(id_index: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    status, out, err = run(capsys, "query", "--links", str(id_index), *argv)
    assert status == 2 and out == ""
    assert err.startswith("relatedpages: error: ") and message in err and len(err.splitlines()) == 1


def test_db_and_links_are_exclusive(id_index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as both:
        main(["query", "--db", str(id_index), "--links", str(id_index), "--algorithm", "lli", "2"])
    assert both.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as neither:
        main(["query", "2"])
    assert neither.value.code == 2 and "one of the arguments --db --links is required" in capsys.readouterr().err


def test_a_related_pages_database_is_not_a_link_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "query", "--links", str(tmp_path / "missing"), "--algorithm", "lli", "2")
    assert status == 1 and err.startswith("relatedpages: failed: ")


def test_the_installed_command_line(id_index: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "query", "--links", str(id_index),
                           "--algorithm", "extended-cocitation", "2"], cwd=REPO, capture_output=True,
                          text=True, timeout=guard(120))
    assert done.returncode == 0, done.stderr
    assert "   1.    3.000  3" in done.stdout


# -- linkgraph build on a real crawl ---------------------------------------------------------


def test_linkgraph_build_from_a_crawl_then_query(shared_data: Any, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from relatedpages.baselines.dh_cocitation import dh_cocitation
    from relatedpages.store.linkload import load_link_graph

    warc = shared_data("web/aeb-pages.warc.gz")
    status, out, err = run(capsys, "linkgraph", "build", str(warc), "--db", str(tmp_path / "links"),
                           "--runner", "inline")
    assert status == 0, err
    assert "[1/3] segmenting" in err and "[3/3] building the link index" in err
    summary = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in out.splitlines()
                   if line.startswith("  ") and not line.startswith(("  counter", "  time")))
    assert summary["pages"] == summary["pages indexed"] == "181"
    assert "  counter linkgraph.bad_segment_record = 0" in out  # every reason, zero included
    graph = load_link_graph(tmp_path / "links")
    assert f"link index records   {len(graph)}" in out and int(summary["links"]) == graph.edges
    # variety.com is cited by three pmc.com pages, each of which also cites deadline.com
    status, out, _ = run(capsys, "query", "--links", str(tmp_path / "links"), "--algorithm", "dh-cocitation",
                         "--json", "https://variety.com")
    assert status == 0
    record = answers(out)[0]
    assert record["found"] and record["url"] == "https://variety.com/"
    assert ("https://deadline.com/", 3.0) in related(record)
    node = graph.id_of("https://variety.com/")
    assert node is not None
    assert related(record) == [(graph.name(s.node), s.score) for s in dh_cocitation(graph, node).related]


# -- moved, equivalent-links (crawl-built URL indexes with anchors) --------------------------


def _records(pages: list[tuple[str, list[tuple[str, str]]]]) -> list[dict[str, Any]]:
    """Segment records, one block per page."""
    return [{"url": url, "site": url.split("/")[2],
             "blocks": [[{"href": href, "anchor": anchor, "pos": pos} for pos, (href, anchor) in enumerate(links)]]}
            for url, links in pages]


def u(name: str) -> str:
    return f"http://{name}.example/"


OLD, NEW = "http://univ.example/smith/", "http://smith.example/"
OLD_CRAWL = [
    (u("p1"), [(u("a"), "A"), (OLD, "Jane Smith's home page"), (u("b"), "B")]),
    (u("p2"), [(OLD, "Smith home"), (u("c"), "C")]),
    (u("p4"), [(OLD, "Smith")]),  # not fetched again
    (OLD, [(u("a"), "A")]),
]
NEW_CRAWL = [
    (u("p1"), [(u("a"), "A"), (NEW, "Jane Smith's home page"), (u("b"), "B")]),  # same anchor, same slot: 2
    (u("p2"), [(NEW, "Jane Smith"), (u("c"), "C")]),  # {smith} of {jane, smith, home}: 1/3, same slot: 1
    (u("p5"), [(u("p1"), "P1")]),
]


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("crawls")
    build_link_index_from_segments(_records(OLD_CRAWL), folder / "old")
    build_link_index_from_segments(_records(NEW_CRAWL), folder / "new")
    return folder / "old", folder / "new"


def test_moved_by_hand(crawls: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = crawls
    status, out, _ = run(capsys, "moved", "--old", str(old), "--new", str(new), "--json",
                         "HTTP://UNIV.example:80/smith/", u("p1"), u("zz"), "http://%zz")
    assert status == 2  # the malformed URL
    gone, still_there, unknown = answers(out)
    assert (gone["url"], gone["found"], gone["parents"], gone["recrawled_parents"], gone["reason"]) == (
        OLD, True, 3, 2, None)
    [candidate] = gone["candidates"]
    assert (candidate["url"], candidate["parents"]) == (NEW, 2)
    assert candidate["score"] == pytest.approx(2 + 1 / 3 + 1)
    assert [(e["parent"], e["anchor"], e["old_anchor"]) for e in candidate["evidence"]] == [
        (u("p1"), "Jane Smith's home page", "Jane Smith's home page"), (u("p2"), "Jane Smith", "Smith home")]
    assert (still_there["reason"], still_there["candidates"]) == ("not_gone", [])
    assert (unknown["found"], unknown["reason"]) == (False, "unknown_url")
    status, out, _ = run(capsys, "moved", "--old", str(old), "--new", str(new), "--position-weight", "0", OLD)
    assert status == 0
    assert f"   1.    1.333  {NEW}   [2 parents: " in out  # anchors only: 1 + 1/3


NAPOLEON, SERIES, KINGS = "http://www.napoleon.org/", "http://www.napoleonseries.org/", \
    "http://www.beyond.fr/history/kings.html"
NAPOLEON_CRAWL = [  # the survey's Fig. 2, plus two hubs that make the three sites co-cited
    (u("a"), [(NAPOLEON, "Napoleon"), (u("a") + "home", "Home")]),
    (u("b"), [(SERIES, "Napoleon Series"), (u("b") + "street", "Street")]),
    (u("c"), [(KINGS, "Kings of France")]),
    (u("d"), [("http://www.wijo.null/images.htm", "Napoleon"), (u("d") + "street", "Street")]),
    (u("h1"), [(NAPOLEON, "Emperor"), (SERIES, "Journal"), (KINGS, "Dynasties")]),
    (u("h2"), [(NAPOLEON, "Foundation"), (SERIES, "Journal"), (KINGS, "Dynasties")]),
]


def test_equivalent_links_napoleon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_link_index_from_segments(_records(NAPOLEON_CRAWL), tmp_path / "links")
    status, out, _ = run(capsys, "equivalent-links", "--links", str(tmp_path / "links"), "--json",
                         u("a"), "Napoleon", NAPOLEON)
    assert status == 0
    record = answers(out)[0]
    # Similar_to = {napoleon.org, napoleonseries.org, kings.html} (co-cited by h1 and h2);
    # SimilarAnchor_to ∩ Link_to = {a ("Napoleon"), b ("Napoleon Series": Jaccard 1/2)}
    assert [(x["page"], x["anchor"], x["target"], x["score"]) for x in record["links"]] == [
        (u("a"), "Napoleon", NAPOLEON, 1.0), (u("b"), "Napoleon Series", SERIES, 0.5)]
    assert record["reason"] is None and record["page_found"] and record["target_found"]
    status, out, _ = run(capsys, "equivalent-links", "--links", str(tmp_path / "links"),
                         "--anchor-threshold", "0.6", u("a"), "Napoleon", NAPOLEON)
    assert status == 0 and f"   1.    1.000  {u('a')}  —'Napoleon'→  {NAPOLEON}" in out and u("b") not in out
    status, out, _ = run(capsys, "equivalent-links", "--links", str(tmp_path / "links"), "--json",
                         u("a"), "Napoleon", "http://elsewhere.example/")
    assert status == 0 and answers(out)[0]["reason"] == "unknown_url"
    status, _, err = run(capsys, "equivalent-links", "--links", str(tmp_path / "links"), u("a"), "x", "http://%zz")
    assert status == 2 and "malformed URL: http://%zz (TARGET)" in err


# -- authorities --------------------------------------------------------------------------------

# Roots 10 and 11 both link to 20 and 21; 20 links to 21.
AUTHORITY_EDGES = "10 20\n10 21\n11 20\n11 21\n20 21\n"


@pytest.fixture(scope="module")
def authority_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("authorities")
    (folder / "edges.txt").write_text(AUTHORITY_EDGES)
    assert main(["linkgraph", "import", "--edges", str(folder / "edges.txt"), "--db", str(folder / "db")]) == 0
    (folder / "roots.txt").write_text("# roots\n10\n11\n99\n")
    return folder / "db", folder / "roots.txt"


def test_sfp_by_hand(authority_index: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db, roots = authority_index
    status, out, err = run(capsys, "authorities", "--links", str(db), "--roots", str(roots), "--algorithm", "sfp",
                           "--min-freq", "2", "--json")
    assert status == 0 and "1 root(s) not in the link index: 99" in err
    record = answers(out)[0]
    assert (record["roots"], record["unknown_roots"], record["reason"]) == (["10", "11"], ["99"], None)
    # 20 and 21 are in both generated graphs (the roots only in their own)
    assert record["authorities"] == [{"url": "20", "support": 2}, {"url": "21", "support": 2}]
    # at level 2, 20 is analysed in both graphs: the edge 20 → 21 is frequent
    assert [(c["urls"], c["edges"], c["support"], c["rank"]) for c in record["communities"]] == [
        (["20", "21"], [["20", "21"]], 2, 1)]
    status, out, _ = run(capsys, "authorities", "--links", str(db), "--roots", str(roots), "--algorithm", "sfp",
                         "--min-freq", "2", "--level", "1", "--json")
    assert answers(out)[0]["communities"] == []  # level 1: 20 is a leaf, never analysed
    status, out, _ = run(capsys, "authorities", "--links", str(db), "--roots", str(roots), "--algorithm", "sfp",
                         "--min-freq", "3")
    assert status == 0 and "no authoritative pages (nothing_frequent)" in out


def test_hits_by_hand(authority_index: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db, roots = authority_index
    status, out, _ = run(capsys, "authorities", "--links", str(db), "--roots", str(roots), "--algorithm", "hits",
                         "--json")
    assert status == 0
    record = answers(out)[0]
    # hubs 10, 11, 20 → authorities 20, 21: MᵀM = [[2, 2], [2, 3]], λ = (5 + √17) / 2,
    # eigenvector (2, λ − 2), unit length; 20 turns leave it converged to ~1e-13
    lam = (5 + math.sqrt(17)) / 2
    norm = math.hypot(2, lam - 2)
    assert [(a["url"], a["score"]) for a in record["authorities"]] == [
        ("21", pytest.approx((lam - 2) / norm, abs=1e-9)), ("20", pytest.approx(2 / norm, abs=1e-9))]
    assert (record["pages"], record["links"]) == (4, 5)
    assert [hub["url"] for hub in record["hubs"]] == ["10", "11", "20"]
    status, out, _ = run(capsys, "authorities", "--links", str(db), "--roots", str(roots), "--algorithm", "hits")
    assert status == 0 and out.splitlines()[1:5] == [
        "hits over 2 root pages", "  4 pages, 5 links after the filters", "  authorities",
        f"   1.    {(lam - 2) / norm:.3f}  21"]


def test_authorities_usage_errors(url_index: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roots = tmp_path / "roots.txt"
    roots.write_text("http://%zz\nhttp://n1.example/\n")
    status, out, err = run(capsys, "authorities", "--links", str(url_index), "--roots", str(roots),
                           "--algorithm", "hits", "--json")
    assert status == 2 and "relatedpages: error: malformed URL: http://%zz" in err
    assert answers(out)[0]["roots"] == ["http://n1.example/"]  # the others still count
    status, _, err = run(capsys, "authorities", "--links", str(url_index), "--roots", str(roots),
                         "--algorithm", "sfp", "--min-freq", "0")
    assert status == 2 and "min_freq must be >= 1" in err
