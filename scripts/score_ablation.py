"""What each term of the default preset's score adds, on the development split of the hub lists.

    python scripts/score_ablation.py [--seed 1] [DATA]

The default preset's score (``relatedpages.scoring.parameters.ScoreForm.EVIDENCE``) is the
citing sites (each worth more when its page links more than ``SITE_WORTH_LINKS`` pages)
plus their mean DS_d, ln(1 + the related page's popularity), 0.1 ln(1 + in_p2) and the citing
sites' description overlap (``DESCRIPTION_WEIGHT``), with DS_d from the log proximity
(``Proximity.LOG``).  This script scores the product row of
``relatedpages eval related`` (the default preset, co-citation filling the lists) with one term
taken out at a time, on the same test pages, with the in-memory oracle, and prints the measures
and the share of results tied with a neighbour at three significant digits.  Seed 1 is the
development split: every choice of the score was made on it (README, "One score").  About
90 s per row on two cores.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from filters.anchors import AnchorWords  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from relatedpages.evaluation.hubs import GroundTruth, select_test_pages  # noqa: E402
from relatedpages.evaluation.measures import score_related  # noqa: E402
from relatedpages.evaluation.related import MIN_CITING_DEFAULT, load_split, with_fallback  # noqa: E402
from relatedpages.scoring import similarity as sim  # noqa: E402
from relatedpages.scoring.cocitation import CocitationParams, reference_cocitation  # noqa: E402
from relatedpages.scoring.options import preset_link_params  # noqa: E402
from relatedpages.scoring.parameters import preset_params  # noqa: E402
from relatedpages.scoring.reference import reference_related  # noqa: E402

K = 15

#: (row, preset overrides, module constants of the score set for the row)
ROWS: tuple[tuple[str, dict[str, Any], dict[str, float]], ...] = (
    ("the score (defaults)", {}, {}),
    ("without popularity", {}, {"POPULARITY_WEIGHT": 0.0}),
    ("without the mean DS_d", {}, {"SITE_EVIDENCE_CAP": 0.0}),
    ("without in_p2", {}, {"IN_P_WEIGHT": 0.0}),
    ("without the descriptions", {}, {"DESCRIPTION_WEIGHT": 0.0}),
    ("every citing site worth one", {}, {"SITE_WORTH_EXPONENT": 0.0}),
    ("with Eq. 5's proximity", {"proximity": "paper"}, {}),
    ("sites, ties by popularity (before)", {"score": "sites", "proximity": "paper"}, {}),
)


@contextmanager
def constants(values: Mapping[str, float]) -> Iterator[None]:
    """The score's module constants set for one row (and the derived micro-unit cap)."""
    names = {**values}
    if "SITE_EVIDENCE_CAP" in values:
        names["SITE_EVIDENCE_CAP_MICRO"] = round(values["SITE_EVIDENCE_CAP"] * sim.SCALE)
    saved = {name: getattr(sim, name) for name in names}
    for name, value in names.items():
        setattr(sim, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(sim, name, value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    data = args.data or shared_data_dir()
    if not (data / "awesomehub").is_dir():
        print(f"no hub lists in {data} (expected {data / 'awesomehub'})", file=sys.stderr)
        return 1
    loaded = load_split(data, seed=args.seed)
    truth = GroundTruth.from_lists(loaded.held_out)
    tests = select_test_pages(truth, loaded.index_records, MIN_CITING_DEFAULT)
    fallback = reference_cocitation(loaded.index_records, CocitationParams(m=K, min_degree=1))
    print(f"seed {args.seed}: {len(tests)} test pages")
    print("| score | P@15 section | P@15 list | R@1 | R@3 | R@5 | R@15 | tied |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, overrides, values in ROWS:
        started = time.monotonic()
        with constants(values):
            product = reference_related(loaded.index_records, preset_link_params("default"),
                                        preset_params("default", m=K, **overrides),
                                        AnchorWords())
        related = with_fallback(product, fallback, K)
        scores = score_related(related, tests, truth, K)
        print(f"| {name} | {scores.p_section:.2%} | {scores.p_list:.2%} | {scores.rscore[0]:.3f} "
              f"| {scores.rscore[2]:.3f} | {scores.rscore[4]:.3f} | {scores.rscore[14]:.3f} "
              f"| {scores.tied_share:.1%} |", flush=True)
        print(f"  ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
