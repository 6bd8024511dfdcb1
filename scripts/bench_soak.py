#!/usr/bin/env python
"""A soak of ``relatedpages serve``: load for minutes with a rebuilt database swapped in
every ``--swap-every`` seconds; every request must succeed and the server's memory must
stay flat (issue 44, item 5).

    python scripts/bench_soak.py [--minutes 10] [--swap-every 30] [--connections 16]
                                 [--workers 2] [--server granian] [--db DIR] [--crawl DIR]

The database is ``scripts/bench_serve.py``'s (the real web pages of ``../shared/data``
built at the defaults, kept in ``out/bench/serve-db``), with its two generations served
through a symbolic link that is re-pointed every ``--swap-every`` seconds, as a nightly
deploy does, but 2,880 times as often.  ``wrk`` (loopback only, bounded by ``--minutes``)
cycles through URLs drawn from the database (one in ten unknown to it, one in five under
another spelling).  A first minute of the same load and swaps warms the server up (its
string caches fill, and a swapped-out generation stays open for the 30 s grace, so two
generations are held from then on); the soak then measures:

* requests, and failed ones: wrk's non-2xx answers and socket errors, and the server's own
  count of answers it failed (``relatedpages_errors_total{kind="server_error"}``);
* swaps: how many generations every worker swapped in (``relatedpages_swaps_total``);
* memory: the resident set of the server's processes, summed, sampled every 5 s: at the
  start of the soak, its largest, and at the end.

Goal: 0 failed requests, every swap seen by every worker, RSS at the end <= 1.1 x at the
start.  ``tests/test_bench_serve.py`` runs a short form (seconds, a small generated web).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from bench_serve import _database, _generations, _metric, _point, _queries, _wrk, paths_file, start_server  # noqa: E402
from relatedpages.bench.proctree import descendants  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402

GOAL_RSS_RATIO = 1.1
SAMPLE_EVERY = 5.0
SWAPS = 'relatedpages_swaps_total{database="block"}'
SERVER_ERRORS = 'relatedpages_errors_total{kind="server_error"}'


def rss_bytes(pids: set[int]) -> int:
    """The resident set of the live processes ``pids``, summed (``/proc/PID/status``)."""
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


class Swapper(threading.Thread):
    """Re-points the link at the other generation every ``every`` seconds, and samples
    the server's memory every SAMPLE_EVERY seconds, until stopped."""

    def __init__(self, link: Path, generations: list[Path], every: float, pids: set[int]):
        super().__init__(name="soak-swapper", daemon=True)
        self.link, self.generations, self.every, self.pids = link, generations, every, pids
        self.swaps = 0
        self.samples: list[tuple[float, int]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        next_swap, next_sample = started + self.every, started
        while True:
            now = time.monotonic()
            if now >= next_sample:
                self.samples.append((now - started, rss_bytes(self.pids)))
                next_sample += SAMPLE_EVERY
            if now >= next_swap:
                current = Path(os.readlink(self.link)).name
                _point(self.link, next(g for g in self.generations if g.name != current))
                self.swaps += 1
                next_swap += self.every
            if self.stopped.wait(max(0.0, min(next_swap, next_sample) - time.monotonic())):
                return


def soak(link: Path, generations: list[Path], paths: Path, args: argparse.Namespace) -> dict[str, Any]:
    process, port = start_server(args.server, link, args.workers)
    try:
        pids = descendants(process.pid) | {process.pid}
        results = []
        for phase, seconds in (("warm-up", args.warmup), ("soak", args.minutes * 60)):
            swaps_before = _metric(port, SWAPS)
            swapper = Swapper(link, generations, args.swap_every, pids)
            swapper.start()
            load = argparse.Namespace(wrk_threads=1, connections=args.connections, duration=seconds)
            result = _wrk(port, paths, load)
            swapper.stopped.set()
            swapper.join()
            time.sleep(args.check_every * 3)  # the workers' last look at the link
            result.update(phase=phase, swaps=swapper.swaps, samples=swapper.samples + [(seconds, rss_bytes(pids))],
                          swaps_seen=int(_metric(port, SWAPS) - swaps_before))
            results.append(result)
        soaked = results[-1]
        soaked["server_errors"] = int(_metric(port, SERVER_ERRORS))
        return soaked
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="the soak's length. Default: %(default)s")
    parser.add_argument("--swap-every", type=float, default=30.0,
                        help="seconds between swaps. Default: %(default)s")
    parser.add_argument("--warmup", type=float, default=60.0,
                        help="seconds of load and swaps before the soak is measured. Default: %(default)s")
    parser.add_argument("--connections", type=int, default=16, help="Default: %(default)s")
    parser.add_argument("--workers", type=int, default=2, help="server processes. Default: %(default)s")
    parser.add_argument("--server", choices=("granian", "gunicorn"), default="granian",
                        help="Default: %(default)s")
    parser.add_argument("--check-every", type=float, default=1.0, help=argparse.SUPPRESS)
    parser.add_argument("--db", default=str(REPO / "out" / "bench" / "serve-db"))
    parser.add_argument("--crawl", default=str(shared_data_dir() / "web"))
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    # a SIGTERM (a scheduler, a kill) unwinds like an exit: the server started below is stopped
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    db = _database(Path(args.db), Path(args.crawl))
    queries = _queries(db, args.queries, args.seed)
    link, generations = _generations(db)
    paths = paths_file(queries)
    try:
        result = soak(link, generations, paths, args)
    finally:
        paths.unlink()
    samples = result.pop("samples")
    start, end, peak = samples[0][1], samples[-1][1], max(rss for _, rss in samples)
    failed = result["errors"] + result["server_errors"]
    print(f"relatedpages serve --server {args.server}, {args.workers} workers; wrk 1 thread, {args.connections} "
          f"connections; {args.minutes:g} min after {args.warmup:g} s of warm-up, a swap every {args.swap_every:g} s; "
          f"database {db}")
    print(f"requests {result['requests']:,} ({result['rate']:,.0f}/s, p50 {result['p50_ms']:.2f} ms, "
          f"p99 {result['p99_ms']:.2f} ms), failed {failed}")
    print(f"swaps {result['swaps']}, swapped in by the workers {result['swaps_seen']} "
          f"(of {result['swaps'] * args.workers})")
    print(f"server RSS: start {start / 1e6:.1f} MB, peak {peak / 1e6:.1f} MB, end {end / 1e6:.1f} MB "
          f"(end/start {end / start:.3f})")
    met = failed == 0 and result["swaps_seen"] == result["swaps"] * args.workers and end <= GOAL_RSS_RATIO * start
    print(f"goal (0 failed, every swap seen, RSS end <= {GOAL_RSS_RATIO:g} x start): {'met' if met else 'NOT met'}")
    if args.json:
        result.pop("output")
        print(json.dumps({**result, "failed": failed, "rss_start": start, "rss_peak": peak, "rss_end": end,
                          "rss_samples": samples, "met": met}))


if __name__ == "__main__":
    main()
