"""The page-level methods by name: the one home of the names ``relatedpages query --links
--algorithm``, ``relatedpages eval related`` and ``scripts/bench_baselines.py`` use.

>>> list(PAGE_METHODS)
['companion', 'dh-cocitation', 'extended-cocitation', 'lli']
>>> PAGE_METHODS["lli"].params().max_results
10
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from relatedpages.baselines import Answer
from relatedpages.baselines.companion import CompanionParams, companion
from relatedpages.baselines.dh_cocitation import DHCocitationParams, dh_cocitation
from relatedpages.baselines.extended import ExtendedCocitationParams, extended_cocitation
from relatedpages.baselines.lli import LLIParams, lli
from relatedpages.store.linkgraph import LinkGraph


@dataclass(frozen=True)
class PageMethod:
    """A method answering "pages related to u" from a link graph, and its parameters."""

    name: str
    answer: Callable[[LinkGraph, int, Any], Answer]  # (graph, node, params) -> Answer
    params: type  # a frozen dataclass; its defaults are the paper's values


PAGE_METHODS: Mapping[str, PageMethod] = MappingProxyType({
    method.name: method for method in (
        PageMethod("companion", companion, CompanionParams),
        PageMethod("dh-cocitation", dh_cocitation, DHCocitationParams),
        PageMethod("extended-cocitation", extended_cocitation, ExtendedCocitationParams),
        PageMethod("lli", lli, LLIParams),
    )
})
