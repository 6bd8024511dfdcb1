"""``relatedpages segment INPUT…``: run ``jobs.segment`` over a crawl and summarise its
blocks (the pages with the most blocks, block sizes, the job's counters)."""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from relatedpages.commands.common import (
    add_log_option,
    start_progress,
    EXIT_OK,
    RUNNERS,
    UsageError,
    adjust_params,
    check_inputs,
    check_runner,
)
from segmenter.adjust import ADJUST_OPTIONS, add_adjust_options


def add_parser(commands: Any) -> None:
    segment = commands.add_parser("segment", help="run jobs.segment over a crawl and summarise")
    segment.add_argument("inputs", nargs="+", metavar="INPUT",
                         help="WARC[.gz], JSONL[.gz] or a folder's path<TAB>url .tsv manifest")
    segment.add_argument("-o", "--output", help="output folder (default: a temporary one)")
    segment.add_argument("-r", "--runner", choices=RUNNERS, default="local",
                         help="mrjob runner. Default: %(default)s")
    segment.add_argument("--show", type=int, default=3, metavar="N",
                         help="print the blocks of N pages with the most blocks. Default: %(default)s")
    add_adjust_options(segment.add_argument)
    add_log_option(segment)
    segment.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import tempfile

    from jobs.pipeline import iter_output, run_job
    from jobs.segment import MRSegment

    args.inputs = check_inputs(args.inputs)
    check_runner(args.runner)
    adjust_params(args)
    if args.output and Path(args.output).exists() and any(Path(args.output).iterdir()):
        raise UsageError(f"output folder exists and is not empty: {args.output}")
    job_args: list[str] = []
    for flag, name, _, _ in ADJUST_OPTIONS:
        job_args += [flag, str(getattr(args, name))]
    log_file = start_progress('segment', args.runner, args.log)
    started = time.monotonic()
    output = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="relatedpages-seg-"))
    run = run_job(MRSegment, [*job_args, *args.inputs], runner=args.runner, output_dir=output,
                  label="segment", inputs=args.inputs)
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
    if log_file is not None:
        print(f"  log                  {log_file}", file=out)
    return EXIT_OK
