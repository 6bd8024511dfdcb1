#!/usr/bin/env python
"""Reducer input skew of the chain's first job at any number of reducers, and a hot-key
plan that splits the pages that cause it.

    python scripts/key_skew.py --graph ARCS.tsv.gz --pages 31250 [--reducers 4,64,256,1024]
    python scripts/key_skew.py --web 20000 [--seed 1]
    python scripts/key_skew.py --records SEGMENTS.jsonl … --plan 256 --out hot.tsv
    python scripts/key_skew.py --records hdfs:///rp/segments --plan 3200 --out hot.tsv \
        --runner hadoop [--work hdfs:///rp/hot-key-counts]
    python scripts/key_skew.py --records SEGMENTS.jsonl … --reducers 256 --with-plan hot.tsv
    python scripts/key_skew.py --web 20000 --combiner 64

Reads segment records (sampled from a link graph as ``bench_scale.py --graph`` does, made
from a generated web as ``jobs.segment`` would, or a segment job's output), counts the
values Mapper1 gives each key, and places the keys as Hadoop's partitioner does
(``relatedpages.bench.key_skew``; it agrees with the MiniCluster's job histories).
Per number of reducers it prints the skew (largest reducer's input over the mean), its
floor (the hottest key over the mean: no partitioner goes under it), and the skew with a
hot-key plan (``relatedpages.store.hotkeys``) made from a ``--sample`` of the records.
``--with-plan FILE`` gives the skew under a plan file instead (one the jobs made, or an
older one on newer records).  ``--combiner M`` prints instead how many of Mapper1's values a
combiner could fold with the records split over M map tasks (``combiner_fold``), in all and
for the hottest page.  ``--plan R --out FILE`` writes the plan for R reducers, for
``jobs.related --hot-keys``; with ``--runner`` the records are counted by jobs instead
(``jobs.hot_keys`` and ``jobs.hot_key_bins`` on that runner, the records read where the
runner reads them), for inputs too large for one process.
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.bench.key_skew import (  # noqa: E402
    Foldable, combiner_fold, format_skew, hottest, key_loads, page_loads, reducer_skew)
from relatedpages.scoring.options import add_chain_options, chain_params_from  # noqa: E402
from relatedpages.store.hotkeys import (  # noqa: E402
    PIECE_OF_FAIR_SHARE, ROUTED_OF_FAIR_SHARE, PlanError, plan_keys, read_plan, write_plan)
from relatedpages.store.keyloads import SAMPLE_DEFAULT  # noqa: E402

REDUCERS_DEFAULT = "4,16,64,256,1024"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--graph", type=Path, metavar="ARCS.tsv[.gz]",
                        help="a link graph (source<TAB>target lines); with --pages")
    source.add_argument("--web", type=int, metavar="PAGES", help="a generated web of PAGES pages")
    source.add_argument("--records", nargs="+", metavar="SEGMENTS",
                        help="segment records as jobs.segment writes them (url<TAB>record)")
    parser.add_argument("--pages", type=int, default=31250,
                        help="with --graph: pages sampled (copies above its size). Default: %(default)s")
    parser.add_argument("--seed", type=int, default=1, help="sampling and generation seed. "
                        "Default: %(default)s")
    parser.add_argument("--reducers", default=REDUCERS_DEFAULT,
                        help="reducer counts, comma-separated. Default: %(default)s")
    parser.add_argument("--sample", type=float, default=SAMPLE_DEFAULT,
                        help="the fraction of the records a plan is made from. Default: %(default)s")
    parser.add_argument("--piece", type=float, default=PIECE_OF_FAIR_SHARE,
                        help="split pages above this fraction of a reducer's fair share. "
                             "Default: %(default)s")
    parser.add_argument("--routed", type=float, default=ROUTED_OF_FAIR_SHARE,
                        help="route pages above this fraction of a reducer's fair share. "
                             "Default: %(default)s")
    parser.add_argument("--plan", type=int, metavar="R",
                        help="write the plan for R reducers to --out (from --sample of the records)")
    parser.add_argument("--out", type=Path, help="with --plan: the plan file to write")
    parser.add_argument("--with-plan", type=Path, metavar="PLAN",
                        help="the skew with this plan file (e.g. one the jobs made, or last "
                             "night's on today's records) instead of a plan made here")
    parser.add_argument("--combiner", type=int, metavar="MAPS",
                        help="print how many of Mapper1's values a combiner could fold, the "
                             "records split over MAPS map tasks (no skew table)")
    parser.add_argument("--runner", choices=("inline", "local", "hadoop"),
                        help="with --records and --plan: count with the jobs.hot_keys job on "
                             "this runner (the records may be URIs of its file system)")
    parser.add_argument("--work", help="with --runner: the count job's output folder or URI. "
                        "Default: a temporary folder")
    add_chain_options(parser.add_argument)
    args = parser.parse_args(argv)
    try:
        reducers = [int(value) for value in args.reducers.split(",")]
    except ValueError:
        parser.error(f"--reducers: whole numbers separated by commas, got {args.reducers!r}")
    if any(value < 1 for value in reducers):
        parser.error("--reducers: at least 1")
    if not 0 < args.sample <= 1:
        parser.error("--sample: a fraction in (0, 1]")
    if not 0 < args.routed <= args.piece <= 1:
        parser.error("--routed and --piece: fractions with 0 < routed <= piece <= 1")
    if (args.plan is None) != (args.out is None):
        parser.error("--plan and --out go together")
    if args.plan is not None and args.plan < 1:
        parser.error("--plan: at least 1 reducer")
    if args.runner is not None and (args.records is None or args.plan is None):
        parser.error("--runner counts --records for a --plan: give both")
    if args.with_plan is not None and (args.plan is not None or args.runner is not None):
        parser.error("--with-plan measures a plan: not with --plan or --runner")
    if args.combiner is not None and (args.combiner < 1 or args.plan is not None
                                      or args.runner is not None or args.with_plan is not None):
        parser.error("--combiner MAPS: at least 1 map task, and not with --plan, --runner "
                     "or --with-plan")
    if args.work is not None and args.runner is None:
        parser.error("--work goes with --runner")
    if args.runner is not None and (args.piece, args.routed) != (PIECE_OF_FAIR_SHARE,
                                                                 ROUTED_OF_FAIR_SHARE):
        parser.error("--runner: the count job plans at the default --piece and --routed")
    try:
        link_params, sim_params = chain_params_from(args)
    except ValueError as error:
        parser.error(str(error))
    if args.runner is not None:
        return _plan_by_job(args)
    given = None
    if args.with_plan is not None:
        try:
            given = read_plan(args.with_plan)
        except PlanError as error:
            print(f"key_skew: {error}", file=sys.stderr)
            return 2
    scratch = Path(tempfile.mkdtemp(prefix="relatedpages-skew-"))
    try:
        try:
            records = list(_records(args, scratch))
        except (OSError, ValueError) as error:
            print(f"key_skew: {error}", file=sys.stderr)
            return 2
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.combiner is not None:
        print(_format_fold(_name(args), combiner_fold(records, link_params, sim_params, args.combiner)))
        return 0
    rng = random.Random(args.seed)
    sample = records if args.sample >= 1 else [r for r in records if rng.random() < args.sample]
    name = _name(args)
    if given is None:
        print(f"{name}: {len(records):,} segment records; plans from {len(sample):,} of them "
              f"(--sample {args.sample}): pages above {args.piece:g} of a fair share split, "
              f"above {args.routed:g} routed", flush=True)
    else:
        print(f"{name}: {len(records):,} segment records; the plan in {args.with_plan} "
              f"({_describe(given)})", flush=True)
    loads = page_loads(records, link_params, sim_params)
    sampled = (loads if sample is records or given is not None
               else page_loads(sample, link_params, sim_params))
    print(f"{len(loads):,} keys, {sum(loads.values()):,} values; hottest: "
          + ", ".join(f"{key} {load:,}" for key, load in hottest(loads, 3)), flush=True)
    if args.plan is not None:
        plan = plan_keys(sampled, args.plan, args.piece, args.routed)
        write_plan(plan, args.out)
        print(f"wrote {args.out}: {_describe(plan)} for {args.plan:,} reducers")
        return 0
    rows, planned = [], []
    for count in reducers:
        plan = given if given is not None else plan_keys(sampled, count, args.piece, args.routed)
        rows.append((name, reducer_skew(loads, count)))
        split = reducer_skew(key_loads(records, link_params, sim_params, plan), count) if plan else rows[-1][1]
        planned.append((len(plan), split))
        print(f"  {count:,} reducers: skew {rows[-1][1].skew:.2f} (floor {rows[-1][1].floor:.2f}); "
              f"with a plan ({_describe(plan)}): {split.skew:.2f} (floor {split.floor:.2f})",
              flush=True)
    print()
    print(format_skew(rows, planned))
    return 0


def _plan_by_job(args: argparse.Namespace) -> int:
    """--plan with --runner: the count job, then the plan from its output."""
    from jobs.pipeline import FAILURES, plan_hot_keys
    from relatedpages.scoring.options import chain_job_args

    scratch = Path(tempfile.mkdtemp(prefix="relatedpages-skew-"))
    try:
        planned = plan_hot_keys(
            args.records, args.plan, args.out, runner=args.runner, work=args.work or scratch / "counts",
            chain_args=chain_job_args(args),
            count_args=["--sample", str(args.sample), "--seed", str(args.seed)])
    except FAILURES as error:
        print(f"key_skew: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    records = planned.count.counter("hot keys", "sampled_records")
    print(f"counted {planned.values:,} values of {records:,} sampled records "
          f"({planned.seconds:.1f} s for the two jobs on the {args.runner} runner)")
    print(f"wrote {args.out}: {_describe(planned.plan)} for {args.plan:,} reducers")
    return 0


def _format_fold(name: str, fold: Foldable) -> str:
    def share(part: int, whole: int) -> str:
        return f"{part / whole:.1%}" if whole else "n/a"

    return (f"{name}: {fold.values:,} values of Mapper1 (auxiliary {fold.aux:,}, cited "
            f"{fold.cited:,}, pair {fold.pairs:,}); a combiner over {fold.tasks:,} map tasks "
            f"would leave {fold.after:,} ({share(fold.after, fold.values)})\n"
            f"the hottest page, {fold.hottest}: {fold.hottest_values:,} values, "
            f"{fold.hottest_after:,} after the combiner ({share(fold.hottest_after, fold.hottest_values)})")


def _describe(plan: dict[str, list[int]]) -> str:
    split = sum(1 for labels in plan.values() if len(labels) > 1)
    return (f"{len(plan):,} pages routed, {split:,} of them split in "
            f"{sum(len(labels) for labels in plan.values() if len(labels) > 1):,} pieces")


def _name(args: argparse.Namespace) -> str:
    if args.graph is not None:
        return f"{args.graph.name.split('.')[0]}, {args.pages:,} pages (seed {args.seed})"
    if args.web is not None:
        return f"generated web, {args.web:,} pages (seed {args.seed})"
    return ", ".join(Path(path).name for path in args.records)


def _records(args: argparse.Namespace, scratch: Path) -> Iterator[dict[str, Any]]:
    if args.graph is not None:
        from relatedpages.corpus.graph_records import (
            graph_records, read_successors, sample_sources, tile)

        graph = tile(read_successors(args.graph), args.pages)
        yield from graph_records(graph, sample_sources(graph, args.pages, args.seed))
    elif args.web is not None:
        from relatedpages.bench.key_skew import segment_crawl
        from relatedpages.corpus.generate import generate_crawl

        crawl = generate_crawl(scratch / "web.warc.gz", pages=args.web, seed=args.seed)
        yield from segment_crawl(crawl.path)
    else:
        from relatedpages.bench.key_skew import read_segment_records

        for path in args.records:
            yield from read_segment_records(Path(path))


if __name__ == "__main__":
    sys.exit(main())
