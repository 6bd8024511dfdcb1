"""The chain on Spark (mrjob's ``-r spark``, pyspark's local master, issue 14 item 5): the
inline runner's output and counters, and the runner's scratch folder made and removed
(``jobs.base.spark_runner_class``)."""
from __future__ import annotations

import importlib.util
import json
import tempfile
from pathlib import Path

import pytest

from jobrun import run_job, write_segments
from jobs.related import MRRelatedPages
from prerequisites import missing_prerequisite
from test_job_related import hub_corpus, page

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _pyspark() -> None:
    if importlib.util.find_spec("pyspark") is None:
        missing_prerequisite("pyspark is not installed (pip install -e '.[test]')",
                             "the Spark runner's tests")


def test_spark_runner_gives_the_inline_output_and_counters(tmp_path):
    records = hub_corpus() + [page("http://x.org/", "x.org", [("http://search-a.com/", "A search"),
                                                             ("http://news-b.com/", "B news")])]
    segments = write_segments(tmp_path / "seg.jsonl", records)
    scratch = tmp_path / "scratch"
    inline, inline_counters = run_job(MRRelatedPages, [segments])
    spark, spark_counters = run_job(
        MRRelatedPages, ["--spark-master", "local[2]", "--spark-tmp-dir", scratch,
                         "--jobconf", "mapreduce.job.reduces=2", segments], "spark")
    assert inline and json.dumps(spark, sort_keys=True) == json.dumps(inline, sort_keys=True)
    assert spark_counters == inline_counters
    # mrjob 0.7.4 names <spark-tmp-dir>/<job key> and never makes it (the harness then fails
    # to write the counters there); the runner made it and removed it again
    assert scratch.is_dir() and list(scratch.iterdir()) == []


def test_spark_runner_counts_bad_records_as_the_inline_runner_does(tmp_path):
    segments = write_segments(tmp_path / "seg.jsonl", hub_corpus())
    with segments.open("a") as handle:
        handle.write('"http://bad.org/"\t{"url": "http://bad.org/", "blocks": 7}\n')
    inline, inline_counters = run_job(MRRelatedPages, [segments])
    leftovers = set(Path(tempfile.gettempdir()).glob("related.*-spark"))
    spark, spark_counters = run_job(MRRelatedPages, ["--spark-master", "local[2]", segments],
                                    "spark")
    assert set(Path(tempfile.gettempdir()).glob("related.*-spark")) == leftovers  # none left
    assert spark == inline
    assert spark_counters["related"]["bad_segment_record"] == 1
    assert spark_counters == inline_counters
