"""The pair census (relatedpages/bench/pair_census.py, scripts/pair_census.py) counts
what the chain itself emits: its total equals the chain's own ``related_pairs`` counter
on the same generated web, and its kinds are the web's."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from filters.links import LinkFilterParams
from relatedpages.bench.pair_census import CONTENT, HUB, SPAM, format_census, kind_of, pair_census
from relatedpages.corpus.generate import generate_crawl, read_topics
from relatedpages.scoring.options import add_chain_options, chain_params_from
from relatedpages.scoring.parameters import SimilarityParams
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def _defaults() -> tuple[LinkFilterParams, SimilarityParams]:
    parser = argparse.ArgumentParser()
    add_chain_options(parser.add_argument)
    return chain_params_from(parser.parse_args([]))


def test_the_census_counts_the_pairs_the_chain_counts(tmp_path: Path) -> None:
    crawl = generate_crawl(tmp_path / "web.warc.gz", pages=400, seed=3)
    topics = read_topics(crawl.topics_path)
    link_params, sim_params = _defaults()
    census = pair_census(crawl.path, topics, link_params, sim_params)
    built = subprocess.run([sys.executable, "-m", "relatedpages.cli", "build", str(crawl.path),
                            "--runner", "inline", "--db", str(tmp_path / "db")],
                           cwd=REPO, capture_output=True, text=True, timeout=guard(600))
    assert built.returncode == 0, built.stderr[-2000:]
    counted = next(int(line.split()[2]) for line in built.stdout.splitlines()
                   if line.strip().startswith("related pairs"))
    assert census.pages == 400 and census.pairs == counted > 0
    farm = sum(1 for topic in topics.values() if topic == SPAM)
    assert census.by_kind[SPAM].pages >= farm > 0 and census.by_kind[HUB].pages > 0
    spam = census.by_kind[SPAM]
    assert len(spam.distinct) <= spam.pairs and census.distinct_all <= census.pairs
    table = format_census(census, "400 pages")
    assert table.splitlines()[-1].startswith(f"| all | 400 | {counted:,} |")


def test_kinds_come_from_the_longest_listed_domain() -> None:
    topics = {"farm.example": "spam", "portal.example.org": "hub", "example.org": "travel"}
    assert kind_of("http://www.farm.example/a", topics) == SPAM
    assert kind_of("https://portal.example.org:8080/", topics) == HUB
    assert kind_of("https://blog.example.org/x", topics) == CONTENT
    assert kind_of("https://unlisted.example/", topics) == CONTENT


def test_the_script_refuses_bad_sizes_in_one_line() -> None:
    done = subprocess.run([sys.executable, "scripts/pair_census.py", "--pages", "many"], cwd=REPO,
                          capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 2 and "--pages" in done.stderr and "Traceback" not in done.stderr
