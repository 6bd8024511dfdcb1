#!/usr/bin/env python
"""Lookup latency of the related-pages database, cold and warm, on >= 1,000,000 pages.

    python scripts/bench_query.py [--pages 1000000] [--db DIR] [--rebuild]
                                  [--queries 10000] [--runs 3] [--miss-rate 0.1] [--seed 1]

Builds (streaming, with :func:`relatedpages.store.dbbuild.build_database`) a database of synthetic
pages — URLs of realistic shapes (sections, dated slugs, ``?id=`` pages, percent-encoded
Chinese paths, ``http``/``https``, ``www.``/sub-domains, a dozen TLDs), 15 related
entries each with 1-3 citing sites of evidence — or reuses the one at ``--db`` when its
manifest says it was built by this script with the same ``--pages`` and ``--seed``.
Prints the build time, records/s and the size on disk.

Then, ``--runs`` times, each in a fresh process:

* cold: the page cache of the database files is dropped (``/proc/sys/vm/drop_caches``
  when writable; otherwise ``posix_fadvise(DONTNEED)`` on every file, which evicts
  clean pages without privileges; the script reports which, and how much of the
  database was still resident), the database is opened (``verify="sizes"``), and
  ``--queries`` lookups (hits and misses mixed) are timed one by one — every partition
  is mapped and first touched inside the timed lookups;
* warm: the same process does a warm-up pass over the same queries, then times them
  again.

Latency = one ``RelatedPagesDB.related(url)`` call: normalisation, CRC-32, binary search,
JSON decode and ``Related`` objects of a hit.  The table shows the median over the runs
of each percentile.  A ``lazy`` row repeats the cold run with ``verify="lazy"`` (sha256
of each partition on first use) and the open time with ``verify="full"`` is printed.
Target (DESIGN.md): p99 <= 1 ms warm.
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import mmap
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.store.db import MANIFEST_NAME, DatabaseError, RelatedPagesDB  # noqa: E402
from relatedpages.store.dbbuild import build_database  # noqa: E402
from relatedpages.store.dbopen import read_manifest  # noqa: E402

BENCH_TAG = "scripts/bench_query.py"
RELATED_PER_PAGE = 15
PAGES_PER_SITE = 20
_MASK = (1 << 64) - 1

WORDS = (
    "alpha blue city data easy fast green home info just kind light media news open "
    "photo quick river sport travel urban video world young zone bright cloud daily "
    "eagle forest global health island jungle kitchen local market nature ocean planet "
    "radio smart tech union value water yellow garden bank auto book cafe dental energy "
    "family game hotel jobs law music pet school shop style wine yoga art baby bike "
    "craft design event film golf hair insure jewel legal mobile office party quilt "
    "realty solar toys vegas web"
).split()
TLDS = ("com", "com", "com", "org", "net", "de", "co.uk", "cn", "com.cn", "fr", "jp", "edu", "ru", "io")
SUBDOMAINS = ("www.", "www.", "", "blog.", "news.", "shop.", "m.")
SECTIONS = ("news", "sport", "tech", "about", "products", "blog", "docs", "forum", "wiki", "en/articles")
CHINESE = ("%E6%96%B0%E9%97%BB", "%E4%BD%93%E8%82%B2", "%E7%A7%91%E6%8A%80", "%E8%B4%A2%E7%BB%8F")


def _mix(value: int) -> int:
    """splitmix64: a well-spread 64-bit hash of an int (deterministic, unlike hash())."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def site_domain(site: int, seed: int) -> str:
    """Registered domain of synthetic site number ``site``."""
    h = _mix(site * 2 + seed * 1_000_003)
    w1, w2 = WORDS[h % len(WORDS)], WORDS[(h >> 8) % len(WORDS)]
    return f"{w1}{w2}{site % 997 if (h >> 16) % 3 == 0 else ''}.{TLDS[(h >> 24) % len(TLDS)]}"


def page_url(page: int, seed: int) -> str:
    """URL of synthetic page number ``page`` (unique: the page number is in the path)."""
    site = page // PAGES_PER_SITE
    h = _mix(page * 2 + 1 + seed * 1_000_003)
    host = SUBDOMAINS[_mix(site) % len(SUBDOMAINS)] + site_domain(site, seed)
    scheme = "https" if _mix(site + 7) % 3 else "http"
    section = SECTIONS[(h >> 4) % len(SECTIONS)]
    slug = f"{WORDS[(h >> 12) % len(WORDS)]}-{WORDS[(h >> 20) % len(WORDS)]}"
    shape = h % 10
    if shape < 4:
        return f"{scheme}://{host}/{section}/{slug}-{page}.html"
    if shape < 6:
        return f"{scheme}://{host}/{section}/{2000 + (h >> 28) % 25}/{1 + (h >> 34) % 12:02d}/{slug}-{page}/"
    if shape == 6:
        return f"{scheme}://{host}/view.php?id={page}&cat={(h >> 40) % 50}"
    if shape == 7:
        return f"{scheme}://{host}/{section}/{page}"
    if shape == 8:
        return f"{scheme}://{host}/{CHINESE[(h >> 44) % len(CHINESE)]}/{page}.htm"
    return f"{scheme}://{host}/p/{slug}_{WORDS[(h >> 48) % len(WORDS)]}-{page}?ref=home"


def synthetic_records(pages: int, seed: int) -> Iterator[tuple[str, list[Any]]]:
    """(url, related list) for every page: 15 related pages, best first, 1-3 citing sites."""
    rng = random.Random(seed)
    sites = max(1, pages // PAGES_PER_SITE)
    for page in range(pages):
        score = round(4.0 + rng.random() * 40.0, 6)
        related: list[Any] = []
        for _ in range(RELATED_PER_PAGE):
            evidence = sorted(
                ((round(rng.random() * 10.0, 6), site_domain(rng.randrange(sites), seed))
                 for _ in range(1 + int(rng.random() * 3))),
                reverse=True,
            )
            related.append([page_url(rng.randrange(pages), seed), score, [[site, ds] for ds, site in evidence]])
            score = round(max(4.0, score - rng.random() * 3.0), 6)
        yield page_url(page, seed), related


def queries(pages: int, seed: int, count: int, miss_rate: float) -> list[str]:
    """``count`` query URLs: pages of the database and (``miss_rate``) pages not in it."""
    rng = random.Random(seed * 7919 + count)
    return [
        page_url(pages + rng.randrange(pages) if rng.random() < miss_rate else rng.randrange(pages), seed)
        for _ in range(count)
    ]


# -- the database ----------------------------------------------------------------------


def du_bytes(path: Path) -> tuple[int, int]:
    """(apparent size, allocated size) of a folder's files."""
    apparent = allocated = 0
    for entry in os.scandir(path):
        stat = entry.stat()
        apparent += stat.st_size
        allocated += stat.st_blocks * 512
    return apparent, allocated


def ensure_database(args: argparse.Namespace) -> Path:
    path = Path(args.db) if args.db else REPO / "out" / "bench" / f"query-{args.pages}-{args.seed}"
    wanted = {"bench": BENCH_TAG, "pages": args.pages, "seed": args.seed, "related_per_page": RELATED_PER_PAGE}
    if (path / MANIFEST_NAME).exists() and not args.rebuild:
        try:
            manifest = read_manifest(path)
        except DatabaseError as error:
            sys.exit(f"bench_query: {error} (use --rebuild)")
        if dict(manifest.parameters) != wanted:
            sys.exit(f"bench_query: {path} was not built by this script with --pages {args.pages} "
                     f"--seed {args.seed} (its parameters: {dict(manifest.parameters)}); use --rebuild")
        apparent, allocated = du_bytes(path)
        print(f"reusing {path}: {manifest.records:,} records, {apparent / 1e9:.2f} GB "
              f"({allocated / 1e9:.2f} GB allocated), built {manifest.built_at}")
        return path
    print(f"building {path}: {args.pages:,} synthetic pages, {RELATED_PER_PAGE} related each …", flush=True)
    generating = [0.0]
    started = time.monotonic()
    summary = build_database(
        timed(synthetic_records(args.pages, args.seed), generating), path, algorithm="block", parameters=wanted,
        source=[f"synthetic: {BENCH_TAG} --pages {args.pages} --seed {args.seed}"],
    )
    seconds = time.monotonic() - started
    apparent, allocated = du_bytes(path)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    database_seconds = seconds - generating[0]
    print(f"built {summary.records:,} records in {seconds:.0f} s, of which {generating[0]:.0f} s generating the "
          f"synthetic records and {database_seconds:.0f} s in build_database "
          f"({summary.records / database_seconds:,.0f} records/s)")
    print(f"{apparent / 1e9:.2f} GB on disk ({allocated / 1e9:.2f} GB allocated, "
          f"{apparent / max(summary.records, 1):,.0f} bytes/record); peak RSS of the build {peak_rss:,.0f} MB")
    return path


def timed(records: Iterator[tuple[str, list[Any]]], total: list[float]) -> Iterator[tuple[str, list[Any]]]:
    """Pass ``records`` through, adding the time spent producing them to ``total[0]``."""
    clock = time.perf_counter
    while True:
        started = clock()
        try:
            record = next(records)
        except StopIteration:
            return
        total[0] += clock() - started
        yield record


# -- the page cache --------------------------------------------------------------------


def drop_page_cache(path: Path) -> str:
    """Drop the database's pages from the page cache; say how."""
    try:
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("1\n")
        return "drop_caches"
    except OSError as error:
        refused = f"drop_caches refused ({error.strerror})"
    return f"{refused}; {evict_files(path)}"


def evict_files(path: Path) -> str:
    """Drop only the pages of the files in folder ``path`` from the page cache; say how."""
    for entry in os.scandir(path):
        fd = os.open(entry.path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return "posix_fadvise(DONTNEED) on every file"


def resident_fraction(path: Path) -> float | None:
    """Share of the partition files' pages in the page cache (mincore), or None."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return None
    libc = ctypes.CDLL(libc_name, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    resident = total = 0
    for entry in os.scandir(path):
        if not entry.name.startswith("part-") or entry.stat().st_size == 0:
            continue
        # A private (copy-on-write) map is writable, so ctypes can take its address;
        # nothing is written, so mincore reports the page cache of the file itself.
        with open(entry.path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY) as mapped:
            pages = (len(mapped) + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            vector = ctypes.create_string_buffer(pages)
            first = ctypes.c_char.from_buffer(mapped)
            status = libc.mincore(ctypes.addressof(first), len(mapped), vector)
            del first  # release the buffer before the map closes
            if status != 0:
                return None
            resident += sum(byte & 1 for byte in vector.raw)
            total += pages
    return resident / total if total else None


# -- one measured process ----------------------------------------------------------------


def percentiles(nanoseconds: list[int]) -> dict[str, float]:
    ordered = sorted(nanoseconds)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000  # noqa: E731
    return {"p50": at(0.50), "p99": at(0.99), "max": ordered[-1] / 1000,
            "mean": statistics.fmean(ordered) / 1000}


def timed_pass(database: RelatedPagesDB, urls: list[str]) -> tuple[list[int], int]:
    clock = time.perf_counter_ns
    times, hits = [], 0
    related = database.related
    for url in urls:
        started = clock()
        found = related(url)
        times.append(clock() - started)
        hits += found is not None
    return times, hits


def child(args: argparse.Namespace) -> None:
    """One fresh process: open, cold pass, warm-up pass, warm pass; JSON on stdout."""
    urls = queries(args.pages, args.seed, args.queries, args.miss_rate)
    started = time.perf_counter_ns()
    database = RelatedPagesDB(args.db, verify=args.verify)
    open_us = (time.perf_counter_ns() - started) / 1000
    cold, hits = timed_pass(database, urls)
    result: dict[str, Any] = {"open_us": open_us, "cold": percentiles(cold), "hits": hits}
    if not args.cold_only:
        timed_pass(database, urls)
        warm, _ = timed_pass(database, urls)
        result["warm"] = percentiles(warm)
    status = Path("/proc/self/status").read_text() if Path("/proc/self/status").exists() else ""
    for line in status.splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:")):
            name, value = line.split(":", 1)
            result[name] = int(value.split()[0]) / 1024  # MB
    database.close()
    print(json.dumps(result))


def run_child(args: argparse.Namespace, db: Path, *, verify: str, cold_only: bool = False) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--db", str(db), "--pages", str(args.pages),
               "--seed", str(args.seed), "--queries", str(args.queries), "--miss-rate", str(args.miss_rate),
               "--verify", verify]
    if cold_only:
        command.append("--cold-only")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", help="database folder to reuse or build (default: "
                                     "out/bench/query-PAGES-SEED in the repository, kept for reuse; "
                                     "remove it when done)")
    parser.add_argument("--rebuild", action="store_true", help="build even if --db holds a database")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--miss-rate", type=float, default=0.1, help="share of queries not in the database")
    parser.add_argument("--verify", default="sizes", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0

    db = ensure_database(args)
    runs: list[dict[str, Any]] = []
    lazy: list[dict[str, Any]] = []
    how = ""
    residency: list[float | None] = []
    for run in range(args.runs):
        how = drop_page_cache(db)
        residency.append(resident_fraction(db))
        runs.append(run_child(args, db, verify="sizes"))
        how = drop_page_cache(db)
        lazy.append(run_child(args, db, verify="lazy", cold_only=True))
        print(f"run {run + 1}: cold p99 {runs[-1]['cold']['p99']:.0f} µs, warm p99 {runs[-1]['warm']['p99']:.0f} µs, "
              f"lazy cold p99 {lazy[-1]['cold']['p99']:.0f} µs", flush=True)
    started = time.monotonic()
    with RelatedPagesDB(db, verify="full"):
        full_open = time.monotonic() - started

    def median(rows: list[dict[str, Any]], phase: str, key: str) -> float:
        return statistics.median(row[phase][key] for row in rows)

    manifest = read_manifest(db)
    hits = runs[0]["hits"]
    print()
    print(f"database {db}: {manifest.records:,} records, {len(manifest.partitions)} partitions, "
          f"{manifest.bytes / 1e9:.2f} GB")
    print(f"{args.queries:,} lookups per pass ({hits:,} hits, {args.queries - hits:,} misses), "
          f"median of {args.runs} runs, microseconds")
    print(f"cold = fresh process and open; page cache: {how}")
    shown = ", ".join("n/a" if r is None else f"{r:.1%}" for r in residency)
    print(f"resident share of the partition files before each cold run (mincore): {shown}")
    print(f"{'':<26}{'p50':>9}{'p99':>9}{'max':>10}{'mean':>9}")
    for label, rows, phase in (("cold (verify=sizes)", runs, "cold"), ("warm", runs, "warm"),
                               ("cold (verify=lazy)", lazy, "cold")):
        print(f"{label:<26}" + "".join(
            f"{median(rows, phase, key):>{width}.0f}" for key, width in (("p50", 9), ("p99", 9), ("max", 10),
                                                                         ("mean", 9))))
    print(f"open: verify=sizes {statistics.median(r['open_us'] for r in runs) / 1000:.1f} ms, "
          f"verify=full {full_open:.1f} s")
    print(f"reader memory after the warm pass: RSS {statistics.median(r['VmRSS'] for r in runs):.0f} MB "
          f"(anonymous {statistics.median(r['RssAnon'] for r in runs):.0f} MB, "
          f"mapped files {statistics.median(r['RssFile'] for r in runs):.0f} MB)")
    print(f"target: warm p99 <= 1000 µs: {'met' if median(runs, 'warm', 'p99') <= 1000 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
