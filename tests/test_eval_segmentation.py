"""Quality gate: segmentation E/I-precision on the public human-annotated pages.

The pages are split by site (seed 1): T1 is chosen on the development half, Table 1 is
reported on the test half (README, "Quality").  Floors are pinned a little under the
measured figures so that a later change cannot silently lower them.  Paper, after
adjusting: E 29.7 %, I 93.3 %.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from relatedpages.evaluation.segmentation import (
    annotated_pages,
    evaluate,
    manual_blocks,
    site_of_page,
    split_by_site,
    sweep_t1,
)
from segmenter.adjust import T1_DEFAULT
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def kreuzer(shared_data):
    return shared_data("segmentation/kreuzer-random")


@pytest.fixture(scope="module")
def evaluation(kreuzer):
    """Table 1 on the test half of the sites (the README's table)."""
    return evaluate(kreuzer, split="test")


@pytest.fixture(scope="module")
def development(kreuzer):
    return evaluate(kreuzer, split="dev")


def test_every_annotated_page_is_found_with_its_url(kreuzer):
    pages = annotated_pages(kreuzer)
    assert len(pages) == 72
    assert all(p.url.startswith("http") for p in pages)
    nested = {p.name: p.url for p in pages}
    assert nested["www.joebar.ch/www.joebar.ch/bin/view"] == "http://www.joebar.ch/bin/view/"


def test_manual_blocks_group_links_by_deepest_annotated_ancestor(kreuzer):
    page = next(p for p in annotated_pages(kreuzer) if p.name.startswith("16kg.net"))
    manual = manual_blocks(page)
    assert manual.blocks and all(len(block) >= 2 for block in manual.blocks)
    assert all(block <= manual.annotated for block in manual.blocks)


def test_the_split_puts_every_site_on_one_side(kreuzer):
    pages = annotated_pages(kreuzer)
    dev, test = split_by_site(pages)
    assert len(dev) + len(test) == 72 and len(dev) >= 30 and len(test) >= 30
    assert not {site_of_page(p) for p in dev} & {site_of_page(p) for p in test}
    assert split_by_site(pages) == (dev, test)  # seeded
    assert split_by_site(pages, 2) != (dev, test)


def test_t1_is_the_development_split_choice(kreuzer):
    """The rule, fixed before the sweep: the T1 of the highest judged E-precision on the
    development half, then the highest judged I-precision, then the smallest T1.  Measured
    (rule 0 joining a list's items, rules 1 and 5 nested partitions only): 61.1 % (I 95.1 %)
    from 0.2 to 0.4, 60.9 % to 0.7, 60.5 % and 59.6 % above."""
    values = (0.2, 0.3, 0.7, 0.75, 0.9)
    rows = [(t1, e.after.e_precision, e.after.i_precision) for t1, e in sweep_t1(kreuzer, values)]
    best = max(rows, key=lambda row: (row[1], row[2], -row[0]))
    assert best[0] == T1_DEFAULT == 0.2


def test_quality_floors_after_adjusting_on_the_test_split(evaluation):
    after, strict = evaluation.after, evaluation.after_strict
    # measured, test half, T1 = 0.2, rule 0 and nested merges: judged E 38.8 %, I 95.4 %;
    # strict E 32.4 %, I 84.0 %; nearest-container reference: judged 33.6 % / 95.2 %, strict
    # 24.7 % / 74.7 % (nested merges without rule 0: judged 41.8 % / 99.0 %)
    assert after.i_precision >= 0.95  # the paper: I 93.3 %; issues 11 and 42's goal: 0.95
    assert after.e_precision >= 0.38  # the paper: E 29.7 %
    assert strict.e_precision >= 0.32
    assert strict.i_precision >= 0.83
    assert strict.blocks >= 300
    # issues 11 and 42's goal: judged E-precision at least 5 points above the reference
    assert after.e_precision >= evaluation.reference.e_precision + 0.05
    # ahead of the nearest-container reference on both measures of both views
    assert after.e_precision > evaluation.reference.e_precision
    assert after.i_precision > evaluation.reference.i_precision
    assert strict.e_precision > evaluation.reference_strict.e_precision
    assert strict.i_precision > evaluation.reference_strict.i_precision


def test_quality_floors_on_the_development_split(development):
    # measured, T1 = 0.2, rule 0 and nested merges: judged E 60.4 %, I 94.5 %; strict E 50.2 %,
    # I 80.5 % (nested merges without rule 0: 55.1 % / 98.7 %, strict 44.3 % / 82.4 %).  A long
    # table's badge column set aside cost 0.7 / 0.6 judged points, all on environmentalart.net,
    # whose table of artists (name, thumbnail) the annotator boxed cell by cell
    assert development.after.e_precision >= 0.60 and development.after.i_precision >= 0.94
    assert development.after_strict.e_precision >= 0.49


def test_adjusting_merges_blocks_and_raises_e_precision(evaluation):
    assert evaluation.after_strict.blocks < evaluation.before_strict.blocks
    assert evaluation.after.e_precision > evaluation.before.e_precision
    assert evaluation.after_strict.e_precision > evaluation.before_strict.e_precision
    # before adjusting, sections never straddle an annotated boundary
    assert evaluation.before.i_precision >= 0.98


def test_cli_prints_table_and_writes_the_plot(kreuzer, tmp_path):
    plot = tmp_path / "sizes.png"
    done = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "eval", "segmentation", str(kreuzer),
         "--plot", str(plot), "--json", "--split", "all"],
        cwd=REPO, capture_output=True, text=True, timeout=guard(300),
    )
    assert done.returncode == 0, done.stderr
    assert "After adjusting (judged)" in done.stdout and "E-precision (%)" in done.stdout
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["pages"] == 72 and figures["split"] == "all"
    assert figures["after_adjusting"]["i_precision"] >= 0.90
    assert "Nearest container (strict)" in done.stdout and "Per page, judged view" in done.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000


def test_cli_rejects_a_folder_without_annotations(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "eval", "segmentation", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=guard(60),
    )
    assert done.returncode == 2
    assert "not an annotated data set" in done.stderr


def test_the_default_table_is_the_test_split_and_the_sweep_the_development_split(kreuzer):
    def run(*flags: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "relatedpages.cli", "eval", "segmentation", str(kreuzer),
             "--worst", "0", "--plot", "/dev/null", *flags],
            cwd=REPO, capture_output=True, text=True, timeout=guard(300))
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert run().startswith("pages: test (seed 1)")
    assert run("--sweep-t1", "0.9").startswith("pages: dev (seed 1)")
