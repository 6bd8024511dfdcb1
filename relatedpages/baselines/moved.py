"""Spertus's moved-page finder: where did a page go, asked of the pages that linked to it.

Paper 002 §2.4 (a survey of Spertus, "ParaSite: Mining Structural Information on the Web"),
"Exploiting Hyperlink Structure": "the people most likely to know the new location of the
page are those who cared enough about the material to point to the old location.  The pages R
that referenced U_old at the time they were last crawled could then check whether each page R
pointed to the new location U_new of the moved page, either directly or recursively,
preferentially expanding links whose anchor text included blurb terms."

Here the two crawls are two :class:`LinkGraph` s with anchors (``LinkGraph.from_pages``).
For a URL of the old crawl that the new crawl no longer has, every old parent R that the new
crawl fetched again is read in its new version, and each link there to a *new* target X — one
R did not link to before — is evidence that X is U_new.  Readings chosen where the survey is
vague:

* **Gone** means not crawled in the new crawl (absent, or only a link target — a page still
  linked to but not fetched).  A URL the new crawl fetched is ``not_gone``.  Nodes of the two
  crawls are matched by name (normalised URL).
* **Direct evidence** (hop 1, on R itself) for a new link R -> X, against each old link
  R -> U_old: ``anchor_weight * anchor similarity + position_weight * position``, the best
  over R's old links to U_old.  *Anchor similarity* is the Jaccard coefficient of the two
  anchors' word sets (lower-cased ``\\w+`` runs; 0 when either anchor has no words): "the link
  under the same anchor now points to X".  *Position* is the share of the old link's two
  neighbours — the targets just before and just after it in page order, the page's start and
  end counting as neighbours — that the new link has too: 1 when the new link sits in the
  old link's slot, 0.5 when on one side only.  Neighbours rather than an index, so that a
  link added higher up the page does not hide the slot: "the link at the same position now
  points to X".
* **Recursive evidence** (hops 2 .. ``max_hops``): from R's new version, the links whose
  anchor shares a word with the *blurb* — the words of every old anchor pointing to U_old
  (the only text about U_old a link graph has; the survey's blurb is a search engine's
  snippet) — are followed to pages the new crawl fetched, and their links to new targets
  X score ``hop_decay ** (hop - 1) * anchor_weight * similarity``, the similarity being the
  best against any old anchor of U_old.  Position means nothing on another page.  "New"
  there means the page did not link to X in the old crawl.
* **Ranking**: a parent contributes its single best piece of evidence per candidate (a page
  that links to X twice is one voice); a candidate's score is the sum over parents, ties
  broken by the number of parents giving evidence, then by URL.  Candidates with no positive
  evidence are dropped.
* Parents are taken in ascending node order, at most ``max_parents`` of them (a bound of
  ours; Spertus gives none).  Weights, ``max_hops`` and ``hop_decay`` are ours too: the survey
  gives no numbers.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from relatedpages.store.linkgraph import LinkGraph

ANCHOR_WEIGHT_DEFAULT = 1.0  # ours: anchor and position evidence count alike
POSITION_WEIGHT_DEFAULT = 1.0  # ours
MAX_HOPS_DEFAULT = 2  # ours: the parent's links, and one step "recursively" beyond
HOP_DECAY_DEFAULT = 0.5  # ours: evidence a step further away counts half
MAX_PARENTS_DEFAULT = 1000  # ours: a bound on the old parents read
MAX_CANDIDATES_DEFAULT = 10  # ours: candidates returned

_WORDS = re.compile(r"\w+")


class MovedReason(str, Enum):
    """Why no new location was found."""

    UNKNOWN_URL = "unknown_url"  # the URL is not a page of the old crawl
    NOT_GONE = "not_gone"  # the new crawl still fetched it: nothing moved
    NO_PARENTS = "no_parents"  # nothing linked to it in the old crawl
    PARENTS_NOT_RECRAWLED = "parents_not_recrawled"  # no old parent was fetched in the new crawl
    NO_EVIDENCE = "no_evidence"  # parents recrawled, but no new link carries any evidence


@dataclass(frozen=True)
class MovedParams:
    """Evidence weights and reach of the moved-page search (readings in the module docstring)."""

    anchor_weight: float = ANCHOR_WEIGHT_DEFAULT
    position_weight: float = POSITION_WEIGHT_DEFAULT
    max_hops: int = MAX_HOPS_DEFAULT
    hop_decay: float = HOP_DECAY_DEFAULT
    max_parents: int = MAX_PARENTS_DEFAULT
    max_candidates: int = MAX_CANDIDATES_DEFAULT

    def __post_init__(self) -> None:
        if self.anchor_weight < 0 or self.position_weight < 0:
            raise ValueError("anchor_weight and position_weight must be >= 0")
        if self.anchor_weight == 0 and self.position_weight == 0:
            raise ValueError("anchor_weight and position_weight cannot both be 0")
        if self.max_hops < 1:
            raise ValueError(f"max_hops must be >= 1, got {self.max_hops}")
        if not 0 < self.hop_decay <= 1:
            raise ValueError(f"hop_decay must be in (0, 1], got {self.hop_decay}")
        if self.max_parents < 1:
            raise ValueError(f"max_parents must be >= 1, got {self.max_parents}")
        if self.max_candidates < 1:
            raise ValueError(f"max_candidates must be >= 1, got {self.max_candidates}")


@dataclass(frozen=True)
class Evidence:
    """One parent's best reason to believe a candidate is the new location."""

    parent: str  # the old parent R (URL)
    page: str  # the page carrying the new link: R itself (hop 1) or a page R leads to
    hop: int
    anchor: str  # the new link's anchor
    old_anchor: str  # the old anchor it was compared with
    anchor_similarity: float
    position: float  # 0, 0.5 or 1 (hop 1 only)
    score: float


@dataclass(frozen=True)
class MovedCandidate:
    """A candidate new location: score summed over parents, one evidence per parent."""

    url: str
    score: float
    parents: int  # parents giving evidence
    evidence: tuple[Evidence, ...]  # best first


@dataclass(frozen=True)
class MovedAnswer:
    """Candidates best first, or empty with a reason."""

    url: str  # the URL asked about (normalised when it is a page of the old crawl)
    candidates: tuple[MovedCandidate, ...] = ()
    parents: int = 0  # old parents read
    recrawled_parents: int = 0  # of those, fetched again in the new crawl
    reason: MovedReason | None = None

    def __post_init__(self) -> None:
        if self.candidates and self.reason is not None:
            raise ValueError("an answer with candidates has no reason")


@dataclass(frozen=True)
class _Link:
    target: str
    anchor: str
    before: str | None  # the previous link's target; None at the page's start
    after: str | None  # the next link's target; None at the page's end


def _links(graph: LinkGraph, page: int) -> list[_Link]:
    targets = [graph.name(t) for t in graph.children(page).tolist()]
    anchors = graph.anchors(page)
    return [
        _Link(target, anchor, targets[i - 1] if i else None, targets[i + 1] if i + 1 < len(targets) else None)
        for i, (target, anchor) in enumerate(zip(targets, anchors))
    ]


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.lower()))


def anchor_similarity(old: str, new: str) -> float:
    """Jaccard coefficient of the anchors' word sets; 0 when either has no words.

    >>> anchor_similarity("Jane Smith's home page", "jane smith's HOME page")
    1.0
    >>> anchor_similarity("Smith home", "Jane Smith")
    0.3333333333333333
    >>> anchor_similarity("", "Smith")
    0.0
    """
    a, b = _words(old), _words(new)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def slot_match(old: _Link, new: _Link) -> float:
    """Share of the old link's two neighbours (start/end count) that the new link has too."""
    return ((old.before == new.before) + (old.after == new.after)) / 2


def moved(
    old_graph: LinkGraph, new_graph: LinkGraph, url: str, params: MovedParams | None = None
) -> MovedAnswer:
    """Candidate new locations of ``url``, gone from ``new_graph`` (Spertus; paper 002 §2.4)."""
    params = params or MovedParams()
    old_node = old_graph.id_of(url)
    if old_node is None:
        return MovedAnswer(url, reason=MovedReason.UNKNOWN_URL)
    name = old_graph.name(old_node)
    new_node = new_graph.id_of(name)
    if new_node is not None and new_graph.crawled[new_node]:
        return MovedAnswer(name, reason=MovedReason.NOT_GONE)
    parents = old_graph.parents(old_node)[: params.max_parents].tolist()
    if not parents:
        return MovedAnswer(name, reason=MovedReason.NO_PARENTS)

    old_links = {parent: _links(old_graph, parent) for parent in parents}
    old_anchors = [link.anchor for links in old_links.values() for link in links if link.target == name]
    blurb = frozenset().union(*(_words(anchor) for anchor in old_anchors))

    best: dict[str, list[Evidence]] = {}  # candidate -> one best evidence per parent
    recrawled = 0
    for parent in parents:
        parent_name = old_graph.name(parent)
        parent_new = new_graph.id_of(parent_name)
        if parent_new is None or not new_graph.crawled[parent_new]:
            continue
        recrawled += 1
        found = _parent_evidence(old_graph, new_graph, name, parent_name, parent_new,
                                 old_links[parent], old_anchors, blurb, params)
        for candidate, evidence in found.items():
            best.setdefault(candidate, []).append(evidence)

    if not recrawled:
        return MovedAnswer(name, parents=len(parents), reason=MovedReason.PARENTS_NOT_RECRAWLED)
    candidates = [
        MovedCandidate(candidate, sum(e.score for e in found), len(found),
                       tuple(sorted(found, key=lambda e: (-e.score, e.parent))))
        for candidate, found in best.items()
    ]
    candidates.sort(key=lambda c: (-round(c.score, 12), -c.parents, c.url))
    if not candidates:
        return MovedAnswer(name, parents=len(parents), recrawled_parents=recrawled,
                           reason=MovedReason.NO_EVIDENCE)
    return MovedAnswer(name, tuple(candidates[: params.max_candidates]), len(parents), recrawled)


def _parent_evidence(
    old_graph: LinkGraph,
    new_graph: LinkGraph,
    gone: str,
    parent_name: str,
    parent_new: int,
    parent_old_links: Sequence[_Link],
    old_anchors: Sequence[str],
    blurb: frozenset[str],
    params: MovedParams,
) -> dict[str, Evidence]:
    """One parent's best evidence per candidate, from its new version and the pages it leads to."""
    replaced = [link for link in parent_old_links if link.target == gone]
    found: dict[str, Evidence] = {}

    def offer(candidate: str, evidence: Evidence) -> None:
        if evidence.score > 0 and (candidate not in found or evidence.score > found[candidate].score):
            found[candidate] = evidence

    visited = {parent_name}
    frontier = [(parent_name, parent_new)]
    for hop in range(1, params.max_hops + 1):
        following: list[tuple[str, int]] = []
        for page_name, page_new in frontier:
            before = _old_targets(old_graph, page_name)
            for link in _links(new_graph, page_new):
                target = link.target
                if target in (gone, page_name, parent_name) or target in before:
                    continue  # not a new link: the old URL, a self-link, or there before
                if hop == 1:
                    for old in replaced:
                        similarity = anchor_similarity(old.anchor, link.anchor)
                        position = slot_match(old, link)
                        score = params.anchor_weight * similarity + params.position_weight * position
                        offer(target, Evidence(parent_name, page_name, hop, link.anchor, old.anchor,
                                               similarity, position, score))
                else:
                    decay = params.hop_decay ** (hop - 1)
                    for old_anchor in old_anchors:
                        similarity = anchor_similarity(old_anchor, link.anchor)
                        score = decay * params.anchor_weight * similarity
                        offer(target, Evidence(parent_name, page_name, hop, link.anchor, old_anchor,
                                               similarity, 0.0, score))
            if hop < params.max_hops:
                following.extend(_expand(new_graph, page_new, blurb, visited))
        frontier = following
    return found


def _old_targets(old_graph: LinkGraph, page_name: str) -> frozenset[str]:
    """The targets ``page_name`` linked to in the old crawl (none if it was not crawled)."""
    page_old = old_graph.id_of(page_name)
    if page_old is None:
        return frozenset()
    return frozenset(old_graph.name(t) for t in old_graph.children(page_old).tolist())


def _expand(
    new_graph: LinkGraph, page_new: int, blurb: frozenset[str], visited: set[str]
) -> list[tuple[str, int]]:
    """Fetched pages reached from ``page_new`` by links whose anchor has a blurb word."""
    reached = []
    for target, anchor in zip(new_graph.children(page_new).tolist(), new_graph.anchors(page_new)):
        name = new_graph.name(target)
        if name in visited or not new_graph.crawled[target] or not (_words(anchor) & blurb):
            continue
        visited.add(name)
        reached.append((name, target))
    return reached
