"""``relatedpages query``: related pages of URLs, from a database (``--db``, as built) or
from a link index with one of the literature's page-level methods (``--links
--algorithm``), as a table or one JSON object per query; every result with its evidence."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from relatedpages.commands.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    load_graph,
    one_line,
    query_lines,
)


def add_parser(commands: Any) -> None:
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
    query.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return run_query_links(args) if args.links else run_query(args)


def run_query(args: argparse.Namespace) -> int:
    from relatedpages.store.db import DatabaseError, RelatedPagesDB

    given = _given_baseline_flags(args)
    if given:
        raise UsageError(f"{', '.join(given)}: only with --links (a --db database answers with the "
                         "algorithm it was built with)")
    urls = query_lines(args)
    try:
        database = RelatedPagesDB(args.db, verify="full" if args.verify else "sizes")
    except DatabaseError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    status = EXIT_OK
    with database:
        for query in urls:
            try:
                answer = database.answer(query)
            except ValueError:
                print(f"relatedpages: error: malformed URL: {query}", file=sys.stderr)
                status = EXIT_USAGE
                continue
            if args.json:
                print(json.dumps(answer, ensure_ascii=False))
            else:
                _print_related(query, answer)
    return status


def _print_related(query: str, answer: dict[str, Any]) -> None:
    """One answer of :meth:`RelatedPagesDB.answer` as the table (the JSON's own fields)."""
    url = answer["matched"] or answer["url"]
    print(f"\n{url}" + ("" if url == query else f"   (query: {query})"))
    if not answer["found"]:
        print("  not in the database")
        return
    related = answer["related"]
    if not related:
        print("  no related pages")
    whole = bool(related) and related[0].get("fallback") is not None
    if whole and related[0].get("via"):
        print(f"  (no block evidence of its own: answered from its site's page {related[0]['via']})")
    elif whole:
        print(f"  (no block evidence: answered by {related[0]['fallback']})")
    for rank, item in enumerate(related, 1):
        sites = ", ".join(evidence[0] for evidence in item["evidence"])
        fallback = item.get("fallback")
        filled = (f"  (filled by {fallback})"
                  if fallback and not whole and fallback != related[0].get("fallback") else "")
        print(f"  {rank:>2}. {item['score']:>8.3f}  {item['url']}   [{sites}]{filled}")
        if item["evidence"] and len(item["evidence"][0]) == 4:  # the strongest citing page
            _, _, citing, text = item["evidence"][0]
            print(f"{'':>14}via {_middle_cut(citing)}" + (f"  «{one_line(text)}»" if text else ""))


def _middle_cut(url: str, width: int = 72) -> str:
    """A long URL shortened in its middle, so the table keeps one short line a result: its
    start names the site and its end the page (``--json`` has it whole).

    >>> _middle_cut("https://a.example/" + "x" * 80 + "/end", width=30)
    'https://a.example/x…xxxxxx/end'
    """
    url = one_line(url, width=len(url) + 1)
    if len(url) <= width:
        return url
    tail = width // 3
    return url[: width - tail - 1] + "…" + url[-tail:]


def _baseline_algorithms() -> tuple[str, ...]:
    """``query --links --algorithm``: the page-level methods (relatedpages.baselines.methods)."""
    from relatedpages.baselines.methods import PAGE_METHODS

    return tuple(PAGE_METHODS)


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
    "cosine-cocitation": {"parents": "max_parents", "max_results": "max_results", "seed": "sample_seed",
                          "min_shared": "min_shared"},
    "ppr": {"restart": "restart", "tolerance": "tolerance", "direction": "direction",
            "max_results": "max_results"},
    "green": {"restart": "restart", "tolerance": "tolerance", "direction": "direction",
              "max_results": "max_results"},
    "simrank": {"decay": "decay", "iterations": "iterations", "tolerance": "tolerance",
                "max_results": "max_results"},
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
                            "(Hou & Zhang), cosine-cocitation (co-citation / both in-degrees), ppr "
                            "(personalised PageRank), green (Ollivier & Senellart: ppr / PageRank), "
                            "simrank (Jeh & Widom: pages linked from similar pages). Required with --links")
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
        "min_shared": ("--min-shared", int, "K", "fewest parents a result shares with the query page"),
        "restart": ("--restart", float, "α", "restart probability of the walk at each step"),
        "tolerance": ("--tolerance", float, "ε", "ppr, green: push threshold, the residual per link left "
                                                 "unpushed; simrank: values under it dropped at each step"),
        "direction": ("--direction", str, "both|out", "the walk follows links both ways, or out-links only"),
        "decay": ("--decay", float, "C", "simrank: decay of each step back to a common ancestor"),
        "iterations": ("--iterations", int, "K", "simrank: steps back the two pages' reverse walks "
                                                 "may take to meet"),
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
        from relatedpages.baselines.stoplist import Stoplist

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


def run_query_links(args: argparse.Namespace) -> int:
    from relatedpages.baselines.methods import links_answer

    if not args.algorithm:
        raise UsageError(f"--links needs --algorithm ({'|'.join(_baseline_algorithms())})")
    params = baseline_params(args)
    urls = query_lines(args)
    graph = load_graph(args.links, args.verify)
    status = EXIT_OK
    seconds: list[float] = []
    for query in urls:
        started = time.monotonic()
        try:
            record = links_answer(graph, query, args.algorithm, params)
        except ValueError:
            print(f"relatedpages: error: malformed URL: {query}", file=sys.stderr)
            status = EXIT_USAGE
            continue
        seconds.append(time.monotonic() - started)
        if args.json:
            print(json.dumps(record, ensure_ascii=False))
        else:
            _print_baseline(query, record)
    if seconds:
        ordered = sorted(seconds)
        print(f"answered {len(seconds)} queries with {args.algorithm} in {sum(seconds):.2f} s "
              f"(median {1000 * ordered[len(ordered) // 2]:.1f} ms)", file=sys.stderr)
    return status


def _print_baseline(query: str, record: dict[str, Any]) -> None:
    name, reason = record["url"], record["reason"]
    print(f"\n{name}" + ("" if name == query else f"   (query: {query})") + f"   [{record['algorithm']}]")
    if reason == "unknown_url":
        print("  not in the link index")
        return
    if not record["related"]:
        print(f"  no related pages ({reason})" if reason is not None else "  no related pages")
    for rank, item in enumerate(record["related"], 1):
        url, score, evidence = item["url"], item["score"], item["evidence"]
        print(f"  {rank:>2}. {_score_text(score)}  {url}")
        relations = {relation: page for relation, page, _ in evidence}
        if "query-parent" in relations:  # simrank: where the two reverse walks meet
            print(f"{'':>14}via {relations['query-parent']} and {relations['result-parent']}, "
                  f"both reached from {relations['ancestor']}")
        elif evidence:  # the strongest item (relatedpages.baselines.evidence)
            relation, page, text = evidence[0]
            said = {"parent": "via", "link": "linked from", "child": "both link"}[relation]
            print(f"{'':>14}{said} {page}" + (f"  «{one_line(text)}»" if text else ""))


def _score_text(score: float) -> str:
    """Eight characters; a small positive score is not shown as 0.000."""
    return f"{score:>8.3f}" if score == 0 or abs(score) >= 0.001 else f"{score:>8.1e}"


