"""The ``relatedpages`` command.

    relatedpages segment INPUT… [-o OUT] [-r inline|local|hadoop]   crawl → link blocks, summary
    relatedpages build INPUT… --db DIR [--algorithm block|cocitation] [--runner …] [--work DIR]
    relatedpages query --db DIR [--json] [--input FILE|-] [URL …]
    relatedpages verify --db DIR                                     every checksum, key order
    relatedpages query --links DIR --algorithm companion|dh-cocitation|extended-cocitation|lli
                       [--json] [--input FILE|-] [--parents B …] [URL …]   the literature's baselines
    relatedpages linkgraph import --edges FILE[.gz] --db DIR [--keys auto|url|id]   a link index
    relatedpages linkgraph build INPUT… --db DIR [--runner …] [--work DIR]        … from a crawl
    relatedpages equivalent-links --links DIR PAGE ANCHOR TARGET [--json]   Courtenage & Williams
    relatedpages moved --old DIR --new DIR [--json] [--input FILE|-] [URL …]   Spertus
    relatedpages authorities --links DIR --roots FILE --algorithm sfp|hits [--json]   Zhou et al.
    relatedpages generate --pages N --seed S -o FILE.warc.gz        the synthetic web
    relatedpages demo [--pages N] [--out DIR] [--force]             generate, build, query
    relatedpages eval segmentation DIR [--split dev|test|all] [--sweep-t1 …]   Table 1, Fig. 4
    relatedpages eval related DATA_DIR [--holdout F] [--seed S] [--plot PNG]   Fig. 10
    relatedpages eval moved DATA_DIR [--pages N] [--seed S] [--updated F] [--json]   Spertus, simulated moves

Exit status: 0 on success, 2 on usage errors, 1 on failure.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from relatedpages.db import ALGORITHMS
from relatedpages.scoring.options import add_chain_options, chain_job_args, chain_params_from
from relatedpages.scoring.options import describe as describe_chain
from segmenter.adjust import (
    ADJUST_OPTIONS,
    AdjustParams,
    add_adjust_options,
    adjust_params_from,
)
from relatedpages.commands.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError

RUNNERS = ("inline", "local", "hadoop")  # mrjob runners the commands offer


#: relatedpages build warns when the database has fewer records than this share of pages.
MIN_ANSWERED_DEFAULT = 0.25


def _version() -> str:
    """The installed package's version (setup.py), or "unknown" when run from a tree
    that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("relatedpages")
    except PackageNotFoundError:
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    from relatedpages.commands import verify as verify_command

    parser = argparse.ArgumentParser(prog="relatedpages", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"relatedpages {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    verify_command.add_parser(commands)

    segment = commands.add_parser("segment", help="run jobs.segment over a crawl and summarise")
    segment.add_argument("inputs", nargs="+", metavar="INPUT",
                         help="WARC[.gz], JSONL[.gz] or a folder's path<TAB>url .tsv manifest")
    segment.add_argument("-o", "--output", help="output folder (default: a temporary one)")
    segment.add_argument("-r", "--runner", choices=RUNNERS, default="local",
                         help="mrjob runner. Default: %(default)s")
    segment.add_argument("--show", type=int, default=3, metavar="N",
                         help="print the blocks of N pages with the most blocks. Default: %(default)s")
    add_adjust_options(segment.add_argument)

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
    add_chain_options(build.add_argument_group(
        "block co-citation (jobs.related; given options are passed to the job, the others "
        "come from --preset)").add_argument, defaults=False)

    query = commands.add_parser(
        "query", help="related pages of URLs, from a database (--db) or a link index (--links)")
    query.add_argument("urls", nargs="*", metavar="URL")
    source = query.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="database folder (block co-citation or co-citation)")
    source.add_argument("--links", metavar="DIR",
                        help="link index folder (relatedpages linkgraph import|build): answer with "
                             "one of the literature's methods, --algorithm")
    query.add_argument("--json", action="store_true", help="one JSON object per query")
    query.add_argument("--input", metavar="FILE", help="read URLs from FILE, one per line (- = stdin)")
    query.add_argument("--verify", action="store_true",
                       help="--db: check every partition's checksum before answering (as "
                            "relatedpages verify; reads the whole database once)")
    _add_baseline_query_options(query)

    generate = commands.add_parser("generate", help="write a deterministic synthetic crawl")
    generate.add_argument("--pages", type=int, required=True)
    generate.add_argument("--seed", type=int, default=1)
    generate.add_argument("-o", "--output", required=True, help="FILE.warc.gz")

    demo = commands.add_parser("demo", help="generate a crawl, build its database, query it")
    demo.add_argument("--pages", type=int, default=3000, help="Default: %(default)s")
    demo.add_argument("--seed", type=int, default=1, help="Default: %(default)s")
    demo.add_argument("--out", default="out/demo", help="working folder. Default: %(default)s")
    demo.add_argument("--runner", choices=RUNNERS, default="local", help="Default: %(default)s")
    demo.add_argument("--queries", type=int, default=4, help="sites to query. Default: %(default)s")
    demo.add_argument("--force", action="store_true",
                      help="use --out even if it holds files the demo did not make (they are "
                           "left alone; the demo writes only crawl.warc.gz, its sidecar and db/)")

    evaluate = commands.add_parser("eval", help="evaluations")
    evals = evaluate.add_subparsers(dest="evaluation", required=True)
    seg_eval = evals.add_parser("segmentation", help="E/I-precision against human block annotations")
    seg_eval.add_argument("folder", metavar="DIR", help="e.g. ../shared/data/segmentation/kreuzer-random")
    seg_eval.add_argument("--plot", default="segmentation-block-sizes.png",
                          help="where to write the block-size distribution (Fig. 4). Default: %(default)s")
    seg_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")
    seg_eval.add_argument("--sweep-t1", metavar="V,V,…",
                          help="evaluate these T1 values instead (how T1 is chosen: on the "
                               "development split unless --split says otherwise)")
    seg_eval.add_argument("--split", choices=("dev", "test", "all"),
                          help="which annotated pages: the development or test half of the "
                               "sites (--seed), or all. Default: test for the table, dev for "
                               "--sweep-t1")
    seg_eval.add_argument("--seed", type=int, default=1,
                          help="seed of the split by site. Default: %(default)s")
    seg_eval.add_argument("--worst", type=int, default=10, metavar="N",
                          help="list the N pages with the lowest I-precision (0: none). "
                               "Default: %(default)s")
    add_adjust_options(seg_eval.add_argument)
    _add_eval_related(evals)
    _add_eval_moved(evals)
    topics = evals.add_parser(
        "topics", help="related pages graded by topic on generated webs (the second ground truth)")
    topics.add_argument("--pages", default="10000", metavar="N,N,…",
                        help="generated web sizes. Default: %(default)s")
    topics.add_argument("--seed", type=int, default=2,
                        help="generator seed (the default preset was chosen on seed 7). "
                             "Default: %(default)s")
    topics.add_argument("--crawl", action="append", default=[], metavar="FILE",
                        help="grade this generated crawl (with its .topics.tsv) instead")
    topics.add_argument("--plot", default="related-topics.png",
                        help="P@15 per topic (Fig. 11). Default: %(default)s")
    topics.add_argument("--json", action="store_true", help="print the figures as JSON too")
    _add_link_commands(commands)
    return parser


def _add_eval_related(evals: Any) -> None:
    from relatedpages.evaluation import related as rel

    rel_eval = evals.add_parser(
        "related", help="block co-citation vs co-citation on held-out hub lists (Fig. 10)")
    rel_eval.add_argument("data", metavar="DATA_DIR", help="the shared data, e.g. ../shared/data")
    rel_eval.add_argument("--holdout", type=float, default=rel.HOLDOUT_DEFAULT,
                          help="fraction of whole hub lists held out. Default: %(default)s")
    rel_eval.add_argument("--seed", type=int, default=rel.SEED_DEFAULT,
                          help="seed of the hold-out draw. Default: %(default)s")
    rel_eval.add_argument("--t", type=float, default=rel.T_EVAL_DEFAULT,
                          help="block co-citation threshold T. Default: %(default)s")
    rel_eval.add_argument("--min-degree", type=int, default=rel.MIN_DEGREE_EVAL_DEFAULT,
                          help="co-citation minimum degree. Default: %(default)s")
    rel_eval.add_argument("--min-citing", type=int, default=rel.MIN_CITING_DEFAULT,
                          help="test pages are linked from at least this many index pages. "
                               "Default: %(default)s")
    rel_eval.add_argument("--sweep-t", default=",".join(f"{v:g}" for v in rel.T_SWEEP_DEFAULT),
                          metavar="V,V,…",
                          help="T values of the sensitivity table. Default: %(default)s")
    rel_eval.add_argument("--sweep-min-degree", metavar="V,V,…",
                          default=",".join(str(v) for v in rel.MIN_DEGREE_SWEEP_DEFAULT),
                          help="min-degree values of the sensitivity table. Default: %(default)s")
    rel_eval.add_argument("--lists", type=int, metavar="N",
                          help="use only N hub lists (deterministic sample; quick runs)")
    rel_eval.add_argument("--baselines", metavar="NAME,…|all|none", default="all",
                          help="page-level baselines scored beside them on a link graph of "
                               f"the same index pages ({', '.join(rel.BASELINES)}). "
                               "Default: %(default)s")
    rel_eval.add_argument("--plot", default="related-rscore.png",
                          help="where to write the R-score curve (Fig. 10). Default: %(default)s")
    rel_eval.add_argument("--plot-categories", default="related-categories.png",
                          help="where to write the R-score per category of the held-out lists "
                               "(Fig. 11). Default: %(default)s")
    rel_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")


def _add_eval_moved(evals: Any) -> None:
    from relatedpages.evaluation import moved as mv

    moved_eval = evals.add_parser(
        "moved", help="Spertus's moved-page finder on simulated moves in the real corpus")
    moved_eval.add_argument("data", metavar="DATA_DIR", help="the shared data, e.g. ../shared/data")
    moved_eval.add_argument("--pages", type=int, default=mv.PAGES_DEFAULT, metavar="N",
                            help="pages moved, one per simulated new crawl (all eligible pages "
                                 "when fewer). Default: %(default)s")
    moved_eval.add_argument("--seed", type=int, default=mv.SEED_DEFAULT,
                            help="seed of the draw of pages and updated parents. Default: %(default)s")
    moved_eval.add_argument("--updated", type=float, default=mv.UPDATED_DEFAULT, metavar="F",
                            help="share of a moved page's parents that link to its new URL "
                                 "(at least one; the others keep the stale link). The report "
                                 "also sweeps F over "
                                 f"{', '.join(f'{v:g}' for v in mv.UPDATED_SWEEP_DEFAULT)}. "
                                 "Default: %(default)s")
    moved_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")


def _adjust_params(args: argparse.Namespace) -> AdjustParams:
    try:
        return adjust_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from error


# -- segment ---------------------------------------------------------------------------


def _check_runner(runner: str) -> None:
    """``-r hadoop`` needs a ``hadoop`` command and, with the repository's mrjob.conf,
    HADOOP_HOME (its streaming jar is ``$HADOOP_HOME/hadoop-streaming.jar``): say exactly
    what to do, before any work, instead of failing inside mrjob."""
    import shutil

    if runner != "hadoop":
        return
    missing = [what for what, absent in (
        ("no `hadoop` command on PATH", shutil.which("hadoop") is None),
        ("HADOOP_HOME is not set", not os.environ.get("HADOOP_HOME") and not os.environ.get("MRJOB_CONF")),
    ) if absent]
    if missing:
        raise UsageError(f"--runner hadoop: {' and '.join(missing)}. Run scripts/hadoop-setup "
                         "once, then `source hadoop/env.sh` (it sets both); on a cluster node, "
                         "put Hadoop's bin/ on PATH and set HADOOP_HOME (or MRJOB_CONF)")


def _check_job_args(algorithm: str, job_args: Sequence[str]) -> None:
    """The chain's arguments parsed and checked by the job itself, before any work: a typo
    or a value out of range is one usage line, not a traceback after the segmentation."""
    if algorithm == "block":
        from jobs.related import MRRelatedPages as chain
    else:
        from jobs.cocitation import MRCocitation as chain
    try:
        chain(args=[*job_args, "-"])
    except (ValueError, SystemExit) as error:
        raise UsageError(f"job arguments {' '.join(job_args)}: {error}") from None


def _check_db_target(db: str, inputs: Sequence[str]) -> None:
    """``--db`` refused before any work: a file, a folder inside an input folder, or a
    place that cannot be written (a folder there that is not a database is refused by the
    build itself, which never overwrites it)."""
    target = Path(db).absolute()
    if target.exists() and not target.is_dir():
        raise UsageError(f"--db {db} is a file, not a database folder")
    for name in inputs:
        source = Path(name).absolute()
        if "://" not in name and source.is_dir() and target.is_relative_to(source):
            raise UsageError(f"--db {db} is inside the input folder {name}: the next build "
                             "would read the database as input; put it elsewhere")
    parent = next((p for p in (target, *target.parents) if p.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--db {db}: cannot write there ({parent} is not a writable folder)")


def _check_inputs(inputs: Sequence[str]) -> list[str]:
    """The input files (folders searched: :func:`relatedpages.ingest.expand_inputs`), or
    a one-line usage error before any work starts."""
    from relatedpages.ingest import expand_inputs

    try:
        return expand_inputs(inputs)
    except ValueError as error:
        raise UsageError(str(error)) from None


def run_segment(args: argparse.Namespace) -> int:
    import tempfile

    from jobs.pipeline import iter_output, run_job, show_job_progress
    from jobs.segment import MRSegment

    args.inputs = _check_inputs(args.inputs)
    _check_runner(args.runner)
    _adjust_params(args)
    if args.output and Path(args.output).exists() and any(Path(args.output).iterdir()):
        raise UsageError(f"output folder exists and is not empty: {args.output}")
    job_args: list[str] = []
    for flag, name, _, _ in ADJUST_OPTIONS:
        job_args += [flag, str(getattr(args, name))]
    show_job_progress()
    started = time.monotonic()
    output = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="relatedpages-seg-"))
    run = run_job(MRSegment, [*job_args, *args.inputs], runner=args.runner, output_dir=output)
    pages = blocks = links = 0
    without_blocks = 0
    sizes: Counter[int] = Counter()
    shown: list[tuple[int, str, list[list[dict[str, Any]]]]] = []
    for url, record in iter_output(output):
        pages += 1
        page_blocks = record["blocks"]
        blocks += len(page_blocks)
        links += sum(len(b) for b in page_blocks)
        sizes.update(len(b) for b in page_blocks)
        without_blocks += not page_blocks
        shown.append((len(page_blocks), url, page_blocks))
        shown = sorted(shown, key=lambda s: (-s[0], s[1]))[: args.show]
    counters = [run.counters]
    if not args.output:
        import shutil

        shutil.rmtree(output, ignore_errors=True)
    elapsed = time.monotonic() - started
    out = sys.stdout
    for _, url, page_blocks in shown:
        print(f"\n{url}: {len(page_blocks)} blocks", file=out)
        for number, block in enumerate(page_blocks[:6]):
            anchors = ", ".join(link["anchor"][:24] or "(no anchor)" for link in block[:6])
            more = f", … (+{len(block) - 6})" if len(block) > 6 else ""
            print(f"  block {number}: {len(block)} links: {anchors}{more}", file=out)
        if len(page_blocks) > 6:
            print(f"  … {len(page_blocks) - 6} more blocks", file=out)
    print("\nSummary", file=out)
    print(f"  pages written        {pages}", file=out)
    print(f"  pages without blocks {without_blocks}", file=out)
    print(f"  blocks               {blocks}", file=out)
    print(f"  links in blocks      {links}", file=out)
    if blocks:
        median = sorted(sizes.elements())[blocks // 2]
        print(f"  block size           mean {links / blocks:.1f}, median {median}, max {max(sizes)}", file=out)
    print(f"  time                 {elapsed:.1f} s ({args.runner} runner)", file=out)
    for step, step_counters in enumerate(counters, 1):
        for group in sorted(step_counters):
            for name, value in sorted(step_counters[group].items()):
                print(f"  counter step {step} {group}.{name} = {value}", file=out)
    if args.output:
        print(f"  output               {args.output}", file=out)
    return EXIT_OK


# -- build, query, generate -------------------------------------------------------------


def run_build(args: argparse.Namespace) -> int:
    from jobs.pipeline import build, show_job_progress
    from relatedpages.db import DatabaseError, DatabaseProblem

    _check_db_target(args.db, args.inputs)
    args.inputs = _check_inputs(args.inputs)
    _check_runner(args.runner)
    chain_args = chain_job_args(args)
    if chain_args and args.algorithm != "block":
        raise UsageError(f"{' '.join(chain_args)}: block co-citation options; --algorithm "
                         f"{args.algorithm} takes --job-arg")
    try:
        params = chain_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from None
    _check_job_args(args.algorithm, [*chain_args, *args.job_arg])
    if not 0.0 <= args.min_answered <= 1.0:
        raise UsageError(f"--min-answered must be a ratio in [0, 1], got {args.min_answered}")
    if not 0.0 <= args.min_records_ratio:
        raise UsageError(f"--min-records-ratio must be >= 0, got {args.min_records_ratio}")
    min_records = math.ceil(args.min_records_ratio * _live_records(Path(args.db)))
    show_job_progress()
    started = time.monotonic()
    try:
        report = build(
            args.inputs, Path(args.db), algorithm=args.algorithm, runner=args.runner,
            work=args.work or None, job_args=[*chain_args, *args.job_arg],
            progress=lambda message: print(message, file=sys.stderr, flush=True),
            min_records=min_records, fallback=not args.no_fallback,
            fill_to=params[1].m if args.algorithm == "block" else 0,
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
    if report.fallback_records:
        print(f"  answered by fallback {report.fallback_records}  (traditional co-citation: pages "
              "without block evidence; marked in their results)", file=out)
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
    from relatedpages.db import DatabaseError, read_manifest

    try:
        return read_manifest(path).records
    except (DatabaseError, OSError):
        return 0


def _score_distribution(path: Path) -> str:
    """Results per record and score quantiles of a built database, one line."""
    from relatedpages.db import DatabaseError, RelatedPagesDB

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


def _query_lines(args: argparse.Namespace) -> list[str]:
    urls = list(args.urls)
    if args.input:
        handle = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
        with handle:
            urls += [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    if not urls:
        raise UsageError("no URL to query: give URLs or --input FILE|-")
    return urls


def run_query(args: argparse.Namespace) -> int:
    from filters.urls import normalise_url
    from relatedpages.db import DatabaseError, RelatedPagesDB

    given = _given_baseline_flags(args)
    if given:
        raise UsageError(f"{', '.join(given)}: only with --links (a --db database answers with the "
                         "algorithm it was built with)")
    urls = _query_lines(args)
    try:
        database = RelatedPagesDB(args.db, verify="full" if args.verify else "sizes")
    except DatabaseError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    status = EXIT_OK
    with database:
        for query in urls:
            url = normalise_url(query)
            if url is None:
                print(f"relatedpages: error: malformed URL: {query}", file=sys.stderr)
                status = EXIT_USAGE
                continue
            found = database.find(url)
            matched, related = found if found is not None else (None, None)
            if args.json:
                print(json.dumps({
                    "query": query, "url": url, "found": related is not None,
                    "matched": matched,
                    "related": [{"url": r.url, "score": r.score,
                                 "evidence": [list(e) for e in r.evidence],
                                 **({"fallback": r.fallback} if r.fallback else {})}
                                for r in related or []],
                }, ensure_ascii=False))
            else:
                _print_related(query, matched or url, related)
    return status


def _one_line(text: str, width: int = 60) -> str:
    """Anchor text from a crawl, printable on one terminal line (control characters out)."""
    clean = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return clean if len(clean) <= width else clean[: width - 1] + "…"


def _print_related(query: str, url: str, related: list[Any] | None) -> None:
    print(f"\n{url}" + ("" if url == query else f"   (query: {query})"))
    if related is None:
        print("  not in the database")
        return
    if not related:
        print("  no related pages")
    whole = bool(related) and related[0].fallback is not None
    if whole:
        print(f"  (no block evidence: answered by {related[0].fallback})")
    for rank, item in enumerate(related, 1):
        sites = ", ".join(evidence[0] for evidence in item.evidence)
        filled = f"  (filled by {item.fallback})" if item.fallback and not whole else ""
        print(f"  {rank:>2}. {item.score:>8.3f}  {item.url}   [{sites}]{filled}")
        if item.evidence and len(item.evidence[0]) == 4:
            _, _, citing, text = item.evidence[0]
            print(f"{'':>14}via {citing}" + (f"  «{_one_line(text)}»" if text else ""))


def run_generate(args: argparse.Namespace) -> int:
    from relatedpages.generate import generate_crawl

    if args.pages <= 0:
        raise UsageError("--pages must be positive")
    started = time.monotonic()
    crawl = generate_crawl(Path(args.output), pages=args.pages, seed=args.seed)
    seconds = time.monotonic() - started
    print(f"wrote {crawl.pages} pages of {crawl.sites} sites in {crawl.topics} topics to {args.output} "
          f"({seconds:.1f} s, {crawl.pages / max(seconds, 1e-9):,.0f} pages/s)")
    return EXIT_OK


#: Left in a folder ``relatedpages demo`` made: a later demo may write there again.
DEMO_MARKER = ".relatedpages-demo"


def _claim_demo_folder(out: Path, force: bool) -> None:
    """Make ``out`` the demo's folder, or refuse (UsageError) a file, or a non-empty folder
    the demo did not make (unless ``force``).  Nothing in it is ever deleted: the demo
    overwrites only its own files (the crawl, its sidecar; ``db/`` is replaced atomically,
    and a ``db`` that is not a database is refused by the build)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / DEMO_MARKER).exists() and not force:
        raise UsageError(f"--out {out} is not empty and was not made by relatedpages demo: "
                         "choose another folder, or add --force (nothing in it is deleted)")
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARKER).write_text("made by relatedpages demo\n", encoding="utf-8")


def run_demo(args: argparse.Namespace) -> int:
    """The README's first command: the whole system on the synthetic web, in under a minute."""
    from relatedpages.db import RelatedPagesDB
    from relatedpages.generate import registration_url, sample_queries

    out = Path(args.out)
    _claim_demo_folder(out, args.force)
    crawl = out / "crawl.warc.gz"
    print(f"==> relatedpages generate --pages {args.pages} --seed {args.seed} -o {crawl}", flush=True)
    run_generate(argparse.Namespace(pages=args.pages, seed=args.seed, output=str(crawl)))
    print(f"==> relatedpages build {crawl} --db {out / 'db'} --runner {args.runner}", flush=True)
    run_build(_parser().parse_args(["build", str(crawl), "--db", str(out / "db"),
                                    "--runner", args.runner]))
    queries = sample_queries(crawl, args.queries)
    print(f"==> relatedpages query --db {out / 'db'} {' '.join(queries)}", flush=True)
    run_query(argparse.Namespace(urls=queries, db=str(out / "db"), json=False, input=None,
                                 verify=False))
    template = registration_url()
    with RelatedPagesDB(out / "db") as database:
        lists = {"block": 0, "fallback": 0}
        holders: dict[str, list[str]] = {"block": [], "fallback": []}
        for url, related in database.records():
            if url == template or not related:
                continue
            for kind, mine in (("block", [i for i in related if i.fallback is None]),
                               ("fallback", [i for i in related if i.fallback is not None])):
                lists[kind] += bool(mine)
                if any(item.url == template for item in mine):
                    holders[kind].append(url)
    print(f"\nThe registration link {template} sits in the footer template of most pages of "
          f"every site. It is a block result in {len(holders['block'])} of the "
          f"{lists['block']} lists with block results"
          + (f" (those of {', '.join(holders['block'][:3])}, …: pages where the segmenter "
             "merges another block with the footer)" if holders["block"] else "")
          + f", and a fallback result in {len(holders['fallback'])} of the "
          f"{lists['fallback']} lists the co-citation fallback answers or fills (co-citation "
          "has no template damping).")
    return EXIT_OK


# -- eval segmentation -----------------------------------------------------------------


def run_eval_segmentation(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import segmentation as seg_eval

    folder = Path(args.folder)
    if not (folder / "mapping.txt").is_file():
        raise UsageError(f"{folder}: not an annotated data set (no mapping.txt)")
    if args.sweep_t1:
        base = _adjust_params(args)
        try:
            values = [float(v) for v in args.sweep_t1.split(",") if v.strip()]
            for value in values:
                AdjustParams(t1=value)
        except ValueError as error:
            raise UsageError(f"--sweep-t1: {error}") from error
        split = args.split or "dev"
        print(f"pages: {split}" + ("" if split == "all" else f" (seed {args.seed})"))
        print(f"{'T1':>5}{'blocks':>8}{'E judged':>10}{'I judged':>10}{'E strict':>10}{'I strict':>10}")
        for t1, evaluation in seg_eval.sweep_t1(folder, values, base, split, args.seed):
            print(f"{t1:>5.2f}{evaluation.after_strict.blocks:>8}"
                  f"{100 * evaluation.after.e_precision:>10.1f}{100 * evaluation.after.i_precision:>10.1f}"
                  f"{100 * evaluation.after_strict.e_precision:>10.1f}"
                  f"{100 * evaluation.after_strict.i_precision:>10.1f}")
        return EXIT_OK
    evaluation = seg_eval.evaluate(folder, _adjust_params(args), args.split or "test", args.seed)
    print(seg_eval.format_table(evaluation))
    if args.worst > 0:
        print("\n" + seg_eval.worst_pages(evaluation, args.worst))
    plot = Path(args.plot)
    seg_eval.plot_block_sizes(evaluation, plot)
    print(f"block-size distribution (Fig. 4): {plot}")
    if args.json:
        print(seg_eval.evaluation_as_json(evaluation))
    return EXIT_OK


# -- eval related ----------------------------------------------------------------------


def _shared_data_folder(name: str) -> Path:
    """``../shared/data`` as given, or a usage error naming the file it lacks."""
    from relatedpages.evaluation import related as rel

    data = Path(name)
    for relative in (rel.HUB_PATH, *rel.WEB_PATHS):
        if not (data / relative).is_file():
            raise UsageError(f"{data}: not the shared data folder (no {relative})")
    return data


def run_eval_related(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import categories as cat
    from relatedpages.evaluation import related as rel

    data = _shared_data_folder(args.data)
    try:
        t_sweep = [float(v) for v in args.sweep_t.split(",") if v.strip()]
        degree_sweep = [int(v) for v in args.sweep_min_degree.split(",") if v.strip()]
    except ValueError as error:
        raise UsageError(f"--sweep-t / --sweep-min-degree: {error}") from error
    try:
        baselines = rel.parse_baselines(args.baselines)
    except ValueError as error:
        raise UsageError(f"--baselines: {error}") from error
    settings = dict(holdout=args.holdout, t=args.t, min_degree=args.min_degree,
                    min_citing=args.min_citing, t_sweep=t_sweep,
                    min_degree_sweep=degree_sweep, max_lists=args.lists, baselines=baselines)
    try:
        rel.check_parameters(**settings)
    except ValueError as error:
        raise UsageError(str(error)) from error
    print("segmenting the corpus and running the oracles and baselines (about two minutes) …",
          file=sys.stderr, flush=True)
    evaluation = rel.evaluate(data, seed=args.seed, **settings)
    print(rel.format_report(evaluation))
    plot = Path(args.plot)
    rel.plot_rscore(evaluation, plot)
    print(f"R-score curve (Fig. 10): {plot}")
    category_file = data / cat.CATEGORIES_PATH
    rows = []
    if category_file.is_file():
        names = cat.default_names(evaluation)
        rows = cat.category_rows(evaluation, cat.read_categories(category_file))
        print("\n" + cat.format_categories(rows, names))
        cat.plot_categories(rows, names, Path(args.plot_categories))
        print(f"R-score per category (Fig. 11): {args.plot_categories}")
    if args.json:
        print(rel.evaluation_as_json(evaluation, categories=cat.as_dict(rows)))
    return EXIT_OK


def run_eval_topics(args: argparse.Namespace) -> int:
    import tempfile

    from relatedpages.evaluation import topics as top
    from relatedpages.generate import generate_crawl

    try:
        sizes = [int(v) for v in args.pages.split(",") if v.strip()]
    except ValueError as error:
        raise UsageError(f"--pages: {error}") from error
    if any(size < 100 for size in sizes) and not args.crawl:
        raise UsageError("--pages: generate at least 100 pages")
    evaluations = []
    with tempfile.TemporaryDirectory(prefix="relatedpages-topics-") as folder:
        crawls = [Path(path) for path in args.crawl]
        for size in ([] if args.crawl else sizes):
            crawl = Path(folder) / f"web-{size}-seed{args.seed}.warc.gz"
            print(f"generating {size} pages (seed {args.seed}) …", file=sys.stderr, flush=True)
            generate_crawl(crawl, pages=size, seed=args.seed)
            crawls.append(crawl)
        for crawl in crawls:
            if not crawl.is_file():
                raise UsageError(f"no such crawl: {crawl}")
            evaluation = top.evaluate_topics(crawl)
            evaluations.append(evaluation)
            print(top.format_topics(evaluation) + "\n")
    plot = Path(args.plot)
    top.plot_topics(evaluations, plot)
    print(f"P@15 per topic (Fig. 11): {plot}")
    if args.json:
        print(json.dumps([top.as_dict(e) for e in evaluations]))
    return EXIT_OK


# -- eval moved ------------------------------------------------------------------------


def run_eval_moved(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import moved as mv
    from relatedpages.evaluation import related as rel

    data = _shared_data_folder(args.data)
    if args.pages < 2:
        raise UsageError(f"--pages must be >= 2 (each move's control is another moved page), got {args.pages}")
    try:
        mv.check_fraction(args.updated)
    except ValueError as error:
        raise UsageError(f"--updated: {error}") from error
    print("segmenting the corpus and simulating the moves (about a minute) …",
          file=sys.stderr, flush=True)
    evaluation = mv.evaluate(data, pages=args.pages, seed=args.seed, updated=args.updated)
    print(mv.format_report(evaluation))
    if args.json:
        print(mv.evaluation_as_json(evaluation))
    return EXIT_OK


# -- the literature's baselines on a connectivity server ---------------------------------


def _baseline_algorithms() -> tuple[str, ...]:
    """``query --links --algorithm``: the page-level methods (relatedpages.baselines.methods)."""
    from relatedpages.baselines.methods import PAGE_METHODS

    return tuple(PAGE_METHODS)


AUTHORITY_ALGORITHMS = ("sfp", "hits")

# Query flag → the parameter it sets, per algorithm (a flag an algorithm lacks is a usage
# error, not silently ignored).
_QUERY_FLAGS: dict[str, dict[str, str]] = {
    "companion": {"parents": "max_parents", "siblings": "siblings_per_parent", "children": "max_children",
                  "coparents": "coparents_per_child", "max_results": "max_results", "seed": "sample_seed"},
    "dh-cocitation": {"parents": "max_parents", "siblings": "siblings_per_parent",
                      "max_results": "max_results", "seed": "sample_seed"},
    "extended-cocitation": {"parents": "parents", "siblings": "siblings", "children": "children",
                            "coparents": "co_parents", "delta": "delta", "max_results": "max_results"},
    "lli": {"parents": "parents", "siblings": "siblings", "children": "children", "coparents": "co_parents",
            "epsilon": "epsilon", "delta": "delta", "max_results": "max_results"},
}
_STOPLIST_ALGORITHMS = ("companion", "dh-cocitation")


def _baseline_params_classes() -> dict[str, Any]:
    from relatedpages.baselines.methods import PAGE_METHODS

    return {name: method.params for name, method in PAGE_METHODS.items()}


def _field_default(params_class: Any, name: str) -> Any:
    for item in dataclasses.fields(params_class):
        if item.name == name:
            return item.default
    raise KeyError(name)


def _defaults_text(flag: str, classes: dict[str, Any]) -> str:
    """'Default: 2000' when every algorithm with the flag agrees, else one per algorithm —
    read from the parameter classes, whose defaults are the modules' *_DEFAULT constants."""
    values = {algorithm: _field_default(classes[algorithm], names[flag])
              for algorithm, names in _QUERY_FLAGS.items() if flag in names}
    distinct = set(values.values())
    if len(distinct) == 1:
        return f"Default: {distinct.pop()}"
    return "Default: " + ", ".join(f"{value} ({algorithm})" for algorithm, value in values.items())


def _add_baseline_query_options(query: argparse.ArgumentParser) -> None:
    classes = _baseline_params_classes()
    group = query.add_argument_group(
        "with --links", "the literature's page-level methods; parameter defaults are the papers' values")
    group.add_argument("--algorithm", choices=_baseline_algorithms(),
                       help="companion, dh-cocitation (Dean & Henzinger), extended-cocitation, lli "
                            "(Hou & Zhang). Required with --links")
    flags = {
        "max_results": ("--max-results", int, "N", "related pages per query"),
        "parents": ("--parents", int, "B", "parents of the query page read (sampled beyond B)"),
        "siblings": ("--siblings", int, "BF", "siblings taken around the link to u in each parent"),
        "children": ("--children", int, "F", "children of the query page read"),
        "coparents": ("--coparents", int, "FB", "co-parents read per child"),
        "delta": ("--delta", float, "δ", "extended-cocitation: minimum co-citation degree; "
                                         "lli: minimum cosine in the reduced space"),
        "epsilon": ("--epsilon", float, "ε", "lli: singular-value gap choosing the rank k"),
        "seed": ("--seed", int, "S", "seed of the parent sample when u has more than B parents"),
    }
    for flag, (option, kind, metavar, text) in flags.items():
        users = ", ".join(a for a, names in _QUERY_FLAGS.items() if flag in names)
        group.add_argument(option, type=kind, metavar=metavar, dest=f"param_{flag}",
                           help=f"{text} [{users}]. {_defaults_text(flag, classes)}")
    group.add_argument("--stoplist", metavar="FILE",
                       help="pages and hosts that never enter the neighbourhood [companion, "
                            "dh-cocitation]. Default: conf/stoplist.txt (companion), none (dh-cocitation)")
    group.add_argument("--no-stoplist", action="store_true", help="no stoplist [companion, dh-cocitation]")
    group.add_argument("--no-chop-urls", action="store_true",
                       help="no restart on u's URL with path elements removed [dh-cocitation]")


def _add_link_commands(commands: Any) -> None:
    from relatedpages.baselines.equivalent import ANCHOR_THRESHOLD_DEFAULT, EQUIVALENT_MAX_RESULTS_DEFAULT
    from relatedpages.baselines.hits import FILTER_THRESHOLD_DEFAULT, ITERATIONS_DEFAULT
    from relatedpages.baselines.hits import MAX_RESULTS_DEFAULT as HITS_MAX_RESULTS_DEFAULT
    from relatedpages.baselines.moved import (
        ANCHOR_WEIGHT_DEFAULT,
        HOP_DECAY_DEFAULT,
        MAX_CANDIDATES_DEFAULT,
        MAX_HOPS_DEFAULT,
        POSITION_WEIGHT_DEFAULT,
    )
    from relatedpages.baselines.moved import MAX_PARENTS_DEFAULT as MOVED_MAX_PARENTS_DEFAULT
    from relatedpages.baselines.sfp import LEVEL_DEFAULT, MAX_LINKS_DEFAULT, MAX_PAGES_DEFAULT, MIN_FREQ_DEFAULT
    from relatedpages.linkindex import AUTO_KEYS

    linkgraph = commands.add_parser("linkgraph", help="the connectivity server's link index")
    link_commands = linkgraph.add_subparsers(dest="linkgraph_command", required=True)
    importer = link_commands.add_parser("import", help="a link index from an edge list")
    importer.add_argument("--edges", required=True, metavar="FILE",
                          help="source<TAB>target per line (.gz or plain; # comments), URLs or node ids")
    importer.add_argument("--db", required=True, metavar="DIR", help="link index folder to (re)build")
    importer.add_argument("--keys", choices=(AUTO_KEYS, "url", "id"), default=AUTO_KEYS,
                          help="what the fields are; auto: URLs when the first line's are http(s) URLs. "
                               "Default: %(default)s")
    builder = link_commands.add_parser("build", help="a link index from a crawl (segmentation, jobs.linkgraph)")
    builder.add_argument("inputs", nargs="+", metavar="INPUT", help="crawl files (as for segment)")
    builder.add_argument("--db", required=True, metavar="DIR", help="link index folder to (re)build")
    builder.add_argument("--runner", choices=RUNNERS, default="local", help="Default: %(default)s")
    builder.add_argument("--work", help="keep intermediate outputs in this folder, or (with --runner "
                         "hadoop on a cluster) under this URI, e.g. hdfs:///user/me/rp")

    equivalent = commands.add_parser(
        "equivalent-links", help="hyperlinks equivalent to (PAGE, ANCHOR) → TARGET (Courtenage & Williams)")
    equivalent.add_argument("--links", required=True, metavar="DIR", help="link index folder (with anchors)")
    equivalent.add_argument("page", metavar="PAGE", help="the page carrying the link")
    equivalent.add_argument("anchor", metavar="ANCHOR", help="the link's anchor text")
    equivalent.add_argument("target", metavar="TARGET", help="the page it links to")
    equivalent.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    equivalent.add_argument("--anchor-threshold", type=float, default=ANCHOR_THRESHOLD_DEFAULT,
                            help="anchors are similar at or above this Jaccard coefficient. Default: %(default)s")
    equivalent.add_argument("--max-results", type=int, default=EQUIVALENT_MAX_RESULTS_DEFAULT,
                            help="Default: %(default)s")
    equivalent.add_argument("--same-link", action="store_true",
                            help="the similar anchor must be on the link itself (default: anywhere on the page)")

    moved = commands.add_parser("moved", help="new locations of pages gone between two crawls (Spertus)")
    moved.add_argument("urls", nargs="*", metavar="URL", help="pages of the old crawl")
    moved.add_argument("--old", required=True, metavar="DIR", help="link index of the old crawl")
    moved.add_argument("--new", required=True, metavar="DIR", help="link index of the new crawl")
    moved.add_argument("--json", action="store_true", help="one JSON object per URL")
    moved.add_argument("--input", metavar="FILE", help="read URLs from FILE, one per line (- = stdin)")
    moved.add_argument("--max-results", type=int, default=MAX_CANDIDATES_DEFAULT,
                       help="candidates per URL. Default: %(default)s")
    moved.add_argument("--max-parents", type=int, default=MOVED_MAX_PARENTS_DEFAULT,
                       help="old parents read. Default: %(default)s")
    moved.add_argument("--max-hops", type=int, default=MAX_HOPS_DEFAULT,
                       help="1: the parents' own links; more: follow blurb anchors. Default: %(default)s")
    moved.add_argument("--hop-decay", type=float, default=HOP_DECAY_DEFAULT,
                       help="weight of evidence one hop further. Default: %(default)s")
    moved.add_argument("--anchor-weight", type=float, default=ANCHOR_WEIGHT_DEFAULT,
                       help="weight of anchor evidence. Default: %(default)s")
    moved.add_argument("--position-weight", type=float, default=POSITION_WEIGHT_DEFAULT,
                       help="weight of position evidence. Default: %(default)s")

    authorities = commands.add_parser(
        "authorities", help="authoritative pages of a set of root pages (SFP or HITS, Zhou et al.)")
    authorities.add_argument("--links", required=True, metavar="DIR", help="link index folder")
    authorities.add_argument("--roots", required=True, metavar="FILE",
                             help="root pages (URLs or node ids), one per line (- = stdin; # comments)")
    authorities.add_argument("--algorithm", required=True, choices=AUTHORITY_ALGORITHMS,
                             help="sfp: frequent structures; hits: Kleinberg's HITS on the same graphs")
    authorities.add_argument("--json", action="store_true", help="print the result as one JSON object")
    authorities.add_argument("--level", type=int, default=LEVEL_DEFAULT,
                             help="depth of each root's generated graph. Default: %(default)s")
    authorities.add_argument("--max-pages", type=int, default=MAX_PAGES_DEFAULT,
                             help="pages analysed per generated graph. Default: %(default)s")
    authorities.add_argument("--max-links", type=int, default=MAX_LINKS_DEFAULT,
                             help="links taken from one page. Default: %(default)s")
    authorities.add_argument("--min-freq", type=int, default=MIN_FREQ_DEFAULT,
                             help="[sfp] generated graphs a structure must occur in. Default: %(default)s")
    authorities.add_argument("--filter-threshold", type=int, default=FILTER_THRESHOLD_DEFAULT,
                             help="[hits] pages of one domain counted per target. Default: %(default)s")
    authorities.add_argument("--iterations", type=int, default=ITERATIONS_DEFAULT,
                             help="[hits] Default: %(default)s")
    authorities.add_argument("--max-results", type=int, default=HITS_MAX_RESULTS_DEFAULT,
                             help="[hits] authorities and hubs shown. Default: %(default)s")


# -- linkgraph import, linkgraph build ----------------------------------------------------


def run_linkgraph(args: argparse.Namespace) -> int:
    if args.linkgraph_command == "import":
        return run_linkgraph_import(args)
    return run_linkgraph_build(args)


def run_linkgraph_import(args: argparse.Namespace) -> int:
    from relatedpages.linkindex import import_edge_list

    if not Path(args.edges).is_file():
        raise UsageError(f"no such edge list: {args.edges}")
    summary = import_edge_list(args.edges, args.db, keys=args.keys)
    out = sys.stdout
    print(f"imported {args.edges} into {args.db}", file=out)
    print(f"  keys                 {summary.keys.value}", file=out)
    print(f"  data lines           {summary.lines}", file=out)
    print(f"  edges                {summary.edges}", file=out)
    print(f"  nodes                {summary.nodes}", file=out)
    for reason, count in summary.skipped.items():
        print(f"  skipped {reason.value:<20} {count}", file=out)
    print(f"  database records     {summary.database.records}", file=out)
    print(f"  database size        {_size(summary.database.bytes)}", file=out)
    print(f"  time                 {summary.seconds:.1f} s", file=out)
    return EXIT_OK


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.1f} kB"


def run_linkgraph_build(args: argparse.Namespace) -> int:
    from jobs.linkgraph import LINKGRAPH_GROUP
    from jobs.pipeline import build_links, show_job_progress
    from relatedpages.linkindex import LinkEvent

    _check_db_target(args.db, args.inputs)
    args.inputs = _check_inputs(args.inputs)
    _check_runner(args.runner)
    show_job_progress()
    started = time.monotonic()
    report = build_links(
        args.inputs, Path(args.db), runner=args.runner, work=args.work or None,
        progress=lambda message: print(message, file=sys.stderr, flush=True),
    )
    out = sys.stdout
    print("\nSummary", file=out)
    print(f"  pages                {report.pages}", file=out)
    print(f"  pages indexed        {report.pages_indexed}", file=out)
    print(f"  links                {report.links}", file=out)
    print(f"  nodes                {report.nodes} ({report.uncrawled_nodes} only link targets)", file=out)
    print(f"  link index records   {report.db_records}  ({args.db}, {_size(report.db_bytes)})", file=out)
    for reason, count in sorted(report.rejected.items()):
        if count:
            print(f"  records refused {reason} = {count}", file=out)
    counted = report.counters.get("linkgraph", {}).get(LINKGRAPH_GROUP, {})
    for event in LinkEvent:  # every reason, zero included
        print(f"  counter {LINKGRAPH_GROUP}.{event.value} = {counted.get(event.value, 0)}", file=out)
    for stage, seconds in report.stages:
        print(f"  time {stage:<15} {seconds:.1f} s", file=out)
    print(f"  time total           {time.monotonic() - started:.1f} s ({args.runner} runner)", file=out)
    return EXIT_OK


# -- query --links --------------------------------------------------------------------------


def _given_baseline_flags(args: argparse.Namespace) -> list[str]:
    """The --links-only flags the command line sets (their defaults are None/False)."""
    given = [f"--{name[len('param_'):].replace('_', '-')}" for name, value in vars(args).items()
             if name.startswith("param_") and value is not None]
    given += [f"--{name.replace('_', '-')}" for name in ("algorithm", "stoplist", "no_stoplist", "no_chop_urls")
              if getattr(args, name, None)]
    return given


def baseline_params(args: argparse.Namespace) -> Any:
    """The parameters of ``args.algorithm`` from the query flags (UsageError when a flag
    does not apply to it, or a value is out of range)."""
    algorithm = args.algorithm
    names = _QUERY_FLAGS[algorithm]
    values: dict[str, Any] = {}
    for key, value in vars(args).items():
        if not key.startswith("param_") or value is None:
            continue
        flag = key[len("param_"):]
        if flag not in names:
            raise UsageError(f"--{flag.replace('_', '-')} does not apply to {algorithm}")
        if flag == "delta" and algorithm == "extended-cocitation":
            if not float(value).is_integer():
                raise UsageError("--delta of extended-cocitation is a co-citation degree, a whole number")
            value = int(value)
        values[names[flag]] = value
    if args.stoplist or args.no_stoplist:
        if algorithm not in _STOPLIST_ALGORITHMS:
            raise UsageError(f"--stoplist/--no-stoplist do not apply to {algorithm}")
        if args.stoplist and args.no_stoplist:
            raise UsageError("--stoplist and --no-stoplist: choose one")
        from relatedpages.baselines.companion import Stoplist

        try:
            values["stoplist"] = Stoplist.from_file(args.stoplist) if args.stoplist else Stoplist()
        except OSError as error:
            raise UsageError(f"--stoplist: {error}") from error
        except ValueError as error:
            raise UsageError(f"--stoplist {args.stoplist}: {error}") from error
    if args.no_chop_urls:
        if algorithm != "dh-cocitation":
            raise UsageError(f"--no-chop-urls does not apply to {algorithm}")
        values["chop_urls"] = False
    try:
        return _baseline_params_classes()[algorithm](**values)
    except ValueError as error:
        raise UsageError(str(error)) from error


def _baseline_function(algorithm: str) -> Any:
    from relatedpages.baselines.methods import PAGE_METHODS

    return PAGE_METHODS[algorithm].answer


def _load_graph(path: str, verify: bool = False) -> Any:
    """The link index at ``path`` as a LinkGraph (every checksum checked first with
    ``verify``); its load time on stderr."""
    from relatedpages.linkindex import load_link_graph

    started = time.monotonic()
    graph = load_link_graph(path, verify="full" if verify else "sizes")
    print(f"loaded link index {path}: {len(graph)} nodes, {graph.edges} links, "
          f"{graph.key_kind.value} keys in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return graph


def _graph_name(graph: Any, query: str) -> str | None:
    """A user's page as a node name of ``graph``: the normalised URL (None when it does
    not normalise: a malformed URL) or the id as given."""
    from filters.urls import normalise_url
    from relatedpages.linkgraph import KeyKind

    if graph.key_kind is KeyKind.URL:
        return normalise_url(query)
    return query.strip()


def run_query_links(args: argparse.Namespace) -> int:
    from relatedpages.baselines import NoAnswer
    from relatedpages.baselines.evidence import link_evidence

    if not args.algorithm:
        raise UsageError(f"--links needs --algorithm ({'|'.join(_baseline_algorithms())})")
    params = baseline_params(args)
    urls = _query_lines(args)
    answer_for = _baseline_function(args.algorithm)
    graph = _load_graph(args.links, args.verify)
    status = EXIT_OK
    seconds: list[float] = []
    for query in urls:
        name = _graph_name(graph, query)
        if name is None:
            print(f"relatedpages: error: malformed URL: {query}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        node = graph.id_of(name)
        started = time.monotonic()
        if node is None:
            related: list[tuple[str, float, list[list[Any]]]] = []
            reason: NoAnswer | None = NoAnswer.UNKNOWN_URL
        else:
            answer = answer_for(graph, node, params)
            related = [(graph.name(item.node), float(item.score),
                        link_evidence(graph, node, item.node).as_json(graph))
                       for item in answer.related]
            reason = answer.reason
        seconds.append(time.monotonic() - started)
        if args.json:
            print(json.dumps({
                "query": query, "url": name, "found": node is not None, "algorithm": args.algorithm,
                "related": [{"url": url, "score": score, "evidence": evidence}
                            for url, score, evidence in related],
                "reason": None if reason is None else reason.value,
            }, ensure_ascii=False))
        else:
            _print_baseline(query, name, args.algorithm, related, reason)
    if seconds:
        ordered = sorted(seconds)
        print(f"answered {len(seconds)} queries with {args.algorithm} in {sum(seconds):.2f} s "
              f"(median {1000 * ordered[len(ordered) // 2]:.1f} ms)", file=sys.stderr)
    return status


def _print_baseline(query: str, name: str, algorithm: str,
                    related: list[tuple[str, float, list[list[Any]]]], reason: Any) -> None:
    print(f"\n{name}" + ("" if name == query else f"   (query: {query})") + f"   [{algorithm}]")
    if reason is not None and reason.value == "unknown_url":
        print("  not in the link index")
        return
    if not related:
        print(f"  no related pages ({reason.value})" if reason is not None else "  no related pages")
    for rank, (url, score, evidence) in enumerate(related, 1):
        print(f"  {rank:>2}. {_score_text(score)}  {url}")
        if evidence:  # the strongest item (relatedpages.baselines.evidence)
            relation, page, text = evidence[0]
            said = {"parent": "via", "link": "linked from", "child": "both link"}[relation]
            print(f"{'':>14}{said} {page}" + (f"  «{_one_line(text)}»" if text else ""))


def _score_text(score: float) -> str:
    """Eight characters; a small positive score is not shown as 0.000."""
    return f"{score:>8.3f}" if score == 0 or abs(score) >= 0.001 else f"{score:>8.1e}"


# -- equivalent-links, moved, authorities ---------------------------------------------------


def _resolve(graph: Any, query: str, what: str) -> tuple[str, int | None]:
    """A page given on the command line: (its node name, its node or None); a malformed
    URL is a usage error."""
    name = _graph_name(graph, query)
    if name is None:
        raise UsageError(f"malformed URL: {query} ({what})")
    return name, graph.id_of(name)


def run_equivalent_links(args: argparse.Namespace) -> int:
    from relatedpages.baselines import NoAnswer
    from relatedpages.baselines.equivalent import EquivalentParams, equivalent_links

    try:
        params = EquivalentParams(anchor_threshold=args.anchor_threshold, max_results=args.max_results,
                                  same_link=args.same_link)
    except ValueError as error:
        raise UsageError(str(error)) from error
    graph = _load_graph(args.links)
    page, page_node = _resolve(graph, args.page, "PAGE")
    target, target_node = _resolve(graph, args.target, "TARGET")
    links: list[dict[str, Any]] = []
    reason: str | None
    if target_node is None:
        reason = NoAnswer.UNKNOWN_URL.value  # nothing to find pages similar to
    else:
        # PAGE only marks the query link itself (include it in the answer); a page not in
        # the index carries no link of the index: -1 is no node.
        found = equivalent_links(graph, -1 if page_node is None else page_node, args.anchor,
                                 target_node, params)
        links = [{"page": graph.name(link.page), "anchor": link.anchor, "target": graph.name(link.target),
                  "score": link.score} for link in found.links]
        reason = None if found.reason is None else found.reason.value
    if args.json:
        print(json.dumps({"page": page, "anchor": args.anchor, "target": target,
                          "page_found": page_node is not None, "target_found": target_node is not None,
                          "links": links, "reason": reason}, ensure_ascii=False))
        return EXIT_OK
    print(f"\n({page}, {args.anchor!r}) → {target}   [equivalent-links]")
    if not links:
        print("  target not in the link index" if target_node is None else f"  no equivalent links ({reason})")
    for rank, link in enumerate(links, 1):
        print(f"  {rank:>2}. {link['score']:>8.3f}  {link['page']}  —{link['anchor']!r}→  {link['target']}")
    return EXIT_OK


def run_moved(args: argparse.Namespace) -> int:
    from relatedpages.baselines.moved import MovedParams, MovedReason, moved

    try:
        params = MovedParams(anchor_weight=args.anchor_weight, position_weight=args.position_weight,
                             max_hops=args.max_hops, hop_decay=args.hop_decay, max_parents=args.max_parents,
                             max_candidates=args.max_results)
    except ValueError as error:
        raise UsageError(str(error)) from error
    urls = _query_lines(args)
    old_graph = _load_graph(args.old)
    new_graph = _load_graph(args.new)
    if old_graph.key_kind is not new_graph.key_kind:
        raise UsageError(f"--old has {old_graph.key_kind.value} keys, --new {new_graph.key_kind.value} keys")
    status = EXIT_OK
    for query in urls:
        name = _graph_name(old_graph, query)
        if name is None:
            print(f"relatedpages: error: malformed URL: {query}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        answer = moved(old_graph, new_graph, name, params)
        if args.json:
            print(json.dumps({
                "query": query, "url": answer.url, "found": answer.reason is not MovedReason.UNKNOWN_URL,
                "candidates": [{"url": c.url, "score": c.score, "parents": c.parents,
                                "evidence": [dataclasses.asdict(e) for e in c.evidence]}
                               for c in answer.candidates],
                "parents": answer.parents, "recrawled_parents": answer.recrawled_parents,
                "reason": None if answer.reason is None else answer.reason.value,
            }, ensure_ascii=False))
            continue
        print(f"\n{answer.url}" + ("" if answer.url == query else f"   (query: {query})") + "   [moved]")
        if answer.reason is not None:
            print(f"  no new location ({answer.reason.value}; {answer.parents} old parents, "
                  f"{answer.recrawled_parents} recrawled)")
        for rank, candidate in enumerate(answer.candidates, 1):
            why = "; ".join(f"{e.parent} hop {e.hop} {e.anchor!r}" for e in candidate.evidence[:3])
            print(f"  {rank:>2}. {candidate.score:>8.3f}  {candidate.url}   "
                  f"[{candidate.parents} parents: {why}]")
    return status


def _root_lines(path: str) -> list[str]:
    try:
        handle = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--roots: {error}") from error
    with handle:
        return [line.strip() for line in handle if line.strip() and not line.lstrip().startswith("#")]


def run_authorities(args: argparse.Namespace) -> int:
    from relatedpages.baselines.hits import HITSParams, hits
    from relatedpages.baselines.sfp import GeneratedGraphParams, SFPParams, sfp

    try:
        generated = GeneratedGraphParams(level=args.level, max_pages=args.max_pages, max_links=args.max_links)
        params: Any = (SFPParams(generated=generated, min_freq=args.min_freq) if args.algorithm == "sfp" else
                       HITSParams(generated=generated, filter_threshold=args.filter_threshold,
                                  iterations=args.iterations, max_results=args.max_results))
    except ValueError as error:
        raise UsageError(str(error)) from error
    lines = _root_lines(args.roots)
    graph = _load_graph(args.links)
    status = EXIT_OK
    roots: list[int] = []
    unknown: list[str] = []
    for line in lines:
        name = _graph_name(graph, line)
        if name is None:
            print(f"relatedpages: error: malformed URL: {line}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        node = graph.id_of(name)
        if node is None:
            unknown.append(name)
        else:
            roots.append(node)
    if unknown:
        print(f"{len(unknown)} root(s) not in the link index: {', '.join(unknown[:5])}"
              + (" …" if len(unknown) > 5 else ""), file=sys.stderr)
    started = time.monotonic()
    result = sfp(graph, roots, params) if args.algorithm == "sfp" else hits(graph, roots, params)
    seconds = time.monotonic() - started
    record = _sfp_json(graph, result) if args.algorithm == "sfp" else _hits_json(graph, result)
    record = {"algorithm": args.algorithm, "roots": [graph.name(r) for r in result.roots],
              "unknown_roots": unknown, **record,
              "reason": None if result.reason is None else result.reason.value}
    print(f"{args.algorithm} over {len(result.roots)} roots in {seconds:.2f} s", file=sys.stderr)
    if args.json:
        print(json.dumps(record, ensure_ascii=False))
    else:
        _print_authorities(record)
    return status


def _sfp_json(graph: Any, result: Any) -> dict[str, Any]:
    return {
        "authorities": [{"url": graph.name(a.node), "support": a.support} for a in result.authorities],
        "sites": [{"host": s.host, "url": graph.name(s.best), "support": s.support,
                   "pages": [graph.name(p) for p in s.pages]} for s in result.sites],
        "communities": [{"urls": [graph.name(v) for v in c.vertices],
                         "edges": [[graph.name(a), graph.name(b)] for a, b in c.edges],
                         "support": c.support, "rank": c.rank} for c in result.communities],
        "communities_complete": result.communities_complete,
    }


def _hits_json(graph: Any, result: Any) -> dict[str, Any]:
    return {
        "authorities": [{"url": graph.name(s.node), "score": float(s.score)} for s in result.authorities],
        "hubs": [{"url": graph.name(s.node), "score": float(s.score)} for s in result.hubs],
        "pages": result.pages, "links": result.links,
    }


def _print_authorities(record: dict[str, Any]) -> None:
    print(f"\n{record['algorithm']} over {len(record['roots'])} root pages")
    if record["reason"] is not None:
        print(f"  no authoritative pages ({record['reason']})")
    if record["algorithm"] == "hits":
        print(f"  {record['pages']} pages, {record['links']} links after the filters")
        for title, key in (("authorities", "authorities"), ("hubs", "hubs")):
            if record[key]:
                print(f"  {title}")
            for rank, item in enumerate(record[key], 1):
                print(f"  {rank:>2}. {item['score']:>8.3f}  {item['url']}")
        return
    if record["authorities"]:
        print("  authoritative pages (support = generated graphs holding the page)")
    for rank, item in enumerate(record["authorities"], 1):
        print(f"  {rank:>2}. {item['support']:>5}  {item['url']}")
    if record["sites"]:
        print("  sites")
    for rank, site in enumerate(record["sites"], 1):
        print(f"  {rank:>2}. {site['support']:>5}  {site['host']}  ({len(site['pages'])} pages; best {site['url']})")
    if record["communities"]:
        incomplete = "" if record["communities_complete"] else " (search capped: not all)"
        print(f"  communities{incomplete}")
    for rank, community in enumerate(record["communities"], 1):
        print(f"  {rank:>2}. {community['support']:>5}  rank {community['rank']}: {', '.join(community['urls'])}")


def _job_failures() -> tuple[type[BaseException], ...]:
    """Failures of a run (a job step, the database build), reported with exit status 1."""
    from jobs.pipeline import FAILURES

    return FAILURES


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "segment":
            return run_segment(args)
        if args.command == "verify":
            from relatedpages.commands import verify as verify_command

            return verify_command.run(args)
        if args.command == "build":
            return run_build(args)
        if args.command == "query":
            return run_query_links(args) if args.links else run_query(args)
        if args.command == "linkgraph":
            return run_linkgraph(args)
        if args.command == "equivalent-links":
            return run_equivalent_links(args)
        if args.command == "moved":
            return run_moved(args)
        if args.command == "authorities":
            return run_authorities(args)
        if args.command == "generate":
            return run_generate(args)
        if args.command == "demo":
            return run_demo(args)
        if args.command == "eval" and args.evaluation == "segmentation":
            return run_eval_segmentation(args)
        if args.command == "eval" and args.evaluation == "related":
            return run_eval_related(args)
        if args.command == "eval" and args.evaluation == "moved":
            return run_eval_moved(args)
        if args.command == "eval" and args.evaluation == "topics":
            return run_eval_topics(args)
    except UsageError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `relatedpages query … | head`: the reader has what it wanted; end quietly (and
        # keep Python from reporting the pipe again when it flushes stdout at exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except _job_failures() as error:
        print(f"relatedpages: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    parser.error("unknown command")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
