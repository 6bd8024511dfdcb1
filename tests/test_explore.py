"""The explorer page of ``relatedpages serve`` (issue 12, items 2 and 4) in a real browser:
Debian's chromium, headless, driven by selenium.  The database is built from a WARC whose
hub pages carry hostile anchors (markup, script) and a Chinese one; a second, hand-made
database holds a ``javascript:`` URL.  Set RELATEDPAGES_SCREENSHOTS=DIR to keep the
screenshots (the README's come from here)."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relatedpages.store.dbbuild import build_database
from tests.prerequisites import guard
from tests.web import chromium, free_port, wait_until

REPO = Path(__file__).resolve().parent.parent
HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
CHINESE = "新浪新闻"
TARGETS = ["https://alpha.example/", "https://beta.example/", "https://gamma.example/"]
EVIL = "javascript:alert(3)"


def _warc(path: Path) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    anchors = [HOSTILE, SCRIPT, CHINESE]
    with path.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for number in range(4):
            items = "".join(
                f'<li><a href="{target}">{anchors[(i + number) % 3].replace("<", "&lt;").replace(">", "&gt;")}</a></li>'
                for i, target in enumerate(TARGETS))
            body = (f"<html><head><meta charset='utf-8'><title>hub {number}</title></head><body>"
                    f"<h2>Links</h2><ul>{items}</ul></body></html>").encode("utf-8")
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                       protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(
                f"https://hub{number}.example/links", "response", payload=io.BytesIO(body),
                http_headers=headers))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("explore")
    _warc(folder / "hostile.warc.gz")
    built = subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", str(folder / "hostile.warc.gz"),
                            "--db", str(folder / "block"), "--runner", "inline"],
                           cwd=REPO, capture_output=True, text=True, timeout=guard(600))
    assert built.returncode == 0, built.stderr
    build_database([(TARGETS[0], [[EVIL, 9.0, [["evil.example", 1.0, EVIL, HOSTILE]]],
                                  [TARGETS[1], 1.0, [["ok.example", 1.0]]]])],
                   folder / "crafted", algorithm="block", parameters={}, source=["test"])
    port = free_port()
    log = (folder / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "relatedpages.cli", "serve", "--db", f"block={folder / 'block'}",
                               "--db", f"crafted={folder / 'crafted'}", "--port", str(port), "--workers", "1"],
                              cwd=REPO, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + guard(30)
    while True:  # the worker is ready and its socket accepts
        assert server.poll() is None and time.monotonic() < deadline, (folder / "server.log").read_text()
        if " ready: " in (folder / "server.log").read_text():
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=guard(10)).close()
                break
            except OSError:
                pass
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=guard(30))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    session = chromium()
    try:
        yield session
    finally:
        session.quit()


def _columns(browser: Any) -> dict[str, Any]:
    return {column.get_attribute("data-algorithm"): column
            for column in browser.find_elements("css selector", "section.column")}


def _api(site: str, url: str, algorithm: str) -> dict[str, Any]:
    query = urllib.parse.urlencode({"url": url, "algorithm": algorithm})
    with urllib.request.urlopen(f"{site}/api/related?{query}", timeout=guard(10)) as response:
        return dict(json.loads(response.read()))


def _screenshot(browser: Any, name: str) -> None:
    folder = os.environ.get("RELATEDPAGES_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / name))


def _no_alert(browser: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text


def test_a_lookup_shows_both_databases_side_by_side(browser: Any, site: str) -> None:
    browser.get(f"{site}/?url={urllib.parse.quote(TARGETS[0])}")
    columns = wait_until(lambda: len(_columns(browser)) == 2 and _columns(browser))
    for algorithm, column in columns.items():
        shown = [link.get_attribute("href") or link.text
                 for link in column.find_elements("css selector", "ol.results > li > a, ol.results > li > span.unsafe")]
        assert shown == [item["url"] for item in _api(site, TARGETS[0], algorithm)["related"]]
    headers = urllib.request.urlopen(site + "/", timeout=guard(10)).headers
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "unsafe-inline" not in headers["Content-Security-Policy"]


def test_hostile_anchors_are_text_and_javascript_urls_are_not_links(browser: Any, site: str) -> None:
    browser.get(f"{site}/?url={urllib.parse.quote(TARGETS[0])}")
    columns = wait_until(lambda: len(_columns(browser)) == 2 and _columns(browser))
    for column in columns.values():
        for summary in column.find_elements("css selector", "details > summary"):
            summary.click()
    text = browser.find_element("id", "columns").text
    assert f"«{HOSTILE}»" in text or f"«{SCRIPT}»" in text  # shown as the crawl wrote it
    assert f"«{CHINESE}»" in text  # and Chinese anchors display right
    assert browser.find_elements("css selector", "#columns img, #columns script") == []
    assert browser.find_elements("css selector", "a[href^='javascript']") == []
    unsafe = columns["crafted"].find_elements("css selector", "span.unsafe")
    assert [node.text for node in unsafe][:1] == [EVIL]
    _no_alert(browser)
    _screenshot(browser, "explore.png")


def test_following_a_result_explores_it(browser: Any, site: str) -> None:
    browser.get(f"{site}/?url={urllib.parse.quote(TARGETS[0])}")
    columns = wait_until(lambda: len(_columns(browser)) == 2 and _columns(browser))
    first = columns["block"].find_element("css selector", "ol.results > li")
    target = first.find_element("css selector", ":scope > a").get_attribute("href")
    first.find_element("css selector", "button.explore").click()
    wait_until(lambda: browser.find_element("id", "url").get_attribute("value") == target
          and target in browser.find_element("id", "status").text)
    assert urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query)["url"] == [target]
    block = _columns(browser)["block"]
    shown = [link.get_attribute("href") for link in block.find_elements("css selector", "ol.results > li > a")]
    assert shown == [item["url"] for item in _api(site, target, "block")["related"]]
    browser.back()  # the browser's history goes back to the first lookup
    wait_until(lambda: browser.find_element("id", "url").get_attribute("value") == TARGETS[0])


def test_typing_a_url_and_a_phone_sized_screen(browser: Any, site: str) -> None:
    browser.set_window_size(390, 844)
    try:
        browser.get(site + "/")
        box = wait_until(lambda: browser.find_elements("css selector", "#algorithms input") and
                    browser.find_element("id", "url"))
        box.send_keys("http://www.beta.example")  # another spelling of a stored page
        browser.find_element("css selector", "#lookup button[type=submit]").click()
        columns = wait_until(lambda: len(_columns(browser)) == 2 and _columns(browser))
        assert "found as https://beta.example/" in columns["block"].text
        assert browser.execute_script("return document.scrollingElement.scrollWidth <= window.innerWidth")
        _screenshot(browser, "explore-phone.png")
    finally:
        browser.set_window_size(1280, 900)
