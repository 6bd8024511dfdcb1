"""The hub-list evaluation's report: the table of every measure per method, the verdict
"does block co-citation lead every other row?", its relative lead over the two references
(issue 43's goal), the R-score curve (Fig. 10) and the JSON
(:mod:`relatedpages.evaluation.related` computes what they show)."""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


from relatedpages.evaluation import spread as sp
from relatedpages.evaluation.measures import Scores
from relatedpages.evaluation.naive import NAIVE_STRONG
from relatedpages.evaluation.related import (
    BLOCK,
    COCITATION,
    PAPER_BLOCK,
    WEIGHTED_COSINE,
    Evaluation,
)

# -- reporting ---------------------------------------------------------------------------

#: (label, Scores attribute, is a quality measure compared in the verdict)
_MEASURES: tuple[tuple[str, str, bool], ...] = (
    ("coverage (test pages with >= 1 result)", "coverage", True),
    ("results per covered test page", "mean_results", False),
    ("ties (results tied with a neighbour, 3 significant digits)", "tied_share", False),
    ("exact ties (a neighbour's very score: the same evidence)", "tied_exact_share", False),
    ("P@k same section (covered pages)", "p_section", True),
    ("P@k same list (covered pages)", "p_list", True),
    ("P@k same section (missing = 0)", "p_section_all", True),
    ("P@k same list (missing = 0)", "p_list_all", True),
)
_TABLE_R = (1, 3, 5, 10, 15)


def measures(scores: Scores) -> list[tuple[str, float, bool]]:
    """The table's rows for one algorithm: (measure, value, quality measure?), R-scores at
    R = 1, 3, 5, 10, 15 last."""
    k = len(scores.rscore)
    rows = [(label.replace("P@k", f"P@{k}"), _value(getattr(scores, name)), quality)
            for label, name, quality in _MEASURES]
    rows += [(f"R-score R = {r} (0-2, missing = 0)", scores.rscore[r - 1], True)
             for r in _TABLE_R if r <= k]
    return rows


def _value(value: float | None) -> float:
    """A measure as a float, NaN for one that does not apply (ties of a row without scores)."""
    return math.nan if value is None else float(value)


def _fmt(label: str, value: float) -> str:
    if math.isnan(value):
        return "n/a"
    if label.startswith(("results per", "R-score")):
        return f"{value:.3f}"
    return f"{100 * value:.1f} %"


def _table(scores: Mapping[str, Scores]) -> list[str]:
    names = list(scores)
    rows = {name: measures(s) for name, s in scores.items()}
    width = max(len(label) for label, _, _ in rows[names[0]])
    cells = {name: max(20, len(name) + 2) for name in names}  # long names stay apart
    lines = [f"{'measure':<{width}}" + "".join(f"{name:>{cells[name]}}" for name in names)]
    for i, (label, _, _) in enumerate(rows[names[0]]):
        lines.append(f"{label:<{width}}" + "".join(
            f"{_fmt(label, rows[name][i][1]):>{cells[name]}}" for name in names))
    return lines


def verdict(block: Scores, cocitation: Scores) -> tuple[list[str], list[str], list[str]]:
    """The quality measures (coverage, the four P@k, R-score for every R) on which block
    co-citation is ahead of, behind or tied with co-citation (|difference| < 0.0005)."""
    pairs = [(label, b, c) for (label, b, quality), (_, c, _) in
             zip(measures(block), measures(cocitation)) if quality and not label.startswith("R-")]
    pairs += [(f"R-score R = {r + 1}", block.rscore[r], cocitation.rscore[r])
              for r in range(min(len(block.rscore), len(cocitation.rscore)))]
    ahead, behind, tied = [], [], []
    for label, b, c in pairs:
        if math.isclose(b, c, abs_tol=5e-4):
            tied.append(label)
        elif b > c:
            ahead.append(label)
        else:
            behind.append(label)
    return ahead, behind, tied


#: Issue 10's acceptance measures: (label, value of a Scores).
LEAD_MEASURES: tuple[tuple[str, Callable[[Scores], float]], ...] = (
    ("P@15 same section (missing = 0)", lambda s: s.p_section_all),
    ("P@15 same list (missing = 0)", lambda s: s.p_list_all),
    ("R-score R = 1", lambda s: s.rscore[0]),
    ("R-score R = 3", lambda s: s.rscore[min(2, len(s.rscore) - 1)]),
    ("R-score R = 5", lambda s: s.rscore[min(4, len(s.rscore) - 1)]),
)
#: ... and the coverage block co-citation must reach.
LEAD_COVERAGE = 0.95


def lead_lines(scores: Mapping[str, Scores], name: str = BLOCK) -> list[str]:
    """Whether ``name`` leads every other row on :data:`LEAD_MEASURES`, with coverage of at
    least :data:`LEAD_COVERAGE`; one line per measure naming the best other row."""
    if name not in scores or len(scores) < 2:
        return []
    own = scores[name]
    lines, all_lead = [], own.coverage >= LEAD_COVERAGE
    for label, value in LEAD_MEASURES:
        rival, best = max(((other, value(sc)) for other, sc in scores.items() if other != name),
                          key=lambda item: item[1])
        leads = value(own) > best + 5e-4
        all_lead = all_lead and leads
        lines.append(f"  {label:<34} {name} {value(own):.4f}  best other: {rival} {best:.4f}"
                     f"  {'leads' if leads else 'DOES NOT LEAD'}")
    lines.append(f"  coverage {100 * own.coverage:.1f} % (goal >= {100 * LEAD_COVERAGE:.0f} %)")
    head = (f"Does {name} (at its defaults) lead every other row? "
            + ("yes" if all_lead else "NO"))
    return [head, *lines]


#: Issue 43's goal: (label, value of a Scores), the product's lead over the references.
RELATIVE_MEASURES: tuple[tuple[str, Callable[[Scores], float]], ...] = (
    ("P@15 same section", lambda s: s.p_section_all),
    ("P@15 same list", lambda s: s.p_list_all),
    ("R@1", lambda s: s.rscore[0]),
    ("R@3", lambda s: s.rscore[min(2, len(s.rscore) - 1)]),
)
#: ... the lead over the naive reference it must reach (relative), and over the weighted
#: cosine (any lead).
NAIVE_LEAD_GOAL = 0.05
COSINE_LEAD_GOAL = 0.0
#: Each reference with the lead over it the goal asks for.
REFERENCE_GOALS = ((NAIVE_STRONG, NAIVE_LEAD_GOAL), (WEIGHTED_COSINE, COSINE_LEAD_GOAL))


def relative_lead(own: float, reference: float) -> float:
    """(own − reference) / reference; +inf when only the reference is 0.

    >>> round(relative_lead(0.105, 0.1), 4), relative_lead(0.0, 0.0), relative_lead(0.2, 0.0)
    (0.05, 0.0, inf)
    """
    if reference == 0:
        return 0.0 if own == 0 else math.inf
    return (own - reference) / reference


def reference_lines(scores: Mapping[str, Scores], name: str = BLOCK) -> list[str]:
    """The product's relative lead (%) over the naive reference and the weighted cosine on
    :data:`RELATIVE_MEASURES`, and whether it meets issue 43's goal: at least
    :data:`NAIVE_LEAD_GOAL` over the naive reference and a lead over the weighted cosine on
    all four (missing results count 0)."""
    present = [(ref, goal) for ref, goal in REFERENCE_GOALS if ref in scores]
    if name not in scores or not present:
        return []
    own, met, lines = scores[name], len(present) == len(REFERENCE_GOALS), []
    for reference, goal in present:
        leads = [(label, relative_lead(value(own), value(scores[reference])))
                 for label, value in RELATIVE_MEASURES]
        ok = all(sp.meets(lead, goal) for _, lead in leads)
        met = met and ok
        lines.append(f"  over {reference}: " + ", ".join(
            f"{label} {100 * lead:+.1f} %" for label, lead in leads)
            + f"  (goal {_wanted(goal)} on all four: {'met' if ok else 'NOT met'})")
    head = (f"Does {name} lead the naive reference by >= {100 * NAIVE_LEAD_GOAL:.0f} % "
            f"(relative) and the weighted cosine on P@15 section, P@15 list, R@1 and R@3? "
            + ("yes" if met else "NO"))
    return [head, *lines]


def reference_leads(scores: Mapping[str, Scores], name: str = BLOCK,
                    ) -> dict[str, dict[str, float | None]]:
    """The relative leads of :func:`reference_lines` as JSON values (None for infinite)."""
    if name not in scores:
        return {}
    leads: dict[str, dict[str, float | None]] = {}
    for reference, _ in REFERENCE_GOALS:
        if reference in scores:
            values = {label: relative_lead(value(scores[name]), value(scores[reference]))
                      for label, value in RELATIVE_MEASURES}
            leads[reference] = {label: round(lead, 4) if math.isfinite(lead) else None
                                for label, lead in values.items()}
    return leads


def lead_spreads(evaluation: Evaluation, name: str = BLOCK,
                 ) -> dict[str, dict[str, sp.Spread]]:
    """The product's lead over each reference with its spread over the held-out lists
    (:mod:`relatedpages.evaluation.spread`); {} without the rows' related lists."""
    truth = evaluation.truth
    if truth is None or name not in evaluation.related:
        return {}
    k = int(evaluation.parameters.get("k", 15))
    return {reference: sp.lead_spread(evaluation.related[name], evaluation.related[reference],
                                      evaluation.test_pages, truth,
                                      len(evaluation.held_out_urls), goal, k)
            for reference, goal in REFERENCE_GOALS if reference in evaluation.related}


def spread_lines(spreads: Mapping[str, Mapping[str, sp.Spread]]) -> list[str]:
    """The report's lines on :func:`lead_spreads`: per reference and measure, the lead, its
    95 % interval over the held-out lists drawn, and the share of draws reaching the goal."""
    if not spreads:
        return []
    goals = dict(REFERENCE_GOALS)
    lines = [f"  the lead's spread over the held-out lists ({sp.DRAWS:,} draws of the lists "
             "with replacement):"]
    for reference, by_measure in spreads.items():
        lines.append(f"    over {reference}:")
        lines += [f"      {label:<18} {_percent(s.lead):>8}  95 % interval "
                  f"[{_percent(s.low)}, {_percent(s.high)}]  draws reaching "
                  f"{_wanted(goals.get(reference, 0.0))}: "
                  f"{100 * s.reaching:.0f} %" for label, s in by_measure.items()]
    return lines


def _wanted(goal: float) -> str:
    """The goal as the report words it: ">= 5 %", or "> 0 %" for any lead."""
    return f">= {100 * goal:.0f} %" if goal > 0 else "> 0 %"


def _percent(value: float) -> str:
    return f"{100 * value:+.1f} %" if math.isfinite(value) else "+inf"


def _verdict_lines(title: str, scores: Mapping[str, Scores], other: str = COCITATION) -> list[str]:
    if BLOCK not in scores or other not in scores:
        return []
    ahead, behind, tied = verdict(scores[BLOCK], scores[other])
    total = len(ahead) + len(behind) + len(tied)
    lines = [f"{title}: block co-citation ahead on {len(ahead)} of {total} measures, "
             f"behind on {len(behind)}, tied on {len(tied)}."]
    if behind:
        winner = "traditional co-citation" if other == COCITATION else other
        lines.append(f"  {winner} wins: " + "; ".join(behind))
    if tied:
        lines.append("  tied: " + "; ".join(tied))
    return lines


def format_report(evaluation: Evaluation) -> str:
    """The printed report: protocol, the side-by-side table, the R-score curve, the paired
    and unthresholded views, the sensitivity table, who won where, and timings."""
    p, q = evaluation.parameters, evaluation.protocol
    names = list(evaluation.scores)
    k = p["k"]
    lines = [
        "Related pages on held-out hub lists (cf. paper Fig. 10)",
        f"  engine: {p['engine']}",
        (f"  lists {q['lists']}: held out {q['held_out_lists']} (holdout {p['holdout']:.0%}, "
         + (f"seed {p['seed']}" if p.get("draw") is None else
            f"development draw {p['draw']}: development lists only")
         + f"; whole lists, never links), indexed {q['indexed_lists']}"
         + (f" (index share {p['index_share']:.0%})" if p.get("index_share", 1.0) < 1.0 else "")
         + " "
         f"+ {q['web_pages']} real web pages = {q['index_records']} index pages"
         if "lists" in q else
         f"  held out {q['held_out_lists']} lists; {q['index_records']} index pages (given)"),
        f"  held-out sections {q['held_out_sections']} with {q['held_out_links']} distinct links; "
        f"test pages (in a held-out section, linked from >= {p['min_citing']} index pages of "
        f"other sites) {q['test_pages']}",
        f"  {BLOCK}: the product at its defaults (default preset: score = "
        f"{p['block']['score']}, ties by {p['block']['tie_break']}, T = {p['block']['t']:g}, "
        f"S = {p['block']['large_block']}, lambda = {p['block']['lam']}, M = {p['block']['m']}; "
        f"fallback {p['block']['fallback']})",
        f"  {PAPER_BLOCK}: T = {p['paper_block']['t']:g} (paper: 4.0, for 37.5 M pages), "
        f"S = {p['paper_block']['large_block']}, lambda = {p['paper_block']['lam']}, "
        f"r = {p['paper_block']['r']}, N = {p['paper_block']['n']:g}, M = {p['paper_block']['m']}",
        f"  co-citation: min-degree = {p['cocitation']['min_degree']}, "
        f"BF = {p['cocitation']['bf']}, M = {p['cocitation']['m']}",
        *_baseline_lines(evaluation),
        "  grades: 2 = same held-out section, 1 = same held-out list, 0 = otherwise "
        "(results outside the held-out lists grade 0: lower bounds)",
        "",
        *_table(evaluation.scores),
        "",
        *lead_lines(evaluation.scores),
        *reference_lines(evaluation.scores),
        *spread_lines(lead_spreads(evaluation)),
        "",
        f"Average R-score, R = 1…{k} (missing results = 0; the PNG)",
        f"{'R':>3}" + "".join(f"{name:>20}" for name in names),
    ]
    for r in range(k):
        lines.append(f"{r + 1:>3}" + "".join(
            f"{evaluation.scores[name].rscore[r]:>20.3f}" for name in names))
    if evaluation.paired:
        lines += ["", f"Paired view: the {evaluation.paired_pages} test pages every algorithm "
                  "answers (ranking quality, coverage aside)", *_table(evaluation.paired)]
    if evaluation.unthresholded:
        lines += ["", "Unthresholded view: block co-citation (paper preset) T = 0, co-citation "
                  "min-degree = 1",
                  *_table(evaluation.unthresholded)]
    if evaluation.url_hosts:
        lines += ["", "Host view: the baselines with URL host names instead of site identity "
                  "(as on a crawl-built link index; github.com is then one host)",
                  *_table(evaluation.url_hosts)]
    lines += ["", "Sensitivity (same test pages; * = the setting of the main table)"]
    header = ["cover", "res/pg", "P@k sec", "P@k list", "sec m=0", "list m=0", "R@1", "R@5",
              f"R@{k}"]
    lines.append(f"{'algorithm':<20}{'setting':<18}" + "".join(f"{h:>9}" for h in header))
    for row in evaluation.sweep:
        sc = row.scores
        setting = f"{row.parameter} = {row.value:g}" + ("*" if row.chosen else "")
        cells = [f"{100 * sc.coverage:.1f}", f"{sc.mean_results:.2f}", f"{100 * sc.p_section:.1f}",
                 f"{100 * sc.p_list:.1f}", f"{100 * sc.p_section_all:.1f}",
                 f"{100 * sc.p_list_all:.1f}", f"{sc.rscore[0]:.3f}",
                 f"{sc.rscore[min(4, k - 1)]:.3f}", f"{sc.rscore[-1]:.3f}"]
        lines.append(f"{row.algorithm:<20}{setting:<18}" + "".join(f"{c:>9}" for c in cells))
    lines.append("")
    lines += _verdict_lines("Main table", evaluation.scores)
    lines += _verdict_lines("Paired view", evaluation.paired)
    lines += _verdict_lines("Unthresholded view", evaluation.unthresholded)
    for name in evaluation.no_answer:
        lines += _verdict_lines(f"Main table, against {name}", evaluation.scores, name)
    if BLOCK in evaluation.scores and COCITATION in evaluation.scores:
        _, behind, tied = verdict(evaluation.scores[BLOCK], evaluation.scores[COCITATION])
        met = not behind and not tied
        lines.append("The paper's result (block co-citation ahead on every measure): "
                     + ("reproduced in the main table." if met else
                        "NOT reproduced: see the measures traditional co-citation wins above."))
    lines.append("")
    lines.append("time: " + ", ".join(f"{name} {value:.1f} s"
                                      for name, value in evaluation.seconds.items()))
    return "\n".join(lines)


def _baseline_lines(evaluation: Evaluation) -> list[str]:
    """The report's lines on the baselines: graph, parameters and empty answers."""
    p, q = evaluation.parameters, evaluation.protocol
    baselines = p.get("baselines") or {}
    if not baselines:
        return []
    short = {"max_parents": "B", "siblings_per_parent": "BF", "max_children": "F",
             "coparents_per_child": "FB", "parents": "B", "siblings": "BF", "children": "F",
             "co_parents": "FB", "delta": "delta", "epsilon": "epsilon", "stoplist": "stoplist",
             "restart_min_siblings": "restart below", "chop_urls": "chop URLs",
             "degree": "degree", "max_results": "at most"}
    lines = [f"  baselines on a link graph of the index pages ({q.get('graph_nodes', 0)} nodes, "
             f"{q.get('graph_links', 0)} links, all of each page's links; hosts = "
             f"{p.get('baseline_hosts')} identity, {q.get('graph_hosts', 0)} hosts); "
             "the papers' parameters, at most k results:"]
    for name, params in baselines.items():
        settings = ", ".join(f"{short[key]} = {value}" for key, value in params.items()
                             if key in short)
        empty = evaluation.no_answer.get(name, {})
        why = ", ".join(f"{reason} {count}" for reason, count in empty.items()) or "none"
        lines.append(f"    {name}: {settings}; empty answers: {why}")
    return lines


def plot_rscore(evaluation: Evaluation, path: Path) -> None:
    """Fig. 10: the average R-score of every algorithm for R = 1 … k."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = evaluation.parameters
    settings = {BLOCK: "defaults", PAPER_BLOCK: f"T = {p['paper_block']['t']:g}",
                COCITATION: f"min-degree {p['cocitation']['min_degree']}"}
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colours: dict[str, Any] = {}
    for (name, scores), marker in zip(evaluation.scores.items(), "os^vDx*"):
        xs = range(1, len(scores.rscore) + 1)
        label = f"{name} ({settings[name]})" if name in settings else name
        (line,) = ax.plot(xs, scores.rscore, marker=marker, label=label)
        colours[name] = line.get_color()
    unthresholded = {PAPER_BLOCK: "T = 0", COCITATION: "min-degree 1"}
    for name, scores in evaluation.unthresholded.items():
        xs = range(1, len(scores.rscore) + 1)
        ax.plot(xs, scores.rscore, linestyle="--", color=colours.get(name),
                label=f"{name} ({unthresholded.get(name, 'no threshold')})")
    k = p["k"]
    ax.set_xticks(range(1, k + 1))
    ax.set_xlabel("R (top R results)")
    ax.set_ylabel("average R-score (0-2; missing results = 0)")
    q = evaluation.protocol
    ax.set_title(f"Average R-score on {q['held_out_lists']} held-out hub lists, "
                 f"{q['test_pages']} test pages (cf. paper Fig. 10)", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def scores_as_dict(scores: Scores) -> dict[str, Any]:
    return {
        "test_pages": scores.test_pages,
        "covered": scores.covered,
        "coverage": round(scores.coverage, 4),
        "mean_results": round(scores.mean_results, 4),
        "tied_share": None if scores.tied_share is None else round(scores.tied_share, 4),
        "tied_exact_share": (None if scores.tied_exact_share is None
                             else round(scores.tied_exact_share, 4)),
        "p_at_k_section": round(scores.p_section, 4),
        "p_at_k_list": round(scores.p_list, 4),
        "p_at_k_section_missing_zero": round(scores.p_section_all, 4),
        "p_at_k_list_missing_zero": round(scores.p_list_all, 4),
        "rscore": [round(value, 4) for value in scores.rscore],
    }


def evaluation_as_json(evaluation: Evaluation, **extra: Any) -> str:
    return json.dumps(
        {
            **extra,
            "parameters": evaluation.parameters,
            "protocol": evaluation.protocol,
            "scores": {name: scores_as_dict(s) for name, s in evaluation.scores.items()},
            "relative_lead": reference_leads(evaluation.scores),
            "lead_spread": sp.spreads_as_dict(lead_spreads(evaluation)),
            "paired_pages": evaluation.paired_pages,
            "paired": {name: scores_as_dict(s) for name, s in evaluation.paired.items()},
            "unthresholded": {name: scores_as_dict(s)
                              for name, s in evaluation.unthresholded.items()},
            "no_answer": {name: dict(reasons) for name, reasons in evaluation.no_answer.items()},
            "url_hosts": {name: scores_as_dict(s) for name, s in evaluation.url_hosts.items()},
            "sweep": [{"algorithm": row.algorithm, "parameter": row.parameter,
                       "value": row.value, "chosen": row.chosen, **scores_as_dict(row.scores)}
                      for row in evaluation.sweep],
            "seconds": {name: round(value, 2) for name, value in evaluation.seconds.items()},
        },
        sort_keys=True,
        ensure_ascii=False,
    )
