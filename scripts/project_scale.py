#!/usr/bin/env python
"""A scale bench's measured cost per page, projected to a Common Crawl month (docs/scale.md).

    python scripts/project_scale.py out/bench-scale/scale.json [MORE.json …] [--size PAGES]
        [--cpu-ms "LABEL=MS" …] [--pages 3e9] [--node-vcpus 16] [--busy 0.7]
        [--replication 3] [--warc-kb 30] [--nodes 100,500] [--db-record "LABEL=BYTES" …]

Reads each ``scale.json`` that ``scripts/bench_scale.py`` wrote, takes its largest size (or
``--size``), divides its medians by its pages (task CPU, the Python processes' share,
shuffle, HDFS output, database), and prints the plan's tables
(``relatedpages.bench.projection``): the figures per page, the CPU-hours and
node-hours a crawl of ``--pages`` pages takes on nodes of ``--node-vcpus`` vCPUs
``--busy`` with task work, its storage, and the database's partitions.  ``--cpu-ms`` adds
a compute row for a figure measured some other way (e.g. an inline build's CPU a page on
real pages); ``--db-record`` a database row for bytes a record measured another way
(e.g. ``scripts/bench_db_format.py``'s), times the measured records a page.  Every number it prints is a measured figure times one of these assumptions.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.bench.projection import (  # noqa: E402
    Assumptions, ProjectionError, format_projection, load_sizes, per_page, pick_size)

DEFAULTS = Assumptions()


def _figure(unit: str, example: str, zero: bool) -> Callable[[str], tuple[str, float]]:
    """An argparse type for ``LABEL=NUMBER`` (a number of ``unit``, at least 0 with
    ``zero``, else above 0)."""
    def parse(text: str) -> tuple[str, float]:
        name, sep, value = text.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or not name.strip() or not (number >= 0 if zero else number > 0):
            raise argparse.ArgumentTypeError(f"{text!r}: expected LABEL={unit}, e.g. '{example}'")
        return name.strip(), number
    return parse


_cpu_figure = _figure("MS", "real pages=98", zero=True)
_record_figure = _figure("BYTES", "format 2, real pages=251", zero=False)


def _nodes(text: str) -> tuple[int, ...]:
    try:
        nodes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        nodes = ()
    if not nodes or any(n <= 0 for n in nodes):
        raise argparse.ArgumentTypeError(f"{text!r}: expected node counts, e.g. 100,500")
    return nodes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scale_json", nargs="+", type=Path, help="a bench's scale.json")
    parser.add_argument("--size", type=int, metavar="PAGES",
                        help="the measured size to project from. Default: each file's largest")
    parser.add_argument("--cpu-ms", type=_cpu_figure, action="append", default=[],
                        metavar="LABEL=MS", help="a compute row for a CPU figure a page "
                        "measured elsewhere (repeatable)")
    parser.add_argument("--db-record", type=_record_figure, action="append", default=[],
                        metavar="LABEL=BYTES", help="a database row for bytes a record measured "
                        "elsewhere, times the measured records a page (repeatable)")
    parser.add_argument("--pages", type=float, default=DEFAULTS.pages,
                        help="the crawl's pages. Default: %(default).3g")
    parser.add_argument("--node-vcpus", type=int, default=DEFAULTS.node_vcpus,
                        help="vCPUs a node. Default: %(default)s")
    parser.add_argument("--busy", type=float, default=DEFAULTS.busy,
                        help="the share of a node's CPU doing task work. Default: %(default)s")
    parser.add_argument("--replication", type=int, default=DEFAULTS.replication,
                        help="HDFS replication. Default: %(default)s")
    parser.add_argument("--warc-kb", type=float, default=DEFAULTS.warc_kb,
                        help="input WARC a page, KB. Default: %(default)s")
    parser.add_argument("--nodes", type=_nodes, default=DEFAULTS.nodes,
                        help="cluster sizes to give hours for. Default: "
                        + ",".join(map(str, DEFAULTS.nodes)))
    args = parser.parse_args(argv)
    try:
        assumptions = Assumptions(pages=args.pages, node_vcpus=args.node_vcpus, busy=args.busy,
                                  replication=args.replication, warc_kb=args.warc_kb,
                                  nodes=args.nodes)
        measured = []
        for path in args.scale_json:
            figures, sizes = load_sizes(path)
            size = pick_size(sizes, args.size)
            what = (f"the chain on {Path(figures['graph']).name}" if figures.get("graph")
                    else "the pipeline, generated web")
            measured.append(per_page(size, f"{what}, {size.pages:,} pages ({path})"))
        print(format_projection(measured, args.cpu_ms, assumptions, args.db_record))
    except ProjectionError as error:
        print(f"project_scale: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
