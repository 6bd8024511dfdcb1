"""Other scores on the default preset's own candidates (relatedpages/evaluation/score_variants.py,
scripts/score_variants.py): the capture reproduces the oracle's lists or says it does not, a
variant changes the lists it should, and the command refuses what it cannot measure."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from relatedpages.evaluation import score_variants as sv
from relatedpages.evaluation.measures import score_related
from relatedpages.evaluation.related import with_fallback
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
MAX_LISTS = 80


@pytest.fixture(scope="module")
def capture(shared_data) -> sv.Capture:
    return sv.capture(shared_data("awesomehub").parent, "dev", max_lists=MAX_LISTS)


def test_the_defaults_give_the_oracles_lists_and_its_measures(capture: sv.Capture) -> None:
    assert capture.tests and capture.candidates
    sv.check_faithful(capture)
    measured = sv.measure(capture, sv.VARIANTS["the score (defaults)"])
    command = score_related(with_fallback(capture.product, capture.cocitation, sv.K),
                            capture.tests, capture.truth, sv.K)
    assert measured == command


def test_a_capture_that_lost_a_candidate_is_refused(capture: sv.Capture) -> None:
    page = next(page for page in capture.tests if capture.product.get(page))
    first = capture.product[page][0][0]
    kept = capture.candidates[page]
    capture.candidates[page] = [c for c in kept if c.url != first]
    try:
        with pytest.raises(RuntimeError, match="do not give the oracle's list"):
            sv.check_faithful(capture)
    finally:
        capture.candidates[page] = kept


def test_each_variant_reads_what_it_names(capture: sv.Capture) -> None:
    defaults = sv.rank(capture, sv.VARIANTS["the score (defaults)"])
    changed = {name for name, score in sv.VARIANTS.items() if sv.rank(capture, score) != defaults}
    # the words of the pages and of their headings and the units' sizes are there to read,
    # and move the lists
    assert {"the page's words, cosine x 2", "the headings' words, cosine x 1",
            "the smallest co-citing unit, -0.1 ln links", "the mean DS_d weighed 2",
            "learned from the chain's evidence",
            "learned from it, the words, headings and units"} <= changed
    # a learned variant reorders the default's kept candidates, each page's lowest at T
    fitted = capture.fitted["chain"]
    assert {page for page, _url in fitted} <= set(capture.tests)
    assert min(fitted.values()) == capture.params.t
    page = next(page for page in capture.tests if capture.units.get(page))
    assert all(page in unit for unit in capture.units[page])
    assert capture.vectors("words") and capture.vectors("described")
    assert capture.vectors("headings").get(page)  # a test page is listed under headings
    # a page's vector is unit length
    candidate = capture.candidates[page][0]
    assert sv.cosine(capture.vectors("words")[candidate.url],
                     capture.vectors("words")[candidate.url]) == pytest.approx(1.0)


def test_the_table_has_a_figure_per_set() -> None:
    scores = score_related({"a": [["b", 2.0, []]]}, ["a"], sv.GroundTruth({}, {}), sv.K)
    text = sv.table({"the score (defaults)": {"dev": scores, "draw1": scores}}, ["dev", "draw1"])
    assert "| score (dev / draw1) |" in text
    assert "| the score (defaults) | 0.000 / 0.000 |" in text


@pytest.mark.parametrize("args, message", [
    (["--sets", "seed2"], "unknown set seed2"),
    (["--variants", "nope"], "unknown variant nope"),
    (["--sets", "draw1", "--max-lists", "20"], "--max-lists does not apply to a draw"),
])
def test_the_command_refuses_what_it_cannot_measure(args: list[str], message: str) -> None:
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "score_variants.py"), *args],
                         capture_output=True, text=True, timeout=guard(60), cwd=REPO)
    assert run.returncode != 0
    assert message in run.stderr and "Traceback" not in run.stderr
