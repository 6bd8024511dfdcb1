"""The in-memory reference implementation (test oracle) of block co-citation.

Everything is held in memory and nothing is streamed: this is the plain reading of the
paper's Eq. 5-13 that ``jobs.related`` (Mapper1 -> Sort1 -> Reducer1 -> Mapper2 ->
Reducer2) must reproduce exactly.  Its output has the job's output shape::

    {url: [[related_url, ts, [[citing_site, ds], ...]], ...], ...}

best first, at most M entries, each ts >= T; pages without related pages are absent;
keys in URL order.  All arithmetic comes from :mod:`relatedpages.scoring.similarity`.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from relatedpages.scoring.granularity import units
from relatedpages.scoring.parameters import ScoreForm, SimilarityParams
from relatedpages.scoring.similarity import (
    LinkLike,
    RelatedEntry,
    Evidence,
    better_citation,
    directed_candidate,
    domain_similarity_micro,
    in_counts,
    micro,
    raw_counts,
    page_pairs,
    top_related,
)
from relatedpages.scoring.sitefallback import apply_site_fallback

if TYPE_CHECKING:  # filters.links may be written after this module; import it lazily
    from filters.anchors import AnchorWords
    from filters.links import LinkFilterParams

#: S_p values of the pairs {source, target}: citing site -> anchor key of target -> [S_p].
_SimsBySite = dict[str, dict[str, list[float]]]


class CandidateFeatures(NamedTuple):
    """Everything the default preset's score reads about one related page of a page, per
    citing site, in micro-units where the score sums them: what ``observe`` is given, so
    that another score can be measured on the same candidates
    (:mod:`relatedpages.evaluation.score_variants`)."""

    url: str
    score: float  # the score the preset gave it
    ds: dict[str, int]  # citing site -> DS_d (Eq. 12), micro-units
    links: dict[str, int]  # citing site -> the most links of its pages co-citing the pair
    context: dict[str, int]  # citing site -> the largest description overlap, micro-units
    in_p: int  # Eq. 13's in_p2
    popularity: int  # sites linking the related page, templates aside
    evidence: Evidence  # the candidate's evidence, as the list shows it


#: Called once per page with a list, before its top-M cut: (page, its candidates' features).
Observer = Callable[[str, list[CandidateFeatures]], None]


def related_from_filtered(
    pages: Iterable[tuple[str, Sequence[Sequence[LinkLike]]]
                    | tuple[str, Sequence[Sequence[LinkLike]], str]],
    sim_params: SimilarityParams,
    raw: Iterable[tuple[str, Mapping[str, int]]] | None = None,
    observe: Observer | None = None,
) -> dict[str, list[RelatedEntry]]:
    """Related pages from ``(citing page site, filtered blocks[, citing page URL])``, one
    per page (the URL names the citing page in the evidence).

    For every pair {p1, p2} made by a citing page (:func:`page_pairs`), S_p counts for
    both directions: for TS(p1 -> p2) it is grouped by the citing site and the anchor of
    p2, for TS(p2 -> p1) by the citing site and the anchor of p1 (Eq. 10-12).  in_p is
    counted over every filtered block of every page (Eq. 13).  A page's popularity (the
    evidence tie-break of the default preset) is the number of sites whose blocks link it
    at most ``template`` times (more often: their template), counted over ``raw``
    (citing site, :func:`~relatedpages.scoring.similarity.raw_counts` of its blocks before the
    filters) — or over the filtered blocks when ``raw`` is not given.  ``observe``, when
    given, sees every page's candidates before the cut (:class:`CandidateFeatures`).
    """
    in_p: Counter[str] = Counter()
    # blocks of each citing site that contain a page (for the popularity tie-break)
    site_blocks: Counter[tuple[str, str]] = Counter()
    # sims[source][target] -> citing site -> anchor key of target -> [S_p, ...]
    sims: defaultdict[str, defaultdict[str, _SimsBySite]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    )
    # (source, target, citing site) -> (S_p, citing page, target's anchor text): the evidence
    best_citation: dict[tuple[str, str, str], tuple[int, str, str]] = {}
    # (p1, p2, citing site) -> the most links of the site's pages co-citing them (its worth)
    most_links: dict[tuple[str, str, str], int] = {}
    # (p1, p2, citing site) -> the largest description overlap of its pairs, in micro-units
    most_context: dict[tuple[str, str, str], int] = {}
    describe = sim_params.score is ScoreForm.EVIDENCE
    for page in pages:
        page_site, blocks = page[0], page[1]
        page_url = page[2] if len(page) > 2 else ""  # type: ignore[misc]
        counts = in_counts(blocks)
        in_p.update(counts)
        if raw is None:
            for cited, count in counts.items():
                site_blocks[cited, page_site] += count
        for pair in page_pairs(page_site, blocks, sim_params.lam,
                               distant_pairs=sim_params.distant_pairs, page_url=page_url,
                               max_distance=sim_params.window, form=sim_params.proximity,
                               describe=describe):
            sims[pair.p1][pair.p2][pair.site][pair.anchor2].append(pair.s)
            sims[pair.p2][pair.p1][pair.site][pair.anchor1].append(pair.s)
            worth_key = (pair.p1, pair.p2, pair.site)
            most_links[worth_key] = max(most_links.get(worth_key, 0), pair.links)
            most_context[worth_key] = max(most_context.get(worth_key, 0), micro(pair.context))
            for source, target, text in (((pair.p1, pair.p2, pair.text2),
                                          (pair.p2, pair.p1, pair.text1)) if page_url else ()):
                key = (source, target, pair.site)
                if better_citation(micro(pair.s), pair.page, text, best_citation.get(key)):
                    best_citation[key] = (micro(pair.s), pair.page, text)
    for citing_site, raw_count in raw or ():
        for cited, count in raw_count.items():
            site_blocks[cited, citing_site] += count
    popularity: Counter[str] = Counter(
        cited for (cited, _site), blocks in site_blocks.items() if blocks <= sim_params.template)
    related: dict[str, list[RelatedEntry]] = {}
    best_sites: dict[str, int] = {}  # the citing sites of each list's first result
    for source in sorted(sims):
        links_of = {target: {site: most_links[min(source, target), max(source, target), site]
                             for site in by_site} for target, by_site in sims[source].items()}
        context_of = {target: {site: most_context[min(source, target), max(source, target), site]
                               for site in by_site} for target, by_site in sims[source].items()}
        candidates = [directed_candidate(
            target, by_site, in_p[target], sim_params, popularity[target],
            _citations(best_citation, source, target, by_site), links_of[target],
            context_of[target])
            for target, by_site in sims[source].items()]
        if observe is not None:
            observe(source, [CandidateFeatures(
                candidate.url, candidate.score,
                {site: domain_similarity_micro(groups, sim_params.r, sim_params.n)
                 for site, groups in sims[source][candidate.url].items()},
                links_of[candidate.url], context_of[candidate.url], in_p[candidate.url],
                popularity[candidate.url], candidate.evidence) for candidate in candidates])
        entries = top_related(candidates, sim_params.m, sim_params.t, sim_params.tie_break,
                              sim_params.relative)
        if entries:
            related[source] = entries
            best_sites[source] = next(c.sites for c in candidates if c.url == entries[0][0])
    if sim_params.site_fallback:  # jobs.related's steps 3 and 4: every cited page may ask
        every_cited = {*in_p, *(cited for cited, _site in site_blocks)}
        return apply_site_fallback(related, popularity, every_cited, sim_params.diffuse,
                                   best_sites)
    return related


def _citations(best: Mapping[tuple[str, str, str], tuple[int, str, str]], source: str,
               target: str, sites: Iterable[str]) -> dict[str, tuple[str, str]] | None:
    """Each citing site's strongest (page, anchor text), or None when pages were not given."""
    try:
        return {site: best[source, target, site][1:] for site in sites}
    except KeyError:
        return None


def reference_related(
    records: Iterable[Mapping[str, Any]],
    link_params: LinkFilterParams,
    sim_params: SimilarityParams,
    words: AnchorWords,
    observe: Observer | None = None,
    on_filtered: Callable[[Mapping[str, Any], Sequence[Sequence[LinkLike]]], None] | None = None,
) -> dict[str, list[RelatedEntry]]:
    """Related pages of a corpus of segment records (``jobs.segment`` output values).

    Each record ``{"url", "site", "blocks"}`` is cut into co-citing units
    (:func:`relatedpages.scoring.granularity.units`), which are filtered with
    ``filters.links.filter_blocks(record["site"], units, words, link_params)``
    and its filtered blocks are cited from ``record["site"]``; then as
    :func:`related_from_filtered` (``observe`` with it).  ``on_filtered`` sees each
    record with its filtered units.  Records must be well formed (the job's
    skip-and-count of malformed input is tested on the job itself).
    """
    from filters.links import filter_blocks  # lazy: see the TYPE_CHECKING import above

    raw: list[tuple[str, Mapping[str, int]]] = []

    def filtered() -> Iterable[tuple[str, Sequence[Sequence[LinkLike]], str]]:
        for record in records:
            unit_blocks, _usable = units(record, sim_params.granularity)
            raw.append((record["site"], raw_counts(unit_blocks)))
            blocks, _events = filter_blocks(record["site"], unit_blocks, words, link_params)
            if on_filtered is not None:
                on_filtered(record, blocks)
            yield record["site"], blocks, record["url"]

    return related_from_filtered(filtered(), sim_params, raw, observe)
