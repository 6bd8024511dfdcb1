"""The ``relatedpages`` command.

    relatedpages segment INPUT… [-o OUT] [-r inline|local|hadoop]   crawl → link blocks, summary
    relatedpages build INPUT… --db DIR [--algorithm block|cocitation] [--runner …] [--work DIR]
    relatedpages query --db DIR [--json] [--input FILE|-] [URL …]
    relatedpages generate --pages N --seed S -o FILE.warc.gz        the synthetic web
    relatedpages demo [--pages N] [--out DIR]                       generate, build, query
    relatedpages eval segmentation DIR [--plot PNG] [--sweep-t1 …]   Table 1 and Fig. 4
    relatedpages eval related DATA_DIR [--holdout F] [--seed S] [--plot PNG]   Fig. 10

Exit status: 0 on success, 2 on usage errors, 1 on failure.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from relatedpages.db import ALGORITHMS
from segmenter.adjust import (
    ADJUST_OPTIONS,
    AdjustParams,
    add_adjust_options,
    adjust_params_from,
)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
RUNNERS = ("inline", "local", "hadoop")  # mrjob runners the commands offer


class UsageError(Exception):
    """A command line that cannot be run; reported in one line with exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relatedpages", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

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
                       help="pass an argument to the chain job, e.g. --job-arg=--t=2.0 (repeatable)")

    query = commands.add_parser("query", help="related pages of URLs, from a database")
    query.add_argument("urls", nargs="*", metavar="URL")
    query.add_argument("--db", required=True, help="database folder")
    query.add_argument("--json", action="store_true", help="one JSON object per query")
    query.add_argument("--input", metavar="FILE", help="read URLs from FILE, one per line (- = stdin)")

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

    evaluate = commands.add_parser("eval", help="evaluations")
    evals = evaluate.add_subparsers(dest="evaluation", required=True)
    seg_eval = evals.add_parser("segmentation", help="E/I-precision against human block annotations")
    seg_eval.add_argument("folder", metavar="DIR", help="e.g. ../shared/data/segmentation/kreuzer-random")
    seg_eval.add_argument("--plot", default="segmentation-block-sizes.png",
                          help="where to write the block-size distribution (Fig. 4). Default: %(default)s")
    seg_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")
    seg_eval.add_argument("--sweep-t1", metavar="V,V,…",
                          help="evaluate these T1 values instead (how T1 was chosen)")
    add_adjust_options(seg_eval.add_argument)
    _add_eval_related(evals)
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
    rel_eval.add_argument("--plot", default="related-rscore.png",
                          help="where to write the R-score curve (Fig. 10). Default: %(default)s")
    rel_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")


def _adjust_params(args: argparse.Namespace) -> AdjustParams:
    try:
        return adjust_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from error


# -- segment ---------------------------------------------------------------------------


def _check_inputs(inputs: Sequence[str]) -> None:
    for name in inputs:
        if not Path(name).exists() and "://" not in name:
            raise UsageError(f"no such input: {name}")


def run_segment(args: argparse.Namespace) -> int:
    import tempfile

    from jobs.pipeline import iter_output, run_job, show_job_progress
    from jobs.segment import MRSegment

    _check_inputs(args.inputs)
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

    _check_inputs(args.inputs)
    show_job_progress()
    started = time.monotonic()
    report = build(
        args.inputs, Path(args.db), algorithm=args.algorithm, runner=args.runner,
        work=args.work or None, job_args=args.job_arg,
        progress=lambda message: print(message, file=sys.stderr, flush=True),
    )
    out = sys.stdout
    print("\nSummary", file=out)
    print(f"  pages                {report.pages}", file=out)
    print(f"  blocks               {report.blocks}", file=out)
    print(f"  related pairs        {report.pairs}", file=out)
    print(f"  pages with related   {report.pages_with_related}", file=out)
    print(f"  database records     {report.db_records}  ({args.db})", file=out)
    for stage, seconds in report.stages:
        print(f"  time {stage:<15} {seconds:.1f} s", file=out)
    print(f"  time total           {time.monotonic() - started:.1f} s ({args.runner} runner)", file=out)
    return EXIT_OK


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

    urls = _query_lines(args)
    try:
        database = RelatedPagesDB(args.db)
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
            related = database.related(url)
            if args.json:
                print(json.dumps({
                    "query": query, "url": url, "found": related is not None,
                    "related": [{"url": r.url, "score": r.score,
                                 "evidence": [list(e) for e in r.evidence]} for r in related or []],
                }, ensure_ascii=False))
            else:
                _print_related(query, url, related)
    return status


def _print_related(query: str, url: str, related: list[Any] | None) -> None:
    print(f"\n{url}" + ("" if url == query else f"   (query: {query})"))
    if related is None:
        print("  not in the database")
        return
    if not related:
        print("  no related pages")
    for rank, item in enumerate(related, 1):
        sites = ", ".join(site for site, _ in item.evidence)
        print(f"  {rank:>2}. {item.score:>8.3f}  {item.url}   [{sites}]")


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


def run_demo(args: argparse.Namespace) -> int:
    """The README's first command: the whole system on the synthetic web, in under a minute."""
    import shutil

    from relatedpages.db import RelatedPagesDB
    from relatedpages.generate import registration_url, sample_queries

    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    crawl = out / "crawl.warc.gz"
    print(f"==> relatedpages generate --pages {args.pages} --seed {args.seed} -o {crawl}", flush=True)
    run_generate(argparse.Namespace(pages=args.pages, seed=args.seed, output=str(crawl)))
    print(f"==> relatedpages build {crawl} --db {out / 'db'} --runner {args.runner}", flush=True)
    run_build(argparse.Namespace(inputs=[str(crawl)], db=str(out / "db"), algorithm="block",
                                 runner=args.runner, work=None, job_arg=[]))
    queries = sample_queries(crawl, args.queries)
    print(f"==> relatedpages query --db {out / 'db'} {' '.join(queries)}", flush=True)
    run_query(argparse.Namespace(urls=queries, db=str(out / "db"), json=False, input=None))
    template = registration_url()
    with RelatedPagesDB(out / "db") as database:
        lists = 0
        holders: list[str] = []
        for url, related in database.records():
            if url == template:
                continue
            lists += 1
            if any(item.url == template for item in related):
                holders.append(url)
    print(f"\nThe registration link {template} sits in the footer template of most pages of "
          f"every site. It is in {len(holders)} of the {lists} related lists"
          + (f": those of {', '.join(holders[:5])} (its fellow footer links)" if holders else "")
          + ".")
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
        print(f"{'T1':>5}{'blocks':>8}{'E judged':>10}{'I judged':>10}{'E strict':>10}{'I strict':>10}")
        for t1, evaluation in seg_eval.sweep_t1(folder, values, base):
            print(f"{t1:>5.2f}{evaluation.after_strict.blocks:>8}"
                  f"{100 * evaluation.after.e_precision:>10.1f}{100 * evaluation.after.i_precision:>10.1f}"
                  f"{100 * evaluation.after_strict.e_precision:>10.1f}"
                  f"{100 * evaluation.after_strict.i_precision:>10.1f}")
        return EXIT_OK
    evaluation = seg_eval.evaluate(folder, _adjust_params(args))
    print(seg_eval.format_table(evaluation))
    plot = Path(args.plot)
    seg_eval.plot_block_sizes(evaluation, plot)
    print(f"block-size distribution (Fig. 4): {plot}")
    if args.json:
        print(seg_eval.evaluation_as_json(evaluation))
    return EXIT_OK


# -- eval related ----------------------------------------------------------------------


def run_eval_related(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import related as rel

    data = Path(args.data)
    for relative in (rel.HUB_PATH, *rel.WEB_PATHS):
        if not (data / relative).is_file():
            raise UsageError(f"{data}: not the shared data folder (no {relative})")
    try:
        t_sweep = [float(v) for v in args.sweep_t.split(",") if v.strip()]
        degree_sweep = [int(v) for v in args.sweep_min_degree.split(",") if v.strip()]
    except ValueError as error:
        raise UsageError(f"--sweep-t / --sweep-min-degree: {error}") from error
    settings = dict(holdout=args.holdout, t=args.t, min_degree=args.min_degree,
                    min_citing=args.min_citing, t_sweep=t_sweep,
                    min_degree_sweep=degree_sweep, max_lists=args.lists)
    try:
        rel.check_parameters(**settings)
    except ValueError as error:
        raise UsageError(str(error)) from error
    print("segmenting the corpus and running both oracles (about a minute) …",
          file=sys.stderr, flush=True)
    evaluation = rel.evaluate(data, seed=args.seed, **settings)
    print(rel.format_report(evaluation))
    plot = Path(args.plot)
    rel.plot_rscore(evaluation, plot)
    print(f"R-score curve (Fig. 10): {plot}")
    if args.json:
        print(rel.evaluation_as_json(evaluation))
    return EXIT_OK


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
        if args.command == "build":
            return run_build(args)
        if args.command == "query":
            return run_query(args)
        if args.command == "generate":
            return run_generate(args)
        if args.command == "demo":
            return run_demo(args)
        if args.command == "eval" and args.evaluation == "segmentation":
            return run_eval_segmentation(args)
        if args.command == "eval" and args.evaluation == "related":
            return run_eval_related(args)
    except UsageError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except _job_failures() as error:
        print(f"relatedpages: failed: {error}", file=sys.stderr)
        return EXIT_FAILURE
    parser.error("unknown command")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
