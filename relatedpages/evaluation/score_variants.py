"""Other scores measured on the default preset's own candidates: what
``scripts/score_variants.py`` prints.

The default preset's score was chosen on the development split of the hub lists and two
development draws (docs/reference/parameters.md, "One score").  To measure another score
without changing the chain, the in-memory oracle (:func:`~relatedpages.scoring.reference.
reference_related`) is run once per set of lists with an observer that keeps, for every test
page, what the score reads about each candidate (:class:`~relatedpages.scoring.reference.
CandidateFeatures`); each variant then re-scores those candidates, cuts the lists as the
product does (:func:`~relatedpages.scoring.similarity.top_related`), fills them with
co-citation as ``relatedpages eval related`` does, and is scored by the same measures.

The capture is checked, not trusted: the oracle's scores re-ranked from the capture must give
its very lists on every test page (:func:`check_faithful`: the cut, the relative cut and the
tie-breaks as the product applies them), so a row of this table is the command's row with
one thing changed.  Some variants read more than the chain
has: each page's words over every index link to it (anchor and description, tf-idf), the
words of the headings it is listed under in the indexed pages, and the co-citing units of
each test page (their sizes, how alike their links are) and the pages linking it.  Those are
gathered while the oracle filters the records (the headings from the pages' sections).

The last rows are not a change of one term but a model of the same evidence, learned:
:mod:`relatedpages.evaluation.learned` fits a linear ListNet model on the test pages of one
fold of held-out lists and ranks the other fold's, and the other way round
(:func:`fold_of`); it reorders the candidates the default score keeps.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from relatedpages.evaluation import learned
from relatedpages.evaluation.hubs import GroundTruth, HubList, select_test_pages
from relatedpages.evaluation.measures import Scores, score_related
from relatedpages.evaluation.related import MIN_CITING_DEFAULT, load_split, with_fallback
from relatedpages.scoring import similarity as sim
from relatedpages.scoring.parameters import SimilarityParams, preset_params
from relatedpages.scoring.reference import CandidateFeatures
from relatedpages.scoring.sitefallback import SITE_SOURCE

K = 15
#: The sets a variant is measured on by default: the development split and two development
#: draws (never a test split).  ``share0.5`` and ``share0.75`` index part of the split.
SETS_DEFAULT = ("dev", "draw1", "draw2")
SETS = ("dev", "draw1", "draw2", "share0.5", "share0.75")
#: Co-citing units of 2 to this many links count for the naive reference's term.
NAIVE_MAX_LINKS = 80


@dataclass
class Capture:
    """One set of lists: its test pages, their candidates and what the variants read."""

    name: str
    tests: tuple[str, ...]
    truth: GroundTruth
    params: SimilarityParams
    candidates: dict[str, list[CandidateFeatures]]  # test page -> its candidates
    product: dict[str, list[list[Any]]]  # the oracle's lists of the test pages
    cocitation: dict[str, list[list[Any]]]  # co-citation's lists of the test pages (the fill)
    words: dict[str, Counter[str]]  # URL -> anchor and description words of its index links
    described: dict[str, Counter[str]]  # URL -> description words only
    headings: dict[str, Counter[str]]  # URL -> words of the headings it is listed under
    units: dict[str, list[tuple[str, ...]]]  # test page -> the units that contain it
    #: test page -> for each index page linking it: (the page's links, those of its units
    #: that contain the test page)
    pages: dict[str, list[tuple[frozenset[str], frozenset[str]]]]
    _vectors: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: a learned variant's cross-fitted scores: its name -> (page, candidate) -> score
    fitted: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)

    def vectors(self, kind: str) -> dict[str, dict[str, float]]:
        """Each URL's tf-idf vector, unit length, over ``words``, ``described`` or
        ``headings``."""
        if kind not in self._vectors:
            self._vectors[kind] = tfidf({"words": self.words, "described": self.described,
                                         "headings": self.headings}[kind])
        return self._vectors[kind]


class Query(NamedTuple):
    """What a variant may read beside the candidate: the page and its set's capture."""

    page: str
    capture: Capture


Score = Callable[[CandidateFeatures, Query], float]


def tfidf(counts: Mapping[str, Counter[str]]) -> dict[str, dict[str, float]]:
    """Unit-length (1 + ln tf) × ln(N / df) vectors.

    >>> v = tfidf({"a": Counter(x=2, y=1), "b": Counter(y=1), "c": Counter(z=1)})
    >>> sorted(v["a"]), round(cosine(v["a"], v["b"]), 3), cosine(v["a"], v["c"])
    (['x', 'y'], 0.213, 0.0)
    """
    df: Counter[str] = Counter()
    for words in counts.values():
        df.update(words.keys())
    total = len(counts)
    vectors: dict[str, dict[str, float]] = {}
    for url, words in counts.items():
        vector = {word: (1 + math.log(n)) * math.log(total / df[word]) for word, n in words.items()}
        norm = math.sqrt(sum(x * x for x in vector.values())) or 1.0
        vectors[url] = {word: x / norm for word, x in vector.items()}
    return vectors


def heading_words(pages: Iterable[HubList], analyser: Any) -> dict[str, Counter[str]]:
    """Each URL's words of the headings it is listed under (``analyser.words`` of each
    section's heading, once per section listing it).

    >>> from filters.anchors import AnchorWords
    >>> from relatedpages.evaluation.hubs import HubSection
    >>> page = HubList("l", "s", (HubSection("Web frameworks", 2, ("a", "b")),
    ...                           HubSection("Databases", 2, ("a",))))
    >>> sorted(heading_words([page], AnchorWords())["a"].items())
    [('databas', 1), ('framework', 1), ('web', 1)]
    """
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for page in pages:
        for section in page.sections:
            words = analyser.words(section.heading)
            for url in section.links:
                counts[url].update(words)
    return dict(counts)


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The dot product of two unit-length vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(word, 0.0) for word, x in a.items())


def coherence(unit: Sequence[str], vectors: Mapping[str, Mapping[str, float]]) -> float | None:
    """How alike a unit's links are: their mean cosine with the centroid of their vectors
    (None with fewer than two vectors).

    >>> coherence(["a", "b"], {"a": {"x": 1.0}, "b": {"x": 1.0}})
    1.0
    >>> round(coherence(["a", "b"], {"a": {"x": 1.0}, "b": {"y": 1.0}}), 3)
    0.707
    """
    present = [vectors[url] for url in unit if vectors.get(url)]
    if len(present) < 2:
        return None
    centroid: defaultdict[str, float] = defaultdict(float)
    for vector in present:
        for word, x in vector.items():
            centroid[word] += x
    norm = math.sqrt(sum(x * x for x in centroid.values())) or 1.0
    return sum(cosine(vector, centroid) for vector in present) / len(present) / norm


def default_score(candidate: CandidateFeatures) -> float:
    """The default preset's score: the one the oracle gave the candidate."""
    return candidate.score


def _descriptions(candidate: CandidateFeatures) -> list[float]:
    return [value / sim.SCALE for value in candidate.context.values()]


def _shared_units(query: Query, url: str) -> list[tuple[str, ...]]:
    return [unit for unit in query.capture.units.get(query.page, ()) if url in unit]


def _with(term: Callable[[CandidateFeatures, Query], float]) -> Score:
    def score(candidate: CandidateFeatures, query: Query) -> float:
        return default_score(candidate) + term(candidate, query)
    return score


def _described_instead(term: Callable[[list[float], CandidateFeatures], float]) -> Score:
    """The default score with its description term replaced by ``term``."""
    def score(candidate: CandidateFeatures, query: Query) -> float:
        base = default_score(candidate)
        return base - sim.DESCRIPTION_WEIGHT * sum(_descriptions(candidate)) + term(
            _descriptions(candidate), candidate)
    return score


def _mean_ds(weight: float) -> Score:
    def score(candidate: CandidateFeatures, query: Query) -> float:
        capped = sum(min(v, sim.SITE_EVIDENCE_CAP_MICRO) for v in candidate.ds.values())
        mean = capped / sim.SCALE / len(candidate.ds) if candidate.ds else 0.0
        return default_score(candidate) + (weight - 1.0) * mean
    return score


def _words(kind: str, beta: float) -> Score:
    def term(candidate: CandidateFeatures, query: Query) -> float:
        vectors = query.capture.vectors(kind)
        return beta * cosine(vectors.get(query.page, {}), vectors.get(candidate.url, {}))
    return _with(term)


def _coherence(gamma: float) -> Score:
    def term(candidate: CandidateFeatures, query: Query) -> float:
        vectors = query.capture.vectors("words")
        values = [c for unit in _shared_units(query, candidate.url)
                  if (c := coherence(unit, vectors)) is not None]
        return gamma * max(values, default=0.0)
    return _with(term)


def _smallest_unit(g: float) -> Score:
    def term(candidate: CandidateFeatures, query: Query) -> float:
        # a candidate shares a unit with the page (it is co-cited there)
        return -g * math.log(min(len(unit) for unit in _shared_units(query, candidate.url)))
    return _with(term)


def _naive_count(units: Sequence[tuple[str, ...]]) -> int:
    return sum(1 for unit in units if 2 <= len(unit) <= NAIVE_MAX_LINKS)


def _pages_apart(query: Query, url: str) -> int:
    """The index pages linking both the page and ``url``, in no common unit."""
    return sum(1 for links, near in query.capture.pages.get(query.page, ())
               if url in links and url not in near)


def _naive_units(g: float) -> Score:
    def term(candidate: CandidateFeatures, query: Query) -> float:
        return g * math.log1p(_naive_count(_shared_units(query, candidate.url)))
    return _with(term)


def _other_units(g: float) -> Score:
    def term(candidate: CandidateFeatures, query: Query) -> float:
        return -g * math.log1p(_pages_apart(query, candidate.url))
    return _with(term)


def more_features(candidate: CandidateFeatures, query: Query) -> list[float]:
    """What the capture reads beside the chain's evidence: the page's and the candidate's
    words and headings (cosines), the units co-citing them (how many, the smallest's ln
    links, how many of 2-80 links) and ln(1 + the pages linking both apart)."""
    page, words, headings = query.page, query.capture.vectors("words"), \
        query.capture.vectors("headings")
    units = _shared_units(query, candidate.url)
    return [cosine(words.get(page, {}), words.get(candidate.url, {})),
            cosine(headings.get(page, {}), headings.get(candidate.url, {})),
            float(len(units)), math.log(min(len(unit) for unit in units)),  # one at least
            float(_naive_count(units)), math.log1p(_pages_apart(query, candidate.url))]


def fold_of(capture: Capture, page: str) -> int:
    """A test page's fold for the learned variants: its first held-out list's, mod 2 (the
    pages of one held-out list stay together)."""
    return min(capture.truth.lists_of[page]) % 2  # a test page is in a held-out list


def _learned(name: str, features: Callable[[CandidateFeatures, Query], list[float]]) -> Score:
    """The cross-fitted model's order of the candidates the default score keeps (those
    below T stay below it): each page's lowest at T, the others by how much the model puts
    them above it (:mod:`relatedpages.evaluation.learned`)."""
    def fit(capture: Capture) -> dict[tuple[str, str], float]:
        t = capture.params.t
        rows: dict[str, tuple[list[str], Any, Any]] = {}
        for page in capture.tests:
            kept = [c for c in capture.candidates.get(page, ()) if c.score >= t]
            if kept:
                query = Query(page, capture)
                rows[page] = ([c.url for c in kept],
                              np.array([features(c, query) for c in kept]),
                              np.array([capture.truth.grade(page, c.url) for c in kept]))
        scores = learned.cross_fit({page: (x, grades) for page, (_u, x, grades) in rows.items()},
                                   {page: fold_of(capture, page) for page in rows})
        return {(page, url): t + float(value - scores[page].min())
                for page, (urls, _x, _g) in rows.items()
                for url, value in zip(urls, scores[page])}

    def score(candidate: CandidateFeatures, query: Query) -> float:
        if candidate.score < query.capture.params.t:
            return candidate.score
        if name not in query.capture.fitted:
            query.capture.fitted[name] = fit(query.capture)
        return query.capture.fitted[name][query.page, candidate.url]
    return score


#: The variants, in the order of parameters.md's "Measured at the current score and not kept".
VARIANTS: dict[str, Score] = {
    "the score (defaults)": lambda candidate, query: default_score(candidate),
    "descriptions capped at 0.5 a site": _described_instead(
        lambda values, _c: sim.DESCRIPTION_WEIGHT * sum(min(v, 0.5) for v in values)),
    "descriptions averaged over the sites": _described_instead(
        lambda values, c: sim.DESCRIPTION_WEIGHT * sum(values) / max(len(c.ds), 1)),
    "descriptions / (1 + ln(1 + popularity))": _described_instead(
        lambda values, c: sim.DESCRIPTION_WEIGHT * sum(values) / (1 + math.log1p(c.popularity))),
    "the page's words, cosine x 0.5": _words("words", 0.5),
    "the page's words, cosine x 2": _words("words", 2.0),
    "the descriptions' words, cosine x 0.5": _words("described", 0.5),
    "the headings' words, cosine x 0.5": _words("headings", 0.5),
    "the headings' words, cosine x 1": _words("headings", 1.0),
    "how alike the unit's links are x 1": _coherence(1.0),
    "the smallest co-citing unit, -0.1 ln links": _smallest_unit(0.1),
    "co-citing units of 2-80 links, 0.3 ln(1 + n)": _naive_units(0.3),
    "pages linking both apart, -0.2 ln(1 + n)": _other_units(0.2),
    "the mean DS_d weighed 2": _mean_ds(2.0),
    "learned from the chain's evidence": _learned(
        "chain", lambda candidate, _query: learned.chain_features(candidate)),
    "learned from it, the words, headings and units": _learned(
        "more", lambda candidate, query: learned.chain_features(candidate)
        + more_features(candidate, query)),
}


def rank(capture: Capture, score: Score) -> dict[str, list[list[Any]]]:
    """The test pages' lists under ``score``, cut as the product cuts them; a list the
    site fallback answered is kept as the oracle gave it (no variant changes that step)."""
    params = capture.params
    related: dict[str, list[list[Any]]] = {}
    for page in capture.tests:
        oracle = capture.product.get(page)
        if oracle and any(len(entry) > 3 and entry[3] == SITE_SOURCE for entry in oracle):
            related[page] = oracle
            continue
        candidates = [sim.Candidate(c.url, round(score(c, Query(page, capture)), sim.ROUND_DIGITS),
                                    c.evidence, c.popularity, sum(c.ds.values()) / sim.SCALE,
                                    len(c.ds))
                      for c in capture.candidates.get(page, ())]
        entries = sim.top_related(candidates, params.m, params.t, params.tie_break,
                                  params.relative)
        if entries:
            related[page] = entries
    return related


def check_faithful(capture: Capture) -> None:
    """Raise when the default score re-ranked from the capture does not give the oracle's
    lists: then no variant's row would be the command's row with one change."""
    ours = rank(capture, VARIANTS["the score (defaults)"])
    for page in capture.tests:
        if ours.get(page) != capture.product.get(page):
            raise RuntimeError(f"{capture.name}: the captured candidates of {page} do not give "
                               "the oracle's list")


def measure(capture: Capture, score: Score) -> Scores:
    """The product's measures with ``score``: lists filled by co-citation, as the command."""
    return score_related(with_fallback(rank(capture, score), capture.cocitation, K),
                         capture.tests, capture.truth, K)


def _set_split(data: Path, name: str, max_lists: int | None) -> Any:
    if name == "dev":
        return load_split(data, max_lists=max_lists)
    if name.startswith("draw"):
        return load_split(data, draw=int(name[4:]))
    if name.startswith("share"):
        return load_split(data, index_share=float(name[5:]), max_lists=max_lists)
    raise ValueError(f"unknown set {name!r}: one of {', '.join(SETS)}")


def capture(data: Path, name: str, max_lists: int | None = None) -> Capture:
    """Run the oracle on one set of lists (``SETS``) and keep what the variants read."""
    from filters.anchors import AnchorWords
    from relatedpages.scoring.cocitation import CocitationParams, reference_cocitation
    from relatedpages.scoring.options import preset_link_params
    from relatedpages.scoring.reference import reference_related

    loaded = _set_split(data, name, max_lists)
    truth = GroundTruth.from_lists(loaded.held_out)
    tests = select_test_pages(truth, loaded.index_records, MIN_CITING_DEFAULT)
    wanted = set(tests)
    params = preset_params("default", m=K)
    candidates: dict[str, list[CandidateFeatures]] = {}
    words: defaultdict[str, Counter[str]] = defaultdict(Counter)
    described: defaultdict[str, Counter[str]] = defaultdict(Counter)
    units: defaultdict[str, list[tuple[str, ...]]] = defaultdict(list)
    pages: defaultdict[str, list[tuple[frozenset[str], frozenset[str]]]] = defaultdict(list)

    def observe(page: str, features: list[CandidateFeatures]) -> None:
        if page in wanted:
            candidates[page] = features

    def on_filtered(_record: Mapping[str, Any], blocks: Sequence[Sequence[Any]]) -> None:
        linked: set[str] = set()
        near: defaultdict[str, set[str]] = defaultdict(set)
        for block in blocks:
            unit = tuple(dict.fromkeys(link.url for link in block))
            for link in block:
                words[link.url].update(link.words | link.context)
                described[link.url].update(link.context)
            for url in wanted.intersection(unit):
                units[url].append(unit)
                near[url].update(unit)
            linked.update(unit)
        here = frozenset(linked)
        for url in wanted.intersection(here):
            pages[url].append((here, frozenset(near[url])))

    analyser = AnchorWords()
    product = reference_related(loaded.index_records, preset_link_params("default"), params,
                                analyser, observe=observe, on_filtered=on_filtered)
    cocitation = reference_cocitation(loaded.index_records, CocitationParams(m=K, min_degree=1))
    return Capture(name, tests, truth, params, candidates,
                   {page: product[page] for page in tests if page in product},
                   {page: cocitation[page] for page in tests if cocitation.get(page)},
                   dict(words), dict(described), heading_words(loaded.index_sections, analyser),
                   dict(units), dict(pages))


def table(rows: Mapping[str, Mapping[str, Scores]], sets: Iterable[str]) -> str:
    """A Markdown table: a row per variant, each measure's figures on every set."""
    names = list(sets)
    header = (f"| score ({' / '.join(names)}) | R@1 | R@3 | P@15 same list | P@15 same section "
              "| ties |")
    lines = [header, "|---|---:|---:|---:|---:|---:|"]
    for variant, by_set in rows.items():
        cells = [
            " / ".join(f"{by_set[n].rscore[0]:.3f}" for n in names),
            " / ".join(f"{by_set[n].rscore[2]:.3f}" for n in names),
            " / ".join(f"{100 * by_set[n].p_list:.2f}" for n in names),
            " / ".join(f"{100 * by_set[n].p_section:.2f}" for n in names),
            " / ".join(f"{100 * (by_set[n].tied_share or 0.0):.1f}" for n in names),
        ]
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
