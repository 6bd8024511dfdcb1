"""``relatedpages study`` end to end (issue 12, items 3 and 4): a study made from two real
databases of a generated web, graded in Debian's chromium with the keyboard by one grader
(who closes the browser halfway and resumes) and through the API by a second, then reported:
the R-score table, the per-topic table and the kappa are checked against the exported CSV."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relatedpages.study.report import cohen_kappa, rscore
from tests.prerequisites import guard
from tests.web import chromium, free_port, wait_until

REPO = Path(__file__).resolve().parent.parent


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "relatedpages.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=guard(600))
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from relatedpages.corpus.generate import read_topics, sample_queries

    folder = tmp_path_factory.mktemp("study")
    crawl = folder / "web.warc.gz"
    _cli("generate", "--pages", "300", "--seed", "3", "-o", str(crawl))
    _cli("build", str(crawl), "--db", str(folder / "block"), "--runner", "inline")
    _cli("build", str(crawl), "--db", str(folder / "cocitation"), "--algorithm", "cocitation", "--runner", "inline")
    topics = read_topics(Path(f"{crawl}.topics.tsv"))
    queries = [url for url in sample_queries(crawl, 12) if url.startswith("http://www.") and "com.cn" not in url][:4]
    (folder / "queries.tsv").write_text("".join(f"{url}\t{_topic(url, topics)}\n" for url in queries), encoding="utf-8")
    created = _cli("study", "create", "--name", "s", "--studies", str(folder), "--systems",
                   f"block={folder / 'block'},cocitation={folder / 'cocitation'}",
                   "--queries", str(folder / "queries.tsv"), "--seed", "5")
    pages = int(re.search(r": (\d+) query pages", created.stdout).group(1))  # type: ignore[union-attr]
    assert pages >= 3, created.stdout
    return {"folder": folder, "topics": topics, "pages": pages}


def _topic(url: str, topics: dict[str, str]) -> str:
    host = url.split("//", 1)[1].split("/", 1)[0].removeprefix("www.")
    return topics.get(host, "")


@pytest.fixture(scope="module")
def server(study: dict[str, Any]) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "relatedpages.cli", "study", "serve", "--name", "s",
                                "--studies", str(study["folder"]), "--port", str(port)],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    site = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + guard(30)
    while True:
        try:
            urllib.request.urlopen(f"{site}/api/progress?grader=probe", timeout=guard(5))
            break
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
    try:
        yield site
    finally:
        process.terminate()
        process.wait(timeout=guard(30))


def _grade_for(url: str, query_topic: str, topics: dict[str, str], related: int) -> int:
    return related if _topic(url, topics) == query_topic else 0


def _grade_pages_in_browser(browser: Any, site: str, study: dict[str, Any], name: str, pages: int) -> list[int]:
    """Grade ``pages`` query pages with the keyboard; the positions graded."""
    from selenium.webdriver.common.keys import Keys

    queries = dict(line.split("\t") for line in (study["folder"] / "queries.tsv").read_text().splitlines())
    browser.get(site + "/")
    box = browser.find_element("id", "grader")
    box.clear()
    box.send_keys(name, Keys.ENTER)
    graded = []
    for _ in range(pages):
        wait_until(lambda: browser.find_elements("css selector", "#results li"))
        query = browser.find_element("id", "query").text
        position = int(re.search(r"page (\d+) of", browser.find_element("id", "progress").text).group(1)) - 1
        body = browser.find_element("tag name", "body")
        items = browser.find_elements("css selector", "#results li")
        assert "block" not in browser.find_element("id", "task").text  # blind
        for item in items:
            url = item.find_element("css selector", ".url").text
            body.send_keys(str(_grade_for(url, queries[query], study["topics"], 2)))
        wait_until(lambda: all(item.get_attribute("data-grade") is not None
                          for item in browser.find_elements("css selector", "#results li")))
        graded.append(position)
        folder = os.environ.get("RELATEDPAGES_SCREENSHOTS")
        if folder and position == 0:
            browser.execute_script("window.scrollTo(0, 0)")
            browser.save_screenshot(str(Path(folder) / "study-grading.png"))
        body.send_keys("n")  # the next page (the last one stays)
        if position + 1 < study["pages"]:
            wait_until(lambda: f"page {position + 2} of" in browser.find_element("id", "progress").text)
    return graded


def test_grading_resuming_and_the_report(study: dict[str, Any], server: str, tmp_path: Path) -> None:
    pages = study["pages"]
    browser = chromium(1100, 900)
    try:
        first = _grade_pages_in_browser(browser, server, study, "ann", 2)
    finally:
        browser.quit()  # the browser closed halfway: nothing is lost
    browser = chromium(1100, 900)
    try:
        browser.get(server + "/")
        browser.find_element("id", "grader").send_keys("ann\n")
        wait_until(lambda: "page 3 of" in browser.find_element("id", "progress").text)  # resumes at the first unfinished
        rest = _grade_pages_in_browser(browser, server, study, "ann", pages - 2)
        wait_until(lambda: f"{pages} of {pages} finished" in browser.find_element("id", "progress").text)
    finally:
        browser.quit()
    assert sorted(first + rest) == list(range(pages))

    # a second grader, through the API: 1 where ann gave 2, except on one page
    queries = dict(line.split("\t") for line in (study["folder"] / "queries.tsv").read_text().splitlines())
    for position in range(pages):
        with urllib.request.urlopen(f"{server}/api/query/{position}?grader=bob", timeout=guard(10)) as response:
            page = json.loads(response.read())
        for result in page["results"]:
            grade = _grade_for(result["url"], queries[page["url"]], study["topics"], 1 if position else 2)
            request = urllib.request.Request(f"{server}/api/grade", method="POST",
                                             data=json.dumps({"grader": "bob", "result": result["id"],
                                                              "grade": grade}).encode(),
                                             headers={"Content-Type": "application/json"})
            assert json.loads(urllib.request.urlopen(request, timeout=guard(10)).read())["saved"]

    exported = tmp_path / "grades.csv"
    report = _cli("study", "report", "--name", "s", "--studies", str(study["folder"]), "--csv", str(exported),
                  "--plot", str(tmp_path / "s")).stdout
    assert (tmp_path / "s-rscore.png").stat().st_size > 0 and (tmp_path / "s-topics.png").stat().st_size > 0
    rows = list(csv.DictReader(exported.open(encoding="utf-8")))
    assert {row["grader"] for row in rows} == {"ann", "bob"}
    # the R-score table, recomputed from the CSV
    grades: dict[tuple[str, str], list[int]] = defaultdict(list)
    ranks: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        key = (row["query_url"], row["result_url"])
        grades[key].append(int(row["grade"]))
        ranks[key] = {system: int(row[f"rank_{system}"]) for system in ("block", "cocitation") if row[f"rank_{system}"]}
    for system in ("block", "cocitation"):
        per_page: dict[str, dict[int, float]] = defaultdict(dict)
        for key, values in grades.items():
            if system in ranks[key]:
                per_page[key[0]][ranks[key][system]] = sum(values) / len(values)
        for r in (1, 5):
            expected = sum(rscore(per_page.get(q, {}), r) for q in {k[0] for k in grades}) / pages
            line = next(line for line in report.splitlines() if re.match(rf"\s+{r}\s", line))
            column = 0 if system == "block" else 1
            assert re.findall(r"(\d\.\d{3}) \[", line)[column] == f"{expected:.3f}", (system, r, line)
    pairs = [(v[0], v[1]) for v in grades.values()]  # ann first (rows are sorted by grader)
    kappa = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs])
    assert f"Cohen's kappa ann / bob: {kappa:.3f} on {len(pairs)} results graded by both" in report
    assert "Fleiss' kappa, all 2 graders" in report and "per topic" in report


def test_bad_grade_bodies_get_their_status(server: str) -> None:
    def post(data: bytes) -> tuple[int, Any]:
        request = urllib.request.Request(f"{server}/api/grade", method="POST", data=data,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=guard(10)) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    for data, status, message in ((b"[1, 2]", 400, "expected {"), (b"{not json", 400, "expected {"),
                                  (b'{"result": 1, "grade": 2}', 400, "grader is required"),
                                  (b"[" + b"1," * 1_000_000 + b"1]", 413, "")):  # 2 MB: seen while sending
        answer = post(data)
        assert answer[0] == status and answer[1]["status"] == status and message in answer[1]["error"], answer


@pytest.mark.slow
def test_a_study_of_the_shared_data(tmp_path: Path, shared_data: Any) -> None:
    """create, grade and report on databases built from the real web pages of
    ``../shared/data`` (block co-citation and traditional co-citation at their defaults)."""
    web = shared_data("web/aeb-pages.warc.gz")
    _cli("build", str(web), "--db", str(tmp_path / "block"))
    _cli("build", str(web), "--db", str(tmp_path / "cocitation"), "--algorithm", "cocitation")
    (tmp_path / "queries.txt").write_text("https://variety.com/\nhttps://deadline.com/\n"
                                          "https://nowhere.example/\n", encoding="utf-8")
    created = _cli("study", "create", "--name", "real", "--studies", str(tmp_path), "--systems",
                   f"block={tmp_path / 'block'},cocitation={tmp_path / 'cocitation'}",
                   "--queries", str(tmp_path / "queries.txt"), "--seed", "1").stdout
    assert "2 query pages" in created and "skipped 1 query page(s) no system knows" in created
    from contextlib import closing

    from relatedpages.study.store import connect, grader_id, query_page, set_grade

    with closing(connect(tmp_path / "real.sqlite")) as connection:
        who = grader_id(connection, "carol")
        for position in range(2):
            page = query_page(connection, position, who)
            assert page is not None and page["results"]
            for result in page["results"]:  # the same site's pages are related, others not
                same = result["url"].split("/")[2] == page["url"].split("/")[2]
                set_grade(connection, who, result["id"], 2 if same else 1 if ".com" in result["url"] else 0)
    report = _cli("study", "report", "--name", "real", "--studies", str(tmp_path),
                  "--plot", str(tmp_path / "real")).stdout
    assert "2 query pages, 2 fully graded; graders: carol" in report
    assert re.search(r"^\s+1\s+\d\.\d{3} \[", report, re.M)
