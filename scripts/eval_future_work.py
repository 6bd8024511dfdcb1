#!/usr/bin/env python
"""The paper's future work against the default preset, on both ground truths.

    python scripts/eval_future_work.py [--data ../shared/data] [--seed 1]
                                       [--pages 10000] [--web-seed 7]

Rows (:mod:`relatedpages.evaluation.future_work`; each is the default preset with its
co-citation fallback, plus one change):

* ``default preset``: the product (``relatedpages build`` at its defaults);
* ``+ mirror filter``: a block repeated on pages of several sites cites from one of them;
* ``+ PageRank weights``: each citing site weighs 1 + ln(1 + n · PR(site)).

Hub lists: the development split (``--seed 1``; tune there, report on test splits),
graded as ``relatedpages eval related`` does (P@15 same section / same list and R = 1,
3, 5, missing results = 0).  Generated web: ``--pages`` pages of ``--web-seed``
(``relatedpages generate``, in a temporary folder), graded by topic as ``relatedpages eval
topics`` does (P@1, P@5, P@15).  Takes about four minutes at the defaults.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402

RelatedDict = Mapping[str, Sequence[Sequence[Any]]]


def variants(records: Sequence[Mapping[str, Any]], k: int) -> dict[str, RelatedDict]:
    """The three rows on one corpus of segment records."""
    import dataclasses

    from filters.anchors import AnchorWords
    from relatedpages.evaluation.future_work import (
        mirror_owners,
        pagerank_weighted,
        site_pagerank,
        without_mirrors,
    )
    from relatedpages.evaluation.related import with_fallback
    from relatedpages.scoring.cocitation import CocitationParams, reference_cocitation
    from relatedpages.scoring.options import preset_link_params
    from relatedpages.scoring.parameters import preset_params
    from relatedpages.scoring.reference import reference_related

    words, link = AnchorWords(), preset_link_params("default")
    params = preset_params("default", m=k)
    fallback = reference_cocitation(records, CocitationParams(m=k, min_degree=1))
    product = reference_related(records, link, params, words)
    owners = mirror_owners(records)
    print(f"  mirrored blocks (fingerprints held by pages of several sites): {len(owners)}",
          flush=True)
    mirrored = reference_related(list(without_mirrors(records, owners)), link, params, words)
    unbounded = dataclasses.replace(params, m=10**9, evidence=10**9)
    weighted = pagerank_weighted(reference_related(records, link, unbounded, words),
                                 site_pagerank(records), k)
    return {"default preset": with_fallback(product, fallback, k),
            "+ mirror filter": with_fallback(mirrored, fallback, k),
            "+ PageRank weights": with_fallback(weighted, fallback, k)}


def hub_rows(data: Path, seed: int, k: int) -> list[tuple[str, list[float]]]:
    from relatedpages.evaluation.measures import score_related
    from relatedpages.evaluation.related import (
        MIN_CITING_DEFAULT,
        GroundTruth,
        load_split,
        select_test_pages,
    )

    loaded = load_split(data, seed=seed)
    records = loaded.index_records
    truth = GroundTruth.from_lists(loaded.held_out)
    tests = select_test_pages(truth, records, MIN_CITING_DEFAULT)
    print(f"hub lists, seed {seed}: {len(records)} index pages, {len(tests)} test pages",
          flush=True)
    rows = []
    for name, related in variants(records, k).items():
        s = score_related(related, tests, truth, k)
        rows.append((name, [s.p_section_all, s.p_list_all, s.rscore[0], s.rscore[2],
                            s.rscore[4]]))
    return rows


def web_rows(pages: int, seed: int, k: int) -> list[tuple[str, list[float]]]:
    from relatedpages.evaluation.topics import load_topic_web, score_topics
    from relatedpages.corpus.generate import generate_crawl

    with tempfile.TemporaryDirectory(prefix="relatedpages-future-") as folder:
        crawl = Path(folder) / "web.warc.gz"
        generate_crawl(crawl, pages=pages, seed=seed)
        web = load_topic_web(crawl)
    print(f"generated web, {pages} pages, seed {seed}: {len(web.tests)} test pages", flush=True)
    rows = []
    for name, related in variants(web.records, k).items():
        s = score_topics(related, web.tests, web.topic_of, k)
        rows.append((name, [s.p1, s.p5, s.p15]))
    return rows


def _table(title: str, heads: Sequence[str], rows: Sequence[tuple[str, list[float]]],
           fmt: Sequence[Callable[[float], str]]) -> None:
    print(f"\n| {title} | " + " | ".join(heads) + " |")
    print("|---|" + "---:|" * len(heads))
    for name, values in rows:
        print(f"| {name} | " + " | ".join(f(v) for f, v in zip(fmt, values)) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(shared_data_dir()))
    parser.add_argument("--seed", type=int, default=1, help="hub split (1 = development)")
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--web-seed", type=int, default=7)
    parser.add_argument("--k", type=int, default=15)
    args = parser.parse_args(argv)
    started = time.monotonic()
    percent = lambda v: f"{100 * v:.2f} %"  # noqa: E731
    score = lambda v: f"{v:.3f}"  # noqa: E731
    hub = hub_rows(Path(args.data), args.seed, args.k)
    web = web_rows(args.pages, args.web_seed, args.k)
    _table(f"hub lists, seed {args.seed}", ["P@15 section", "P@15 list", "R = 1", "R = 3", "R = 5"],
           hub, [percent, percent, score, score, score])
    _table(f"generated web, {args.pages} pages, seed {args.web_seed}", ["P@1", "P@5", "P@15"],
           web, [percent] * 3)
    print(f"\n{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
