"""scripts/bench_baselines.py: on a tiny generated edge list it imports, loads, picks its
queries and root sets as documented, times every baseline and prints the table and the
JSON report (timings are never asserted)."""
from __future__ import annotations

import doctest
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "bench_baselines.py"
PAGE_METHODS = ["companion", "dh-cocitation", "extended-cocitation", "lli", "cosine-cocitation", "ppr",
                "green", "simrank"]
SET_METHODS = ["sfp", "hits"]
TIMING_FIELDS = {"median_ms", "p99_ms", "mean_ms", "max_ms", "cpu_median_ms"}


def write_edge_list(path: Path) -> list[tuple[str, str]]:
    """A random graph of 150 nodes without self-loops, plus node 1000 linked twice from
    node 0 only (one distinct parent: never a query) and a comment line."""
    rng = random.Random(7)
    edges: list[tuple[str, str]] = []
    for source in range(150):
        for _ in range(rng.randint(0, 7)):
            target = rng.randrange(150) if rng.random() < 0.5 else rng.randrange(20)  # a few popular pages
            if target != source:
                edges.append((str(source), str(target)))
    edges += [("0", "1000"), ("0", "1000")]
    path.write_text("# generated for the test\n" + "".join(f"{s}\t{t}\n" for s, t in edges))
    return edges


def parents_of(edges: list[tuple[str, str]]) -> dict[str, set[str]]:
    parents: dict[str, set[str]] = {}
    for source, target in edges:
        parents.setdefault(target, set()).add(source)
    return parents


def run(*args: str | Path | int, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                            timeout=guard(120), cwd=REPO)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_baselines", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str]]]:
    folder = tmp_path_factory.mktemp("bench-baselines")
    edges_path = folder / "edges.tsv"
    return edges_path, write_edge_list(edges_path)


@pytest.fixture(scope="module")
def report(tiny: tuple[Path, list[tuple[str, str]]], tmp_path_factory: pytest.TempPathFactory) -> dict:
    edges_path, _ = tiny
    db = tmp_path_factory.mktemp("db") / "links"
    result = run("--edges", edges_path, "--db", db, "--queries", 12, "--runs", 2, "--root-sets", 3,
                 "--roots", 4, "--json")
    report = json.loads(result.stdout)
    report["_db"] = db
    return report


def test_table_has_every_method_and_the_targets(tiny: tuple[Path, list[tuple[str, str]]]) -> None:
    edges_path, edges = tiny
    out = run("--edges", edges_path, "--queries", 10, "--runs", 1, "--root-sets", 2, "--roots", 4).stdout
    lines = out.splitlines()
    nodes = len({name for edge in edges for name in edge})
    assert f"links, {nodes:,} nodes (id keys, 0 lines skipped)" in out  # 1 comment line: not skipped
    assert any(line.startswith("load_link_graph: ") and "LinkGraph.nbytes" in line and "peak RSS" in line
               for line in lines)
    assert "load average (1, 5, 15 min)" in out
    headers = [line.split() for line in lines if line.startswith("algorithm")]
    assert headers == [["algorithm", "median", "p99", "mean", "max", "cpu", "med", "answered", "same"]] * 2
    rows = {line.split()[0]: line.split()[1:] for line in lines
            if line.split()[:1] and line.split()[0] in PAGE_METHODS + SET_METHODS}
    assert list(rows) == PAGE_METHODS + SET_METHODS  # page methods first, then the set methods
    for name, cells in rows.items():
        assert len(cells) == 7
        [float(cell) for cell in cells[:5]]
        answered, asked = cells[5].split("/")
        assert int(answered) <= int(asked) == (10 if name in PAGE_METHODS else 2)
        assert cells[6] == "yes"  # deterministic methods: the same answers in every run
    targets = [line for line in lines if line.startswith(("companion: median", "dh-cocitation: median"))]
    assert [line.split(":")[0] for line in targets] == ["companion", "dh-cocitation"]
    assert "<= 100 ms: " in targets[0] and "mean 109 ms" in targets[0]
    assert "<= 50 ms: " in targets[1] and "mean 195 ms" in targets[1]
    assert all(line.split(": ")[2].startswith(("met", "NOT met")) for line in targets)


def test_json_report_shape(report: dict) -> None:
    assert report["import"]["edges"] == report["load"]["links"]
    assert report["import"]["nodes"] == report["load"]["nodes"]
    assert report["reused"] is None and report["db"] == str(report["_db"])
    assert set(report["load"]) >= {"seconds", "arrays_mb", "rss_before_mb", "rss_after_mb", "peak_rss_mb"}
    assert list(report["algorithms"]) == PAGE_METHODS and list(report["authorities"]) == SET_METHODS
    for name, row in {**report["algorithms"], **report["authorities"]}.items():
        assert TIMING_FIELDS <= set(row)
        assert len(row["runs"]) == 2 and all(set(one) == TIMING_FIELDS for one in row["runs"])
        for one in row["runs"]:  # order statistics of one run's times
            assert one["median_ms"] <= one["p99_ms"] <= one["max_ms"]
        assert 0 <= row["answered"] <= row["asked"] == (12 if name in PAGE_METHODS else 3)
        assert row["same_answers_every_run"] is True
    targets = {target["algorithm"]: target for target in report["targets"]}
    assert {name: target["target_ms"] for name, target in targets.items()} == {
        "companion": 100.0, "dh-cocitation": 50.0}
    for name, target in targets.items():
        assert target["met"] == (target["median_ms"] <= target["target_ms"])
        assert report["algorithms"][name]["target_met"] == target["met"]
    assert report["algorithms"]["lli"]["target_met"] is None  # no target for the others


def test_queries_are_distinct_nodes_with_two_distinct_parents(
    report: dict, tiny: tuple[Path, list[tuple[str, str]]]
) -> None:
    _, edges = tiny
    parents = parents_of(edges)
    eligible = {node for node, sources in parents.items() if len(sources) >= 2}
    assert "1000" not in eligible  # two links, one parent
    asked = report["queries"]["nodes"]
    assert report["queries"]["eligible"] == len(eligible)
    assert len(asked) == 12 == len(set(asked))
    assert set(asked) <= eligible


def test_root_sets_are_parents_of_one_page(report: dict, tiny: tuple[Path, list[tuple[str, str]]]) -> None:
    _, edges = tiny
    parents = parents_of(edges)
    assert report["root_sets"]["size"] == 4
    assert report["root_sets"]["eligible"] == sum(len(sources) >= 4 for sources in parents.values())
    sets = report["root_sets"]["sets"]
    assert len(sets) == 3
    for roots in sets:
        assert len(set(roots)) == 4 and roots == sorted(roots, key=int)
        assert any(set(roots) <= sources for sources in parents.values())


def test_reuses_the_database_and_the_seed_fixes_the_queries(report: dict) -> None:
    again = json.loads(run("--db", report["_db"], "--queries", 12, "--runs", 1, "--root-sets", 3,
                           "--roots", 4, "--json", "--edges", "/nonexistent").stdout)
    assert again["import"] is None
    assert again["reused"]["records"] == report["load"]["nodes"]
    assert again["queries"]["nodes"] == report["queries"]["nodes"]
    assert again["root_sets"]["sets"] == report["root_sets"]["sets"]
    other = json.loads(run("--db", report["_db"], "--queries", 12, "--runs", 1, "--root-sets", 0,
                           "--seed", 2, "--json").stdout)
    assert other["queries"]["nodes"] != report["queries"]["nodes"]
    assert other["authorities"] == {} and other["root_sets"]["sets"] == []
    text = run("--db", report["_db"], "--queries", 3, "--runs", 1, "--root-sets", 0).stdout
    assert "import: not measured; reused " in text and "(not run: --root-sets 0)" in text
    unmet = run("--db", report["_db"], "--queries", 3, "--runs", 1, "--root-sets", 2, "--roots", 10_000)
    assert "(not run: no page has that many parents)" in unmet.stdout


def test_refusals(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-db"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    refused = run("--db", folder, "--edges", tmp_path / "none.tsv", check=False)
    assert refused.returncode != 0 and "neither empty nor a link index" in refused.stderr
    assert (folder / "notes.txt").read_text() == "mine"
    chain = tmp_path / "chain.tsv"
    chain.write_text("1\t2\n2\t3\n")  # every in-degree is 1
    empty = run("--edges", chain, check=False)
    assert empty.returncode == 1 and "no node has in-degree >= 2" in empty.stderr
    assert run("--edges", chain, "--runs", 0, check=False).returncode == 2


def test_nearest_rank_and_summary() -> None:
    module = load_script()
    assert doctest.testmod(module).failed == 0
    timings = module.summarise([3_000_000, 1_000_000, 2_000_000, 10_000_000], [1_000_000, 0, 2_000_000, 5_000_000])
    assert (timings.median_ms, timings.p99_ms, timings.mean_ms, timings.max_ms, timings.cpu_median_ms) == (
        2.5, 10.0, 4.0, 10.0, 1.5)
    runs = [module.Timings(1.0, 5.0, 2.0, 6.0, 1.0), module.Timings(3.0, 4.0, 9.0, 7.0, 2.0),
            module.Timings(2.0, 8.0, 3.0, 9.0, 0.5)]
    assert module.median_of_runs(runs) == module.Timings(2.0, 5.0, 3.0, 7.0, 1.0)
    with pytest.raises(ValueError):
        module.nearest_rank([], 0.5)


# -- the crawl-built section --------------------------------------------------------------

LINK_METHODS = ["equivalent-links", "moved"]
CRAWL_FILES = {"awesomehub/awesomehub.warc.gz": (60, 1), "web/aeb-pages.warc.gz": (20, 2),
               "web/trafilatura-pages.warc.gz": (20, 3)}


@pytest.fixture(scope="module")
def tiny_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DATA_DIR with the real corpus's layout: three small generated crawls."""
    from relatedpages.corpus.generate import generate_crawl

    data = tmp_path_factory.mktemp("data")
    for path, (pages, seed) in CRAWL_FILES.items():
        (data / path).parent.mkdir(exist_ok=True)
        generate_crawl(data / path, pages=pages, seed=seed)
    return data


@pytest.fixture(scope="module")
def crawl_report(tiny_data_dir: Path) -> dict:
    result = run("--crawl", tiny_data_dir, "--queries", 8, "--runs", 2, "--root-sets", 2, "--roots", 3,
                 "--anchored-links", 6, "--moves", 3, "--json")
    return json.loads(result.stdout)


def test_crawl_alone_times_every_method_on_the_crawl_built_index(crawl_report: dict, tiny_data_dir: Path) -> None:
    assert "load" not in crawl_report and "algorithms" not in crawl_report  # no edge-list section
    crawl = crawl_report["crawl"]
    assert crawl["files"] == [str(tiny_data_dir / path) for path in CRAWL_FILES]
    built, loaded = crawl["build"], crawl["load"]
    assert built["records"] == sum(pages for pages, _ in CRAWL_FILES.values())  # distinct URLs per seed
    assert built["nodes"] == loaded["nodes"] and built["events"]["links_indexed"] == loaded["links"]
    assert loaded["keys"] == "url" and isinstance(loaded["peak_rss_reset"], bool)
    assert list(crawl["algorithms"]) == PAGE_METHODS and list(crawl["authorities"]) == SET_METHODS
    rows = {**crawl["algorithms"], **crawl["authorities"],
            "equivalent-links": crawl["equivalent_links"], "moved": crawl["moved"]}
    asked = {**dict.fromkeys(PAGE_METHODS, 8), **dict.fromkeys(SET_METHODS, 2), "equivalent-links": 6, "moved": 3}
    for name, row in rows.items():
        assert TIMING_FIELDS <= set(row) and len(row["runs"]) == 2
        assert 0 <= row["answered"] <= row["asked"] == asked[name]
        assert row["same_answers_every_run"] is True
    assert all(name.startswith(("http://", "https://")) for name in crawl["queries"]["nodes"])
    links = crawl["anchored_links"]["links"]
    assert len(links) == 6 == len({tuple(link) for link in links})
    assert all(anchor for _, anchor, _ in links)  # every query link has an anchor
    moves = crawl["moves"]
    assert len(moves["urls"]) == 3 and moves["eligible"] >= 3 and moves["updated"] == 0.5
    assert all(new == url.rstrip("/") + "/moved" for url, new in moves["urls"])
    assert 0 <= crawl["moved"]["new_location_first"] <= crawl["moved"]["answered"]


def test_crawl_and_edges_print_both_tables(tiny_data_dir: Path, tiny: tuple[Path, list[tuple[str, str]]]) -> None:
    edges_path, _ = tiny
    out = run("--crawl", tiny_data_dir, "--edges", edges_path, "--queries", 5, "--runs", 1, "--root-sets", 1,
              "--roots", 3, "--anchored-links", 4, "--moves", 0).stdout
    lines = out.splitlines()
    assert f"bench_baselines: {edges_path}" in lines
    assert lines.index(f"bench_baselines: {edges_path}") < next(
        i for i, line in enumerate(lines) if line.startswith("bench_baselines: crawl-built link index of"))
    assert sum(line.startswith("load_link_graph: ") for line in lines) == 2
    rows = [line.split()[0] for line in lines if line.split()[:1]
            and line.split()[0] in PAGE_METHODS + SET_METHODS + LINK_METHODS]
    assert rows == PAGE_METHODS + SET_METHODS + PAGE_METHODS + SET_METHODS + LINK_METHODS
    assert any(line.startswith("moved") and "(not run: --moves 0)" in line for line in lines)
    assert any(line.startswith("equivalent-links") and line.split()[-1] == "yes" for line in lines)


def test_crawl_refusals(tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    refused = run("--crawl", tmp_path, check=False)
    assert refused.returncode == 2 and "no awesomehub/awesomehub.warc.gz" in refused.stderr
    assert run("--crawl", tmp_path, "--moves", -1, check=False).returncode == 2
