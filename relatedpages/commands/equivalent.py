"""``relatedpages equivalent-links --links DIR PAGE ANCHOR TARGET``: hyperlinks of the
index equivalent to one link (Courtenage & Williams), from a link index with anchors."""
from __future__ import annotations

import argparse
import json
from typing import Any

from relatedpages.commands.common import EXIT_OK, UsageError, load_graph, resolve_page


def add_parser(commands: Any) -> None:
    from relatedpages.baselines.equivalent import ANCHOR_THRESHOLD_DEFAULT, EQUIVALENT_MAX_RESULTS_DEFAULT

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
    equivalent.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from relatedpages.baselines import NoAnswer
    from relatedpages.baselines.equivalent import EquivalentParams, equivalent_links

    try:
        params = EquivalentParams(anchor_threshold=args.anchor_threshold, max_results=args.max_results,
                                  same_link=args.same_link)
    except ValueError as error:
        raise UsageError(str(error)) from error
    graph = load_graph(args.links)
    page, page_node = resolve_page(graph, args.page, "PAGE")
    target, target_node = resolve_page(graph, args.target, "TARGET")
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
