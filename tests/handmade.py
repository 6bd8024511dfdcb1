"""Hand-made filtered links for similarity and oracle tests."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Link:
    """A filtered link, as filters.links.FilteredLink has it (LinkLike)."""

    url: str
    site: str
    words: frozenset[str]
    pos: int


def link(url: str, pos: int, *words: str) -> Link:
    """A link whose site is its host (good enough for hand-made corpora)."""
    return Link(url, urlsplit(url).hostname or "", frozenset(words), pos)
