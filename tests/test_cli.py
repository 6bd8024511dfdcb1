"""The relatedpages command: segment with a summary, usage errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def relatedpages(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "relatedpages.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=guard(300))


def test_segment_prints_blocks_and_a_summary_with_counters(tmp_path):
    out = tmp_path / "segments"
    done = relatedpages("segment", "examples/tiny-web/urls.tsv", "-r", "inline", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "pages written        4" in done.stdout
    assert "counter step 1 segment.pages_segmented = 4" in done.stdout
    assert "新浪新闻, 网易新闻, 腾讯新闻, 凤凰网" in done.stdout  # the GBK page, decoded
    assert "segment: step 1/1, 4 pages (" in done.stderr  # the stage's progress line (jobs.progress)
    assert "Unexpected option" not in done.stderr  # mrjob's noise about the job's own sh_bin
    assert done.stderr.count("segment: ") == 1  # once: no line at the interval in 1 s
    records = [json.loads(line.split("\t", 1)[1])
               for part in sorted(out.glob("part-*")) for line in part.read_text().splitlines()]
    assert len(records) == 4 and all({"url", "site", "blocks", "headings", "loose"} == set(r) for r in records)


def test_usage_errors_exit_2_with_one_line():
    missing = relatedpages("segment", "no/such/file.warc.gz")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "relatedpages: error: no such input: no/such/file.warc.gz"
    bad = relatedpages("segment", "--t1", "2", "examples/tiny-web/urls.tsv")
    assert bad.returncode == 2 and "T1 is a ratio" in bad.stderr
    assert relatedpages().returncode == 2


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A generated crawl and its block co-citation database (inline runner)."""
    folder = tmp_path_factory.mktemp("built")
    crawl = folder / "crawl.warc.gz"
    generated = relatedpages("generate", "--pages", "1200", "--seed", "3", "-o", str(crawl))
    assert generated.returncode == 0, generated.stderr
    assert "wrote 1200 pages" in generated.stdout
    done = relatedpages("build", str(crawl), "--db", str(folder / "db"), "--runner", "inline",
                        "--work", str(folder / "work"))
    assert done.returncode == 0, done.stderr
    return folder, done


def test_build_prints_stages_and_a_summary(built):
    folder, done = built
    assert "[1/3] segmenting" in done.stderr and "[3/3] building the database" in done.stderr
    summary = dict(line.strip().split(None, 1) for line in done.stdout.splitlines()[2:5])
    assert int(summary["pages"]) == 1200
    assert "pages with related" in done.stdout and "time segment" in done.stdout
    assert (folder / "db" / "manifest.json").is_file()
    assert (folder / "work" / "segments").is_dir()  # --work keeps the intermediate outputs


def test_query_json_shapes_unknown_and_malformed(built):
    from relatedpages.corpus.generate import sample_queries

    folder, _ = built
    url = sample_queries(folder / "crawl.warc.gz", 1)[0]
    done = relatedpages("query", "--db", str(folder / "db"), "--json", url.upper().replace("HTTP://", "http://"),
                        "http://not-crawled.example/")
    assert done.returncode == 0, done.stderr
    first, unknown = (json.loads(line) for line in done.stdout.splitlines())
    assert first["url"] == url and first["found"] is True and first["related"]
    assert first["matched"] == url
    top = first["related"][0]
    assert set(top) == {"url", "score", "evidence"} and top["score"] >= 2.0  # citing sites
    # each citing site with its strongest citing page and the anchor text there
    assert all(len(item) == 4 and item[2].startswith("http") for item in top["evidence"])
    assert unknown == {"query": "http://not-crawled.example/", "url": "http://not-crawled.example/",
                       "found": False, "matched": None, "related": []}
    bad = relatedpages("query", "--db", str(folder / "db"), "--json", "http://%zz")
    assert bad.returncode == 2 and bad.stderr.strip() == "relatedpages: error: malformed URL: http://%zz"


def test_query_reads_urls_from_a_file_and_prints_a_table(built, tmp_path):
    from relatedpages.corpus.generate import sample_queries

    folder, _ = built
    urls = sample_queries(folder / "crawl.warc.gz", 2)
    listing = tmp_path / "urls.txt"
    listing.write_text("# queries\n" + "\n".join(urls) + "\n")
    done = relatedpages("query", "--db", str(folder / "db"), "--input", str(listing))
    assert done.returncode == 0, done.stderr
    assert all(url in done.stdout for url in urls)
    assert " 1. " in done.stdout


def test_a_corrupt_database_is_refused(built, tmp_path):
    import shutil

    folder, _ = built
    copy = tmp_path / "db"
    shutil.copytree(folder / "db", copy)
    (copy / "part-00007").unlink()
    done = relatedpages("query", "--db", str(copy), "http://a.example/")
    assert done.returncode == 1
    assert "partial database: part-00007 missing" in done.stderr


def test_build_with_traditional_cocitation(built, tmp_path):
    folder, _ = built
    done = relatedpages("build", str(folder / "crawl.warc.gz"), "--db", str(tmp_path / "db"),
                        "--algorithm", "cocitation", "--runner", "inline")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "db" / "manifest.json").read_text())
    assert manifest["algorithm"] == "cocitation" and manifest["records"] > 0


def test_query_into_a_closed_pipe_ends_quietly(built):
    folder, _ = built
    from relatedpages.corpus.generate import sample_queries

    urls = sample_queries(folder / "crawl.warc.gz", 4) * 200
    done = subprocess.run(
        f"{sys.executable} -m relatedpages.cli query --db {folder / 'db'} {' '.join(urls)} | head -1",
        shell=True, capture_output=True, text=True, cwd=REPO, timeout=guard(120))
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr


def test_build_fills_short_block_lists_from_the_fallback(built):
    """The default build completes block lists shorter than M with co-citation results,
    after the block results, each marked (relatedpages.scoring.fallback)."""
    from relatedpages.store.db import RelatedPagesDB

    folder, done = built
    manifest = json.loads((folder / "db" / "manifest.json").read_text())
    assert manifest["parameters"]["fallback"]["fill_to"] == 15
    filled = int(next(line for line in done.stdout.splitlines()
                      if "filled by fallback" in line).split()[3])
    mixed, example, from_site = 0, None, None
    with RelatedPagesDB(folder / "db") as database:
        for url, related in database.records():
            kinds = [item.fallback for item in related]
            assert len(related) <= 15 and url not in {item.url for item in related}
            assert len({item.url for item in related}) == len(related)
            if kinds[0] == "site":  # the site fallback: one page of the same site answered
                assert len({item.via for item in related if item.fallback == "site"}) == 1
                from_site = url
            if kinds[0] != "cocitation" and kinds[-1] == "cocitation":
                mixed += 1
                cut = kinds.index("cocitation")
                assert set(kinds[:cut]) == {kinds[0]} and set(kinds[cut:]) == {"cocitation"}
                example = example if kinds[0] == "site" and example else url
    assert mixed == filled > 0 and example is not None and from_site is not None
    shown = relatedpages("query", "--db", str(folder / "db"), example)
    assert "(filled by cocitation)" in shown.stdout
    # a filled result shows its strongest citing page and anchor, as a block result does
    rows = shown.stdout.splitlines()
    filled_at = next(at for at, row in enumerate(rows) if "(filled by cocitation)" in row)
    assert rows[filled_at + 1].lstrip().startswith("via http")
    shown = relatedpages("query", "--db", str(folder / "db"), from_site)
    assert "answered from its site's page http" in shown.stdout


def crawled_links(segments: Path) -> dict[str, dict[str, set[str]]]:
    """The crawl's links read afresh from its segment records: page → {linked URL (as the
    link filters name it, with and without a dynamic link's replacement) → anchor texts}."""
    from collections import defaultdict

    from filters.anchors import AnchorWords
    from filters.links import LinkFilterParams, filter_blocks

    words = AnchorWords()
    every = [LinkFilterParams(large_block=0, file=False, dynamic=dynamic, singleton=False,
                              empty_anchor=False, common_site=False) for dynamic in (True, False)]
    pages: dict[str, dict[str, set[str]]] = {}
    for part in sorted(segments.glob("part-*")):
        for line in part.read_text(encoding="utf-8").splitlines():
            record = json.loads(line.split("\t", 1)[1])
            links: defaultdict[str, set[str]] = defaultdict(set)
            for params in every:
                blocks, _ = filter_blocks(record["site"], record["blocks"], words, params)
                for link in (link for block in blocks for link in block):
                    links[link.url].add(link.anchor)
            pages[record["url"]] = links
    return pages


def test_every_result_names_a_citing_page_that_links_both_with_the_anchor_on_it(built):
    """Evidence for every result, fallback results included (issue 43): each evidence item
    names a page of the crawl that links the two pages (for the site fallback: the page
    whose list answered, and the result), with the result's anchor text on it."""
    from relatedpages.store.db import RelatedPagesDB

    folder, _ = built
    links = crawled_links(folder / "work" / "segments")
    checked: dict[str | None, int] = {}
    with RelatedPagesDB(folder / "db") as database:
        for url, related in database.records():
            for item in related:
                assert item.evidence, (url, item)
                linked = item.via if item.fallback == "site" else url
                for site, _, citing, anchor in item.evidence:  # four fields: page and anchor
                    on_page = links[citing]
                    assert linked in on_page and anchor in on_page[item.url], (url, item, citing)
                checked[item.fallback] = checked.get(item.fallback, 0) + 1
    assert set(checked) == {None, "cocitation", "site"}, checked


def test_build_with_a_hot_key_plan_writes_the_same_database(built, tmp_path):
    """--hot-keys R: a count job plans related 1's keys, the chain runs with R reducers
    under the plan, and the database is the same, record for record."""
    from relatedpages.store.db import RelatedPagesDB

    folder, _ = built
    done = relatedpages("build", str(folder / "crawl.warc.gz"), "--db", str(tmp_path / "db"),
                        "--runner", "inline", "--hot-keys", "16", "--work", str(tmp_path / "work"))
    assert done.returncode == 0, done.stderr
    assert "counting related 1's keys on a sample: a hot-key plan for 16 reducers" in done.stderr
    line = next(line for line in done.stdout.splitlines() if "hot keys" in line)
    routed = int(line.split()[2])
    assert routed > 0 and "for 16 reducers, from" in line and "time hot-key plan" in done.stdout
    plan = (tmp_path / "work" / "hot-keys.tsv").read_text().splitlines()
    assert len(plan) == routed + 1  # the header, then a page a line
    manifest = json.loads((tmp_path / "db" / "manifest.json").read_text())
    assert manifest["parameters"]["hot_keys"]["reducers"] == 16
    assert manifest["parameters"]["hot_keys"]["pages_routed"] == routed
    with RelatedPagesDB(folder / "db") as plain, RelatedPagesDB(tmp_path / "db") as planned:
        assert list(planned.records()) == list(plain.records())
    for bad in (["--hot-keys", "-1"], ["--hot-keys", "4", "--algorithm", "cocitation"],
                ["--hot-keys", "4", "--job-arg=--hot-keys=plan.tsv"]):
        refused = relatedpages("build", str(folder / "crawl.warc.gz"), "--db",
                               str(tmp_path / "db2"), *bad)
        assert refused.returncode == 2 and "--hot-keys" in refused.stderr, bad
        assert "Traceback" not in refused.stderr
