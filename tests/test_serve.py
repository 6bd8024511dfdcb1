"""``relatedpages serve`` (issue 12, item 1; issue 45, item 2), started for real on each
server (granian, the default, and gunicorn): workers on a loopback port answering what
``query --json`` prints, byte for byte as the Flask app always has, swapping a rebuilt
database in with no failed request, never serving one that fails verification; an ETag per
database generation (304 while it is current) and the counters of ``/metrics``."""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest

from relatedpages.store.dbbuild import build_database
from tests.prerequisites import guard
from tests.web import free_port

REPO = Path(__file__).resolve().parent.parent
QUERY = "https://hub.example/page"


def _records(tag: str) -> list[tuple[str, Any]]:
    return [(QUERY, [[f"https://{tag}.example/one", 3.0, [["a.example", 1.0, "https://a.example/x", "One"]]],
                     [f"https://{tag}.example/two", 2.0, [["b.example", 2.0, "https://b.example/list", "Two «2»"]],
                      "cocitation"]]),
            # evidence without a citing page, as databases built before issue 43 hold it
            ("https://other.example/", [[QUERY, 1.0, [["c.example", 1.0]]]]),
            # integers (answered as floats), an empty fallback name (left out) beside a via
            ("https://odd.example/", [["https://int.example/", 3, [["d.example", 2], ["e.example", 1.5]], "",
                                       "https://via.example/"],
                                      ["https://x.example/", 1.0, [], "site", "https://v.example/"]]),
            # what a string may hold: quotes, backslashes, brackets, a tab, a tiny float
            ("https://quote.example/", [["https://q.example/", 1e-05, [
                ["f.example", 0.5, "https://f.example/", 'a "quote", a \\ back\\slash, a\ttab, [x], ],["']],
                "cocitation"]])]
RECORDS = len(_records("first"))


def _get(port: int, path: str, body: Any = None, raw: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any, Message]:
    """(status, the JSON body, the headers: names matched in any case, as HTTP's are)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                     headers={**({"Content-Type": "application/json"} if data else {}),
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=guard(10)) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            payload = json.loads(text) if text else None
        except ValueError:
            payload = text.decode("latin-1")
        return error.code, payload, error.headers


def _post_chunked(port: int, parts: Iterator[bytes]) -> tuple[int, Any]:
    """POST with chunked transfer encoding: a body whose length is not said up front."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=guard(10))
    try:
        connection.request("POST", "/api/related", body=parts, encode_chunked=True,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _related(port: int, url: str, **params: str) -> tuple[int, Any, Message]:
    return _get(port, "/api/related?" + urllib.parse.urlencode({"url": url, **params}))


def _fetch(port: int, path: str, **headers: str) -> tuple[int, bytes, Message]:
    """(status, the body's bytes, the headers) of a GET, whatever its status."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=guard(10)) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.read(), error.headers


def _wait_for_answers(port: int, process: subprocess.Popen[str], deadline: float) -> None:
    """Until the server accepts a connection (a worker that said it is ready may not have
    reached its socket yet)."""
    while True:
        try:
            _fetch(port, "/api/health")
            return
        except OSError:
            assert process.poll() is None and time.monotonic() < deadline, "the server does not answer"
            time.sleep(0.05)


def _wait_for_generation(port: int, url: str, expected: str) -> None:
    """Until every worker answers ``url`` with ``expected`` first (a fresh connection lands
    on either): the rebuilt database is swapped in everywhere."""
    deadline = time.monotonic() + guard(20)
    in_a_row = 0
    while in_a_row < 6:
        assert time.monotonic() < deadline, f"{expected} not served within {guard(20):.0f} s"
        in_a_row = in_a_row + 1 if _related(port, url)[1]["related"][0]["url"] == expected else 0
        time.sleep(0.05)


@pytest.fixture(params=["granian", "gunicorn"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[int, Path, subprocess.Popen[str]]]:
    db = tmp_path / "db"
    build_database(_records("first"), db, algorithm="block", parameters={}, source=["test"])
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "relatedpages.cli", "serve", "--db", str(db), "--port", str(port),
         "--workers", "2", "--check-every", "0.2", "--server", request.param],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=(tmp_path / "server.log").open("w"), text=True)
    deadline = time.monotonic() + guard(30)
    while (tmp_path / "server.log").read_text().count(f" ready: block {RECORDS} records") < 2:  # both workers
        assert process.poll() is None, (tmp_path / "server.log").read_text()
        assert time.monotonic() < deadline, f"the server did not come up in {guard(30):.0f} s"
        time.sleep(0.1)
    _wait_for_answers(port, process, deadline)
    try:
        yield port, db, process
    finally:
        process.terminate()
        process.wait(timeout=guard(30))
        print((tmp_path / "server.log").read_text())  # shown when a test fails


def test_lookups_are_what_query_json_prints(server: tuple[int, Path, Any]) -> None:
    port, db, _ = server
    printed = subprocess.run([sys.executable, "-m", "relatedpages.cli", "query", "--db", str(db), "--json",
                              QUERY, "http://www.hub.example/page/", "https://unknown.example/"],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    for line, query in zip(printed, [QUERY, "http://www.hub.example/page/", "https://unknown.example/"]):
        status, answer, headers = _related(port, query)
        assert status == 200 and answer == json.loads(line)
    assert _related(port, "https://unknown.example/")[1]["found"] is False
    # the evidence whole, a fallback result's too: its citing page and the anchor there
    assert _related(port, QUERY)[1]["related"][1] == {
        "url": "https://first.example/two", "score": 2.0, "fallback": "cocitation",
        "evidence": [["b.example", 2.0, "https://b.example/list", "Two «2»"]]}
    assert _related(port, "https://other.example/")[1]["related"][0]["evidence"] == [["c.example", 1.0]]
    status, answer, headers = _related(port, QUERY, n="1")
    assert [item["url"] for item in answer["related"]] == ["https://first.example/one"]
    assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_answers_are_the_bytes_flask_always_sent(server: tuple[int, Path, Any]) -> None:
    """The lookup answers spliced from stored records (and decoded, for a record with integer
    scores) are, byte for byte, what ``jsonify(RelatedPagesDB.answer(…))`` made."""
    from relatedpages.store.db import RelatedPagesDB

    port, db, _ = server
    with RelatedPagesDB(db) as database:
        for url in [QUERY, "http://www.hub.example/page/", "https://other.example/", "https://odd.example/",
                    "https://quote.example/", "https://unknown.example/", "https://hub.example/page?x=«»"]:
            for n in (None, "1"):
                status, body, headers = _fetch(port, "/api/related?" + urllib.parse.urlencode(
                    {"url": url, **({"n": n} if n else {})}))
                expected = json.dumps(database.answer(url, int(n) if n else None), ensure_ascii=False,
                                      separators=(",", ":")) + "\n"
                assert status == 200 and body == expected.encode("utf-8"), url
                assert headers["Content-Type"] == "application/json"
    status, body, _ = _fetch(port, "/api/related?url=not+a+url")
    assert body == b'{"error":"malformed URL: \'not a url\'","status":400}\n'


def test_an_answer_carries_its_generations_etag_until_a_rebuild(server: tuple[int, Path, Any]) -> None:
    port, db, _ = server
    status, body, headers = _fetch(port, "/api/related?url=" + urllib.parse.quote(QUERY))
    tag = headers["ETag"]
    assert status == 200 and tag.startswith('"block-') and headers["Cache-Control"] == "no-cache"
    for _ in range(6):  # every worker: the same tag for the same generation
        assert _fetch(port, "/api/related?url=" + urllib.parse.quote(QUERY))[2]["ETag"] == tag
    path = "/api/related?n=1&url=" + urllib.parse.quote(QUERY)
    for held in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        status, body, headers = _fetch(port, path, **{"If-None-Match": held})
        assert (status, body, headers["ETag"]) == (304, b"", tag), held
        assert headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert _fetch(port, path, **{"If-None-Match": '"block-other"'})[0] == 200
    # a request that is not a lookup answer is answered as one would be, tag or not
    assert _fetch(port, "/api/related?url=not+a+url", **{"If-None-Match": tag})[0] == 400
    assert "ETag" not in _fetch(port, "/api/related?url=not+a+url")[2]
    build_database(_records("second"), db, algorithm="block", parameters={}, source=["test"])
    _wait_for_generation(port, QUERY, "https://second.example/one")
    status, body, headers = _fetch(port, path, **{"If-None-Match": tag})
    assert status == 200 and json.loads(body)["related"][0]["url"] == "https://second.example/one"
    assert headers["ETag"] not in (tag, None)


def _metrics(port: int) -> dict[str, float]:
    status, body, headers = _fetch(port, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    values = {}
    for line in body.decode("utf-8").splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def test_metrics_count_lookups_latency_swaps_and_refusals(server: tuple[int, Path, Any],
                                                          tmp_path: Path) -> None:
    port, db, _ = server
    before = _metrics(port)
    for _ in range(10):
        assert _related(port, QUERY)[0] == 200
    assert _related(port, "not a url")[0] == 400
    assert _related(port, QUERY, algorithm="pagerank")[0] == 404
    assert _get(port, "/api/related", {"urls": [QUERY, "bad url"]})[0] == 200
    after = _metrics(port)

    def grew(name: str) -> float:
        return after[name] - before.get(name, 0.0)

    assert grew('relatedpages_lookups_total{algorithm="block",status="200"}') == 11  # a batch: each URL
    assert grew('relatedpages_lookups_total{algorithm="block",status="400"}') == 2
    assert grew('relatedpages_lookups_total{algorithm="(unknown)",status="404"}') == 1
    assert grew("relatedpages_lookup_seconds_count") == 12  # single lookups only
    assert grew('relatedpages_lookup_seconds_bucket{le="+Inf"}') == 12
    assert 0 < grew("relatedpages_lookup_seconds_sum") < 12
    buckets = [value for name, value in after.items() if name.startswith("relatedpages_lookup_seconds_bucket")]
    assert buckets == sorted(buckets)  # cumulative
    # a rebuild: swapped in by both workers; a corrupt copy: refused by both
    build_database(_records("second"), db, algorithm="block", parameters={}, source=["test"])
    _wait_for_generation(port, QUERY, "https://second.example/one")
    deadline = time.monotonic() + guard(20)
    while _metrics(port)['relatedpages_swaps_total{database="block"}'] < 2:
        assert time.monotonic() < deadline, _metrics(port)
        time.sleep(0.1)
    candidate = tmp_path / "candidate"
    build_database(_records("corrupt"), candidate, algorithm="block", parameters={}, source=["test"])
    # the file holding the text: a partition (format 1) or the string table (format 2)
    part = next(p for p in sorted(candidate.iterdir()) if p.name != "manifest.json" and b"corrupt" in p.read_bytes())
    part.write_bytes(part.read_bytes().replace(b"corrupt", b"Corrupt", 1))
    os.rename(db, tmp_path / "old")
    os.rename(candidate, db)
    deadline = time.monotonic() + guard(20)
    while _metrics(port)['relatedpages_errors_total{kind="database_refused"}'] < 2:
        assert time.monotonic() < deadline, _metrics(port)
        time.sleep(0.1)
    assert _metrics(port)['relatedpages_errors_total{kind="server_error"}'] == 0


def test_errors_are_json_with_their_status(server: tuple[int, Path, Any]) -> None:
    port, _, _ = server
    cases = [
        (_related(port, "not a url at all"), 400, "malformed URL"),
        (_get(port, "/api/related"), 400, "url is required"),
        (_related(port, QUERY, algorithm="pagerank"), 404, "unknown algorithm"),
        (_related(port, QUERY, n="0"), 400, "between 1 and"),
        (_related(port, QUERY, n="many"), 400, "whole number"),
        (_related(port, "https://long.example/" + "a" * 5000), 414, "at most 4096"),
        (_get(port, "/api/related", {"urls": [QUERY] * 1001}), 413, "at most 1000"),
        # 6 MB: more than loopback's socket buffers hold, so the client is still sending when
        # the server answers; it sees the 413, not a broken pipe, as the server drains the body
        (_get(port, "/api/related", raw=b"[" + b"1," * 3_000_000 + b"1]"), 413,
         "request body of 6000003 bytes; at most 1048576 bytes"),
        (_get(port, "/api/related", {"url": QUERY}), 400, "expected a JSON object"),
        (_get(port, "/nothing/here"), 404, ""),
    ]
    for (status, payload, _), expected, text in cases:
        assert status == expected, payload
        assert isinstance(payload, dict) and payload["status"] == expected and text in payload["error"]
    status, _, _ = _get(port, "/api/related?url=" + "b" * 9000)  # beyond the request line gunicorn reads
    assert status == 414


def test_a_chunked_body_is_read_whole_and_held_to_the_same_limit(server: tuple[int, Path, Any]) -> None:
    port, _, _ = server
    status, payload = _post_chunked(port, iter([b'{"urls": [', json.dumps(QUERY).encode(), b'], "n": 1}']))
    assert status == 200 and payload["results"][0]["related"][0]["url"] == "https://first.example/one"
    # 6 MB in 20 KB chunks: a 413 (not a 400 for a body cut at the limit), seen while sending
    status, payload = _post_chunked(port, iter([b"["] + [b"1," * 10_000] * 300 + [b"1]"]))
    assert status == 413 and payload["error"] == "request body over 1048576 bytes; at most 1048576 bytes"
    # just under the limit, in chunks: read whole
    urls = json.dumps([QUERY] * 1000).encode()
    padding = b" " * (1_048_576 - len(urls) - len(b'{"urls": }'))
    status, payload = _post_chunked(port, iter([b'{"urls": ', urls, padding, b"}"]))
    assert status == 200 and len(payload["results"]) == 1000


def test_a_batch_answers_each_url_and_survives_a_bad_one(server: tuple[int, Path, Any]) -> None:
    port, _, _ = server
    status, payload, _ = _get(port, "/api/related", {"urls": [QUERY, "bad url", "https://other.example"], "n": 1})
    assert status == 200 and payload["algorithm"] == "block"
    first, bad, other = payload["results"]
    assert first["found"] and len(first["related"]) == 1
    assert bad == {"query": "bad url", "error": "malformed URL: 'bad url'", "status": 400}
    assert other["related"][0]["url"] == QUERY


def test_health_and_openapi(server: tuple[int, Path, Any]) -> None:
    port, db, _ = server
    status, health, _ = _get(port, "/api/health")
    assert status == 200 and health["status"] == "ok"
    block = health["databases"]["block"]
    assert block["records"] == RECORDS and block["algorithm"] == "block" and block["problem"] is None
    assert block["built_at"] == json.loads((db / "manifest.json").read_text())["built_at"]
    status, spec, _ = _get(port, "/api/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    assert {"get", "post"} <= set(spec["paths"]["/api/related"])
    evidence = spec["components"]["schemas"]["Answer"]["properties"]["related"]["items"]["properties"]["evidence"]
    shape = evidence["items"]
    for item in _related(port, QUERY)[1]["related"]:  # what is served is what is described
        assert all(shape["minItems"] <= len(each) <= shape["maxItems"] for each in item["evidence"])


def test_a_rebuilt_database_is_served_within_seconds_without_a_failed_request(
        server: tuple[int, Path, Any]) -> None:
    port, db, _ = server
    failures: list[Any] = []
    seen: set[str] = set()
    stop = threading.Event()

    def hammer() -> None:
        for _ in range(20_000):  # bounded in count and (below) in time
            if stop.is_set():
                return
            status, answer, _ = _related(port, QUERY)
            if status != 200 or not answer.get("found"):
                failures.append((status, answer))
            else:
                seen.add(answer["related"][0]["url"])

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for tag in ("second", "third"):
            time.sleep(0.5)
            build_database(_records(tag), db, algorithm="block", parameters={}, source=["test"])
            deadline = time.monotonic() + guard(10)
            while f"https://{tag}.example/one" not in seen:
                assert time.monotonic() < deadline, f"{tag} not served within {guard(10):.0f} s: {seen}"
                time.sleep(0.05)
            # every worker: a fresh connection lands on either
            assert all(_related(port, QUERY)[1]["related"][0]["url"] == f"https://{tag}.example/one"
                       for _ in range(6) if time.sleep(0.3) is None)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=guard(30))
    assert failures == []
    assert _get(port, "/api/health")[1]["databases"]["block"]["swaps"] >= 1


def test_a_corrupt_database_is_never_served(server: tuple[int, Path, Any], tmp_path: Path) -> None:
    port, db, _ = server
    candidate = tmp_path / "candidate"
    build_database(_records("corrupt"), candidate, algorithm="block", parameters={}, source=["test"])
    # the file holding the text: a partition (format 1) or the string table (format 2)
    part = next(p for p in sorted(candidate.iterdir()) if p.name != "manifest.json" and b"corrupt" in p.read_bytes())
    data = bytearray(part.read_bytes())
    data[data.index(b"corrupt")] = ord("C")  # same size: only the checksum tells
    part.write_bytes(bytes(data))
    os.rename(db, tmp_path / "old")  # a careless copy into place, not a build
    os.rename(candidate, db)
    deadline = time.monotonic() + guard(10)
    while True:
        status, health, _ = _get(port, "/api/health")
        if health["databases"]["block"]["problem"]:
            break
        assert time.monotonic() < deadline, health
        time.sleep(0.1)
    assert health["status"] == "degraded" and "checksum" in health["databases"]["block"]["problem"]
    for _ in range(10):  # both workers: still the old generation
        assert _related(port, QUERY)[1]["related"][0]["url"] == "https://first.example/one"
        time.sleep(0.25)


def test_a_partition_corrupted_under_the_server_fails_its_lookups_alone(server: tuple[int, Path, Any]) -> None:
    """A byte of the served generation's partition flipped in place (the file the workers
    hold open): the lookups that need it get a JSON 503 naming it, from either worker,
    never an answer; the other partitions keep answering; every worker's health names it."""
    import zlib

    port, db, _ = server
    partition = zlib.crc32(QUERY.encode()) % 64
    other = next(url for url, _ in _records("first") if zlib.crc32(url.encode()) % 64 != partition)
    path = db / f"part-{partition:05d}"
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x10  # inside its one block: zstd's checksum tells
    with path.open("r+b") as handle:  # the same file, not a new one: no swap
        handle.write(bytes(data))
    for _ in range(8):  # fresh connections: both workers
        status, payload, _ = _related(port, QUERY)
        assert status == 503 and f"part-{partition:05d} block 0" in payload["error"], payload
        assert _related(port, other)[0] == 200
    for _ in range(8):
        status, health, _ = _get(port, "/api/health")
        assert status == 200 and health["status"] == "degraded", health
        assert [line.split(" ", 1)[0] for line in health["databases"]["block"]["corrupt"]] == \
            [f"part-{partition:05d}"], health
    metrics = _metrics(port)
    assert metrics['relatedpages_errors_total{kind="database_corrupt"}'] >= 8
    assert metrics['relatedpages_errors_total{kind="server_error"}'] == 0


def test_serve_refuses_what_it_cannot_serve_in_one_line(tmp_path: Path) -> None:
    for args, message in (([], "give at least one --db"),
                          (["--db", str(tmp_path / "missing")], "--db"),
                          (["--db", str(tmp_path), "--workers", "0"], "--workers"),
                          (["--db", str(tmp_path), "--threads", "4"], "granian answers on one thread")):
        done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "serve", *args], cwd=REPO,
                              capture_output=True, text=True, timeout=guard(60))
        assert done.returncode == 2 and message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("kind", ["granian", "gunicorn"])
def test_a_port_in_use_is_one_failure_said_plainly(tmp_path: Path, kind: str) -> None:
    import socket

    db = tmp_path / "db"
    build_database(_records("first"), db, algorithm="block", parameters={}, source=["test"])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "serve", "--db", str(db), "--port",
                               str(taken.getsockname()[1]), "--server", kind], cwd=REPO, capture_output=True,
                              text=True, timeout=guard(60), env={**os.environ, "RUST_BACKTRACE": "0"})
    assert done.returncode == 1 and "Address already in use" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_the_link_index_methods_answer_as_query_links_does(tmp_path: Path) -> None:
    from relatedpages.store.edgelist import import_edge_list

    edges = tmp_path / "edges.tsv"
    pages = [f"https://site{i}.example/" for i in range(6)]
    edges.write_text("".join(f"{hub}\t{page}\n" for hub in pages[:3] for page in pages[3:]), encoding="utf-8")
    import_edge_list(str(edges), str(tmp_path / "links"), keys="url")
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "relatedpages.cli", "serve", "--links",
                                str(tmp_path / "links"), "--port", str(port), "--workers", "1"],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + guard(30)
        while True:
            try:
                status, health, _ = _get(port, "/api/health")
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert status == 200 and health["links"]["algorithms"] == [
            "companion", "dh-cocitation", "extended-cocitation", "lli", "cosine-cocitation", "ppr",
            "green", "simrank"]
        for algorithm in health["links"]["algorithms"]:
            printed = subprocess.run([sys.executable, "-m", "relatedpages.cli", "query", "--links",
                                      str(tmp_path / "links"), "--algorithm", algorithm, "--json", pages[3]],
                                     cwd=REPO, capture_output=True, text=True, check=True).stdout
            status, answer, _ = _related(port, pages[3], algorithm=algorithm)
            assert status == 200 and answer == json.loads(printed)
        assert _related(port, pages[3])[1]["algorithm"] == "companion"  # the first, by default
    finally:
        process.terminate()
        process.wait(timeout=guard(30))
