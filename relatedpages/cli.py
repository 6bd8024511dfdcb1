"""The ``relatedpages`` command.

    relatedpages segment INPUT… [-o OUT] [-r inline|local|hadoop]   crawl → link blocks, summary
    relatedpages eval segmentation DIR [--plot PNG] [--sweep-t1 …]   Table 1 and Fig. 4

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

from segmenter.adjust import (
    ADJUST_OPTIONS,
    AdjustParams,
    add_adjust_options,
    adjust_params_from,
)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
RUNNERS = ("inline", "local", "hadoop")


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
    return parser


def _adjust_params(args: argparse.Namespace) -> AdjustParams:
    try:
        return adjust_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from error


# -- segment ---------------------------------------------------------------------------


def _show_job_progress() -> None:
    """mrjob's progress lines (steps, counters) on stderr, once each."""
    job_logger = logging.getLogger("mrjob")
    if not job_logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        job_logger.addHandler(handler)
    job_logger.setLevel(logging.INFO)
    job_logger.propagate = False


def run_segment(args: argparse.Namespace) -> int:
    from jobs.segment import MRSegment

    for name in args.inputs:
        if not Path(name).exists() and "://" not in name:
            raise UsageError(f"no such input: {name}")
    _adjust_params(args)
    job_args = ["-r", args.runner]
    if args.runner != "hadoop":
        job_args.append("--no-conf")
    for flag, name, _, _ in ADJUST_OPTIONS:
        job_args += [flag, str(getattr(args, name))]
    if args.output:
        job_args += ["--output-dir", args.output]
    job = MRSegment(job_args + list(args.inputs))
    _show_job_progress()
    started = time.monotonic()
    pages = blocks = links = 0
    without_blocks = 0
    sizes: Counter[int] = Counter()
    shown: list[tuple[int, str, list[list[dict[str, Any]]]]] = []
    with job.make_runner() as runner:
        runner.run()
        for url, record in job.parse_output(runner.cat_output()):
            pages += 1
            page_blocks = record["blocks"]
            blocks += len(page_blocks)
            links += sum(len(b) for b in page_blocks)
            sizes.update(len(b) for b in page_blocks)
            without_blocks += not page_blocks
            shown.append((len(page_blocks), url, page_blocks))
            shown = sorted(shown, key=lambda s: (-s[0], s[1]))[: args.show]
        counters = runner.counters()
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "segment":
            return run_segment(args)
        if args.command == "eval" and args.evaluation == "segmentation":
            return run_eval_segmentation(args)
    except UsageError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser.error("unknown command")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
