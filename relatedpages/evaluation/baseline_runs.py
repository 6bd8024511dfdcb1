"""The page-level baselines of the related-pages evaluation, and the rows computed beside
the block co-citation oracles: a connectivity server of the index pages
(:func:`link_graph_of`), every baseline asked for every test page (:func:`run_baselines`),
the two references — the naive heading row's strongest form and Marginalia's weighted site
cosine on the baselines' link graph — and any extra algorithm (:func:`other_rows`).

``ppr`` and ``green`` read the same personalised PageRank walk of a page: asked together,
one walk answers both (:func:`relatedpages.baselines.walks.ppr_and_green`, the same answers
as each alone), and their time is reported as one.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from relatedpages.baselines.methods import PAGE_METHODS
from relatedpages.store.linkgraph import HostRule

if TYPE_CHECKING:
    from relatedpages.baselines import Answer
    from relatedpages.evaluation.hubs import HubList
    from relatedpages.store.linkgraph import LinkGraph

logger = logging.getLogger(__name__)

#: k of the evaluation's top-k lists (the paper's M = 15); related.TOP_K_DEFAULT is this.
TOP_K_DEFAULT = 15
BASELINES = tuple(PAGE_METHODS)
#: A related-pages dict: url -> [[related_url, score, evidence], ...], best first.
RelatedDict = Mapping[str, Sequence[Sequence[Any]]]
#: A page-level algorithm for ``evaluate``'s ``extra``: index records -> related dict.
Algorithm = Callable[[Sequence[Mapping[str, Any]]], RelatedDict]
#: The weighted cosine reference's row (relatedpages.baselines.weighted_cosine).
WEIGHTED_COSINE = "weighted site cosine (Marginalia)"
#: Baselines answered from one walk per page when both are asked.
WALK_PAIR = ("ppr", "green")


#: The baselines' host rule in the main table: the project's site identity (LinkGraph's
#: default, so the table and ``relatedpages query --links`` agree).
BASELINE_HOSTS_DEFAULT = HostRule.SITE


def link_graph_of(
    records: Iterable[Mapping[str, Any]], hosts: HostRule = BASELINE_HOSTS_DEFAULT
) -> LinkGraph:
    """The connectivity server of segment records: every record's out-links in block order
    with anchor and block number (:func:`relatedpages.store.linkindex.page_out_links`, the rule of
    ``jobs.linkgraph``), URL names, and "hosts" by ``hosts``.

    >>> g = link_graph_of([{"url": "https://github.com/me/list", "site": "github.com/me",
    ...     "blocks": [[{"href": "https://github.com/a/x", "anchor": "X", "pos": 0}],
    ...                [{"href": "https://github.com/a/y", "anchor": "", "pos": 0},
    ...                 {"href": "https://github.com/b/z", "anchor": "Z", "pos": 1}]]}])
    >>> g
    <LinkGraph 4 nodes, 3 links, names=url>
    >>> [(g.name(link.target), link.anchor, link.block) for link in g.out_links(0)]
    [('https://github.com/a/x', 'X', 0), ('https://github.com/a/y', '', 1), ('https://github.com/b/z', 'Z', 1)]
    >>> [g.host_names[g.host(node)] for node in range(len(g))]
    ['github.com/me', 'github.com/a', 'github.com/a', 'github.com/b']
    >>> len(set(link_graph_of([], HostRule.URL_HOST).hosts))
    0
    """
    from relatedpages.store.linkgraph import KeyKind, LinkGraph
    from relatedpages.store.linkindex import LinkEvent, page_out_links

    events: dict[LinkEvent, int] = {}
    pages = []
    for record in records:
        found = page_out_links(record, events)
        if found is not None:
            url, out = found
            pages.append((url, [(href, anchor, block) for href, anchor, block in out]))
    graph = LinkGraph.from_pages(pages, key_kind=KeyKind.URL, host_rule=hosts)
    dropped = {event.value: count for event, count in events.items()
               if event not in (LinkEvent.PAGES, LinkEvent.LINKS)}
    if dropped:
        logger.info("link graph of the index: dropped %s", dropped)
    return graph


def with_hosts(graph: LinkGraph, hosts: HostRule) -> LinkGraph:
    """``graph`` with its host numbers by ``hosts`` (the same arrays otherwise)."""
    return graph.with_host_rule(hosts)


def check_baseline(name: str) -> None:
    """A ValueError naming the choices unless ``name`` is a baseline."""
    if name not in PAGE_METHODS:
        raise ValueError(f"unknown baseline {name!r}: choose from {', '.join(BASELINES)}")


def baseline_params(name: str, k: int = TOP_K_DEFAULT) -> Any:
    """A baseline's parameters: its module's defaults (the papers' values), at most k results."""
    check_baseline(name)
    return PAGE_METHODS[name].params(max_results=k)


def baseline_answer(graph: LinkGraph, node: int, name: str, params: Any) -> Answer:
    """One baseline's answer for ``node`` (``params`` from :func:`baseline_params`)."""
    return PAGE_METHODS[name].answer(graph, node, params)


def describe_params(params: Any) -> dict[str, Any]:
    """A baseline's parameters as JSON values (a stoplist as its number of entries)."""
    from dataclasses import fields

    from relatedpages.baselines.stoplist import Stoplist

    described: dict[str, Any] = {}
    for item in fields(params):
        value = getattr(params, item.name)
        if isinstance(value, Enum):
            value = value.value
        elif isinstance(value, Stoplist):
            value = len(value.entries)
        described[item.name] = value
    return described


@dataclass(frozen=True)
class BaselineRun:
    """One baseline asked for every test page: its related dict and why answers were empty."""

    name: str
    related: Mapping[str, Sequence[Sequence[Any]]]
    no_answer: Mapping[str, int]  # NoAnswer value -> test pages
    seconds: float
    walk_shared: bool = False  # ppr and green from one walk: ``seconds`` is in ppr's run


def run_baseline(
    graph: LinkGraph, name: str, test_pages: Sequence[str], k: int = TOP_K_DEFAULT
) -> BaselineRun:
    """Ask baseline ``name`` for every test page; answers as ``[[url, score, []], …]``."""
    from relatedpages.baselines import NoAnswer

    params = baseline_params(name, k)
    started = time.monotonic()
    related: dict[str, list[list[Any]]] = {}
    no_answer: defaultdict[str, int] = defaultdict(int)
    for url in test_pages:
        node = graph.id_of(url)
        if node is None:
            no_answer[NoAnswer.UNKNOWN_URL.value] += 1
            continue
        answer = baseline_answer(graph, node, name, params)
        if answer.reason is not None:
            no_answer[answer.reason.value] += 1
        if answer.related:
            related[url] = [[graph.name(scored.node), scored.score, []]
                            for scored in answer.related]
    return BaselineRun(name, related, dict(sorted(no_answer.items())),
                       time.monotonic() - started)


def parse_baselines(text: str) -> tuple[str, ...]:
    """``--baselines``: comma-separated names, ``all`` or ``none``.

    >>> parse_baselines("lli, companion,lli")
    ('lli', 'companion')
    >>> parse_baselines("none"), len(parse_baselines("all"))
    ((), 8)
    >>> parse_baselines("hits")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: unknown baseline 'hits': choose from companion, dh-cocitation,
                extended-cocitation, lli, cosine-cocitation, ppr, green, simrank
    """
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["none"]:
        return ()
    if names == ["all"]:
        return BASELINES
    for name in names:
        check_baseline(name)
    return tuple(dict.fromkeys(names))


def run_baselines(graph: LinkGraph, names: Sequence[str], test_pages: Sequence[str],
                  k: int = TOP_K_DEFAULT) -> dict[str, BaselineRun]:
    """:func:`run_baseline` of each of ``names``, in order; ``ppr`` and ``green`` asked
    together read one walk per page (``walk_shared``: their time, one figure, is in the
    ``ppr`` run)."""
    pair = all(name in names for name in WALK_PAIR) and (
        baseline_params(WALK_PAIR[0], k) == baseline_params(WALK_PAIR[1], k))
    walked = _run_walk_pair(graph, test_pages, k) if pair else {}
    return {name: walked.get(name) or run_baseline(graph, name, test_pages, k)
            for name in names}


def _run_walk_pair(graph: LinkGraph, test_pages: Sequence[str],
                   k: int) -> dict[str, BaselineRun]:
    from relatedpages.baselines import NoAnswer
    from relatedpages.baselines.walks import ppr_and_green

    params = baseline_params(WALK_PAIR[0], k)
    started = time.monotonic()
    related: dict[str, dict[str, list[list[Any]]]] = {name: {} for name in WALK_PAIR}
    no_answer: dict[str, defaultdict[str, int]] = {name: defaultdict(int) for name in WALK_PAIR}
    for url in test_pages:
        node = graph.id_of(url)
        if node is None:
            for name in WALK_PAIR:
                no_answer[name][NoAnswer.UNKNOWN_URL.value] += 1
            continue
        for name, answer in zip(WALK_PAIR, ppr_and_green(graph, node, params)):
            if answer.reason is not None:
                no_answer[name][answer.reason.value] += 1
            if answer.related:
                related[name][url] = [[graph.name(scored.node), scored.score, []]
                                      for scored in answer.related]
    seconds = time.monotonic() - started
    return {name: BaselineRun(name, related[name], dict(sorted(no_answer[name].items())),
                              seconds if name == WALK_PAIR[0] else 0.0, walk_shared=True)
            for name in WALK_PAIR}


def baseline_seconds(runs: Mapping[str, BaselineRun], queries: int) -> dict[str, float]:
    """The time of each run as the evaluation reports it (the walk pair as one figure).

    >>> baseline_seconds({"lli": BaselineRun("lli", {}, {}, 1.5),
    ...                   "ppr": BaselineRun("ppr", {}, {}, 9.0, walk_shared=True),
    ...                   "green": BaselineRun("green", {}, {}, 0.0, walk_shared=True)}, 3)
    {'lli (3 queries)': 1.5, 'ppr and green (3 queries, one walk each)': 9.0}
    """
    seconds: dict[str, float] = {}
    for name, run in runs.items():
        if not run.walk_shared:
            seconds[f"{name} ({queries} queries)"] = run.seconds
        elif name == WALK_PAIR[0]:
            seconds[f"{' and '.join(WALK_PAIR)} ({queries} queries, one walk each)"] = run.seconds
    return seconds


def weighted_cosine_related(graph: LinkGraph, test_pages: Sequence[str],
                            k: int = TOP_K_DEFAULT) -> dict[str, list[list[Any]]]:
    """Marginalia's weighted site cosine (:mod:`relatedpages.baselines.weighted_cosine`, at
    most k results) for every test page, as ``[[url, score, []], …]``."""
    from relatedpages.baselines.weighted_cosine import WeightedCosineParams, weighted_site_cosine

    params = WeightedCosineParams(max_results=k)
    related: dict[str, list[list[Any]]] = {}
    for url in test_pages:
        node = graph.id_of(url)
        if node is None:
            continue
        answer = weighted_site_cosine(graph, node, params)
        if answer.related:
            related[url] = [[graph.name(scored.node), scored.score, []]
                            for scored in answer.related]
    return related


@dataclass(frozen=True)
class OtherRows:
    """What :func:`other_rows` computes: every row but block co-citation's and co-citation's."""

    related: dict[str, RelatedDict]
    graph_figures: dict[str, int]
    no_answer: dict[str, Mapping[str, int]]
    url_host_related: dict[str, RelatedDict]


def other_rows(index_records: Sequence[Mapping[str, Any]], tests: Sequence[str], k: int,
               extra: Mapping[str, Algorithm] | None, baselines: Sequence[str],
               baseline_hosts: HostRule, url_host_view: bool,
               index_sections: Sequence[HubList] | None,
               seconds: dict[str, float]) -> OtherRows:
    """The naive heading row's strongest form (when ``index_sections`` are given),
    ``extra``'s rows, and the weighted site cosine and the baselines on a link graph of
    ``index_records`` by ``baseline_hosts`` (when any baseline is asked; with
    ``url_host_view``, the baselines again by URL hosts); each step's time added to
    ``seconds``."""
    from relatedpages.evaluation.naive import NAIVE_STRONG, naive_heading_related

    related: dict[str, RelatedDict] = {}
    if index_sections is not None:
        step = time.monotonic()
        related[NAIVE_STRONG] = naive_heading_related(index_sections, k)
        seconds[NAIVE_STRONG] = time.monotonic() - step
    for name, algorithm in (extra or {}).items():
        step = time.monotonic()
        related[name] = algorithm(index_records)
        seconds[name] = time.monotonic() - step
    graph_figures: dict[str, int] = {}
    no_answer: dict[str, Mapping[str, int]] = {}
    url_host_related: dict[str, RelatedDict] = {}
    if baselines:
        step = time.monotonic()
        graph = link_graph_of(index_records, baseline_hosts)
        url_graph = with_hosts(graph, HostRule.URL_HOST)
        seconds[f"link graph of the index ({baseline_hosts.value} hosts)"] = (
            time.monotonic() - step)
        graph_figures = {"graph_nodes": len(graph), "graph_links": graph.edges,
                         "graph_crawled": int(graph.crawled.sum()),
                         "graph_hosts": len(graph.host_names)}
        step = time.monotonic()
        related[WEIGHTED_COSINE] = weighted_cosine_related(graph, tests, k)
        seconds[f"{WEIGHTED_COSINE} ({len(tests)} queries)"] = time.monotonic() - step
        runs = run_baselines(graph, baselines, tests, k)
        for name, run in runs.items():
            related[name] = run.related
            no_answer[name] = run.no_answer
        seconds.update(baseline_seconds(runs, len(tests)))
        if url_host_view and baseline_hosts is not HostRule.URL_HOST:
            step = time.monotonic()
            for name, run in run_baselines(url_graph, baselines, tests, k).items():
                url_host_related[name] = run.related
            seconds["baselines with URL hosts (second view)"] = time.monotonic() - step
    return OtherRows(related, graph_figures, no_answer, url_host_related)
