"""relatedpages eval topics: related pages graded by topic on generated webs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from relatedpages import cli
from relatedpages.evaluation.naive import NAIVE
from relatedpages.evaluation.related import BLOCK, COCITATION
from relatedpages.evaluation.topics import evaluate_topics, format_topics, score_topics
from relatedpages.corpus.generate import generate_crawl


def test_score_topics_by_hand() -> None:
    topics = {"a": "x", "b": "x", "c": "y", "d": "y"}
    scores = score_topics({"a": [["c", 3], ["b", 2]], "c": [["d", 1]]}, ["a", "c", "d"], topics, k=2)
    assert scores.covered == 2 and scores.p1 == pytest.approx(1 / 3)
    assert scores.p15 == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)
    assert scores.p15_by_topic == {"x": 0.5, "y": 0.25}


@pytest.fixture(scope="module")
def small_web(tmp_path_factory) -> Path:
    crawl = tmp_path_factory.mktemp("topics") / "web.warc.gz"
    generate_crawl(crawl, pages=3000, seed=11)
    return crawl


def test_defaults_beat_the_floor_on_a_web_no_choice_was_made_on(small_web: Path) -> None:
    evaluation = evaluate_topics(small_web)
    scores = evaluation.scores
    block, floor = scores[BLOCK], scores[f"{COCITATION} (min-degree 2)"]
    assert evaluation.test_pages > 100
    assert block.coverage >= 0.95
    # the floor of issue 10: traditional co-citation at its defaults, on every measure
    assert block.p1 > floor.p1 and block.p5 > floor.p5 and block.p15 > floor.p15
    assert NAIVE in scores and len(block.p15_by_topic) >= 10
    assert "P@15 per topic" in format_topics(evaluation)
    # every other row, the literature's methods included (issue 10: dh-cocitation's URL
    # chopping led at P@5 and P@15 before the site fallback)
    for name, other in scores.items():
        if name != BLOCK:
            assert block.p1 > other.p1 and block.p5 > other.p5 and block.p15 > other.p15, name


def test_site_fallback_answers_files_and_landing_pages_from_their_site(small_web: Path) -> None:
    """The pages the site fallback answers on a generated web are its files and its ad
    landing pages, each from a page of its own site, and they are right by topic."""
    from filters.anchors import AnchorWords
    from filters.site import site_of
    from relatedpages.evaluation.topics import load_topic_web
    from relatedpages.scoring.options import preset_link_params
    from relatedpages.scoring.parameters import preset_params
    from relatedpages.scoring.reference import reference_related

    web = load_topic_web(small_web)
    related = reference_related(web.records, preset_link_params("default"),
                                preset_params("default"), AnchorWords())
    answered = [url for url in web.tests if related.get(url) and related[url][0][3:4] == ["site"]]
    assert len(answered) > 50
    assert {"/docs/", "/offers/"} <= {"/" + url.split("/")[3] + "/" for url in answered}
    for url in answered:
        via = related[url][0][4]
        assert site_of(via) == site_of(url) and via != url
        assert all(entry[3:] == ["site", via] for entry in related[url])
    hits = [web.topic_of.get(entry[0]) == web.topic_of[url]
            for url in answered for entry in related[url][:15]]
    assert sum(hits) / len(hits) > 0.8


def test_cli_prints_and_plots(small_web: Path, tmp_path: Path, capsys) -> None:
    plot = tmp_path / "topics.png"
    assert cli.main(["eval", "topics", "--crawl", str(small_web), "--plot", str(plot),
                     "--json"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures[0]["scores"][BLOCK]["coverage"] >= 0.95
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert cli.main(["eval", "topics", "--crawl", str(tmp_path / "none.warc.gz")]) == cli.EXIT_USAGE
    # the segmenter's options are the oracles' (the chain's segment job takes them in build)
    assert cli.main(["eval", "topics", "--crawl", str(small_web), "--engine", "chain",
                     "--rules", "nested"]) == cli.EXIT_USAGE
    assert "apply to --engine oracle" in capsys.readouterr().err


def test_chain_engine_grades_what_the_oracles_grade(tmp_path: Path, capsys) -> None:
    """--engine chain runs the real chains (relatedpages build, then the co-citation job)
    and grades their outputs: the same figures as the in-memory oracles."""
    crawl = tmp_path / "web.warc.gz"
    generate_crawl(crawl, pages=800, seed=13)
    assert cli.main(["eval", "topics", "--crawl", str(crawl), "--engine", "chain",
                     "--runner", "inline", "--plot", str(tmp_path / "t.png"),
                     "--json"]) == cli.EXIT_OK
    (chain,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    oracle = evaluate_topics(crawl, baselines=())
    assert chain["test_pages"] == oracle.test_pages > 20
    for name in (BLOCK, f"{COCITATION} (min-degree 2)"):
        got, want = chain["scores"][name], oracle.scores[name]
        assert (got["coverage"], got["p1"], got["p5"], got["p15"]) == pytest.approx(
            (want.coverage, want.p1, want.p5, want.p15)), name
    assert set(chain["scores"]) == {BLOCK, f"{COCITATION} (min-degree 2)"}
