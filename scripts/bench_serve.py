#!/usr/bin/env python
"""Load on ``relatedpages serve``, measured: lookups/s, p50/p99 and errors under ``wrk``,
with a database swap in the middle of the run, against the in-process lookup.

    python scripts/bench_serve.py [--duration 60] [--connections 16] [--workers 2]
                                  [--db DIR] [--crawl ../shared/data/web] [--runs 1]

Builds the database of the real web pages of ``../shared/data`` once (``relatedpages build``
at the defaults, kept in ``out/bench/serve-db``), starts ``relatedpages serve`` on a free
loopback port, and runs ``wrk`` (Debian's package; loopback only, bounded by
``--duration``) with a Lua script cycling through the database's URLs (one in ten unknown to
it, with spelling variants).  Halfway through, the database is rebuilt in place from its own
records (a new generation, the same answers): every worker must swap it in without a failed
request.  Then it times the same lookups in this process (``RelatedPagesDB.answer`` and
``json.dumps``, one thread) for the server's overhead.

Goal (issue 12): >= 2,000 lookups/s for 60 s with p99 <= 20 ms and zero errors.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from relatedpages.store.db import RelatedPagesDB  # noqa: E402
from relatedpages.store.dbbuild import build_database  # noqa: E402
from relatedpages.store.dbopen import read_manifest  # noqa: E402

GOAL_RATE, GOAL_P99_MS = 2000.0, 20.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _database(db: Path, crawl: Path) -> Path:
    """The benchmark's database: built once from ``crawl`` at the defaults, then reused."""
    if (db / "manifest.json").is_file():
        return db
    print(f"building {db} from {crawl} (relatedpages build, the defaults) …", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db", str(db)],
                   cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return db


def _queries(db: Path, count: int, seed: int) -> list[str]:
    """URLs to look up: stored keys, some under another spelling, one in ten unknown."""
    rng = random.Random(seed)
    with RelatedPagesDB(db) as database:
        keys = [url for url, _ in database.records()]
    queries = []
    for number in range(count):
        url = rng.choice(keys)
        if number % 10 == 9:
            url = url.rstrip("/") + f"/not-crawled-{number}"
        elif number % 5 == 0:
            url = url.replace("https://", "http://", 1)
        queries.append(url)
    return queries


LUA = """
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1])
end
"""


def _wrk(port: int, paths_file: Path, duration: float, connections: int) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % paths_file)
    done = subprocess.run(["wrk", "-t", "1", "-c", str(connections), "-d", f"{duration:g}s", "--latency",
                           "--timeout", "5s", "-s", script.name, f"http://127.0.0.1:{port}"],
                          capture_output=True, text=True, timeout=duration + 120)
    Path(script.name).unlink()
    if done.returncode != 0:
        raise SystemExit(f"wrk failed: {done.stderr or done.stdout}")
    text = done.stdout

    def latency(percent: str) -> float:
        match = re.search(rf"^\s*{percent}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if not match:
            raise SystemExit(f"no {percent}% latency in wrk's output:\n{text}")
        return float(match.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[match.group(2)]

    requests = int(re.search(r"(\d+) requests in", text).group(1))  # type: ignore[union-attr]
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    return {
        "requests": requests,
        "rate": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),  # type: ignore[union-attr]
        "p50_ms": latency("50"), "p99_ms": latency("99"),
        "errors": (int(non_2xx.group(1)) if non_2xx else 0)
                  + (sum(int(g) for g in socket_errors.groups()) if socket_errors else 0),
        "output": text,
    }


def _in_process(db: Path, queries: list[str], seconds: float = 3.0) -> float:
    """Lookups/s of ``answer`` + ``json.dumps`` in this process, one thread."""
    with RelatedPagesDB(db) as database:
        for url in queries[:200]:
            database.answer(url)
        done, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            for url in queries[:1000]:
                json.dumps(database.answer(url), ensure_ascii=False)
            done += min(len(queries), 1000)
        return done / (time.perf_counter() - started)


def _health(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5) as response:
        return dict(json.loads(response.read()))


def _rebuild_in_place(db: Path) -> float:
    """A new generation of ``db`` with the same records (as a nightly rebuild makes)."""
    started = time.monotonic()
    with RelatedPagesDB(db) as database:
        records = [(url, [[r.url, r.score, [list(e) for e in r.evidence], *([r.fallback] if r.fallback else [])]
                          for r in related]) for url, related in database.records()]
        manifest = database.manifest
    build_database(records, db, algorithm=manifest.algorithm, parameters=dict(manifest.parameters),
                   source=list(manifest.source))
    return time.monotonic() - started


def run_once(db: Path, queries: list[str], args: argparse.Namespace) -> dict[str, Any]:
    port = _free_port()
    paths = Path(tempfile.mkstemp(suffix=".txt")[1])
    paths.write_text("".join("/api/related?" + urllib.parse.urlencode({"url": url}) + "\n"
                             for url in queries), encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "relatedpages.cli", "serve", "--db", str(db),
                               "--port", str(port), "--workers", str(args.workers)],
                              cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _health(port)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start: {server.communicate()[1][-2000:]}")
                time.sleep(0.2)
        swap: dict[str, Any] = {}

        def swap_midway() -> None:
            time.sleep(args.duration / 2)
            swap["seconds"] = _rebuild_in_place(db)
            swap["at"] = args.duration / 2

        swapper = threading.Thread(target=swap_midway)
        swapper.start()
        result = _wrk(port, paths, args.duration, args.connections)
        swapper.join()
        result["swap_seconds"] = swap.get("seconds")
        result["swaps_seen"] = _health(port)["databases"][read_manifest(db).algorithm]["swaps"]
        return result
    finally:
        server.terminate()
        server.wait(timeout=60)
        paths.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load per run. Default: %(default)s")
    parser.add_argument("--connections", type=int, default=16, help="Default: %(default)s")
    parser.add_argument("--workers", type=int, default=2, help="server processes. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=1, help="Default: %(default)s")
    parser.add_argument("--db", default=str(REPO / "out" / "bench" / "serve-db"))
    parser.add_argument("--crawl", default=str(shared_data_dir() / "web"))
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    db = _database(Path(args.db), Path(args.crawl))
    queries = _queries(db, args.queries, args.seed)
    runs = [run_once(db, queries, args) for _ in range(args.runs)]
    local = _in_process(db, queries)
    rate = statistics.median(r["rate"] for r in runs)
    p50 = statistics.median(r["p50_ms"] for r in runs)
    p99 = statistics.median(r["p99_ms"] for r in runs)
    errors = sum(r["errors"] for r in runs)
    manifest = read_manifest(db)
    print(f"relatedpages serve, {args.workers} workers (1 thread each); wrk 1 thread, {args.connections} "
          f"connections, {args.duration:g} s x {args.runs} run(s); database {db} ({manifest.records} records, "
          f"rebuilt in place halfway through each run)")
    print(f"{'':28}{'lookups/s':>12}{'p50 ms':>10}{'p99 ms':>10}{'errors':>9}")
    print(f"{'over HTTP (median of runs)':28}{rate:>12,.0f}{p50:>10.2f}{p99:>10.2f}{errors:>9}")
    print(f"{'in process, one thread':28}{local:>12,.0f}{1000 / local:>10.3f}{'':>10}{'':>9}")
    print(f"server time per lookup / in-process time: {local / rate:.1f}x "
          f"(the server's {args.workers} processes share 2 cores with wrk)")
    print(f"database swaps seen by the answering worker: {[r['swaps_seen'] for r in runs]}; rebuild took "
          + ", ".join(f"{r['swap_seconds']:.1f} s" for r in runs))
    met = rate >= GOAL_RATE and p99 <= GOAL_P99_MS and errors == 0
    print(f"goal (>= {GOAL_RATE:,.0f}/s, p99 <= {GOAL_P99_MS:g} ms, no error): {'met' if met else 'NOT met'}")
    if args.json:
        print(json.dumps({"rate": rate, "p50_ms": p50, "p99_ms": p99, "errors": errors,
                          "in_process_rate": local, "runs": [{k: v for k, v in r.items() if k != "output"}
                                                              for r in runs]}))


if __name__ == "__main__":
    main()
