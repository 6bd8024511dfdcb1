"""``relatedpages linkgraph import|build``: the connectivity server's link index, from an
edge list or from a crawl (segmentation, then ``jobs.linkgraph``), verified before it is
swapped in."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from relatedpages.commands.common import (
    add_log_option,
    start_progress,
    EXIT_OK,
    RUNNERS,
    UsageError,
    check_db_target,
    check_inputs,
    check_runner,
    progress,
    size_text,
)


def add_parser(commands: Any) -> None:
    from relatedpages.store.edgelist import AUTO_KEYS

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
    importer.set_defaults(run=run_import)
    add_log_option(builder)
    builder.set_defaults(run=run_build)


def run_import(args: argparse.Namespace) -> int:
    from relatedpages.store.edgelist import import_edge_list

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
    print(f"  database size        {size_text(summary.database.bytes)}", file=out)
    print(f"  time                 {summary.seconds:.1f} s", file=out)
    return EXIT_OK


def run_build(args: argparse.Namespace) -> int:
    from jobs.linkgraph import LINKGRAPH_GROUP
    from jobs.pipeline import build_links
    from relatedpages.store.linkindex import LinkEvent

    check_db_target(args.db, args.inputs)
    args.inputs = check_inputs(args.inputs)
    check_runner(args.runner)
    log_file = start_progress('linkgraph-build', args.runner, args.log)
    started = time.monotonic()
    report = build_links(
        args.inputs, Path(args.db), runner=args.runner, work=args.work or None,
        progress=progress,
    )
    out = sys.stdout
    print("\nSummary", file=out)
    print(f"  pages                {report.pages}", file=out)
    print(f"  pages indexed        {report.pages_indexed}", file=out)
    print(f"  links                {report.links}", file=out)
    print(f"  nodes                {report.nodes} ({report.uncrawled_nodes} only link targets)", file=out)
    print(f"  link index records   {report.db_records}  ({args.db}, {size_text(report.db_bytes)})", file=out)
    for reason, count in sorted(report.rejected.items()):
        if count:
            print(f"  records refused {reason} = {count}", file=out)
    counted = report.counters.get("linkgraph", {}).get(LINKGRAPH_GROUP, {})
    for event in LinkEvent:  # every reason, zero included
        print(f"  counter {LINKGRAPH_GROUP}.{event.value} = {counted.get(event.value, 0)}", file=out)
    for stage, seconds in report.stages:
        print(f"  time {stage:<15} {seconds:.1f} s", file=out)
    print(f"  time total           {time.monotonic() - started:.1f} s ({args.runner} runner)", file=out)
    if log_file is not None:
        print(f"  log                  {log_file}", file=out)
    return EXIT_OK
