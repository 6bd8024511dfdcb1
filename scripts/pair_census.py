#!/usr/bin/env python
"""Which pages make the chain's work: related pairs and distinct pairs by kind of page.

    python scripts/pair_census.py --pages 31250,62500 [--seed 1] [chain options]

Per size, generates a web (``relatedpages.corpus.generate``, in a scratch folder removed
afterwards) and counts, page by page as ``jobs.segment`` and Mapper1 read it, the related
pairs each kind of page emits (content, hub, link farm: the web's topic sidecar) and the
distinct pairs among them, which Reducer1 aggregates and Reducer2 ranks
(``relatedpages.bench.pair_census``).  The chain's options (``--large-block``,
``--window``, …) change what is counted as they would change the chain; without them,
its defaults.  Prints a table per size and the growth of each count between sizes.
"""
from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.bench.pair_census import (  # noqa: E402
    CONTENT, HUB, SPAM, Census, format_census, pair_census)
from relatedpages.corpus.generate import (  # noqa: E402
    SEED_DEFAULT, generate_crawl, parse_web_sizes, read_topics)
from relatedpages.scoring.options import add_chain_options, chain_params_from  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="31250,62500",
                        help="generated web sizes, comma-separated. Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT, help="Default: %(default)s")
    add_chain_options(parser.add_argument)
    args = parser.parse_args(argv)
    try:
        sizes = parse_web_sizes(args.pages)
    except ValueError as error:
        parser.error(f"--pages: {error}")
    try:
        link_params, sim_params = chain_params_from(args)
    except ValueError as error:
        parser.error(str(error))
    censuses: list[Census] = []
    scratch = Path(tempfile.mkdtemp(prefix="relatedpages-census-"))
    try:
        for pages in sizes:
            crawl = generate_crawl(scratch / f"web-{pages}.warc.gz", pages=pages, seed=args.seed)
            census = pair_census(crawl.path, read_topics(crawl.topics_path), link_params, sim_params)
            censuses.append(census)
            print(format_census(census, f"{pages:,} pages (seed {args.seed})"), end="\n\n", flush=True)
            crawl.path.unlink()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for (small, first), (large, second) in zip(zip(sizes, censuses), zip(sizes[1:], censuses[1:])):
        if large == small:
            continue
        print(f"slopes (log-log), {small:,} → {large:,} pages:")
        for kind in (CONTENT, HUB, SPAM):
            a, b = first.by_kind[kind], second.by_kind[kind]
            print(f"  {kind:<8} related pairs {_slope(a.pairs, b.pairs, small, large)}, "
                  f"distinct pairs {_slope(len(a.distinct), len(b.distinct), small, large)}")
        print(f"  {'all':<8} related pairs {_slope(first.pairs, second.pairs, small, large)}, "
              f"distinct pairs {_slope(first.distinct_all, second.distinct_all, small, large)}")
    return 0


def _slope(a: int, b: int, small: int, large: int) -> str:
    if a <= 0 or b <= 0:
        return "n/a"
    return f"{math.log(b / a) / math.log(large / small):.2f}"


if __name__ == "__main__":
    sys.exit(main())
