"""``relatedpages eval segmentation|related|topics|moved``: the evaluations, each a thin
shell over :mod:`relatedpages.evaluation` (tables on stdout, figures as PNGs, ``--json``)."""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from relatedpages.commands.common import (
    EXIT_OK,
    RUNNERS,
    UsageError,
    add_log_option,
    adjust_params,
    check_runner,
    shared_data_folder,
    start_progress,
)
from segmenter.adjust import AdjustParams, add_adjust_options


def add_parser(commands: Any) -> None:
    evaluate = commands.add_parser("eval", help="evaluations")
    evals = evaluate.add_subparsers(dest="evaluation", required=True)
    seg_eval = evals.add_parser("segmentation", help="E/I-precision against human block annotations")
    seg_eval.add_argument("folder", metavar="DIR|FILE.tsv",
                          help="a Kreuzer-style folder, e.g. ../shared/data/segmentation/"
                               "kreuzer-random, or an annotation file, e.g. annotations/zh-gne.tsv")
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
    seg_eval.set_defaults(run=run_segmentation)
    outline = evals.add_parser(
        "outline", help="the elements of a page that hold links, with their XPaths: what an "
                        "annotator of annotations/*.tsv chooses from")
    outline.add_argument("page", metavar="PAGE.html")
    outline.add_argument("--url", default="http://page.example/",
                         help="the page's URL (links resolve against it). Default: %(default)s")
    outline.add_argument("--anchors", type=int, default=4,
                         help="anchors shown per element. Default: %(default)s")
    outline.set_defaults(run=run_outline)
    _add_lists(evals)
    _add_related(evals)
    _add_moved(evals)
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
    topics.add_argument("--baselines", metavar="NAME,…|all|none", default="all",
                        help="page-level baselines scored beside them on a link graph of the "
                             "same pages. Default: %(default)s")
    topics.add_argument("--engine", choices=("oracle", "chain"), default="oracle",
                        help="oracle: the in-memory oracles, every row (fast; about 2 GB per "
                             "10,000 pages); chain: the real mrjob chains as `relatedpages "
                             "build` runs them, the product and the floor only, in the memory "
                             "of one partition (large webs). Default: %(default)s")
    topics.add_argument("--runner", choices=RUNNERS, default="local",
                        help="the chains' mrjob runner with --engine chain. Default: %(default)s")
    add_log_option(topics)
    topics.add_argument("--json", action="store_true", help="print the figures as JSON too")
    add_adjust_options(topics.add_argument)
    topics.set_defaults(run=run_topics)


def _add_related(evals: Any) -> None:
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
    rel_eval.add_argument("--index-share", type=float, default=1.0, metavar="Q",
                          help="index only this share of the lists not held out (the same "
                               "test lists, less evidence: how the ranking moves with the "
                               "size of the index). Default: %(default)s")
    rel_eval.add_argument("--development-draw", type=int, metavar="N",
                          help="instead of --seed's split, hold out --holdout of the "
                               "development split's held-out lists (drawn by N) and index "
                               "every other list: a development split with the test splits' "
                               "index size. Default: none")
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
    add_adjust_options(rel_eval.add_argument)
    rel_eval.set_defaults(run=run_related)


def _add_lists(evals: Any) -> None:
    from relatedpages.evaluation import lists

    lists_eval = evals.add_parser(
        "lists", help="per markup shape, the hub lists' links kept in a block with their "
                      "section's others (issue 42)")
    lists_eval.add_argument("data", metavar="DATA_DIR|FILE.warc.gz",
                            help="the shared data (its hub pages), e.g. ../shared/data, or a "
                                 "crawl file of hub pages")
    lists_eval.add_argument("--render", default="all", metavar="NAME,…|all",
                            help="the hub lists as they are and rewritten as other shapes "
                                 f"({', '.join(lists.RENDERINGS)}). Default: %(default)s")
    lists_eval.add_argument("--split", choices=lists.SPLITS, default="test",
                            help="which hub pages: the development or test half (--seed), or "
                                 "all. Default: %(default)s")
    lists_eval.add_argument("--seed", type=int, default=1,
                            help="seed of the split. Default: %(default)s")
    lists_eval.add_argument("--json", action="store_true", help="print the figures as JSON too")
    add_adjust_options(lists_eval.add_argument)
    lists_eval.set_defaults(run=run_lists)


def run_lists(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import lists

    data = Path(args.data)
    path = data if data.is_file() else data / lists.HUB_PATH
    if not path.is_file():
        raise UsageError(f"{data}: neither a crawl file nor a data folder with {lists.HUB_PATH}")
    renderings = lists.RENDERINGS if args.render == "all" else tuple(
        name.strip() for name in args.render.split(",") if name.strip())
    unknown = [name for name in renderings if name not in lists.RENDERINGS]
    if unknown or not renderings:
        raise UsageError(f"--render: one or more of {', '.join(lists.RENDERINGS)} or all, "
                         f"got {args.render!r}")
    params = adjust_params(args)
    reports = []
    for number, rendering in enumerate(renderings, 1):
        started = time.monotonic()
        reports.append(lists.report_of_file(path, rendering, args.split, params, args.seed))
        print(f"[{number}/{len(renderings)}] {rendering}: {reports[-1].pages} pages segmented "
              f"in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    pages = reports[0].pages
    print(f"hub pages: {pages} ({args.split}" + ("" if args.split == "all" else
                                                f", seed {args.seed}") + f"), --rules {params.rules}")
    print(lists.format_reports(reports))
    misses = lists.goal_misses(reports)
    print("goal (every list shape kept >= 98 %, mixed <= 2 %): "
          + ("met" if not misses else "missed by " + "; ".join(misses)))
    if args.json:
        print(json.dumps({report.rendering: {shape: vars(counts) for shape, counts
                                             in report.shapes.items()} for report in reports}))
    return EXIT_OK


def _add_moved(evals: Any) -> None:
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
    moved_eval.set_defaults(run=run_moved)


def run_segmentation(args: argparse.Namespace) -> int:
    from relatedpages.evaluation.annotations import AnnotationError

    folder = Path(args.folder)
    if not folder.is_file() and not (folder / "mapping.txt").is_file():
        raise UsageError(f"{folder}: not an annotated data set (no mapping.txt) nor an "
                         f"annotation file")
    try:
        return _segmentation(args, folder)
    except AnnotationError as error:  # a malformed line, a page not there, a stale path
        raise UsageError(str(error)) from error


def _segmentation(args: argparse.Namespace, folder: Path) -> int:
    from relatedpages.evaluation import segmentation as seg_eval

    if args.sweep_t1:
        base = adjust_params(args)
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
    evaluation = seg_eval.evaluate(folder, adjust_params(args), args.split or "test", args.seed)
    print(seg_eval.format_table(evaluation))
    if args.worst > 0:
        print("\n" + seg_eval.worst_pages(evaluation, args.worst))
    plot = Path(args.plot)
    seg_eval.plot_block_sizes(evaluation, plot)
    print(f"block-size distribution (Fig. 4): {plot}")
    if args.json:
        print(seg_eval.evaluation_as_json(evaluation))
    return EXIT_OK


def run_outline(args: argparse.Namespace) -> int:
    from relatedpages.evaluation.annotations import outline

    try:
        data = Path(args.page).read_bytes()
    except OSError as error:
        raise UsageError(f"{args.page}: {error.strerror or error}") from error
    print(outline(data, args.url, anchors=args.anchors))
    return EXIT_OK


def run_related(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import categories as cat
    from relatedpages.evaluation import related as rel
    from relatedpages.evaluation import related_report as report

    data = shared_data_folder(args.data)
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
                    min_degree_sweep=degree_sweep, max_lists=args.lists, baselines=baselines,
                    index_share=args.index_share, draw=args.development_draw)
    try:
        rel.check_parameters(**settings)
    except ValueError as error:
        raise UsageError(str(error)) from error
    segmenting = _segmenting(args)
    print("segmenting the corpus and running the oracles and baselines (about three minutes) …",
          file=sys.stderr, flush=True)
    evaluation = rel.evaluate(data, seed=args.seed, **settings, segmenting=segmenting)
    print(report.format_report(evaluation))
    plot = Path(args.plot)
    report.plot_rscore(evaluation, plot)
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
        print(report.evaluation_as_json(evaluation, categories=cat.as_dict(rows)))
    return EXIT_OK


def _segmenting(args: argparse.Namespace) -> AdjustParams | None:
    """The segmenter's options given to an evaluation: None at the defaults, else the
    params, said on the report's first line (its figures are not the product's)."""
    params = adjust_params(args)
    if params == AdjustParams():
        return None
    print(f"segmented with --rules {params.rules}, not the default adjusting: {params}")
    return params


def run_topics(args: argparse.Namespace) -> int:
    import tempfile

    from relatedpages.evaluation import related as rel
    from relatedpages.evaluation import topics as top
    from relatedpages.corpus.generate import generate_crawl

    try:
        baselines = rel.parse_baselines(args.baselines)
    except ValueError as error:
        raise UsageError(f"--baselines: {error}") from error
    if args.engine == "chain" and adjust_params(args) != AdjustParams():
        raise UsageError("the segmenter's options (--rules, --t1, …) apply to --engine "
                         "oracle; the chain's segment job takes them through build")
    segmenting = _segmenting(args)
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
            if args.engine == "chain":
                check_runner(args.runner)
                start_progress("eval-topics", args.runner, args.log)
                evaluation = _topics_by_chain(crawl, Path(folder) / f"work-{crawl.stem}", args.runner)
            else:
                evaluation = top.evaluate_topics(crawl, baselines=baselines,
                                                 segmenting=segmenting)
            evaluations.append(evaluation)
            print(top.format_topics(evaluation) + "\n")
    plot = Path(args.plot)
    top.plot_topics(evaluations, plot)
    print(f"P@15 per topic (Fig. 11): {plot}")
    if args.json:
        print(json.dumps([top.as_dict(e) for e in evaluations]))
    return EXIT_OK


def _topics_by_chain(crawl: Path, work: Path, runner: str) -> Any:
    """``eval topics --engine chain``: build the database as ``relatedpages build`` does
    (block co-citation at its defaults, its fallback filling lists to M), run the floor
    (the co-citation job at its defaults) on the same segments, and grade both."""
    import time

    from jobs.cocitation import MRCocitation
    from jobs.pipeline import build, iter_output, run_job
    from relatedpages.evaluation import topics as top
    from relatedpages.scoring.parameters import M_DEFAULT

    started = time.monotonic()
    print(f"building {crawl.name} with the {runner} runner (the chains, then the floor) …",
          file=sys.stderr, flush=True)
    report = build([str(crawl)], work / "db", runner=runner, work=work, fill_to=M_DEFAULT,
                   progress=lambda line: print(line, file=sys.stderr, flush=True))
    run_job(MRCocitation, [str(work / "segments")], runner=runner, output_dir=work / "floor",
            label="floor")
    evaluation = top.evaluate_topic_outputs(
        crawl, (record for _url, record in iter_output(work / "segments")), work / "db",
        iter_output(work / "floor"), report.pages, time.monotonic() - started)
    shutil.rmtree(work, ignore_errors=True)
    return evaluation


def run_moved(args: argparse.Namespace) -> int:
    from relatedpages.evaluation import moved as mv

    data = shared_data_folder(args.data)
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


