"""Other scores measured on the default preset's own candidates, on the development lists.

    python scripts/score_variants.py [--sets dev,draw1,draw2] [--variants NAME,...] [DATA]

Runs the in-memory oracle once per set of lists (``dev``: the development split, seed 1;
``drawN``: a development draw, the test splits' index; ``share0.5`` / ``share0.75``: the
development split with part of its index) and keeps what the default score reads about each
candidate of every test page; then re-scores the candidates with each variant
(``relatedpages.evaluation.score_variants.VARIANTS``) and prints the measures as a Markdown
table, one figure per set.  The first row is the defaults, checked to give the oracle's
very lists, so each row is ``relatedpages eval related``'s product row with one change; the
last two rows order the same candidates by a model learned on the other half of the lists
(``relatedpages.evaluation.learned``).
Never a test split: these are the measurements of docs/reference/parameters.md, "Measured at
the current score and not kept".  About 2.5 minutes per set.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402
from relatedpages.evaluation import score_variants as sv  # noqa: E402


def _names(text: str, allowed: tuple[str, ...] | list[str], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown or not names:
        raise SystemExit(f"score_variants.py: error: unknown {what} {', '.join(unknown) or '(none)'}"
                         f"; choose from: {', '.join(allowed)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=None,
                        help="the shared data folder (default: ../shared/data)")
    parser.add_argument("--sets", default=",".join(sv.SETS_DEFAULT),
                        help=f"comma-separated sets of lists ({', '.join(sv.SETS)})")
    parser.add_argument("--variants", default=None,
                        help="comma-separated variant names (default: every one)")
    parser.add_argument("--max-lists", type=int, default=None,
                        help="use only this many hub lists (dev and share sets; for a quick run)")
    options = parser.parse_args(argv)
    sets = _names(options.sets, sv.SETS, "set")
    variants = (_names(options.variants, list(sv.VARIANTS), "variant") if options.variants
                else list(sv.VARIANTS))
    if "the score (defaults)" not in variants:
        variants.insert(0, "the score (defaults)")
    if options.max_lists is not None and any(name.startswith("draw") for name in sets):
        raise SystemExit("score_variants.py: error: --max-lists does not apply to a draw")
    data = options.data or shared_data_dir()
    if not (Path(data) / "awesomehub").is_dir():
        raise SystemExit(f"score_variants.py: error: no shared data folder at {data}")
    rows: dict[str, dict[str, sv.Scores]] = {variant: {} for variant in variants}
    for name in sets:
        started = time.monotonic()
        capture = sv.capture(Path(data), name, options.max_lists)
        sv.check_faithful(capture)
        for variant in variants:
            rows[variant][name] = sv.measure(capture, sv.VARIANTS[variant])
        print(f"{name}: {len(capture.tests):,} test pages, {time.monotonic() - started:.0f} s "
              "(the defaults reproduce the oracle's lists)", file=sys.stderr, flush=True)
    print(sv.table(rows, sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
