"""The relatedpages command: segment with a summary, usage errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def relatedpages(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "relatedpages.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_segment_prints_blocks_and_a_summary_with_counters(tmp_path):
    out = tmp_path / "segments"
    done = relatedpages("segment", "examples/tiny-web/urls.tsv", "-r", "inline", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "pages written        4" in done.stdout
    assert "counter step 1 segment.pages_segmented = 4" in done.stdout
    assert "新浪新闻, 网易新闻, 腾讯新闻, 凤凰网" in done.stdout  # the GBK page, decoded
    assert "Running step 1 of 1" in done.stderr  # mrjob's progress, once
    assert done.stderr.count("Running step 1 of 1") == 1
    records = [json.loads(line.split("\t", 1)[1])
               for part in sorted(out.glob("part-*")) for line in part.read_text().splitlines()]
    assert len(records) == 4 and all({"url", "site", "blocks"} == set(r) for r in records)


def test_usage_errors_exit_2_with_one_line():
    missing = relatedpages("segment", "no/such/file.warc.gz")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "relatedpages: error: no such input: no/such/file.warc.gz"
    bad = relatedpages("segment", "--t1", "2", "examples/tiny-web/urls.tsv")
    assert bad.returncode == 2 and "T1 is a ratio" in bad.stderr
    assert relatedpages().returncode == 2
