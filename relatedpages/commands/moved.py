"""``relatedpages moved --old DIR --new DIR URL…``: new locations of pages gone between two
crawls (Spertus), from the two crawls' link indexes."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from relatedpages.baselines.methods import node_name
from relatedpages.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    load_graph,
    query_lines,
)


def add_parser(commands: Any) -> None:
    from relatedpages.baselines.moved import (
        ANCHOR_WEIGHT_DEFAULT,
        HOP_DECAY_DEFAULT,
        MAX_CANDIDATES_DEFAULT,
        MAX_HOPS_DEFAULT,
        POSITION_WEIGHT_DEFAULT,
    )
    from relatedpages.baselines.moved import MAX_PARENTS_DEFAULT as MOVED_MAX_PARENTS_DEFAULT

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
    moved.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from relatedpages.baselines.moved import MovedParams, MovedReason, moved

    try:
        params = MovedParams(anchor_weight=args.anchor_weight, position_weight=args.position_weight,
                             max_hops=args.max_hops, hop_decay=args.hop_decay, max_parents=args.max_parents,
                             max_candidates=args.max_results)
    except ValueError as error:
        raise UsageError(str(error)) from error
    urls = query_lines(args)
    old_graph = load_graph(args.old)
    new_graph = load_graph(args.new)
    if old_graph.key_kind is not new_graph.key_kind:
        raise UsageError(f"--old has {old_graph.key_kind.value} keys, --new {new_graph.key_kind.value} keys")
    status = EXIT_OK
    for query in urls:
        name = node_name(old_graph, query)
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
