"""``relatedpages build INPUT… --db DIR``: segmentation, the chain (or traditional
co-citation) and the database, verified before it is swapped in; ends with a summary and
warns when the database answers few of the crawl's pages."""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from relatedpages.commands.common import (
    add_log_option,
    start_progress,
    EXIT_FAILURE,
    EXIT_OK,
    RUNNERS,
    UsageError,
    check_db_target,
    check_inputs,
    check_job_args,
    check_runner,
    progress,
)
from relatedpages.scoring.options import add_chain_options, chain_job_args, chain_params_from
from relatedpages.scoring.options import describe as describe_chain
from relatedpages.store.db import ALGORITHMS

#: relatedpages build warns when the database has fewer records than this share of pages.
MIN_ANSWERED_DEFAULT = 0.25


def add_parser(commands: Any) -> None:
    build = commands.add_parser("build", help="segmentation, the chain and the database")
    build.add_argument("inputs", nargs="+", metavar="INPUT", help="crawl files (as for segment)")
    build.add_argument("--db", required=True, help="database folder to (re)build")
    build.add_argument("--algorithm", choices=ALGORITHMS, default="block",
                       help="block co-citation or the paper's traditional co-citation. Default: %(default)s")
    build.add_argument("--runner", choices=RUNNERS, default="local", help="Default: %(default)s")
    build.add_argument("--work", help="keep intermediate outputs in this folder, or (with "
                       "--runner hadoop on a cluster) under this URI, e.g. hdfs:///user/me/rp")
    build.add_argument("--job-arg", action="append", default=[], metavar="ARG",
                       help="pass any other argument to the chain job (repeatable)")
    build.add_argument("--min-answered", type=float, default=MIN_ANSWERED_DEFAULT, metavar="RATIO",
                       help="warn (loudly, on stderr) when the database has fewer records than "
                            "this share of the crawl's pages. Default: %(default)s")
    build.add_argument("--no-fallback", action="store_true",
                       help="block co-citation only: do not answer pages without block "
                            "evidence, nor fill block lists shorter than M, by traditional "
                            "co-citation (the default does, marking each such result)")
    build.add_argument("--min-records-ratio", type=float, default=0.0, metavar="RATIO",
                       help="refuse to replace the database at --db by one with fewer than "
                            "RATIO times its records (the old one keeps answering; exit 1). "
                            "scripts/nightly sets 0.5. Default: %(default)s (off)")
    build.add_argument("--hot-keys", type=int, default=0, metavar="REDUCERS",
                       help="block co-citation only: count the chain's first job's keys on a "
                            "tenth of the pages (jobs.hot_keys and jobs.hot_key_bins), plan "
                            "its heavy pages for REDUCERS reducers, and run the chain with that "
                            "many "
                            "(mapreduce.job.reduces) under the plan. Changes where the work "
                            "goes, never the database. Default: off")
    add_chain_options(build.add_argument_group(
        "block co-citation (jobs.related; given options are passed to the job, the others "
        "come from --preset)").add_argument, defaults=False)
    add_log_option(build)
    build.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jobs.pipeline import build
    from relatedpages.store.db import DatabaseError, DatabaseProblem

    check_db_target(args.db, args.inputs)
    args.inputs = check_inputs(args.inputs)
    check_runner(args.runner)
    chain_args = chain_job_args(args)
    if chain_args and args.algorithm != "block":
        raise UsageError(f"{' '.join(chain_args)}: block co-citation options; --algorithm "
                         f"{args.algorithm} takes --job-arg")
    try:
        params = chain_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from None
    check_job_args(args.algorithm, [*chain_args, *args.job_arg])
    if args.hot_keys < 0 or (args.hot_keys and args.algorithm != "block"):
        raise UsageError("--hot-keys: a number of reducers (at least 1), for --algorithm block")
    if args.hot_keys and any(arg.startswith("--hot-keys") for arg in args.job_arg):
        raise UsageError("--hot-keys makes a plan: do not give one with --job-arg too")
    if not 0.0 <= args.min_answered <= 1.0:
        raise UsageError(f"--min-answered must be a ratio in [0, 1], got {args.min_answered}")
    if not 0.0 <= args.min_records_ratio:
        raise UsageError(f"--min-records-ratio must be >= 0, got {args.min_records_ratio}")
    min_records = math.ceil(args.min_records_ratio * _live_records(Path(args.db)))
    log_file = start_progress('build', args.runner, args.log)
    started = time.monotonic()
    try:
        report = build(
            args.inputs, Path(args.db), algorithm=args.algorithm, runner=args.runner,
            work=args.work or None, job_args=[*chain_args, *args.job_arg],
            progress=progress,
            min_records=min_records, fallback=not args.no_fallback,
            fill_to=params[1].m if args.algorithm == "block" else 0,
            hot_keys=args.hot_keys, chain_options=chain_args,
        )
    except DatabaseError as error:
        if error.problem is not DatabaseProblem.COLLAPSED:
            raise
        print(f"relatedpages: error: {error} (--min-records-ratio {args.min_records_ratio:g} "
              f"of the live database's {_live_records(Path(args.db))} records)", file=sys.stderr)
        return EXIT_FAILURE
    out = sys.stdout
    print("\nSummary", file=out)
    print(f"  pages                {report.pages}", file=out)
    print(f"  blocks               {report.blocks}", file=out)
    print(f"  related pairs        {report.pairs}", file=out)
    print(f"  pages with related   {report.pages_with_related}", file=out)
    print(f"  database records     {report.db_records}  ({args.db})", file=out)
    from_site = report.counters.get("block", {}).get("related", {}).get("answered_by_site", 0)
    if from_site:
        print(f"  answered by its site {from_site}  (pages without block evidence of their own, "
              "or with diffuse evidence: the list of the nearest page of their site; marked)",
              file=out)
    if report.fallback_records:
        print(f"  answered by fallback {report.fallback_records}  (traditional co-citation: pages "
              "without block evidence; marked in their results)", file=out)
    if report.hot_keys is not None:
        plan = report.hot_keys.plan
        split = sum(1 for labels in plan.values() if len(labels) > 1)
        print(f"  hot keys             {len(plan)} pages routed ({split} split) for "
              f"{args.hot_keys} reducers, from {report.hot_keys.values} values counted", file=out)
    if report.filled_records:
        print(f"  filled by fallback   {report.filled_records}  (block lists shorter than "
              f"M = {params[1].m}, completed by co-citation after the block results; marked)",
              file=out)
    if args.algorithm == "block" and not args.job_arg:
        print(f"  parameters           {describe_chain(params)}", file=out)
    distribution = _score_distribution(Path(args.db))
    if distribution:
        print(f"  results per record   {distribution}", file=out)
    for stage, seconds in report.stages:
        print(f"  time {stage:<15} {seconds:.1f} s", file=out)
    print(f"  time total           {time.monotonic() - started:.1f} s ({args.runner} runner)", file=out)
    if log_file is not None:
        print(f"  log                  {log_file}", file=out)
    answered = report.db_records / report.pages if report.pages else 0.0
    if answered < args.min_answered:
        print(f"relatedpages: WARNING: the database has {report.db_records} records for "
              f"{report.pages} crawled pages ({answered:.0%} < --min-answered "
              f"{args.min_answered:.0%}): most lookups will find nothing. A threshold too "
              "high for this crawl (--t), a crawl with few shared blocks, or pages the "
              "filters dropped (see the counters) are the usual causes.", file=sys.stderr)
    return EXIT_OK


def _live_records(path: Path) -> int:
    """Records of the database at ``path`` now (0 when there is none or it is unreadable)."""
    from relatedpages.store.db import DatabaseError
    from relatedpages.store.dbopen import read_manifest

    try:
        return read_manifest(path).records
    except (DatabaseError, OSError):
        return 0


def _score_distribution(path: Path) -> str:
    """Results per record and score quantiles of a built database, one line."""
    from relatedpages.store.db import DatabaseError, RelatedPagesDB

    try:
        database = RelatedPagesDB(path)
    except DatabaseError:
        return ""
    lengths: list[int] = []
    scores: list[float] = []
    with database:
        for _, related in database.records():
            lengths.append(len(related))
            scores.extend(item.score for item in related)
    if not scores:
        return ""
    scores.sort()

    def quantile(q: float) -> float:
        return scores[min(len(scores) - 1, int(q * len(scores)))]

    return (f"mean {sum(lengths) / len(lengths):.1f}; scores min {scores[0]:.3g}, median "
            f"{quantile(0.5):.3g}, p90 {quantile(0.9):.3g}, max {scores[-1]:.3g}")
