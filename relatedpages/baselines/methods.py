"""The page-level methods by name: the one home of the names ``relatedpages query --links
--algorithm``, ``relatedpages eval related`` and ``scripts/bench_baselines.py`` use.

>>> list(PAGE_METHODS)
['companion', 'dh-cocitation', 'extended-cocitation', 'lli', 'cosine-cocitation', 'ppr', 'green', 'simrank']
>>> PAGE_METHODS["lli"].params().max_results
10
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from filters.urls import normalise_url
from relatedpages.baselines import Answer, NoAnswer
from relatedpages.baselines.companion import CompanionParams, companion
from relatedpages.baselines.cosine import CosineParams, cosine_cocitation
from relatedpages.baselines.dh_cocitation import DHCocitationParams, dh_cocitation
from relatedpages.baselines.evidence import ResultEvidence, link_evidence
from relatedpages.baselines.extended import ExtendedCocitationParams, extended_cocitation
from relatedpages.baselines.lli import LLIParams, lli
from relatedpages.baselines.simrank import SimRankParams, simrank, simrank_evidence
from relatedpages.baselines.walks import WalkParams, green, ppr
from relatedpages.store.linkgraph import KeyKind, LinkGraph


@dataclass(frozen=True)
class PageMethod:
    """A method answering "pages related to u" from a link graph, and its parameters."""

    name: str
    answer: Callable[[LinkGraph, int, Any], Answer]  # (graph, node, params) -> Answer
    params: type  # a frozen dataclass; its defaults are the paper's values
    #: (graph, query, result, params) -> the links behind a result; None: the shared
    #: parents and children and a direct link (relatedpages.baselines.evidence)
    evidence: Callable[[LinkGraph, int, int, Any], ResultEvidence] | None = None

    def explain(self, graph: LinkGraph, query: int, result: int, params: Any) -> ResultEvidence:
        """The evidence for ``result`` as an answer to ``query``."""
        if self.evidence is None:
            return link_evidence(graph, query, result)
        return self.evidence(graph, query, result, params)


PAGE_METHODS: Mapping[str, PageMethod] = MappingProxyType({
    method.name: method for method in (
        PageMethod("companion", companion, CompanionParams),
        PageMethod("dh-cocitation", dh_cocitation, DHCocitationParams),
        PageMethod("extended-cocitation", extended_cocitation, ExtendedCocitationParams),
        PageMethod("lli", lli, LLIParams),
        PageMethod("cosine-cocitation", cosine_cocitation, CosineParams),
        PageMethod("ppr", ppr, WalkParams),
        PageMethod("green", green, WalkParams),
        PageMethod("simrank", simrank, SimRankParams, simrank_evidence),
    )
})


def node_name(graph: LinkGraph, query: str) -> str | None:
    """A user's page as a node name of ``graph``: the normalised URL (None when it does not
    normalise: a malformed URL), or the id as given when the graph's keys are ids."""
    if graph.key_kind is KeyKind.URL:
        return normalise_url(query)
    return query.strip()


def links_answer(graph: LinkGraph, query: str, algorithm: str, params: Any,
                 limit: int | None = None) -> dict[str, Any]:
    """The answer of a page-level method to one query, as ``relatedpages query --links
    --json`` prints it (and ``relatedpages serve`` returns it): every result with its
    evidence (:meth:`PageMethod.explain`), and why there is none when there is none.
    Raises ``ValueError`` for a malformed URL."""
    name = node_name(graph, query)
    if name is None:
        raise ValueError(f"not a web page URL: {query!r}")
    node = graph.id_of(name)
    if node is None:
        related: list[dict[str, Any]] = []
        reason: NoAnswer | None = NoAnswer.UNKNOWN_URL
    else:
        method = PAGE_METHODS[algorithm]
        answer = method.answer(graph, node, params)
        related = [{"url": graph.name(item.node), "score": float(item.score),
                    "evidence": method.explain(graph, node, item.node, params).as_json(graph)}
                   for item in answer.related[:limit]]
        reason = answer.reason
    return {"query": query, "url": name, "found": node is not None, "algorithm": algorithm,
            "related": related, "reason": None if reason is None else reason.value}
