#!/usr/bin/env python
"""Segmentation throughput against a bare lxml parse of the same bytes.

    python scripts/bench_segment.py [--runs 3] [WARC …]

Loads the pages of ``../shared/data/web/*.warc.gz`` into memory (not timed), then times,
in the same run and alternating (CPU time of this process, steadier than wall time
on a shared machine), (a) a bare ``lxml.etree.fromstring`` with an HTML parser
(``huge_tree``, ``recover``) and (b) the full segmenter (decode, scan, adjust) on every
page.  Prints pages/s and MB/s of each, median of the runs, and their ratio.
Target (issue 11, item 4): segmentation at >= 50 % of bare-parse speed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lxml import etree  # noqa: E402

from relatedpages.corpus.ingest import Page, read_pages  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from segmenter import segment_bytes  # noqa: E402


def load(paths: list[Path]) -> list[Page]:
    pages: list[Page] = []
    for path in paths:
        pages.extend(item for item in read_pages(path) if isinstance(item, Page))
    return pages


def bare_parse(pages: list[Page]) -> float:
    parser = etree.HTMLParser(huge_tree=True, recover=True)
    started = time.process_time()
    for page in pages:
        try:
            etree.fromstring(page.body, parser)
        except etree.XMLSyntaxError:
            pass
    return time.process_time() - started


def segment(pages: list[Page]) -> float:
    started = time.process_time()
    for page in pages:
        segment_bytes(page.body, page.url, page.http_charset)
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("warcs", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    warcs = args.warcs or sorted((shared_data_dir() / "web").glob("*.warc.gz"))
    if not warcs:
        print(f"no WARC files found (looked in {shared_data_dir() / 'web'})", file=sys.stderr)
        return 1
    pages = load(warcs)
    megabytes = sum(len(p.body) for p in pages) / 1e6
    print(f"{len(pages)} pages, {megabytes:.1f} MB from {', '.join(w.name for w in warcs)}")
    segment(pages[:20])  # warm caches (colour conversions, imports)
    bare_times, segment_times = [], []
    for run in range(args.runs):
        bare_times.append(bare_parse(pages))
        segment_times.append(segment(pages))
        print(f"run {run + 1}: bare parse {bare_times[-1]:.2f} s, segmenter {segment_times[-1]:.2f} s")
    bare, seg = statistics.median(bare_times), statistics.median(segment_times)
    print(f"{'':<14}{'pages/s':>10}{'MB/s':>8}  (median of {args.runs} runs)")
    print(f"{'bare lxml':<14}{len(pages) / bare:>10.1f}{megabytes / bare:>8.1f}")
    print(f"{'segmenter':<14}{len(pages) / seg:>10.1f}{megabytes / seg:>8.1f}")
    print(f"ratio segmenter / bare parse: {bare / seg:.1%} (target >= 50%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
