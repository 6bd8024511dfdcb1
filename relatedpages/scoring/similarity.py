"""Block co-citation similarity (Shen, Chen, Meng & Zhang 2009, Eq. 5-13).

Pure functions over *filtered* blocks: a block is a sequence of links, each with the
attributes of :class:`LinkLike` (``url``, ``site``, ``words``, ``pos``).  Nothing here
imports mrjob or the link filters, so the MapReduce job (``jobs.related``) and the
in-memory oracle (:mod:`relatedpages.scoring.reference`) share exactly the same arithmetic.

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
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, NamedTuple, Protocol, TypeAlias

from relatedpages.scoring.granularity import Granularity

#: Near-neighbour threshold lambda of the proximity factor (Eq. 5).
LAMBDA_DEFAULT = 8
#: Anchor repetition frequency r: values kept per (citing site, anchor of p2) (Eq. 12).
R_DEFAULT = 9
#: Domain similarity threshold N: the cap of one citing site's DS_d (Eq. 12).
N_DEFAULT = 10.0
#: At most M related pages per page.
M_DEFAULT = 15
#: Total similarity threshold T: related pages have TS >= T (Eq. 13).
T_DEFAULT = 4.0
#: A site whose filtered blocks contain a page more often than this has it in a template
#: (a footer, a sidebar on every page): it does not count toward the page's popularity
#: (the evidence tie-break).  An editor cites a page once, twice with a "top" list.
TEMPLATE_DEFAULT = 2
#: Citing sites (top DS_d) kept as the evidence of each related page.
EVIDENCE_DEFAULT = 3
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



class Damping(str, Enum):
    """How a related page's score is damped by its in_p (the blocks that contain it)."""

    LOG = "log"  # the paper's Eq. 13: / (1 + ln in_p2)
    SQRT = "sqrt"  # / sqrt(in_p2): cosine ranking (in_p1 is the same for all of p1's list)
    NONE = "none"  # raw sums


class ScoreForm(str, Enum):
    """What a related page's score counts (then damped, see :class:`Damping`)."""

    TOTAL = "total"  # Σ_d DS_d (Eq. 13)
    # The number of distinct citing sites whose blocks co-cite the two pages: independent
    # curators agreeing.  Proximity and anchors (DS_d) order pages with equal counts.
    SITES = "sites"
    # Σ_d DS_d − max_d DS_d: the evidence of the sites beyond the strongest one.  One
    # citing site is a hint (a single curator); only other sites corroborate it.
    CORROBORATED = "corroborated"
    # One score from all the evidence (issue 43): the citing sites, plus their mean DS_d
    # (at most 2 per site with the log proximity: how near and how alike the anchors),
    # plus POPULARITY_WEIGHT x ln(1 + popularity) and IN_P_WEIGHT x ln(1 + in_p2).  A
    # second citing site outweighs one site's nearness unless the anchors also agree (DS_d
    # < 1 for anchors without a common word), and equal counts are ordered by the evidence,
    # not by a tie-break.
    EVIDENCE = "evidence"


class Proximity(str, Enum):
    """How two links of one unit are near (the P_b of Eq. 7)."""

    PAPER = "paper"  # Eq. 5: 1 within lambda, then exp(-(|i - j| - lambda) / 2)
    # 1 / ln(e + |i - j| / lambda), over ln(e + n / UNIT_LINKS) for a unit of n links: never
    # 0 within the window, every distance weighed apart (Eq. 5 is flat to lambda and
    # rounds to 0 past ~37), a pair of a long list worth less than one of a short list
    LOG = "log"


class TieBreak(str, Enum):
    """The order of results with equal scores."""

    URL = "url"  # the paper's (URL ascending)
    # the number of sites whose blocks link p2 (before the link filters; each in at most
    # ``template`` blocks: more is a template), descending (the better-known page first), then
    # Σ_d DS_d descending (closer in its blocks, more shared anchor words), then URL.
    EVIDENCE = "evidence"


class Preset(str, Enum):
    """Named parameter sets: ``paper`` is Eq. 5-13 exactly; ``default`` is the product."""

    DEFAULT = "default"
    PAPER = "paper"


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


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


def _check_float(name: str, value: object, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return number


@dataclass(frozen=True)
class SimilarityParams:
    """The parameters of Eq. 5-13 and of the related-page lists.

    The field defaults are the paper's (``--preset paper``); :func:`preset_params` gives the
    product's default preset.

    >>> SimilarityParams()  # doctest: +NORMALIZE_WHITESPACE
    SimilarityParams(lam=8, r=9, n=10.0, m=15, t=4.0, evidence=3, damping=<Damping.LOG: 'log'>,
                     score=<ScoreForm.TOTAL: 'total'>, tie_break=<TieBreak.URL: 'url'>,
                     distant_pairs=False, template=2, window=0,
                     granularity=<Granularity.BLOCK: 'block'>, proximity=<Proximity.PAPER: 'paper'>,
                     site_fallback=False, diffuse=0.0, relative=0.0)
    >>> SimilarityParams(r=0)
    Traceback (most recent call last):
    ...
    ValueError: r must be >= 1, got 0
    """

    lam: int = LAMBDA_DEFAULT
    r: int = R_DEFAULT
    n: float = N_DEFAULT
    m: int = M_DEFAULT
    t: float = T_DEFAULT
    evidence: int = EVIDENCE_DEFAULT
    damping: Damping = Damping.LOG
    score: ScoreForm = ScoreForm.TOTAL
    tie_break: TieBreak = TieBreak.URL
    distant_pairs: bool = False
    template: int = TEMPLATE_DEFAULT
    window: int = 0
    granularity: Granularity = Granularity.BLOCK
    proximity: Proximity = Proximity.PAPER
    # the site fallback (relatedpages.scoring.sitefallback): pages without a list, or with
    # a list whose best score is below `diffuse` x their popularity, answered by their site
    site_fallback: bool = False
    diffuse: float = 0.0
    # results scoring below `relative` x the page's best are dropped (relative_cut)
    relative: float = 0.0

    def __post_init__(self) -> None:
        for name, kind in (("damping", Damping), ("score", ScoreForm), ("tie_break", TieBreak),
                           ("granularity", Granularity), ("proximity", Proximity)):
            try:
                object.__setattr__(self, name, kind(getattr(self, name)))
            except ValueError:
                choices = ", ".join(member.value for member in kind)
                raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}") from None
        for name in ("distant_pairs", "site_fallback"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        _check_int("lam", self.lam, 0)
        _check_int("template", self.template, 1)
        _check_int("window", self.window, 0)
        _check_int("r", self.r, 1)
        _check_int("m", self.m, 1)
        _check_int("evidence", self.evidence, 0)
        # N = 0 would make every DS_d zero: no page could ever be related.
        object.__setattr__(self, "n", _check_float("n", self.n, positive=True))
        object.__setattr__(self, "t", _check_float("t", self.t, positive=False))
        for name in ("diffuse", "relative"):
            value = _check_float(name, getattr(self, name), positive=False)
            if value > 1:
                raise ValueError(f"{name} must be a share in [0, 1], got {value!r}")
            object.__setattr__(self, name, value)


#: The default preset's departures from the paper's similarity, each measured on the
#: development split of the hub lists and on generated webs (README, "The default preset"):
#: * T = 0: the paper's T = 4.0 is an absolute threshold tuned on 37.5 M pages; on smaller
#:   crawls almost nothing reaches it.  The lists are cut at M only.
#: * score = evidence, damping = none: the number of distinct sites whose blocks co-cite
#:   the two pages, plus their mean DS_d, the related page's popularity and its units
#:   (:class:`ScoreForm`).  99 % of the paper score's results on the hub lists rest on one
#:   site, ~70 % tie at 1.0 and are ordered by URL; its damping puts pages cited once at the
#:   top.  The count of sites alone tied 98 % of results with a neighbour (issue 43); this
#:   score, on the development split: 27 % at three significant digits, P@15 and R@1-15
#:   within 0.2 points of the count with its tie-break (README, "One score").
#: * proximity = log: every distance apart weighs (:class:`Proximity`), and a unit's length
#:   too; Eq. 5 is flat within lambda, so its S_p were 1.0 or 2.0 for most pairs.
#: * tie-break = evidence: equal scores are ordered by how many sites cite the page at all
#:   (the better-known page first), then by Σ_d DS_d (Eq. 5-12), never by URL while
#:   evidence differs.
#: * distant_pairs, window = 60: two links of one block up to 60 positions apart are
#:   co-cited (Eq. 5 still weighs them); the paper drops pairs whose S_p rounds to 0
#:   (|i - j| > ~37).  The window keeps every link's pairs bounded (at most 2 x 60), so the
#:   chain's cost stays linear in the links: without it, blocks of up to S = 200 links made
#:   it grow 6.5-fold for 4 times the pages of a generated web.
#: * granularity = heading: consecutive lists and paragraphs under one heading of a page are
#:   co-cited as one block (:mod:`relatedpages.scoring.granularity`): editors split what
#:   they group under a heading into several lists.  Development split: P@15 same list
#:   15.67 -> 16.34 %, R@1 0.496 -> 0.510; the generated webs are unchanged (their pages
#:   never have two lists under one heading).
#: * site_fallback, diffuse = 0.25: a page without a list, or whose best result is co-cited
#:   by fewer than a quarter of the sites citing it, is answered by the nearest page of its
#:   own site (:mod:`relatedpages.scoring.sitefallback`).  Development web (seed 7): P@15
#:   by topic 59.6 -> 97.8 %; development split of the hub lists: every measure within 0.002.
#: * relative = 0.1: a result co-cited by fewer than a tenth as many sites as the page's
#:   best is dropped (the fallback fills the list): on a small web (1,500 pages, seed 7) the
#:   few right sites are followed by template links co-cited by 4-5 sites: P@15 by topic
#:   46.8 -> 53.1 %; unchanged on the 10,000-page web and on the hub lists' development split.
DEFAULT_PRESET_CHANGES: Mapping[str, Any] = {
    "t": 0.0,
    "damping": Damping.NONE,
    "score": ScoreForm.EVIDENCE,
    "proximity": Proximity.LOG,
    "tie_break": TieBreak.EVIDENCE,
    "distant_pairs": True,
    "window": 60,
    "granularity": Granularity.HEADING,
    "site_fallback": True,
    "diffuse": 0.25,
    "relative": 0.1,
}


def preset_params(preset: Preset | str, **overrides: Any) -> SimilarityParams:
    """The similarity parameters of a preset, with explicit ``overrides`` on top.

    >>> preset_params("paper") == SimilarityParams()
    True
    >>> p = preset_params("default", m=10)
    >>> (p.t, p.damping.value, p.score.value, p.tie_break.value, p.distant_pairs, p.window, p.m)
    (0.0, 'none', 'evidence', 'evidence', True, 60, 10)
    >>> p.granularity.value
    'heading'
    """
    base = SimilarityParams()
    if Preset(preset) is Preset.DEFAULT:
        base = replace(base, **DEFAULT_PRESET_CHANGES)
    return replace(base, **overrides)


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


def page_pairs(
    page_site: str, filtered_blocks: Sequence[Sequence[LinkLike]], lam: int,
    *, distant_pairs: bool = False, page_url: str = "", max_distance: int = 0,
    form: Proximity = Proximity.PAPER,
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

    Pairs come out in the order their blocks and links make them; p1 < p2.
    """
    seen: set[tuple[str, str]] = set()
    pairs: list[PagePair] = []
    for block in filtered_blocks:
        links = list(block)
        # Each link's anchor key and text, once, not once a pair it is in
        keys = [anchor_key(link.words) for link in links]
        texts = [getattr(link, "anchor", "") for link in links]
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
                     ds_capped_micro: int | None = None) -> float:
    """The score of p2 for p1 from the exact sums in micro-units (Σ_d DS_d and its largest
    term), the number of citing sites, in_p2 and p2's popularity, damped and rounded to
    ROUND_DIGITS: TS of Eq. 13 under the paper preset, :class:`ScoreForm` ``evidence``
    under the default preset (``ds_capped_micro``: Σ_d min(DS_d, SITE_EVIDENCE_CAP), by
    default the plain sum).

    >>> score_from_micro(8_000_000, 5_000_000, 3, 1, SimilarityParams())
    8.0
    >>> score_from_micro(8_000_000, 5_000_000, 3, 4, SimilarityParams(score="sites", damping="none"))
    3.0
    >>> score_from_micro(3_000_000, 2_000_000, 2, 3, preset_params("default"), popularity=4)
    5.248067
    >>> score_from_micro(8_000_000, 5_000_000, 3, 4, SimilarityParams(score="corroborated", damping="sqrt"))
    1.5
    """
    if params.score is ScoreForm.EVIDENCE:
        kept = (sites + POPULARITY_WEIGHT * math.log1p(popularity)
                + ((ds_sum_micro if ds_capped_micro is None else ds_capped_micro)
                   / SCALE / sites if sites else 0.0)
                + IN_P_WEIGHT * math.log1p(in_p2))
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
) -> Candidate:
    """:func:`directed_score` as a :class:`Candidate` for ``url`` (with its tie keys;
    ``popularity`` = the number of sites linking ``url``; ``citing`` = each site's strongest
    (citing page, anchor text) for the evidence)."""
    ds_micro = {
        site: domain_similarity_micro(groups, params.r, params.n)
        for site, groups in sims_by_site.items()
    }
    total, best = sum(ds_micro.values()), max(ds_micro.values(), default=0)
    capped = sum(min(value, SITE_EVIDENCE_CAP_MICRO) for value in ds_micro.values())
    ds_by_site = {site: unmicro(value) for site, value in ds_micro.items()}
    return Candidate(url, score_from_micro(total, best, len(ds_micro), in_p2, params,
                                           popularity, capped),
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
