"""The block co-citation chain's options, declared once for ``jobs.related`` and the CLI.

``jobs.related`` declares them with mrjob's ``add_passthru_arg`` and ``relatedpages build``
/ ``scripts/nightly`` with argparse's ``add_argument`` (same signature), so
``relatedpages build --help`` lists every parameter of the chain with the job's own help
text, and a bad value is refused before any work starts.  The values live in
:mod:`relatedpages.scoring.parameters` (``*_DEFAULT``, the presets) and :mod:`filters.links`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from filters.links import LinkFilterParams
from relatedpages.scoring import parameters
from relatedpages.scoring.granularity import Granularity
from relatedpages.scoring.similarity import SITE_WORTH_LINKS

#: One switch per link filter, named after LinkFilterParams' boolean fields.
FILTER_SWITCHES = tuple(
    field.name for field in dataclasses.fields(LinkFilterParams) if field.type in (bool, "bool")
)
#: The default preset's departures from the paper's link filters (README, "The default
#: preset"): blocks of up to 200 links (the paper's S = 80 drops long lists whole, and with
#: them 2 % of the hub lists' test pages), and links with an empty anchor (image links,
#: badges) are kept: they cite pages like any other link (+6 points of coverage on the
#: development split).
DEFAULT_PRESET_LINK_CHANGES: dict[str, Any] = {"large_block": 200, "empty_anchor": False}


def preset_link_params(preset: parameters.Preset | str, **overrides: Any) -> LinkFilterParams:
    """The link filter parameters of a preset, with explicit ``overrides`` on top.

    >>> preset_link_params("paper") == LinkFilterParams()
    True
    >>> p = preset_link_params("default")
    >>> p.large_block, p.empty_anchor, p.dynamic
    (200, False, True)
    """
    default = parameters.Preset(preset) is parameters.Preset.DEFAULT
    changes = DEFAULT_PRESET_LINK_CHANGES if default else {}
    return dataclasses.replace(LinkFilterParams(), **{**changes, **overrides})


def _on_off(text: str) -> bool:
    """``on``/``off`` (and the ``True``/``False`` a job argument is written as) as a bool.

    >>> _on_off("on"), _on_off("False")
    (True, False)
    """
    value = {"on": True, "true": True, "off": False, "false": False}.get(str(text).lower())
    if value is None:
        raise ValueError(f"expected on or off, got {text!r}")
    return value


@dataclasses.dataclass(frozen=True)
class _Option:
    flag: str
    dest: str
    kind: Callable[[str], Any] | None
    default: Any
    help: str
    choices: tuple[str, ...] | None = None


_OPTIONS = (
    _Option("--preset", "preset", str, parameters.Preset.DEFAULT.value,
            "parameter set: 'paper' is Eq. 5-13 with the paper's values exactly; 'default' "
            "departs where the evaluation proved it better (README, \"Two presets\"). The "
            "options below override the preset.",
            tuple(p.value for p in parameters.Preset)),
    _Option("--large-block", "large_block", int, None,
            "S: drop blocks with more links (0: keep all)."),
    _Option("--lam", "lam", int, parameters.LAMBDA_DEFAULT,
            "λ: near-neighbour threshold of the proximity factor (Eq. 5)."),
    _Option("--r", "r", int, parameters.R_DEFAULT,
            "r: anchor repetition cap per citing site (Eq. 12)."),
    _Option("--n", "n", float, parameters.N_DEFAULT, "N: domain similarity cap (Eq. 12)."),
    _Option("--m", "m", int, parameters.M_DEFAULT, "M: related pages kept per page."),
    _Option("--t", "t", float, None,
            "T: minimum score (Eq. 13)."),
    _Option("--damping", "damping", str, None,
            "damping by in_p2: log = 1 + ln in_p2 (Eq. 13), sqrt (cosine), none.",
            tuple(d.value for d in parameters.Damping)),
    _Option("--score", "score", str, None,
            "total = sum of DS_d over citing sites (Eq. 13); sites = the number of citing "
            "sites; corroborated = the total without the strongest site; evidence = the "
            "citing sites (each worth more when its page links more than "
            f"{SITE_WORTH_LINKS} pages) plus their mean DS_d, the related page's popularity "
            "and its units.",
            tuple(f.value for f in parameters.ScoreForm)),
    _Option("--proximity", "proximity", str, None,
            "P_b of Eq. 7: paper (Eq. 5, flat within λ) or log (1 / ln(e + |i-j|/λ), over "
            "ln(e + the unit's links / 10)).",
            tuple(f.value for f in parameters.Proximity)),
    _Option("--tie-break", "tie_break", str, None,
            "order of equal scores: url, or evidence (the sites linking the page, then "
            "summed DS_d, then URL).",
            tuple(b.value for b in parameters.TieBreak)),
    _Option("--window", "window", int, None,
            "with distant pairs (default preset), links of one block further apart than "
            "this are never a pair (0: no limit); it bounds each link's pairs."),
    _Option("--granularity", "granularity", str, None,
            "the co-citing unit: block (the segmenter's), or heading (consecutive blocks "
            "under one heading of the page, co-cited as one).",
            tuple(g.value for g in Granularity)),
    _Option("--site-fallback", "site_fallback", _on_off, None,
            "on: a page with no block list, or a diffuse one (--diffuse), is answered by "
            "the nearest page of its own site with a list (its URL chopped a segment at a "
            "time), each such result marked 'site'; on or off."),
    _Option("--diffuse", "diffuse", float, None,
            "with the site fallback: a page's list is diffuse when its best score is below "
            "this share of the sites citing it (0: only pages with no list fall back)."),
    _Option("--relative", "relative", float, None,
            "drop results scoring below this share of the page's best score (0: keep all); "
            "the fallback fills the list instead."),
    _Option("--template", "template", int, parameters.TEMPLATE_DEFAULT,
            "a site citing a page in more blocks has it in a template: it does not count "
            "toward the page's popularity (the evidence tie-break)."),
    _Option("--evidence", "evidence", int, parameters.EVIDENCE_DEFAULT,
            "citing sites kept as evidence per result."),
)


def add_chain_options(add_argument: Callable[..., Any], *, defaults: bool = True) -> None:
    """Declare the chain's options.  ``defaults=False`` (the CLI) leaves every default
    ``None``, so that only the options a user gave are passed on to the job."""
    for option in _OPTIONS:
        if option.default is None:  # from the preset: name both presets' values
            text = f"{option.help} Default: the preset's ({_preset_defaults(option.dest)})"
        else:  # the CLI's own default is None (not given): name the job's
            text = option.help + (" Default: %(default)s" if defaults else f" Default: {option.default}")
        extra: dict[str, Any] = {"choices": option.choices} if option.choices else {}
        add_argument(option.flag, dest=option.dest, type=option.kind,
                     default=option.default if defaults else None, help=text, **extra)
    for name in FILTER_SWITCHES:
        off_in_default = DEFAULT_PRESET_LINK_CHANGES.get(name) is False
        add_argument(f"--no-{name.replace('_', '-')}-filter", dest=f"no_{name}_filter",
                     action="store_true",
                     help=f"switch the {name.replace('_', ' ')} filter off"
                          + (" (the default preset does)" if off_in_default else ""))


def _preset_defaults(dest: str) -> str:
    """``paper X, default Y``: a preset-resolved option's value under each preset.

    >>> _preset_defaults("large_block"), _preset_defaults("tie_break")
    ('paper 80, default 200', 'paper url, default evidence')
    """
    values = []
    for preset in (parameters.Preset.PAPER, parameters.Preset.DEFAULT):
        params = (preset_link_params(preset) if dest == "large_block"
                  else parameters.preset_params(preset))
        value = getattr(params, dest)
        shown = value.value if isinstance(value, Enum) else (
            ("on" if value else "off") if isinstance(value, bool) else
            f"{value:g}" if isinstance(value, float) else value)
        values.append(f"{preset.value} {shown}")
    return ", ".join(values)


def chain_params_from(options: Any) -> tuple[LinkFilterParams, parameters.SimilarityParams]:
    """The parameters of parsed options (any missing or ``None`` value: the preset's or
    the library default).  Raises ValueError for impossible values."""
    def given(name: str) -> Any:
        return getattr(options, name, None)

    preset = given("preset") or parameters.Preset.DEFAULT
    switched_off = {name: False for name in FILTER_SWITCHES if given(f"no_{name}_filter")}
    if given("large_block") is not None:
        switched_off["large_block"] = given("large_block")
    link = preset_link_params(preset, **switched_off)
    overrides = {option.dest: given(option.dest) for option in _OPTIONS
                 if option.dest not in ("preset", "large_block") and given(option.dest) is not None}
    return link, parameters.preset_params(preset, **overrides)


def chain_job_args(options: Any) -> list[str]:
    """The ``jobs.related`` arguments for the options a user gave (CLI → job).

    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_chain_options(parser.add_argument, defaults=False)
    >>> chain_job_args(parser.parse_args(["--preset", "paper", "--t", "1"]))
    ['--preset', 'paper', '--t', '1.0']
    """
    args: list[str] = []
    for option in _OPTIONS:
        value = getattr(options, option.dest, None)
        if value is not None:
            args += [option.flag, str(value)]
    for name in FILTER_SWITCHES:
        if getattr(options, f"no_{name}_filter", False):
            args.append(f"--no-{name.replace('_', '-')}-filter")
    return args


def describe(params: Sequence[Any]) -> str:
    """One line naming the parameters in force (for summaries).

    >>> describe((LinkFilterParams(), parameters.preset_params("paper")))
    'T = 4, M = 15, r = 9, N = 10, λ = 8, S = 80, damping log, score total, ties url'
    """
    link, similarity = params
    off = [name.replace("_", "-") for name in FILTER_SWITCHES if not getattr(link, name)]
    return (f"T = {similarity.t:g}, M = {similarity.m}, r = {similarity.r}, "
            f"N = {similarity.n:g}, λ = {similarity.lam}, S = {link.large_block}, damping "
            f"{similarity.damping.value}, score {similarity.score.value}, ties "
            f"{similarity.tie_break.value}"
            + (f", proximity {similarity.proximity.value}"
               if similarity.proximity is not parameters.Proximity.PAPER else "")
            + (f", distant pairs kept up to {similarity.window} apart" if similarity.distant_pairs
               else "")
            + (f", co-citing unit {similarity.granularity.value}"
               if similarity.granularity is not Granularity.BLOCK else "")
            + (f", results below {similarity.relative:g} of the best dropped"
               if similarity.relative else "")
            + (f", site fallback (diffuse below {similarity.diffuse:g} of the citing sites)"
               if similarity.site_fallback else "")
            + (f", filters off: {', '.join(off)}" if off else ""))
