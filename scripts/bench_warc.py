"""Benchmark WARC readers: warcio 1.8.1 vs FastWARC 2.0.0 (and our ingest layer on top).

For each archive and reader: iterate every ``response`` record and read its whole HTTP
payload; median wall time of N runs.  Prints records/s, input MB/s (compressed file size)
and payload MB/s, then the FastWARC/warcio speed ratio per archive.

    .venv/bin/python scripts/bench_warc.py [--runs 3] [archive.warc.gz ...]

Default archives are the real ones under ../shared/data (web/*.warc.gz, awesomehub).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402

DEFAULT_ARCHIVES = (
    "web/trafilatura-pages.warc.gz",
    "web/aeb-pages.warc.gz",
    "awesomehub/awesomehub.warc.gz",
)
RUNS_DEFAULT = 3

Reader = Callable[[Path], tuple[int, int]]


def read_warcio(path: Path) -> tuple[int, int]:
    """(records, payload bytes) with warcio's ArchiveIterator + content_stream()."""
    from warcio.archiveiterator import ArchiveIterator

    records = payload = 0
    # warcio prints a line to stderr for every Target-URI containing a space.
    with path.open("rb") as stream, contextlib.redirect_stderr(io.StringIO()):
        for record in ArchiveIterator(stream):
            if record.rec_type != "response":
                continue
            payload += len(record.content_stream().read())
            records += 1
    return records, payload


def read_fastwarc(path: Path) -> tuple[int, int]:
    """(records, payload bytes) with FastWARC's ArchiveIterator (HTTP parsed, no decoding)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    records = payload = 0
    with path.open("rb") as stream:
        for record in ArchiveIterator(stream, record_types=WarcRecordType.response):
            payload += len(record.reader.read())
            records += 1
    return records, payload


def read_ingest(path: Path) -> tuple[int, int]:
    """(pages, body bytes) through relatedpages.corpus.ingest.read_pages (FastWARC + our checks)."""
    from relatedpages.corpus.ingest import Page, read_pages

    records = payload = 0
    for item in read_pages(path):
        if isinstance(item, Page):
            payload += len(item.body)
            records += 1
    return records, payload


READERS: dict[str, Reader] = {
    "warcio": read_warcio,
    "fastwarc": read_fastwarc,
    "ingest(fastwarc)": read_ingest,
}


def measure(reader: Reader, path: Path, runs: int) -> tuple[float, int, int]:
    """Median seconds over `runs`, and the (records, payload bytes) of the last run."""
    times = []
    records = payload = 0
    for _ in range(runs):
        start = time.perf_counter()
        records, payload = reader(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times), records, payload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archives", nargs="*", type=Path,
                        help="WARC files. Default: the real archives under ../shared/data")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT,
                        help="runs per archive and reader (median reported). Default: %(default)s")
    args = parser.parse_args(argv)
    archives = args.archives or [shared_data_dir() / name for name in DEFAULT_ARCHIVES]
    missing = [str(path) for path in archives if not path.exists()]
    if missing:
        parser.error("missing archives: " + ", ".join(missing))

    header = (f"{'archive':<28} {'reader':<17} {'records':>7} {'median s':>9} "
              f"{'records/s':>10} {'in MB/s':>8} {'payload MB/s':>12}")
    print(header)
    print("-" * len(header))
    ratios = []
    for path in archives:
        size_mb = path.stat().st_size / 1e6
        seconds_by_reader = {}
        for name, reader in READERS.items():
            seconds, records, payload = measure(reader, path, args.runs)
            seconds_by_reader[name] = seconds
            print(f"{path.name:<28} {name:<17} {records:>7} {seconds:>9.3f} "
                  f"{records / seconds:>10.0f} {size_mb / seconds:>8.1f} "
                  f"{payload / 1e6 / seconds:>12.1f}")
        ratio = seconds_by_reader["warcio"] / seconds_by_reader["fastwarc"]
        ingest_ratio = seconds_by_reader["warcio"] / seconds_by_reader["ingest(fastwarc)"]
        ratios.append(ratio)
        print(f"{path.name:<28} fastwarc is {ratio:.1f}x faster than warcio "
              f"(ingest layer: {ingest_ratio:.1f}x)")
    print(f"median speed-up fastwarc/warcio over {len(ratios)} archives: "
          f"{statistics.median(ratios):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
