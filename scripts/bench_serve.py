#!/usr/bin/env python
"""Load on ``relatedpages serve``, measured: each server (gunicorn + Flask, granian + the
RSGI front) side by side in one run, lookups/s, p50/p99 and errors under ``wrk``, with a
database swap in the middle of every run, against the library's own lookups/s on one thread
over the same URLs.

    python scripts/bench_serve.py [--duration 20] [--runs 3] [--connections 16] [--workers 2]
                                  [--servers gunicorn,granian] [--db DIR] [--crawl DIR]

Builds the database of the real web pages of ``../shared/data`` once (``relatedpages build``
at the defaults, kept in ``out/bench/serve-db``) and two generations of it beside it (its
records written again: the same answers, another build time), served through a symbolic
link.  For each run, each server in turn is started on a free loopback port and loaded by
``wrk`` (Debian's package; loopback only, bounded by ``--duration``) with a Lua script
cycling through URLs drawn from the database (one in ten unknown to it, one in five under
another spelling), answers of every size; halfway through, the link is pointed at the other
generation in one rename, as a deploy does: every worker must swap it in without a failed
request (``/metrics`` counts the swaps).  Then the library answers the same URLs in this
process, one thread, for ``--library-seconds`` of its CPU time: ``RelatedPagesDB.answer``
(``find`` and the answer object) encoded as the Flask app always did (``json.dumps``), and
the server's own encoding (``answer_bytes``: the stored record's bytes, spliced).  Figures
are medians over the runs; the machine's speed varies from day to day, the ratio of the
server's rate to the library's, measured in the same run, much less.  Each server's CPU time
per lookup (all its processes), wrk's share of a core and the cores the rest of the machine
took meanwhile say what the rate is bound by.

Goal (issue 45, item 2): the default server >= 10,000 lookups/s with p99 <= 10 ms on 2 cores,
at least half the library's lookups/s, and no failed request across the swaps.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
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

from filters.urls import normalise_url  # noqa: E402
from relatedpages.bench.proctree import descendants  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from relatedpages.serve.answers import StoredRelatedDB, answer_bytes  # noqa: E402
from relatedpages.store.db import RelatedPagesDB  # noqa: E402
from relatedpages.store.dbbuild import build_database  # noqa: E402
from relatedpages.store.dbopen import read_manifest  # noqa: E402

GOAL_RATE, GOAL_P99_MS, GOAL_LIBRARY_RATIO = 10_000.0, 10.0, 0.5
SERVERS = ("gunicorn", "granian")
_TICK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _database(db: Path, crawl: Path) -> Path:
    """The benchmark's database: built once from ``crawl`` at the defaults, then reused."""
    if (db / "manifest.json").is_file():
        return db
    print(f"building {db} from {crawl} (relatedpages build, the defaults) …", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db", str(db)],
                          cwd=REPO, stdout=subprocess.DEVNULL)
    if done.returncode != 0:  # relatedpages build said why, in one line
        raise SystemExit(f"could not build the benchmark's database {db} (relatedpages build exited {done.returncode})")
    return db


def _generations(db: Path) -> tuple[Path, list[Path]]:
    """Two generations of ``db`` (its records written again) in ``<db>-generations/``, and
    the link the servers answer from, pointing at the first."""
    folder = db.parent / f"{db.name}-generations"
    folder.mkdir(exist_ok=True)
    with RelatedPagesDB(db) as database:
        records = [(url, [[r.url, r.score, [list(e) for e in r.evidence],
                           *([r.fallback or ""] if r.fallback or r.via else []), *([r.via] if r.via else [])]
                          for r in related]) for url, related in database.records()]
        manifest = database.manifest
    generations = [folder / "a", folder / "b"]
    for generation in generations:
        build_database(records, generation, algorithm=manifest.algorithm, parameters=dict(manifest.parameters),
                       source=list(manifest.source))
    link = folder / "current"
    _point(link, generations[0])
    return link, generations


def _point(link: Path, target: Path) -> None:
    """``link`` → ``target``, replaced in one rename (a reader sees the old or the new)."""
    fresh = link.with_name(link.name + ".new")
    if fresh.is_symlink():
        fresh.unlink()
    fresh.symlink_to(target.name)
    os.replace(fresh, link)


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


def _wrk(port: int, paths_file: Path, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA % paths_file)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(["wrk", "-t", str(args.wrk_threads), "-c", str(args.connections),
                           "-d", f"{args.duration:g}s", "--latency", "--timeout", "5s", "-s", script.name,
                           f"http://127.0.0.1:{port}"],
                          capture_output=True, text=True, timeout=args.duration + 120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
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
        "wrk_cpu_seconds": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "output": text,
    }


def _cpu_seconds(pids: set[int]) -> float:
    """utime + stime of the live processes ``pids``, summed (``/proc/PID/stat``)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _busy_seconds() -> float:
    """CPU time every process of the machine has used, all cores (``/proc/stat``)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return sum(int(value) for index, value in enumerate(fields[:8]) if index not in (3, 4)) / _TICK


def _get(port: int, path: str) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        return bytes(response.read())


def _metric(port: int, name: str) -> float:
    for line in _get(port, "/metrics").decode("utf-8").splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise SystemExit(f"no {name} in /metrics")


def paths_file(queries: list[str]) -> Path:
    """A temporary file of the lookups' request paths, one a line, for wrk's script (the
    caller removes it)."""
    handle, name = tempfile.mkstemp(suffix=".txt")
    os.close(handle)
    paths = Path(name)
    paths.write_text("".join("/api/related?" + urllib.parse.urlencode({"url": url}) + "\n"
                             for url in queries), encoding="utf-8")
    return paths


def start_server(server: str, link: Path, workers: int) -> tuple[subprocess.Popen[str], int]:
    """``relatedpages serve --server server`` of the database at ``link`` on a free loopback
    port, once it answers: (its process, the port).  The caller stops it."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "relatedpages.cli", "serve", "--db", f"block={link}",
                                "--port", str(port), "--workers", str(workers), "--server", server],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            _get(port, "/api/health")
            return process, port
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit(f"{server} did not start: {process.communicate()[1][-2000:]}") from None
            time.sleep(0.2)


def run_server(server: str, link: Path, generations: list[Path], paths: Path,
               args: argparse.Namespace) -> dict[str, Any]:
    """One run of ``server`` under wrk, the link re-pointed halfway."""
    process, port = start_server(server, link, args.workers)
    try:
        swaps_before = _metric(port, 'relatedpages_swaps_total{database="block"}')
        current = Path(os.readlink(link)).name
        other = next(g for g in generations if g.name != current)

        def swap_midway() -> None:
            time.sleep(args.duration / 2)
            _point(link, other)

        pids = descendants(process.pid) | {process.pid}
        cpu_before, busy_before = _cpu_seconds(pids), _busy_seconds()
        swapper = threading.Thread(target=swap_midway)
        swapper.start()
        result = _wrk(port, paths, args)
        swapper.join()
        result["server_cpu_seconds"] = _cpu_seconds(pids) - cpu_before
        # what the rest of the machine took meanwhile (the swap's link rename: nothing)
        result["other_cpu_seconds"] = max(0.0, _busy_seconds() - busy_before - result["server_cpu_seconds"]
                                          - result["wrk_cpu_seconds"])
        deadline = time.monotonic() + 10  # a worker looks again within --check-every (1 s)
        while True:
            result["swaps_seen"] = int(_metric(port, 'relatedpages_swaps_total{database="block"}') - swaps_before)
            if result["swaps_seen"] >= args.workers or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        result["server_errors"] = int(_metric(port, 'relatedpages_errors_total{kind="server_error"}'))
        return result
    finally:
        process.terminate()
        process.wait(timeout=60)


def library_rates(db: Path, queries: list[str], seconds: float) -> tuple[float, float]:
    """Lookups per second of one thread's CPU time in this process, over ``queries``:
    (``RelatedPagesDB.answer`` + ``json.dumps`` as the Flask app encoded it, the server's
    ``answer_bytes``).  CPU time, not wall time: what one thread does on a core of its own,
    whatever else the machine runs meanwhile."""
    def rate(lookup: Any) -> float:
        for url in queries[:500]:
            lookup(url)
        done, started = 0, time.thread_time()
        while time.thread_time() - started < seconds:
            for url in queries[done % len(queries):][:500]:
                lookup(url)
                done += 1
        return done / (time.thread_time() - started)

    with RelatedPagesDB(db) as database, StoredRelatedDB(db) as stored:
        library = rate(lambda url: json.dumps(database.answer(url), ensure_ascii=False, separators=(",", ":")))
        spliced = rate(lambda url: answer_bytes(stored, url, normalise_url(url) or "", None))
    return library, spliced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=20.0,
                        help="seconds of load per server and run. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=3, help="Default: %(default)s")
    parser.add_argument("--connections", type=int, default=16, help="Default: %(default)s")
    parser.add_argument("--wrk-threads", type=int, default=1,
                        help="wrk's threads (they share the 2 cores with the server). Default: %(default)s")
    parser.add_argument("--workers", type=int, default=2, help="server processes. Default: %(default)s")
    parser.add_argument("--servers", default=",".join(SERVERS),
                        help="the servers to load, in this order each run. Default: %(default)s")
    parser.add_argument("--library-seconds", type=float, default=3.0,
                        help="seconds of each in-process measurement per run. Default: %(default)s")
    parser.add_argument("--db", default=str(REPO / "out" / "bench" / "serve-db"))
    parser.add_argument("--crawl", default=str(shared_data_dir() / "web"))
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    # a SIGTERM (a scheduler, a kill) unwinds like an exit: the server being loaded is stopped
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    servers = args.servers.split(",")
    if not set(servers) <= set(SERVERS) or not servers:
        raise SystemExit(f"--servers: some of {', '.join(SERVERS)}")
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    db = _database(Path(args.db), Path(args.crawl))
    queries = _queries(db, args.queries, args.seed)
    link, generations = _generations(db)
    paths = paths_file(queries)
    runs: dict[str, list[dict[str, Any]]] = {server: [] for server in servers}
    library: list[tuple[float, float]] = []
    try:
        for _ in range(args.runs):  # interleaved: a slower minute of the machine hits every row
            for server in servers:
                runs[server].append(run_server(server, link, generations, paths, args))
            library.append(library_rates(db, queries, args.library_seconds))
    finally:
        paths.unlink()
    library_rate = statistics.median(rate for rate, _ in library)
    spliced_rate = statistics.median(rate for _, rate in library)
    rows = {}
    for server, measured in runs.items():
        rows[server] = {
            "rate": statistics.median(r["rate"] for r in measured),
            "p50_ms": statistics.median(r["p50_ms"] for r in measured),
            "p99_ms": statistics.median(r["p99_ms"] for r in measured),
            "errors": sum(r["errors"] + r["server_errors"] for r in measured),
            "cpu_us": statistics.median(1e6 * r["server_cpu_seconds"] / r["requests"] for r in measured),
            "wrk_cores": statistics.median(r["wrk_cpu_seconds"] / args.duration for r in measured),
            "other_cores": statistics.median(r["other_cpu_seconds"] / args.duration for r in measured),
            "swaps_seen": [r["swaps_seen"] for r in measured],
            "runs": [{k: v for k, v in r.items() if k != "output"} for r in measured],
        }
    manifest = read_manifest(db)
    print(f"relatedpages serve, {args.workers} workers; wrk {args.wrk_threads} thread(s), {args.connections} "
          f"connections, {args.duration:g} s per server x {args.runs} run(s), medians; database {db} "
          f"({manifest.records} records), another generation swapped in halfway through each run; "
          f"{os.cpu_count()} cores")
    print(f"{'':32}{'lookups/s':>10}{'p50 ms':>8}{'p99 ms':>8}{'errors':>7}{'/library':>9}"
          f"{'CPU us/lookup':>14}{'wrk cores':>10}{'others':>7}")
    for server, row in rows.items():
        label = {"gunicorn": "gunicorn + Flask", "granian": "granian + RSGI front"}[server]
        print(f"{label:32}{row['rate']:>10,.0f}{row['p50_ms']:>8.2f}{row['p99_ms']:>8.2f}{row['errors']:>7}"
              f"{row['rate'] / library_rate:>9.2f}{row['cpu_us']:>14.0f}{row['wrk_cores']:>10.2f}"
              f"{row['other_cores']:>7.2f}")
    print(f"{'library: answer + json.dumps':32}{library_rate:>10,.0f}{'':>8}{'':>8}{'':>7}{1.0:>9.2f}"
          f"{1e6 / library_rate:>14.0f}")
    print(f"{'library: answer_bytes (spliced)':32}{spliced_rate:>10,.0f}{'':>8}{'':>8}{'':>7}"
          f"{spliced_rate / library_rate:>9.2f}{1e6 / spliced_rate:>14.0f}")
    print("library rows: one thread, lookups per second of its CPU time; servers: CPU of all their "
          "processes per lookup; others: cores the rest of the machine took during the load; "
          "swaps seen by the workers per run: "
          + "; ".join(f"{server} {row['swaps_seen']}" for server, row in rows.items())
          + f" (of {args.workers})")
    if "granian" in rows:
        row = rows["granian"]
        met = (row["rate"] >= GOAL_RATE and row["p99_ms"] <= GOAL_P99_MS
               and row["rate"] / library_rate >= GOAL_LIBRARY_RATIO and row["errors"] == 0)
        print(f"goal (granian >= {GOAL_RATE:,.0f}/s, p99 <= {GOAL_P99_MS:g} ms, >= {GOAL_LIBRARY_RATIO:g} x the "
              f"library, no error): {'met' if met else 'NOT met'}")
    if args.json:
        print(json.dumps({"servers": rows, "library_rate": library_rate, "spliced_rate": spliced_rate}))


if __name__ == "__main__":
    main()
