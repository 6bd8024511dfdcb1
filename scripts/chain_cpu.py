#!/usr/bin/env python
"""Related 1's Python CPU per related pair at several crawl sizes, on this machine, in one run.

    python scripts/chain_cpu.py --pages 31250,125000,500000 [--sample 5000] [--runs 3] [--seed 1]
                                [--crawl WARC ...] [--against REVISION [--output-changes]]

Per size, generates a web (``relatedpages.corpus.generate``, in a scratch folder removed
afterwards), takes about ``--sample`` of its pages (by URL hash), and runs the chain's first
step on them as Hadoop Streaming runs it, Mapper1, sort, Reducer1, as plain processes at the
chain's defaults (``relatedpages.bench.chain_cpu``).  Prints the machine, a row per size
(medians of ``--runs``; Mapper1's start-up, its CPU and memory on the sample's first 100
pages, apart), and how the CPU per pair grows with the pages: the baseline that cluster
timings from different machines are read against.  ``--crawl`` adds a row for a real crawl
file (sampled the same way; with it, no web is generated unless ``--pages`` is given): the
hub lists' WARC has the list entries' descriptions that generated webs lack.  With
``--against``, each run also times a git revision of this repository (checked out in the
scratch folder, removed afterwards) on the same sample, and a table compares the two: a
change's before and after from one run, with whether Reducer1's output stayed the same, byte
for byte.  A different output is an error unless ``--output-changes`` says the revision
computes another score (the cost of a new term, not of a faster way to the same bytes).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.bench.chain_cpu import (  # noqa: E402
    ChainCost, ChainCpuError, chain_costs, crawl_pages, format_comparison, format_costs, machine)
from relatedpages.bench.scale import loglog_slope  # noqa: E402
from relatedpages.corpus.generate import (  # noqa: E402
    SEED_DEFAULT, generate_crawl, parse_web_sizes)


PAGES_DEFAULT = "31250,125000,500000"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=None,
                        help="generated web sizes, comma-separated. Default: "
                             f"{PAGES_DEFAULT} (none with --crawl)")
    parser.add_argument("--crawl", action="append", default=[], type=Path, metavar="WARC",
                        help="a real crawl file to time too, a row of its own (repeatable)")
    parser.add_argument("--sample", type=int, default=5000,
                        help="pages of each web run through the step. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=3,
                        help="runs per size (medians). Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT, help="Default: %(default)s")
    parser.add_argument("--against", metavar="REVISION",
                        help="a git revision of this repository to time beside this checkout, "
                             "run for run on the same samples (a before/after). Default: none")
    parser.add_argument("--output-changes", action="store_true",
                        help="with --against: the revisions compute different scores, so "
                             "Reducer1's output may differ (reported, not an error)")
    args = parser.parse_args(argv)
    try:
        pages = args.pages if args.pages is not None else (None if args.crawl else PAGES_DEFAULT)
        sizes = parse_web_sizes(pages) if pages is not None else []
    except ValueError as error:
        parser.error(f"--pages: {error}")
    missing = [str(path) for path in args.crawl if not path.is_file()]
    if missing:
        parser.error(f"--crawl: no such file: {', '.join(missing)}")
    if args.output_changes and not args.against:
        parser.error("--output-changes: only with --against")
    if args.sample < 1 or args.runs < 1:
        parser.error("--sample and --runs: at least 1")
    print(f"machine: {machine()}", flush=True)
    costs: list[ChainCost] = []
    before: list[ChainCost] = []
    scratch = Path(tempfile.mkdtemp(prefix="relatedpages-chain-cpu-"))
    against = scratch / "against" if args.against else None
    try:
        if against is not None:
            print(f"against: {_check_out(args.against, against)}", flush=True)
        for pages in sizes:
            crawl = generate_crawl(scratch / f"web-{pages}.warc.gz", pages=pages, seed=args.seed)
            _time(crawl.path, pages, f"{pages:,} pages", args, scratch, against, costs, before)
            crawl.path.unlink()
            crawl.topics_path.unlink()
        for path in args.crawl:
            pages = crawl_pages(path)
            _time(path, pages, f"{path.name} ({pages:,} pages)", args, scratch, against, costs,
                  before)
    except ChainCpuError as error:
        print(f"chain_cpu: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("chain_cpu: interrupted", file=sys.stderr)
        return 130
    finally:
        if against is not None:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(against)],
                           capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    print("\n".join(format_costs(costs)))
    if len(sizes) > 1 and sizes[-1] != sizes[0]:
        first, last = costs[0], costs[len(sizes) - 1]
        print(f"\nslopes (log-log), {sizes[0]:,} → {sizes[-1]:,} pages (0: the Python work does "
              "not grow with the crawl):")
        for name, a, b in (("Mapper1's CPU per pair", first.mapper_us_per_pair, last.mapper_us_per_pair),
                           ("Reducer1's CPU per record", first.reducer_us_per_record,
                            last.reducer_us_per_record),
                           ("related 1's CPU per pair", first.total_us_per_pair, last.total_us_per_pair)):
            slope = (f"{loglog_slope([sizes[0], sizes[-1]], [a, b]):.2f}" if a > 0 and b > 0
                     else "n/a")
            print(f"  {name}: {slope}")
    if before:
        print(f"\n{args.against} → this checkout, the same samples, run for run:")
        print("\n".join(format_comparison(costs, before, args.against)))
        if (not args.output_changes
                and any(now.output_digest != then.output_digest for now, then in zip(costs, before))):
            print("chain_cpu: Reducer1's output differs between the two revisions "
                  "(--output-changes if the revision computes another score)", file=sys.stderr)
            return 1
    return 0


def _time(crawl: Path, pages: int, label: str, args: argparse.Namespace, scratch: Path,
          against: Path | None, costs: list[ChainCost], before: list[ChainCost]) -> None:
    """Time related 1 on a sample of ``crawl`` (and ``against`` beside it), add the medians
    to ``costs`` (and ``before``), and print the runs."""
    runs, then = chain_costs(crawl, pages, args.sample, scratch / "work", repo=REPO,
                             runs=args.runs, against=against)
    costs.append(_median(runs))
    line = (f"{label}: {costs[-1].total_us_per_pair:.1f} µs a pair "
            f"(runs: {', '.join(f'{run.total_us_per_pair:.1f}' for run in runs)})")
    if then:
        before.append(_median(then))
        line += (f"; {args.against}: {before[-1].total_us_per_pair:.1f} "
                 f"(runs: {', '.join(f'{run.total_us_per_pair:.1f}' for run in then)})")
    print(line, flush=True)


def _check_out(revision: str, folder: Path) -> str:
    """Check ``revision`` out in ``folder`` (a git worktree, detached): its short name and
    subject."""
    made = subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder),
                           revision], capture_output=True, text=True)
    if made.returncode != 0:
        reason = (made.stderr.strip().splitlines() or [f"exit {made.returncode}"])[-1]
        raise ChainCpuError(f"--against: git cannot check out {revision!r}: {reason}")
    shown = subprocess.run(["git", "-C", str(folder), "log", "-1", "--format=%h %s"],
                           capture_output=True, text=True)
    return shown.stdout.strip()[:100]


def _median(runs: list[ChainCost]) -> ChainCost:
    """The run whose CPU per pair is the median (the lower one of an even count), with the
    medians of the runs' Mapper1 start-ups (CPU and peak memory)."""
    ordered = sorted(runs, key=lambda cost: cost.total_us_per_pair)
    middle = (len(runs) - 1) // 2
    return replace(ordered[middle],
                   mapper_start=sorted(cost.mapper_start for cost in runs)[middle],
                   mapper_start_mb=sorted(cost.mapper_start_mb for cost in runs)[middle])


if __name__ == "__main__":
    sys.exit(main())
