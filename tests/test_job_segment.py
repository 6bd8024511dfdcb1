"""jobs.segment: crawl files → segment records, with every skip counted."""
from __future__ import annotations

import base64
import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import jobrun
from jobs.segment import MRSegment
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent

HUB = b"""<html><body><h2>Frameworks</h2><ul>
<li><a href="https://flask.palletsprojects.com/">Flask</a></li>
<li><a href="https://www.djangoproject.com/">Django</a></li>
<li><a href="https://fastapi.tiangolo.com/">FastAPI</a></li></ul>
<h2>Data</h2><ul><li><a href="https://numpy.org/">NumPy</a></li>
<li><a href="https://pandas.pydata.org/">pandas</a></li></ul></body></html>"""


def run_job(args: list[str], runner: str = "inline") -> tuple[dict[str, dict], dict[str, dict[str, int]]]:
    """Run MRSegment; return {url: record} and the counters summed over steps."""
    return jobrun.run_job(MRSegment, args, runner)


def _response(writer: WARCWriter, url: str, body: bytes, status: str = "200 OK",
              content_type: str = "text/html; charset=utf-8") -> None:
    headers = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers)
    writer.write_record(record)


def make_warc(path: Path) -> Path:
    with path.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        writer.write_record(writer.create_warcinfo_record("test.warc.gz", {"software": "test"}))
        _response(writer, "https://github.com/a/awesome", HUB.replace(b"Flask", b"Flask (old)"))
        request = writer.create_warc_record("https://github.com/a/awesome", "request",
                                            payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n"))
        writer.write_record(request)
        _response(writer, "https://example.com/missing", b"<html>gone</html>", status="404 Not Found")
        _response(writer, "https://example.com/paper.pdf", b"%PDF-1.4 binary", content_type="application/pdf")
        _response(writer, "https://example.com/fake.html", b"\x89PNG\r\n\x1a\n" + bytes(200))
        _response(writer, "https://github.com/a/awesome", HUB)  # the same URL again: last wins
        _response(writer, "https://other.example.org/solo", b"<p><a href='/x'>only one link</a></p>")
    return path


def test_warc_pages_become_segment_records_and_every_skip_is_counted(tmp_path):
    output, counters = run_job([str(make_warc(tmp_path / "crawl.warc.gz"))])
    assert sorted(output) == ["https://github.com/a/awesome", "https://other.example.org/solo"]
    hub = output["https://github.com/a/awesome"]
    assert hub["url"] == "https://github.com/a/awesome"
    assert hub["site"] == "github.com/a"
    assert [[link["anchor"] for link in block] for block in hub["blocks"]] == [
        ["Flask", "Django", "FastAPI"], ["NumPy", "pandas"]]  # the later record won
    assert hub["blocks"][0][2] == {"href": "https://fastapi.tiangolo.com/", "anchor": "FastAPI", "pos": 2}
    assert output["https://other.example.org/solo"]["blocks"] == []
    assert counters["ingest"] == {
        "warc_warcinfo": 1,
        "warc_request": 1,
        "non_2xx_status": 1,
        "not_html_content_type": 1,
        "binary_body_labelled_html": 1,
    }
    assert counters["segment"] == {
        "pages_segmented": 3,
        "pages_without_blocks": 1,
        "blocks": 4,
        "links_in_blocks": 10,
        "duplicate_url_earlier_record_dropped": 1,
        "pages_written": 2,
    }


def test_jsonl_text_and_base64_and_bad_lines(tmp_path):
    gbk = "<p><a href='/a'>新浪新闻</a> <a href='/b'>网易新闻</a></p>".encode("gbk")
    lines = [
        json.dumps({"url": "http://a.example.com/", "html": HUB.decode()}),
        "{not json",
        json.dumps({"url": "http://b.example.cn/", "html": base64.b64encode(gbk).decode(),
                    "encoding": "base64"}),
        json.dumps({"html": "<p>no url</p>"}),
    ]
    path = tmp_path / "pages.jsonl.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode() + b"\n"))
    output, counters = run_job([str(path)])
    assert sorted(output) == ["http://a.example.com/", "http://b.example.cn/"]
    anchors = [link["anchor"] for block in output["http://b.example.cn/"]["blocks"] for link in block]
    assert anchors == ["新浪新闻", "网易新闻"]
    assert counters["ingest"] == {"bad_json_line": 1, "missing_field": 1}


def test_inline_and_local_runners_give_identical_output(tmp_path):
    warc = make_warc(tmp_path / "crawl.warc.gz")
    manifest = REPO / "examples/tiny-web/urls.tsv"
    inline, inline_counters = run_job([str(warc), str(manifest)], runner="inline")
    local, local_counters = run_job([str(warc), str(manifest)], runner="local")
    assert json.dumps(inline, sort_keys=True) == json.dumps(local, sort_keys=True)
    assert inline_counters == local_counters
    assert len(local) == 6


def test_folder_manifest_input_with_a_missing_file(tmp_path):
    (tmp_path / "a.html").write_bytes(HUB)
    (tmp_path / "urls.tsv").write_text("a.html\thttp://a.example.com/\nmissing.html\thttp://m.example.com/\nbad line\n")
    output, counters = run_job([str(tmp_path / "urls.tsv")])
    assert list(output) == ["http://a.example.com/"]
    assert counters["ingest"] == {"missing_file": 1, "manifest_bad_line": 1}


def test_bad_arguments_are_usage_errors(tmp_path):
    # in-process, mrjob turns usage errors into ValueError ...
    with pytest.raises(ValueError, match="T1 is a ratio"):
        MRSegment(["--t1", "3", "x.warc"])
    with pytest.raises(ValueError, match="--max-page-bytes"):
        MRSegment(["--max-page-bytes", "0", "x.warc"])
    # ... and on the command line they exit with status 2 and one line on stderr
    done = subprocess.run([sys.executable, "-m", "jobs.segment", "--t1", "3", "x.warc"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 2 and "T1 is a ratio" in done.stderr


def test_size_cap_truncates_and_counts(tmp_path):
    big = b"<html><body><ul><li><a href='/a'>a</a><li><a href='/b'>b</a></ul><p>" + b"x" * 5000 + b"</p>"
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"url": "http://big.example.com/", "html": big.decode()}) + "\n")
    output, counters = run_job(["--max-page-bytes", "1000", str(path)])
    assert len(output["http://big.example.com/"]["blocks"]) == 1
    assert counters["segment"]["page_truncated_to_size_cap"] == 1


@pytest.mark.slow
def test_whole_public_corpus_with_the_local_runner(shared_data, tmp_path):
    inputs = [shared_data("awesomehub/awesomehub.warc.gz"), shared_data("web/aeb-pages.warc.gz"),
              shared_data("web/trafilatura-pages.warc.gz")]
    output, counters = run_job([str(p) for p in inputs], runner="local")
    segment = counters["segment"]
    assert segment["pages_written"] == len(output)
    assert len(output) >= 1600
    hubs = [r for url, r in output.items() if url.startswith("https://github.com/")]
    assert len(hubs) >= 540
    assert sum(len(r["blocks"]) for r in hubs) > 10_000
    assert all(r["site"].startswith("github.com/") for r in hubs)


def test_truncated_last_gzip_member_loses_only_that_record_on_the_local_runner(tmp_path):
    """mrjob's raw-input wrapper gunzips .gz inputs; a truncated member must not cost
    the file (or the task): the other records are still read, the broken one counted."""
    warc = make_warc(tmp_path / "whole.warc.gz")
    data = warc.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) - 60])  # the last record's gzip member is cut short
    for runner in ("inline", "local"):
        output, counters = run_job([str(cut)], runner=runner)
        assert sorted(output) == ["https://github.com/a/awesome"], runner
        assert counters["ingest"]["truncated_archive"] == 1, (runner, counters)
