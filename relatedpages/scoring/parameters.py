"""The block co-citation chain's parameters, one home: the paper's values (Eq. 5-13), the
choices beside them (damping, score, proximity, tie-break, presets) and
:class:`SimilarityParams`, validated at construction; the default preset's departures from
the paper, each with the measurement behind it (:func:`preset_params`).  The arithmetic
that reads them is :mod:`relatedpages.scoring.similarity`."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

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
    # One score from all the evidence (issue 43): the citing sites, each worth more when
    # its largest page co-citing the pair is a collection of links (SITE_WORTH_LINKS), plus
    # their mean DS_d (at most 2 per site with the log proximity: how near and how alike
    # the anchors), plus POPULARITY_WEIGHT x ln(1 + popularity) and IN_P_WEIGHT x
    # ln(1 + in_p2).  A second citing site outweighs one site's nearness unless the anchors
    # also agree (DS_d < 1 for anchors without a common word), and equal counts are ordered
    # by the evidence, not by a tie-break.
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
