#!/usr/bin/env python
"""Format 1 (lines) beside format 2 (blocks) on the same records, in one run: bytes a
record, build time, cold and warm lookup latency.

    python scripts/bench_db_format.py --source DB [--work DIR] [--runs 3] [--queries 10000]
                                      [--miss-rate 0.1] [--seed 1] [--variants] [--fadvise-only]
                                      [--json]

``--source`` is a related-pages database of either format, e.g. the real pages'::

    relatedpages build ../shared/data/web/ ../shared/data/awesomehub/awesomehub.warc.gz \\
        --db DIR --runner local

Its records are read once into memory, as format 1 stores them.  Then ``--runs`` times, for
each format (the order alternating between runs):

* build: :func:`~relatedpages.store.dbbuild.build_database` of those records into
  ``--work``/NAME, timed alone (the records are already in memory; the build reads them
  back and checks them before the swap, as every build does), then ``sync``;
* cold: the page cache is dropped (``/proc/sys/vm/drop_caches``; else ``posix_fadvise``
  per file), a fresh process opens the database (``verify="sizes"``) and times
  ``--queries`` lookups one by one: records of the source picked at random, and
  (``--miss-rate``) URLs that are not in it;
* warm: the same process runs the queries again, then times a third pass.

A lookup is one ``RelatedPagesDB.related(url)``: normalisation, partition, search,
decoding into ``Related`` objects.  The table shows the median over the runs of each
figure.  ``--variants`` adds format-2 rows with other block sizes and zstd levels, and
what a zstd dictionary trained on the blocks would save (bytes only: the reader has no
dictionary).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_query import drop_page_cache, evict_files, percentiles, timed_pass  # noqa: E402
from relatedpages.store.db import RelatedPagesDB  # noqa: E402
from relatedpages.store.dbblocks import BlockPartition, Compression  # noqa: E402
from relatedpages.store.dbbuild import build_database  # noqa: E402
from relatedpages.store.dbopen import read_manifest  # noqa: E402

#: (row name, format version, compression): the formats compared, then the variants.
FORMATS: list[tuple[str, int, Compression | None]] = [
    ("1 (lines)", 1, None),
    ("2 (blocks)", 2, Compression()),
]
VARIANTS: list[tuple[str, int, Compression | None]] = [
    *[(f"2, {size // 1024} KiB blocks", 2, Compression(block_bytes=size))
      for size in (4096, 8192, 16384, 32768) if size != Compression().block_bytes],
    ("2, zstd level 9", 2, Compression(level=9)),
]
DICTIONARY_BYTES = 32 * 1024


def source_records(source: Path) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """Every record of the database at ``source`` as format 1 stores it, and its parameters."""
    records = []
    with RelatedPagesDB(source) as database:
        for index in range(database.partitions):
            for line in database.partition_data(index).splitlines():
                key, _, value = line.partition(b"\t")
                records.append((key.decode("utf-8"), json.loads(value)))
        parameters = dict(database.manifest.parameters)
    return records, parameters


def query_file(records: list[tuple[str, Any]], args: argparse.Namespace) -> Path:
    """``--queries`` URLs, one a line: keys of the records, and misses (a key with a query
    string no page has)."""
    rng = random.Random(args.seed)
    keys = [key for key, _ in records]
    urls = []
    for number in range(args.queries):
        url = rng.choice(keys)
        if rng.random() < args.miss_rate:
            url += f"{'&' if '?' in url else '?'}bench-miss={number}"
        urls.append(url)
    path = args.work / "queries.txt"
    path.write_text("\n".join(urls) + "\n", encoding="utf-8")
    return path


def child(db: str, queries: str) -> None:
    """One fresh process: open, cold pass, warm-up pass, warm pass; JSON on stdout."""
    urls = Path(queries).read_text(encoding="utf-8").splitlines()
    started = time.perf_counter_ns()
    database = RelatedPagesDB(db)
    open_us = (time.perf_counter_ns() - started) / 1000
    cold, hits = timed_pass(database, urls)
    timed_pass(database, urls)
    warm, _ = timed_pass(database, urls)
    database.close()
    print(json.dumps({"open_us": open_us, "cold": percentiles(cold), "warm": percentiles(warm), "hits": hits}))


def evict(path: Path, fadvise_only: bool) -> str:
    """Drop the database's pages from the page cache; say how."""
    return evict_files(path) if fadvise_only else drop_page_cache(path)


def measure(name: str, version: int, compression: Compression | None, records: list[tuple[str, Any]],
            parameters: dict[str, Any], queries: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Build one format, then one cold-and-warm process on it."""
    target = args.work / re.sub(r"\W+", "-", name).strip("-")
    options: dict[str, Any] = {"format_version": version}
    if compression is not None:
        options["compression"] = compression
    started = time.perf_counter()
    summary = build_database(iter(records), target, algorithm="block", parameters=parameters,
                             source=["scripts/bench_db_format.py"], **options)
    build_s = time.perf_counter() - started
    os.sync()  # nothing of the build left to write while the cold pass reads
    how = evict(target, args.fadvise_only)
    done = subprocess.run([sys.executable, __file__, "--child", str(target), str(queries)],
                          capture_output=True, text=True, check=True)
    shutil.rmtree(target)
    os.sync()  # nor of its removal during the next one's
    result: dict[str, Any] = json.loads(done.stdout)
    result.update(name=name, build_s=build_s, bytes=summary.bytes, records=summary.records, cache=how)
    return result


def dictionary_estimate(path: Path, level: int) -> tuple[float, float]:
    """(bytes a record of the blocks as built, with a zstd dictionary trained on them)."""
    import zstandard

    blocks: list[bytes | bytearray | memoryview] = []
    manifest = read_manifest(path)
    for index, part in enumerate(manifest.partitions):
        if not part.bytes:
            continue
        with open(path / part.name, "rb") as handle:
            reader = BlockPartition(handle.fileno(), part.bytes)
            blocks += [reader.block(number) for number in range(reader.blocks)]
    plain = zstandard.ZstdCompressor(level=level)
    sample = random.Random(1).sample(blocks, min(len(blocks), 2000))
    trained = zstandard.train_dictionary(DICTIONARY_BYTES, sample, k=200, d=8, level=level)
    with_dictionary = zstandard.ZstdCompressor(level=level, dict_data=trained)
    records = manifest.records
    return (sum(len(plain.compress(block)) for block in blocks) / records,
            (sum(len(with_dictionary.compress(block)) for block in blocks) + DICTIONARY_BYTES) / records)


def installed_mb(distribution: str) -> float:
    files = metadata.distribution(distribution).files or []
    return sum((file.size or 0) for file in files) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", help="a related-pages database whose records are built in both formats")
    parser.add_argument("--work", type=Path, default=REPO / "out" / "bench" / "db-format",
                        help="where the databases are built (removed at the end). Default: %(default)s")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--miss-rate", type=float, default=0.1, help="share of queries not in the database")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variants", action="store_true", help="format-2 rows with other blocks and levels")
    parser.add_argument("--fadvise-only", action="store_true",
                        help="evict only the databases' files (posix_fadvise), never the whole page cache")
    parser.add_argument("--json", action="store_true", help="a last line of JSON: the medians of each row")
    parser.add_argument("--child", nargs=2, metavar=("DB", "QUERIES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if not args.source:
        parser.error("--source DB is required")

    args.work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    records, parameters = source_records(Path(args.source))
    print(f"{len(records):,} records read from {args.source} in {time.monotonic() - started:.0f} s", flush=True)
    queries = query_file(records, args)
    rows = FORMATS + (VARIANTS if args.variants else [])
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in rows}
    for run in range(args.runs):
        for name, version, compression in (rows if run % 2 == 0 else rows[::-1]):
            result = measure(name, version, compression, records, parameters, queries, args)
            results[name].append(result)
            print(f"run {run + 1}, format {name}: built in {result['build_s']:.1f} s, "
                  f"{result['bytes'] / result['records']:,.0f} B/record; cold p99 {result['cold']['p99']:.0f} µs, "
                  f"warm p99 {result['warm']['p99']:.0f} µs", flush=True)

    def median(name: str, *keys: str) -> float:
        values = []
        for row in results[name]:
            value: Any = row
            for key in keys:
                value = value[key]
            values.append(value)
        return statistics.median(values)

    first = results[rows[0][0]][0]
    print()
    print(f"{first['records']:,} records of {args.source}; {args.queries:,} lookups a pass "
          f"({first['hits']:,} hits), median of {args.runs} runs; cold: {first['cache']}")
    print(f"{'format':<20}{'B/record':>10}{'MB':>8}{'build s':>9}{'cold p50':>10}{'cold p99':>10}"
          f"{'warm p50':>10}{'warm p99':>10}{'open ms':>9}")
    for name, _, _ in rows:
        size = median(name, "bytes")
        print(f"{name:<20}{size / first['records']:>10,.0f}{size / 1e6:>8.1f}{median(name, 'build_s'):>9.1f}"
              f"{median(name, 'cold', 'p50'):>9.0f}µ{median(name, 'cold', 'p99'):>9.0f}µ"
              f"{median(name, 'warm', 'p50'):>9.0f}µ{median(name, 'warm', 'p99'):>9.0f}µ"
              f"{median(name, 'open_us') / 1000:>9.1f}")
    new = rows[1][0]
    summary = {name: {"bytes_per_record": median(name, "bytes") / first["records"],
                      "build_s": median(name, "build_s"),
                      **{f"{phase}_{key}": median(name, phase, key) for phase in ("cold", "warm")
                         for key in ("p50", "p99")}} for name, _, _ in rows}
    zstd_version = metadata.version("zstandard")
    print(f"format 2 adds zstandard {zstd_version} to the install: {installed_mb('zstandard'):.1f} MB installed")
    if args.variants:
        build_database(iter(records), args.work / "dictionary", algorithm="block", parameters=parameters,
                       source=["scripts/bench_db_format.py"])
        plain, with_dictionary = dictionary_estimate(args.work / "dictionary", Compression().level)
        print(f"a {DICTIONARY_BYTES // 1024} KiB zstd dictionary trained on the blocks: {with_dictionary:,.0f} "
              f"B/record of blocks (dictionary included) instead of {plain:,.0f}")
    goals = [("bytes a record <= 300", median(new, "bytes") / first["records"] <= 300),
             ("warm p99 <= 200 µs", median(new, "warm", "p99") <= 200),
             ("cold p99 <= 1000 µs", median(new, "cold", "p99") <= 1000),
             ("build time no worse", median(new, "build_s") <= median(rows[0][0], "build_s"))]
    print("goals: " + "; ".join(f"{goal}: {'met' if met else 'NOT met'}" for goal, met in goals))
    if args.json:
        print(json.dumps({"records": first["records"], "rows": summary}))
    shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
