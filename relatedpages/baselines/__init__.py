"""The literature's link-analysis methods, answered at query time from a :class:`LinkGraph`.

Each page-level method (``companion``, ``dh-cocitation``, ``extended-cocitation``, ``lli``)
is a pure function ``(graph, node, params) -> Answer``; the CLI and the evaluation turn an
:class:`Answer` into the block co-citation query's JSON shape.  An answer is never an
exception: an unknown URL or an empty neighbourhood is an empty answer with a
:class:`NoAnswer` reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class NoAnswer(str, Enum):
    """Why an answer is empty."""

    UNKNOWN_URL = "unknown_url"  # the query is not a node of the graph
    NO_PARENTS = "no_parents"  # nothing links to the query page
    NO_CHILDREN = "no_children"  # the query page links to nothing (or was not crawled)
    EMPTY_NEIGHBOURHOOD = "empty_neighbourhood"  # a neighbourhood was built but nothing qualified


@dataclass(frozen=True, order=True)
class Scored:
    """One related page: node number and the method's score (higher is more related)."""

    node: int
    score: float


@dataclass(frozen=True)
class Answer:
    """Related pages best first (ties by node name), or empty with a reason."""

    related: tuple[Scored, ...] = ()
    reason: NoAnswer | None = None

    def __post_init__(self) -> None:
        if self.related and self.reason is not None:
            raise ValueError("an answer with related pages has no NoAnswer reason")
