"""Block co-citation similarity (Shen, Chen, Meng & Zhang 2009, Eq. 5-13).

Pure functions over *filtered* blocks: a block is a sequence of links, each with the
attributes of :class:`LinkLike` (``url``, ``site``, ``words``, ``pos``).  Nothing here
imports mrjob or the link filters, so the MapReduce job (``jobs.related``) and the
in-memory oracle (:mod:`relatedpages.scoring.reference`) share exactly the same arithmetic.
Its parameters (:class:`~relatedpages.scoring.parameters.SimilarityParams`, the presets)
live in :mod:`relatedpages.scoring.parameters`.

Determinism.  The job must produce byte-identical output whatever grouping and order
its reducers see values in, on every runner.  The rules that guarantee it:

* every ``S_p`` is rounded to :data:`ROUND_DIGITS` when the pair is made (Eq. 7-8), so
  the values sorted and summed downstream are the same decimal-exact floats everywhere;
* ``DS_d`` (Eq. 12) takes the top ``r`` values of each anchor group after sorting them
  descending, sums them exactly as integers of micro-units (:func:`micro`), caps at ``N``;
* ``TS`` (Eq. 13) is the exact integer sum of the ``DS_d`` divided by ``1 + ln(in_p2)``,
  and rounded *before* it is compared with ``T`` (:func:`total_from_micro`);
* ties in the top ``M`` (and in the evidence) are broken by URL (site) ascending.

Integer sums are exact and independent of order, so a reducer that adds values as they
stream past (constant memory) agrees with these functions to the bit.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeAlias

from relatedpages.scoring.parameters import (
    Damping,
    Proximity,
    ScoreForm,
    SimilarityParams,
    TieBreak,
)

#: Decimal digits every S_p, DS_d and TS is rounded to (see the module docstring).
ROUND_DIGITS = 6
#: The default preset's proximity (:class:`Proximity` ``log``): a unit of this many links
#: weighs its pairs 1 / ln(e + 1) of a small one's (a list of 200 links: 1 / ln(e + 20)).
UNIT_LINKS = 10
#: The default preset's score (:class:`ScoreForm` ``evidence``): the weight of the related
#: page's popularity, ln(1 + the sites linking it), and of the units that contain it,
#: ln(1 + in_p2), beside the citing sites and their mean DS_d.  Chosen on the development
#: split of the hub lists (README, "One score"): popularity is the evidence tie-break made a
#: term (1.0: as much as a citing site for a page three times as popular); in_p2 0.1.
POPULARITY_WEIGHT = 1.0
IN_P_WEIGHT = 0.1
#: ... and each citing site's DS_d counts up to one citation's largest S_p (P_b <= 1,
#: 1 + A_b <= 2): a site repeating a pair on many pages is still one site (Eq. 12's N = 10
#: would let it outweigh five others).
SITE_EVIDENCE_CAP = 2.0
#: ... and a citing site counts one site, more when the largest of its pages that co-cite the
#: pair links more than SITE_WORTH_LINKS pages (after the filters): ((1 + L) / 31)^0.1 of a
#: site for L links, 1.12 for a list of 100, 1.42 for 1,000.  A page that collects that
#: many links is a directory or a curated list, whose co-citations were chosen; the log
#: proximity's length term (1 / ln(e + links / 10)) had made its pairs the weakest of all.
#: Chosen on the development split and two development draws (parameters.md, "One score");
#: below 30 links nothing changes, so the generated webs' pages (blogs, short link lists)
#: keep their figures: (1 + L)^0.1 for every page cost them 0.2-0.6 points of P@15.
SITE_WORTH_EXPONENT = 0.1
SITE_WORTH_LINKS = 30
#: ... and the pair's descriptions (segmenter.sections.Link ``text``: "[httpx](…) – an HTTP
#: client"): per citing site, the largest Jaccard coefficient of the two links' description
#: words among its pairs (Eq. 6 on the descriptions), summed over the sites, times this
#: weight.  Two entries a curator describes in the same words are the same kind of thing, and
#: a site that co-cites them says so in its own words.  Chosen on the development split and
#: two development draws (parameters.md, "One score").
DESCRIPTION_WEIGHT = 1.0


#: ``[citing_site, ds, citing_page, anchor_text]``, best first: the JSON shape of the
#: evidence (the page of that site whose block gave the largest S_p, and the related page's
#: anchor text there); ``[citing_site, ds]`` when the pages are not known.
Evidence: TypeAlias = list[list[Any]]
#: ``[related_url, ts, evidence]``: the JSON shape of one related page.
RelatedEntry: TypeAlias = list[Any]


class LinkLike(Protocol):
    """A link that survived the filters (``filters.links.FilteredLink`` is one).

    Read-only members, so frozen dataclasses satisfy the protocol.
    """

    @property
    def url(self) -> str: ...

    @property
    def site(self) -> str: ...

    @property
    def words(self) -> frozenset[str]: ...

    @property
    def pos(self) -> int: ...


def proximity(i: int, j: int, lam: int) -> float:
    """Eq. 5: 1 for near neighbours (|i - j| <= lam), else exp(-(|i - j| - lam) / 2).

    >>> proximity(0, 8, 8)
    1.0
    >>> proximity(10, 0, 8) == math.exp(-1)
    True
    """
    if lam < 0:
        raise ValueError(f"lam must be >= 0, got {lam!r}")
    distance = abs(i - j)
    if distance <= lam:
        return 1.0
    return math.exp(-(distance - lam) / 2)


def anchor_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Eq. 6: the Jaccard coefficient of two anchors' word sets (0.0 when both are empty).

    >>> anchor_similarity(frozenset({"cheap", "flight"}), frozenset({"flight", "hotel"}))
    0.3333333333333333
    >>> anchor_similarity(frozenset(), frozenset())
    0.0
    """
    common = len(a & b)
    union = len(a) + len(b) - common  # |a ∪ b|, without building it
    if union == 0:
        return 0.0
    return common / union


def block_similarity(
    i: int, j: int, words_i: frozenset[str], words_j: frozenset[str], lam: int,
    form: Proximity = Proximity.PAPER, links: int = 0,
) -> float:
    """Eq. 7: S_b = P_b * (1 + A_b), for links at positions i, j of one block (unrounded);
    P_b as ``form`` says (:func:`log_proximity` weighs the unit's ``links`` too)."""
    near = proximity(i, j, lam) if form is Proximity.PAPER else log_proximity(i, j, lam, links)
    return near * (1.0 + anchor_similarity(words_i, words_j))


def log_proximity(i: int, j: int, lam: int, links: int) -> float:
    """The default preset's P_b (:class:`Proximity` ``log``): 1 / ln(e + |i - j| / lambda),
    over ln(e + links / UNIT_LINKS) for a unit of ``links`` links.

    >>> round(log_proximity(0, 1, 8, 2), 4), round(log_proximity(0, 40, 8, 2), 4)
    (0.8935, 0.4569)
    >>> round(log_proximity(0, 1, 8, 200), 4)
    0.3064
    """
    if lam < 0:
        raise ValueError(f"lam must be >= 0, got {lam!r}")
    distance = abs(i - j) / (lam or 1)
    return 1.0 / (math.log(math.e + distance) * math.log(math.e + links / UNIT_LINKS))


def anchor_key(words: frozenset[str]) -> str:
    """The value A_{p,p_i} by which pairs are grouped (Eq. 10-11): the sorted word set.

    Two anchors with the same words (after stemming and stop-word removal) are the same
    template anchor, whatever their raw text.

    >>> anchor_key(frozenset({"news", "bbc"}))
    'bbc news'
    """
    return " ".join(sorted(words))


@dataclass(frozen=True)
class PagePair:
    """Eq. 8: V_{p,<p1,p2>} = <<p1, p2>, TSD(p), A_{p,p1}, A_{p,p2}, S_p>, with p1 < p2."""

    p1: str
    p2: str
    site: str  # TSD(p) of the citing page
    anchor1: str  # anchor_key of p1's anchor in the block that made the pair
    anchor2: str  # anchor_key of p2's anchor in that block
    s: float  # S_p, rounded to ROUND_DIGITS
    page: str = ""  # the citing page (evidence a person can check)
    text1: str = ""  # p1's anchor text in that block, as written
    text2: str = ""  # p2's anchor text in that block
    #: the distinct pages the citing page links after the filters (its site's worth,
    #: :func:`site_worth_micro`): a property of the page, not of the pair
    links: int = field(default=0, compare=False)
    #: the Jaccard coefficient of the two links' description words (``context``), rounded
    #: to ROUND_DIGITS; 0.0 unless page_pairs was asked to ``describe``
    context: float = field(default=0.0, compare=False)


_NO_WORDS: frozenset[str] = frozenset()


def page_pairs(
    page_site: str, filtered_blocks: Sequence[Sequence[LinkLike]], lam: int,
    *, distant_pairs: bool = False, page_url: str = "", max_distance: int = 0,
    form: Proximity = Proximity.PAPER, describe: bool = False,
) -> list[PagePair]:
    """The related pairs a citing page generates (Definition 1, Eq. 5-8).

    * Pairs only between links of *different* sites ("Generating related pairs").
    * Definition 1 / Eq. 8: the FIRST block (in block order) that forms {p1, p2} gives
      S_p and the anchors; later blocks of the same page add nothing.  Within that block,
      should a URL occur twice (singleton filter switched off), the first occurrence in
      link order wins.
    * Proximity uses each link's ``pos`` (its position as segmented), not its index in
      the filtered block: the filters do not renumber.
    * S_p is rounded to ROUND_DIGITS here, once, so every consumer sorts and sums the same
      floats.  Eq. 9 keeps only pairs with S_p > 0: a pair whose rounded S_p is 0.0
      (|i - j| > ~37 with lam = 8) is formed -- later blocks cannot replace it -- but
      not returned.

    With ``distant_pairs`` (default preset) such a pair is kept with S_p =
    :data:`DISTANT_PAIR_SIMILARITY`: two links of one block are co-cited however far apart.
    ``form``: the proximity (:class:`Proximity`; ``log`` weighs the block's length).

    Pairs come out in the order their blocks and links make them; p1 < p2.  Each carries
    the page's count of distinct linked pages (``links``, the citing site's worth) and, with
    ``describe`` (default preset), the overlap of the two links' descriptions
    (``context``: :func:`anchor_similarity` of their ``context`` words, where links have them).
    """
    page_links = len({link.url for block in filtered_blocks for link in block})
    seen: set[tuple[str, str]] = set()
    pairs: list[PagePair] = []
    for block in filtered_blocks:
        links = list(block)
        # Each link's anchor key and text, once, not once a pair it is in
        keys = [anchor_key(link.words) for link in links]
        texts = [getattr(link, "anchor", "") for link in links]
        described = ([getattr(link, "context", _NO_WORDS) for link in links] if describe
                     else None)
        # Links in position order (as segmented, the filters keep it): past the window,
        # every later link is farther still, so the scan of the block can stop there
        ordered = all(a.pos <= b.pos for a, b in zip(links, links[1:]))
        for index, first in enumerate(links):
            for other in range(index + 1, len(links)):
                second = links[other]
                if max_distance and abs(first.pos - second.pos) > max_distance:
                    if ordered:
                        break
                    continue  # never a pair: the cost of a block stays linear in its links
                if first.site == second.site or first.url == second.url:
                    continue
                if first.url < second.url:
                    low, high, low_at, high_at = first, second, index, other
                else:
                    low, high, low_at, high_at = second, first, other, index
                key = (low.url, high.url)
                if key in seen:
                    continue
                seen.add(key)
                s = round(block_similarity(low.pos, high.pos, low.words, high.words, lam,
                                           form, len(links)), ROUND_DIGITS)
                if distant_pairs:  # co-cited however far apart; proximity only weighs
                    s = max(s, DISTANT_PAIR_SIMILARITY)
                if s > 0.0:
                    context = 0.0  # most links have no description: no overlap to compute
                    if described and described[low_at] and described[high_at]:
                        context = round(anchor_similarity(described[low_at],
                                                          described[high_at]), ROUND_DIGITS)
                    pairs.append(
                        PagePair(
                            p1=low.url,
                            p2=high.url,
                            site=page_site,
                            anchor1=keys[low_at],
                            anchor2=keys[high_at],
                            s=s,
                            page=page_url,
                            text1=texts[low_at],
                            text2=texts[high_at],
                            links=page_links,
                            context=context,
                        )
                    )
    return pairs


def raw_counts(blocks: Any) -> Counter[str]:
    """For the popularity tie-break: +1 per (block, distinct href) of a segment record's
    blocks *before* the link filters (the page is cited, whatever the filters keep for
    co-citation).  Malformed blocks and links are skipped (the filters count them).

    >>> sorted(raw_counts([[{"href": "http://a/"}, {"href": "http://a/"}], [{"href": "http://a/"}],
    ...                    "junk", [{"nohref": 1}]]).items())
    [('http://a/', 2)]
    """
    counts: Counter[str] = Counter()
    if not isinstance(blocks, list):
        return counts
    for block in blocks:
        if isinstance(block, list):
            counts.update({link["href"] for link in block
                           if isinstance(link, dict) and isinstance(link.get("href"), str)})
    return counts


def in_counts(filtered_blocks: Iterable[Iterable[LinkLike]]) -> Counter[str]:
    """in_p of Eq. 13 for one page's blocks: +1 per (block, distinct page it links to).

    Every filtered block counts, also one whose only link forms no pair.
    """
    counts: Counter[str] = Counter()
    for block in filtered_blocks:
        counts.update({link.url for link in block})
    return counts


#: S_p of a pair too far apart for Eq. 5 to leave anything after rounding (one micro-unit),
#: under ``distant_pairs``.
DISTANT_PAIR_SIMILARITY = 10.0**-ROUND_DIGITS

SCALE = 10**ROUND_DIGITS  # similarities carry ROUND_DIGITS decimals: sums in integer units
SITE_EVIDENCE_CAP_MICRO = round(SITE_EVIDENCE_CAP * SCALE)


def micro(value: float) -> int:
    """A similarity in integer micro-units (S_p is rounded to 6 decimals, so this is exact).

    >>> micro(1.2345674), micro(2.0)
    (1234567, 2000000)
    """
    return int(round(value * SCALE))


def site_worth_micro(links: int) -> int:
    """A citing site's worth in micro-units: max(1, ((1 + L) / (1 + SITE_WORTH_LINKS)) ^
    SITE_WORTH_EXPONENT) for the largest of its pages co-citing the pair, L pages linked.

    >>> site_worth_micro(2), site_worth_micro(30), site_worth_micro(99), site_worth_micro(999)
    (1000000, 1000000, 1124252, 1415350)
    """
    ratio = (1 + links) / (1 + SITE_WORTH_LINKS)
    return micro(ratio ** SITE_WORTH_EXPONENT) if ratio > 1 else SCALE


def unmicro(value: int) -> float:
    """Back to a float with ROUND_DIGITS decimals.

    >>> unmicro(1234567)
    1.234567
    """
    return round(value / SCALE, ROUND_DIGITS)


def domain_similarity_micro(sims_by_anchor: Mapping[str, Sequence[float]], r: int, n: float) -> int:
    """Eq. 12 in integer micro-units: exact, and independent of summation order, so a
    reducer can add values as they stream past and agree with this function to the bit."""
    if r < 1:
        raise ValueError(f"r must be >= 1, got {r!r}")
    kept = 0
    for key in sorted(sims_by_anchor):
        kept += sum(sorted((micro(s) for s in sims_by_anchor[key]), reverse=True)[:r])
    return min(micro(n), kept)


def domain_similarity(sims_by_anchor: Mapping[str, Sequence[float]], r: int, n: float) -> float:
    """Eq. 12: DS_d = min(N, sum over p2's anchors in site d of the top r values of S_p).

    ``sims_by_anchor`` maps an anchor key of p2 to the S_p of the pairs of one citing
    site with that anchor.  Each group is sorted descending and cut at r (template
    suppression); the kept values are summed exactly (integer micro-units) and capped at N.

    >>> domain_similarity({"news": [1.0, 0.5, 2.0], "sport": [1.5]}, r=2, n=10.0)
    4.5
    >>> domain_similarity({"news": [2.0] * 9}, r=9, n=10.0)
    10.0
    """
    return unmicro(domain_similarity_micro(sims_by_anchor, r, n))


def total_from_micro(ds_sum_micro: int, in_p2: int) -> float:
    """TS = Σ_d DS_d / (1 + ln in_p2) (Eq. 13) from the exact sum in micro-units, rounded
    to ROUND_DIGITS before any comparison with T.

    >>> total_from_micro(8_000_000, 1), total_from_micro(8_000_000, 3)
    (8.0, 3.812043)
    """
    return round(damped(ds_sum_micro / SCALE, in_p2, Damping.LOG), ROUND_DIGITS)


def damped(value: float, in_p2: int, damping: Damping) -> float:
    """``value`` damped by in_p2: the paper's 1 + ln in_p2, sqrt(in_p2) or nothing.

    >>> damped(2.0, 4, Damping.SQRT), damped(2.0, 4, Damping.NONE), round(damped(2.0, 4, Damping.LOG), 6)
    (1.0, 2.0, 0.83812)
    """
    if in_p2 < 1:
        raise ValueError(f"in_p2 must be >= 1 (p2 is in the block that cites it), got {in_p2!r}")
    if damping is Damping.LOG:
        return value / (1.0 + math.log(in_p2))
    if damping is Damping.SQRT:
        return value / math.sqrt(in_p2)
    return value


def score_from_micro(ds_sum_micro: int, ds_max_micro: int, sites: int, in_p2: int,
                     params: SimilarityParams, popularity: int = 0,
                     ds_capped_micro: int | None = None, worth_micro: int | None = None,
                     context_micro: int = 0) -> float:
    """The score of p2 for p1 from the exact sums in micro-units (Σ_d DS_d and its largest
    term), the number of citing sites, in_p2 and p2's popularity, damped and rounded to
    ROUND_DIGITS: TS of Eq. 13 under the paper preset, :class:`ScoreForm` ``evidence``
    under the default preset (``ds_capped_micro``: Σ_d min(DS_d, SITE_EVIDENCE_CAP), by
    default the plain sum; ``worth_micro``: the citing sites' summed worth,
    :func:`site_worth_micro`, by default one a site; ``context_micro``: Σ_d of each citing
    site's largest description overlap, :data:`DESCRIPTION_WEIGHT`).

    >>> from relatedpages.scoring.parameters import preset_params
    >>> score_from_micro(8_000_000, 5_000_000, 3, 1, SimilarityParams())
    8.0
    >>> score_from_micro(8_000_000, 5_000_000, 3, 4, SimilarityParams(score="sites", damping="none"))
    3.0
    >>> score_from_micro(3_000_000, 2_000_000, 2, 3, preset_params("default"), popularity=4)
    5.248067
    >>> score_from_micro(3_000_000, 2_000_000, 2, 3, preset_params("default"), popularity=4,
    ...                  worth_micro=2 * site_worth_micro(99))
    5.496571
    >>> score_from_micro(3_000_000, 2_000_000, 2, 3, preset_params("default"), popularity=4,
    ...                  context_micro=250_000)
    5.498067
    >>> score_from_micro(8_000_000, 5_000_000, 3, 4, SimilarityParams(score="corroborated", damping="sqrt"))
    1.5
    """
    if params.score is ScoreForm.EVIDENCE:
        kept = ((sites if worth_micro is None else worth_micro / SCALE)
                + POPULARITY_WEIGHT * math.log1p(popularity)
                + ((ds_sum_micro if ds_capped_micro is None else ds_capped_micro)
                   / SCALE / sites if sites else 0.0)
                + IN_P_WEIGHT * math.log1p(in_p2)
                + DESCRIPTION_WEIGHT * context_micro / SCALE)
    elif params.score is ScoreForm.SITES:
        kept = float(sites)
    elif params.score is ScoreForm.CORROBORATED:
        kept = (ds_sum_micro - ds_max_micro) / SCALE
    else:
        kept = ds_sum_micro / SCALE
    return round(damped(kept, in_p2, params.damping), ROUND_DIGITS)


class Candidate(NamedTuple):
    """A scored related page before the top-M cut: what the ranking reads."""

    url: str
    score: float
    evidence: Evidence
    popularity: int = 1  # sites linking the related page, templates aside (evidence tie-break)
    ds_sum: float = 0.0  # Σ_d DS_d (the evidence tie-break)
    sites: int = 0  # the citing sites (the site fallback's test of a diffuse list)


def total_similarity(ds_by_site: Mapping[str, float], in_p2: int) -> float:
    """Eq. 13: TS = sum over citing sites of DS_d, damped by 1 / (1 + ln in_p2).

    Summed exactly (integer micro-units) and rounded to ROUND_DIGITS, so the threshold T
    is compared with the rounded value.

    >>> total_similarity({"a.com": 2.0, "b.com": 1.0}, 1)
    3.0
    >>> total_similarity({"a.com": 6.772588}, 2)  # 3.99999957... before rounding
    4.0
    """
    return total_from_micro(sum(micro(ds) for ds in ds_by_site.values()), in_p2)


def top_evidence(ds_by_site: Mapping[str, float], k: int,
                 citing: Mapping[str, tuple[str, str]] | None = None) -> Evidence:
    """The evidence of a related page: the top k citing sites by DS_d, ``[[site, ds], ...]``,
    each with its strongest citing page and anchor text when ``citing`` gives them.

    DS_d descending, ties by site ascending.

    >>> top_evidence({"b.com": 1.0, "a.com": 1.0, "c.com": 2.0}, 2)
    [['c.com', 2.0], ['a.com', 1.0]]
    >>> top_evidence({"a.com": 1.0}, 1, {"a.com": ("http://a.com/list", "Flask")})
    [['a.com', 1.0, 'http://a.com/list', 'Flask']]
    """
    ranked = sorted(ds_by_site.items(), key=lambda item: (-item[1], item[0]))
    if citing is None:
        return [[site, ds] for site, ds in ranked[: max(k, 0)]]
    return [[site, ds, *citing[site]] for site, ds in ranked[: max(k, 0)]]


def better_citation(s: int, page: str, text: str, best: tuple[int, str, str] | None) -> bool:
    """Whether (S_p in micro-units, citing page, anchor text) beats ``best`` as a site's
    evidence: larger S_p, then the smaller page, then the smaller text (independent of the
    order values arrive in, so the chain and the oracle agree)."""
    return best is None or s > best[0] or (s == best[0] and (page, text) < best[1:])


def directed_score(
    sims_by_site: Mapping[str, Mapping[str, Sequence[float]]],
    in_p2: int,
    params: SimilarityParams,
) -> tuple[float, Evidence]:
    """The score of p2 for p1 (TS(p1 -> p2) under the paper preset) and its evidence.

    ``sims_by_site`` maps citing site d to {anchor key of p2: [S_p, ...]}: the r cap is
    per (d, anchor of p2) (Eq. 11-12), the N cap per d (Eq. 12), the damping uses in_p2
    (Eq. 13, or as ``params`` says).
    """
    candidate = directed_candidate("", sims_by_site, in_p2, params)
    return candidate.score, candidate.evidence


def directed_candidate(
    url: str,
    sims_by_site: Mapping[str, Mapping[str, Sequence[float]]],
    in_p2: int,
    params: SimilarityParams,
    popularity: int = 1,
    citing: Mapping[str, tuple[str, str]] | None = None,
    links: Mapping[str, int] | None = None,
    context: Mapping[str, int] | None = None,
) -> Candidate:
    """:func:`directed_score` as a :class:`Candidate` for ``url`` (with its tie keys;
    ``popularity`` = the number of sites linking ``url``; ``citing`` = each site's strongest
    (citing page, anchor text) for the evidence; ``links`` = per citing site, the most links
    of its pages that co-cite the pair, its worth: :func:`site_worth_micro`; ``context`` = per
    citing site, the largest description overlap of its pairs in micro-units)."""
    ds_micro = {
        site: domain_similarity_micro(groups, params.r, params.n)
        for site, groups in sims_by_site.items()
    }
    total, best = sum(ds_micro.values()), max(ds_micro.values(), default=0)
    capped = sum(min(value, SITE_EVIDENCE_CAP_MICRO) for value in ds_micro.values())
    ds_by_site = {site: unmicro(value) for site, value in ds_micro.items()}
    worth = (None if links is None
             else sum(site_worth_micro(links.get(site, 0)) for site in ds_micro))
    described = sum(context.get(site, 0) for site in ds_micro) if context else 0
    return Candidate(url, score_from_micro(total, best, len(ds_micro), in_p2, params,
                                           popularity, capped, worth, described),
                     top_evidence(ds_by_site, params.evidence, citing), popularity,
                     unmicro(total), len(ds_micro))


def rank_key(url: str, ts: float) -> tuple[float, str]:
    """Sort key of related pages under the URL tie-break: TS descending, then URL."""
    return (-ts, url)


def candidate_key(candidate: Candidate, tie_break: TieBreak) -> tuple[Any, ...]:
    """Sort key of a candidate: score descending, then the tie-break.

    >>> a, b = Candidate("a", 1.0, [], 1, 2.0), Candidate("b", 1.0, [], 5, 1.0)
    >>> sorted([a, b], key=lambda c: candidate_key(c, TieBreak.URL))[0].url
    'a'
    >>> sorted([a, b], key=lambda c: candidate_key(c, TieBreak.EVIDENCE))[0].url
    'b'
    """
    if tie_break is TieBreak.EVIDENCE:
        return (-candidate.score, -candidate.popularity, -candidate.ds_sum, candidate.url)
    return rank_key(candidate.url, candidate.score)


def top_related(
    candidates: Iterable[tuple[str, float, Evidence] | Candidate], m: int, t: float,
    tie_break: TieBreak = TieBreak.URL, relative: float = 0.0,
) -> list[RelatedEntry]:
    """The related-page list: candidates with score >= T, best first, at most M, without
    those scoring below ``relative`` × the best (:func:`relative_cut`).

    ``candidates`` are :class:`Candidate`\\ s or ``(related_url, ts, evidence)`` with ``ts``
    already rounded; the result is ``[[related_url, ts, evidence], ...]``.

    >>> top_related([("b", 4.0, []), ("a", 4.0, []), ("c", 3.999999, []), ("d", 5.0, [])], 2, 4.0)
    [['d', 5.0, []], ['a', 4.0, []]]
    """
    full = [c if isinstance(c, Candidate) else Candidate(*c) for c in candidates]
    kept = sorted((c for c in full if c.score >= t), key=lambda c: candidate_key(c, tie_break))
    best = kept[:m]
    return relative_cut([[c.url, c.score, c.evidence] for c in best], relative,
                        [c.sites for c in best] if all(c.sites for c in best) else None)


def relative_cut(entries: list[RelatedEntry], relative: float,
                 sites: Sequence[int] | None = None) -> list[RelatedEntry]:
    """``entries`` (best first) without those co-cited by fewer than ``relative`` × the
    sites co-citing the best-corroborated one (``sites``, one count per entry; without
    them, the scores are taken for the counts, as the ``sites`` score is): a result
    co-cited by a small fraction of the sites that co-cite the best one is template or
    chance (README, "Two presets"); the fallback fills the list instead.

    >>> relative_cut([["a", 9.1, []], ["t", 8.2, []], ["b", 4.0, []]], 0.1, [26, 2, 21])
    [['a', 9.1, []], ['b', 4.0, []]]

    >>> relative_cut([["a", 26.0, []], ["b", 21.0, []], ["t", 2.0, []]], 0.1)
    [['a', 26.0, []], ['b', 21.0, []]]
    >>> relative_cut([["a", 1.0, []], ["b", 1.0, []]], 0.1)
    [['a', 1.0, []], ['b', 1.0, []]]
    """
    if not relative or not entries:
        return entries
    counts = [float(entry[1]) for entry in entries] if sites is None else sites
    floor = relative * (counts[0] if sites is None else max(counts))
    return [entry for entry, count in zip(entries, counts) if count >= floor]
