"""``relatedpages authorities --links DIR --roots FILE --algorithm sfp|hits``: the
authoritative pages of a set of root pages (Zhou et al.'s SFP, or HITS on the same
generated graphs), from a link index."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from relatedpages.baselines.methods import node_name
from relatedpages.commands.common import EXIT_OK, EXIT_USAGE, UsageError, load_graph

AUTHORITY_ALGORITHMS = ("sfp", "hits")



def add_parser(commands: Any) -> None:
    from relatedpages.baselines.hits import FILTER_THRESHOLD_DEFAULT, ITERATIONS_DEFAULT
    from relatedpages.baselines.hits import MAX_RESULTS_DEFAULT as HITS_MAX_RESULTS_DEFAULT
    from relatedpages.baselines.sfp import LEVEL_DEFAULT, MAX_LINKS_DEFAULT, MAX_PAGES_DEFAULT, MIN_FREQ_DEFAULT

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
    authorities.set_defaults(run=run)


def _root_lines(path: str) -> list[str]:
    try:
        handle = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"--roots: {error}") from error
    with handle:
        return [line.strip() for line in handle if line.strip() and not line.lstrip().startswith("#")]


def run(args: argparse.Namespace) -> int:
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
    graph = load_graph(args.links)
    status = EXIT_OK
    roots: list[int] = []
    unknown: list[str] = []
    for line in lines:
        name = node_name(graph, line)
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
