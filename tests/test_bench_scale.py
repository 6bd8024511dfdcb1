"""Issue 14: Hadoop's job history read into figures, the scale summaries (slopes, medians,
memory ratio, the tables and figures), and scripts/bench_scale.py run end to end on the
MiniCluster at a tiny size (timings are never asserted)."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from relatedpages.bench.job_history import (
    HistoryError,
    JobFigures,
    TaskFigures,
    read_job_history,
    stage_of,
)
from relatedpages.bench.scale import (
    CLIENT,
    TOTAL,
    BenchShape,
    PipelineRun,
    format_compression_table,
    format_fig8_table,
    format_fig9_table,
    format_hot_keys_table,
    format_per_page_table,
    loglog_slope,
    plot_fig8,
    plot_fig9,
    printed_count,
    printed_stage_seconds,
    scale_report,
    stage_key,
    summarise,
    verdicts,
)
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCRIPT = REPO / "scripts" / "bench_scale.py"


# -- job history ---------------------------------------------------------------------------


def test_a_real_job_history_reads_into_figures():
    """A JSON history written by the MiniCluster's application master (related.py step 1,
    300 generated pages, 2 map and 2 reduce tasks)."""
    job = read_job_history((FIXTURES / "related-step1.jhist").read_text(),
                           (FIXTURES / "related-step1_conf.xml").read_bytes())
    assert job.stage == "related 1"
    assert job.job_id.startswith("job_")
    assert [t.kind for t in job.tasks].count("MAP") == 2
    assert [t.kind for t in job.tasks].count("REDUCE") == 2
    assert 0 < job.map_seconds() < job.seconds
    assert 0 < job.reduce_seconds() < job.seconds
    assert job.cpu_seconds > 0
    # the reducers fetch what the maps wrote (uncompressed here: about the map output bytes)
    assert job.shuffle_bytes >= job.map_output_bytes > 0
    assert 100 < job.peak_mb("MAP") < 2048 and 100 < job.peak_mb("REDUCE") < 2048
    records = [t.counters["REDUCE_INPUT_RECORDS"] for t in job.tasks if t.kind == "REDUCE"]
    assert job.reduce_skew() == pytest.approx(max(records) / (sum(records) / 2))


def test_a_tasks_peak_memory_is_hadoops_peak_not_its_last_sample():
    """PHYSICAL_MEMORY_BYTES is the task's last memory sample ("snapshot"); the peak is
    MAP_/REDUCE_PHYSICAL_MEMORY_BYTES_MAX, read when the history has it."""
    mb = 2**20
    tasks = (TaskFigures("MAP", 0, 1, {"PHYSICAL_MEMORY_BYTES": 352 * mb,
                                       "MAP_PHYSICAL_MEMORY_BYTES_MAX": 677 * mb}),
             TaskFigures("MAP", 0, 1, {"PHYSICAL_MEMORY_BYTES": 340 * mb,
                                       "MAP_PHYSICAL_MEMORY_BYTES_MAX": 580 * mb}),
             TaskFigures("REDUCE", 1, 2, {"PHYSICAL_MEMORY_BYTES": 203 * mb}))  # an older history
    figures = JobFigures("job_1_0001", "related 1", 0, 2, {}, tasks)
    assert figures.peak_mb("MAP") == 677
    assert figures.peak_mb("REDUCE") == 203


def test_a_binary_history_is_refused_with_the_setting_to_use():
    with pytest.raises(HistoryError, match="jhist.format=json"):
        read_job_history("Avro-Binary\n{}\n")


def test_a_history_without_its_finish_is_refused():
    text = (FIXTURES / "related-step1.jhist").read_text()
    unfinished = "\n".join(line for line in text.splitlines() if '"JOB_FINISHED"' not in line)
    with pytest.raises(HistoryError, match="no submit or finish event"):
        read_job_history(unfinished)


def test_the_stage_is_the_job_script_and_its_step():
    conf = ("<configuration><property><name>stream.map.streamprocessor</name><value>"
            "%2Fbin%2Fsh+-ex+setup-wrapper.sh+python3+cocitation.py+--step-num%3D1+--mapper"
            "</value></property></configuration>")
    assert stage_of(conf) == "cocitation 2"
    assert stage_of("<configuration/>") == ""
    assert stage_of("not xml") == ""


# -- summaries -----------------------------------------------------------------------------


def job(stage: str, seconds: float, *, cpu_ms: int = 1000, reduce_records=(10, 10),
        peak_mb: int = 200, python_cpu_ms: int = 0) -> JobFigures:
    tasks = [TaskFigures("MAP", 0, 1000, {"PHYSICAL_MEMORY_BYTES": peak_mb * 2**20},
                         python_cpu_ms=python_cpu_ms)]
    tasks += [TaskFigures("REDUCE", 1000, 2000, {"REDUCE_INPUT_RECORDS": r,
                                                  "PHYSICAL_MEMORY_BYTES": peak_mb * 2**20},
                          python_peak_kb=50 * 1024, python_cpu_ms=python_cpu_ms)
              for r in reduce_records]
    return JobFigures("job_1_0001", stage, 0, int(seconds * 1000),
                      {"CPU_MILLISECONDS": cpu_ms, "REDUCE_SHUFFLE_BYTES": 2048,
                       "MAP_OUTPUT_BYTES": 1024}, tuple(tasks))


def run(pages: int, scale: float, peak_mb: int = 200) -> PipelineRun:
    jobs = (job("segment 1", 10 * scale, peak_mb=peak_mb),
            job("related 1", 20 * scale, reduce_records=(30, 10), peak_mb=peak_mb),
            job("cocitation 1", 5 * scale, peak_mb=peak_mb))
    return PipelineRun(pages, 40 * scale, 1.0, jobs, records=pages)


def test_stage_seconds_add_up_to_the_wall_time():
    seconds = run(100, 1.0).stage_seconds()
    assert list(seconds) == ["segment 1", "related 1", "cocitation 1", CLIENT, TOTAL]
    assert seconds[CLIENT] == pytest.approx(5.0)
    assert sum(v for k, v in seconds.items() if k != TOTAL) == pytest.approx(seconds[TOTAL])


def test_the_slope_of_a_linear_and_a_quadratic_cost():
    pages = [1000, 2000, 4000, 8000]
    assert loglog_slope(pages, [3 * p for p in pages]) == pytest.approx(1.0)
    assert loglog_slope(pages, [p * p for p in pages]) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        loglog_slope([1000, 1000], [1, 2])


def test_summaries_take_medians_and_the_worst_skew():
    summary = summarise([run(1000, 1.0), run(1000, 3.0), run(1000, 2.0)])
    assert summary.stages[TOTAL] == pytest.approx(80.0)
    assert summary.skew == pytest.approx(1.5) and summary.skew_stage == "related 1"
    assert summary.shuffle_bytes_per_page == pytest.approx(3 * 2048 / 1000)
    assert summary.peak_reduce_mb == pytest.approx(200)
    with pytest.raises(ValueError):
        summarise([])


def test_verdicts_and_table_against_the_goals(tmp_path):
    sizes = [summarise([run(p, p / 1000, peak_mb=200 + p // 1000)]) for p in (1000, 2000, 4000)]
    lines = verdicts(sizes, fixed=None)
    assert lines[0].startswith("slope of wall time against pages (log-log): 1.00")
    assert "Python reducer peak memory, 4,000 / 1,000 pages: 1.00  (goal <= 1.2)" in lines
    assert "reduce container peak memory (JVM + Python), 4,000 / 1,000 pages: 1.01" in lines
    table = format_fig8_table(sizes)
    assert table.splitlines()[0] == "| | 1,000 pages | 2,000 pages | 4,000 pages |"
    assert "| fallback 1 | 5.0 s | 10.0 s | 20.0 s |" in table
    assert "| reducer input skew (max/mean) | 1.50 (related 1) |" in table
    assert "| … of its Python reducer | 50 MB | 50 MB | 50 MB |" in table
    assert "| … of its Python mapper | not measured |" in table
    assert "| database records | 1,000 | 2,000 | 4,000 |" in table
    chain_alone = [summarise([replace(run(p, 1.0), records=0)]) for p in (1000, 2000)]
    assert "database records" not in format_fig8_table(chain_alone)  # --graph writes none
    fig9 = format_fig9_table({1: sizes[0], 2: sizes[1]})
    assert fig9.splitlines()[0] == "| | 1 container | 2 containers |"
    assert "| total | 40.0 s | 80.0 s |" in fig9
    compression = format_compression_table(sizes[0], sizes[1])
    assert "| wall time | 40.0 s | 80.0 s |" in compression
    assert "| CPU time of all tasks | 3 s | 3 s |" in compression
    plot_fig8(sizes, tmp_path / "fig8.png")
    plot_fig9({1: sizes[0], 2: sizes[1]}, tmp_path / "fig9.png")
    assert (tmp_path / "fig8.png").stat().st_size > 10_000
    assert (tmp_path / "fig9.png").stat().st_size > 10_000
    # one size (the MiniCluster pipeline test's): no slope, but the table and the figure
    assert verdicts(sizes[:1]) == ["one size: no slope"]
    assert format_fig8_table(sizes[:1]).splitlines()[0] == "| | 1,000 pages |"
    plot_fig8(sizes[:1], tmp_path / "fig8-one.png")
    assert (tmp_path / "fig8-one.png").stat().st_size > 10_000


def test_related_1_s_cpu_per_pair_comes_with_its_python_processes_cpu_when_measured():
    def sized(pages: int, python_cpu_ms: int) -> PipelineRun:
        jobs = (job("related 1", pages / 100, cpu_ms=pages * 10, python_cpu_ms=python_cpu_ms),)
        return PipelineRun(pages, pages / 50, 0.0, jobs, pairs=pages * 100)

    measured = [summarise([sized(p, p * 2)]) for p in (1000, 2000)]  # 3 tasks: 6 ms a page
    line = next(v for v in verdicts(measured) if v.startswith("slope of related pairs"))
    assert line.endswith("related 1's CPU per pair: 100 / 100 µs; its Python processes "
                         "(the launcher's count): 60 / 60 µs")
    assert ("| CPU time of the tasks' Python processes (the launcher's count) | 6 s | 12 s |"
            in format_fig8_table(measured))
    unmeasured = [summarise([sized(p, 0)]) for p in (1000, 2000)]
    line = next(v for v in verdicts(unmeasured) if v.startswith("slope of related pairs"))
    assert line.endswith("related 1's CPU per pair: 100 / 100 µs")
    assert ("| CPU time of the tasks' Python processes (the launcher's count) | not measured |"
            in format_fig8_table(unmeasured))


def test_the_per_page_table_splits_each_stage_s_cpu_into_its_python_processes_share():
    def sized(python_cpu_ms: int) -> PipelineRun:  # 3 tasks a job, each python_cpu_ms
        jobs = (job("segment 1", 1.0, cpu_ms=4000, python_cpu_ms=python_cpu_ms),
                job("related 1", 2.0, cpu_ms=6000, python_cpu_ms=python_cpu_ms))
        return PipelineRun(1000, 4.0, 0.0, jobs, records=10)

    lines = format_per_page_table(summarise([sized(1000)])).splitlines()
    assert lines[0].startswith("| stage (1,000 pages) | task CPU per page | of it, the Python "
                               "processes' | shuffle per page |")
    assert lines[2].startswith("| segment 1 | 4.00 ms | 3.00 ms (75%) |")
    assert lines[3].startswith("| related 1 | 6.00 ms | 3.00 ms (50%) |")
    assert lines[4].startswith("| all jobs | 10.00 ms | 6.00 ms (60%) |")
    unmeasured = format_per_page_table(summarise([sized(0)])).splitlines()
    assert unmeasured[2].startswith("| segment 1 | 4.00 ms | not measured |")
    assert unmeasured[4].startswith("| all jobs | 10.00 ms | not measured |")


def test_the_hot_keys_table_sets_related_1_without_and_with_a_plan_side_by_side():
    without = run(1000, 1.0)
    planned = PipelineRun(1000, 30.0, 0.0, (job("related 1", 8.0, reduce_records=(21, 19)),))
    table = format_hot_keys_table(without, planned, [1.5, 1.05])
    assert table.splitlines()[0] == "| | without a plan | with the plan |"
    assert "| related 1, submit to finish | 20.0 s | 8.0 s |" in table
    assert "| … its reducer input skew, measured (max/mean) | 1.50 | 1.05 |" in table
    assert "| … predicted from the keys (key_skew) | 1.50 | 1.05 |" in table
    assert "| … its reducers' input records | 40 | 40 |" in table
    assert "| the chain, wall time | 40.0 s | 30.0 s |" in table
    assert "count jobs" not in table  # no cost given
    costed = format_hot_keys_table(without, planned, [1.5, 1.05], [12.34, 5.6])
    assert "| the plan's two count jobs, wall time | — | 12.3 s |" in costed
    assert "| … their tasks' CPU time | — | 6 s |" in costed


def test_the_report_prints_every_asked_table_and_its_json_says_the_same(tmp_path):
    sizes = [summarise([run(p, p / 1000)]) for p in (1000, 2000)]
    hot = {"pages": 1000, "routed": 3, "split": 1, "pieces": 5, "predicted": [1.5, 1.05],
           "runs": [run(1000, 1.0), run(1000, 0.5)]}
    shape = BenchShape(2, 2, 1, 7, "snappy", "/data/arcs.tsv", 1500, "local[2]", "EPYC, 2 cores")
    lines, figures = scale_report(shape, tmp_path, sizes, None, {1: sizes[0]},
                                  {"off": sizes[0], "on": sizes[1]},
                                  {p: {"wall": p / 100, "cpu": p / 50, "peak_mb": 300.0}
                                   for p in (1000, 2000)}, hot)
    text = "\n".join(lines)
    assert lines.pop(0) == "machine: EPYC, 2 cores"
    assert lines[0] == ("Fig. 8: the block co-citation chain alone on arcs.tsv's pages (seed 7; "
                        "sizes above its 1,500 pages with links from disjoint copies of it) at "
                        "the defaults on YARN (MiniCluster), 2 map files, 2 reducers per job, "
                        "median of 1")
    for heading in ("slope of wall time against pages (log-log): 1.00",
                    "The chain on Spark (-r spark, local[2], 2 partitions) beside YARN",
                    "slope of Spark's time against pages (log-log): wall 1.00, CPU 1.00",
                    "Fig. 9: 1,000 pages, tasks of a job running at once",
                    "Map output compression, 1,000 pages (snappy); same database",
                    "Hot keys: 1,000 records, 2 reducers, a plan routing 3 pages (1 split; 5 keys)"):
        assert heading in text
    assert (tmp_path / "fig8-time-vs-pages.png").is_file()
    assert (tmp_path / "fig9-time-vs-containers.png").is_file()
    figures = json.loads(json.dumps(figures))  # JSON values only
    assert [s["pages"] for s in figures["sizes"]] == [1000, 2000] and figures["seed"] == 7
    assert figures["machine"] == "EPYC, 2 cores"
    assert figures["verdicts"][0].startswith("slope of wall time") and figures["fixed"] is None
    assert figures["hot_keys"]["predicted"] == [1.5, 1.05] and len(figures["hot_keys"]["runs"]) == 2
    pipeline, _ = scale_report(BenchShape(4, 4, 3, 1, "snappy"), tmp_path, sizes[:1], None, {},
                               {}, {}, {})
    assert pipeline[0].startswith("Fig. 8: the pipeline at the defaults on YARN (MiniCluster), "
                                  "4 map files, 4 reducers per job, median of 3")
    assert "one size: no slope" in pipeline and not any("Hot keys" in line for line in pipeline)


def test_build_s_printed_summary_gives_the_database_time_and_counts():
    printed = "  time segment      12.5 s\n  time database      3.25 s\n  related pairs   5000\n"
    assert printed_stage_seconds(printed, "database") == 3.25
    assert printed_stage_seconds(printed, "cocitation") == 0.0
    assert printed_count("  database records   1234 (pages)", "database records") == 1234
    assert printed_count(printed, "related pairs") == 5000
    assert printed_count(printed, "missing") == 0


def test_stage_order_is_the_pipelines():
    stages = [TOTAL, "cocitation 1", CLIENT, "related 2", "segment 1", "related 1"]
    assert sorted(stages, key=stage_key) == ["segment 1", "related 1", "related 2",
                                             "cocitation 1", CLIENT, TOTAL]


def test_split_warc_keeps_every_record_in_order(tmp_path):
    from warcio.archiveiterator import ArchiveIterator

    from relatedpages.corpus.generate import generate_crawl, iter_pages
    from relatedpages.corpus.warc_split import split_warc

    crawl = generate_crawl(tmp_path / "crawl.warc.gz", pages=50, seed=3)
    parts = split_warc(crawl.path, 4, tmp_path / "parts")
    assert len(parts) == 4
    urls = []
    for part in parts:
        with part.open("rb") as handle:
            urls += [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(handle)]
    assert urls == [url for url, _, _ in iter_pages(50, seed=3)]
    assert len(split_warc(crawl.path, 80, tmp_path / "more")) == 50


# -- the benchmark on the MiniCluster --------------------------------------------------------


@pytest.mark.hadoop
@pytest.mark.slow
def test_bench_scale_on_the_minicluster(tmp_path):
    """One tiny size (the slopes at two sizes: the --graph test below), 2 map files and 2
    reducers: the database is checked against an inline build inside the script, the
    tables, verdicts, figures and JSON come out."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "60", "--maps", "2", "--reduces", "2",
         "--fixed-pages", "0", "--out", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=guard(2400), cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "checked: the YARN database equals the inline build" in done.stderr
    out = done.stdout
    assert "| | 60 pages |" in out
    for stage in ("segment 1", "related 1", "related 4", "fallback 1", "client", "total"):
        assert f"| {stage} |" in out
    assert "one size: no slope" in out
    figures = json.loads((tmp_path / "scale.json").read_text())
    assert [s["pages"] for s in figures["sizes"]] == [60]
    assert all(s["peak_reduce_mb"] > 0 and s["shuffle_bytes_per_page"] > 0 for s in figures["sizes"])
    assert all(math.isfinite(s["skew"]) and s["skew"] >= 1.0 for s in figures["sizes"])
    # the tasks' Python processes were measured (on tasks this short, Hadoop's own CPU
    # counter misses much of their CPU: job_history.JobFigures.python_cpu_seconds)
    (size,) = figures["sizes"]
    assert size["stage_python_cpu"]["related 1"] > 0 and size["stage_cpu"]["related 1"] > 0
    assert "| CPU time of the tasks' Python processes (the launcher's count) | not measured |" not in out
    assert figures["machine"] and out.startswith(f"machine: {figures['machine']}\n")
    # the costed plan (docs/scale.md) is printed from this very file
    projected = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "project_scale.py"), str(tmp_path / "scale.json")],
        capture_output=True, text=True, timeout=guard(120), cwd=REPO)
    assert projected.returncode == 0, projected.stderr
    source = f"the pipeline, generated web, 60 pages ({tmp_path / 'scale.json'})"
    assert f"| {source} | {size['cpu_seconds'] / 60 * 1000:.2f} ms |" in projected.stdout
    assert "serving: 64 partitions of " in projected.stdout
    assert (tmp_path / "fig8-time-vs-pages.png").stat().st_size > 10_000
    assert not (tmp_path / "work" / "db-60-1").exists()  # each run's database is removed


@pytest.mark.hadoop
@pytest.mark.slow
def test_the_chain_alone_on_a_real_graph_on_the_minicluster(tmp_path, shared_data):
    """--graph: the chain alone on sampled pages of cnr-2000 (its first 300 arcs here: 52
    pages with links, so both sizes sample from disjoint copies of it), the first size's
    output checked against an inline run of the chain inside the script; with --spark the
    same records on Spark's local master too, checked the same way; with --hot-keys the
    first size again under a hot-key plan counted by the two count jobs on the cluster, its
    output checked the same way."""
    import gzip

    arcs = tmp_path / "arcs.tsv"
    with gzip.open(shared_data("graphs/cnr-2000") / "cnr-2000.arcs.tsv.gz", "rt") as whole:
        arcs.write_text("".join(line for _, line in zip(range(300), whole)))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--graph", str(arcs), "--sizes", "60,120", "--maps", "2",
         "--reduces", "2", "--fixed-pages", "0", "--spark", "--hot-keys",
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=guard(2400), cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "checked: the YARN chain's output equals the inline chain's" in done.stderr
    assert "checked: the Spark chain's output equals the inline chain's" in done.stderr
    # the plain run and the run under the plan, each checked against the inline chain
    assert done.stderr.count("checked: the YARN chain's output equals the inline chain's") == 2
    assert "Hot keys: 60 records, 2 reducers, a plan routing" in done.stdout
    assert "| … its reducer input skew, measured (max/mean) |" in done.stdout
    assert "| Spark (local) wall time |" in done.stdout
    assert ("the block co-citation chain alone on arcs.tsv's pages (seed 1; sizes above its "
            "52 pages with links from disjoint copies of it)") in done.stdout
    assert "60 pages: more than the graph's 52 pages with links; sampling from 2 disjoint" in done.stderr
    assert "| related 1 |" in done.stdout and "| segment 1 |" not in done.stdout
    assert "slope of wall time against pages (log-log):" in done.stdout
    figures = json.loads((tmp_path / "out" / "scale.json").read_text())
    assert [s["pages"] for s in figures["sizes"]] == [60, 120]
    assert all(s["pairs_per_page"] > 0 for s in figures["sizes"])
    assert sorted(figures["spark"]) == ["120", "60"]
    hot = figures["hot_keys"]
    assert hot["pages"] == 60 and hot["routed"] > 0 and len(hot["runs"]) == 2
    assert hot["plan_jobs"] == ["hot_keys 1", "hot_key_bins 1"] and hot["plan_cpu"] > 0
    assert "| the plan's two count jobs, wall time | — |" in done.stdout
    # related 1's reducer input as the job history has it equals the prediction from the keys
    for run, predicted in zip(hot["runs"], hot["predicted"]):
        first = next(job for job in run["jobs"] if job["stage"] == "related 1")
        records = [task["counters"]["REDUCE_INPUT_RECORDS"] for task in first["tasks"]
                   if task["kind"] == "REDUCE"]
        assert len(records) == 2 and max(records) / (sum(records) / 2) == pytest.approx(predicted)
    assert all(run["wall"] > 0 and run["cpu"] > 0 and run["peak_mb"] > 50
               for run in figures["spark"].values())


def test_spark_without_a_graph_is_a_usage_error():
    done = subprocess.run([sys.executable, str(SCRIPT), "--spark"], capture_output=True,
                          text=True, timeout=guard(120), cwd=REPO)
    assert done.returncode == 2 and "--spark runs the chain alone: give --graph" in done.stderr


def test_graph_records_sample_pages_with_links_and_cite_their_successors(tmp_path):
    from relatedpages.corpus.graph_records import (
        graph_records, read_successors, record_line, sample_sources,
    )

    arcs = tmp_path / "arcs.tsv"
    arcs.write_text("# a graph\n0\t5\n0\t2\n3\t0\n7\t8\n7\t9\n7\t3\n")
    successors = read_successors(arcs)
    assert successors == {0: [5, 2], 3: [0], 7: [8, 9, 3]}
    small, large = sample_sources(successors, 2, 1), sample_sources(successors, 10, 1)
    assert len(small) == 2 and small == sorted(small) and large == [0, 3, 7]
    assert sample_sources(successors, 2, 1) == small  # seeded
    record = next(graph_records(successors, [7]))
    assert record["site"] == "p7.org" and [l["href"] for l in record["blocks"][0]] == [
        "http://www.p8.org/", "http://www.p9.org/", "http://www.p3.org/"]
    key, value = record_line(record).rstrip("\n").split("\t")
    assert json.loads(key) == record["url"] and json.loads(value) == record
    arcs.write_text("0\t5\nnot an arc\n")
    with pytest.raises(ValueError, match="arcs.tsv:2: expected"):
        read_successors(arcs)


def test_copies_of_a_graph_add_pages_with_the_same_related_pages(tmp_path, shared_data):
    """Tiled copies are disjoint: the chain relates a copy's pages exactly as the original's,
    node ids offset (the inline runner on 3 copies of a small real graph)."""
    import gzip

    from relatedpages.corpus.graph_records import (
        Tiled, graph_records, read_successors, record_line, sample_sources, tile,
    )

    arcs = tmp_path / "arcs.tsv"
    with gzip.open(shared_data("graphs/cnr-2000") / "cnr-2000.arcs.tsv.gz", "rt") as whole:
        arcs.write_text("".join(line for _, line in zip(range(600), whole)))
    graph = read_successors(arcs)
    assert tile(graph, len(graph)) is graph
    copies = tile(graph, 2 * len(graph) + 1)
    assert isinstance(copies, Tiled) and copies.copies == 3 and len(copies) == 3 * len(graph)
    assert sample_sources(copies, 3 * len(graph), 1) == sorted(copies)
    with pytest.raises(KeyError):
        copies[3 * copies.span]

    def related(successors, name):
        records = tmp_path / f"{name}.jsonl"
        records.write_text("".join(record_line(record) for record in
                                   graph_records(successors, sorted(successors))))
        done = subprocess.run([sys.executable, "-m", "jobs.related", "-r", "inline",
                               str(records), "-o", str(tmp_path / name)],
                              capture_output=True, text=True, cwd=REPO, timeout=guard(600))
        assert done.returncode == 0, done.stderr[-2000:]
        lines = [line.split("\t") for part in sorted((tmp_path / name).glob("part-*"))
                 for line in part.read_text().splitlines()]
        return {json.loads(key): json.loads(value) for key, value in lines}

    def same(left, right):
        """Equal scores in order, and the same results above the last score (ties, and the
        evidence under a result, are ordered by URL, and a copy's ids sort differently)."""
        assert [item[1] for item in left] == [item[1] for item in right]
        last = left[-1][1] if left else 0
        assert (sorted((item[0], item[1], len(item[2])) for item in left if item[1] > last)
                == sorted((item[0], item[1], len(item[2])) for item in right if item[1] > last))

    original, tiled = related(graph, "original"), related(copies, "tiled")
    assert original and len(tiled) == 3 * len(original)
    shift = re.compile(r"p(\d+)\.org")
    for copy in range(3):
        def moved(text: str) -> str:
            return shift.sub(lambda m: f"p{int(m.group(1)) + copy * copies.span}.org", text)

        for url, value in original.items():
            same(json.loads(moved(json.dumps(value))), tiled[moved(url)])


def test_a_missing_graph_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--graph", str(tmp_path / "none.tsv")],
                          capture_output=True, text=True, timeout=guard(120), cwd=REPO)
    assert done.returncode == 2 and "is not a file" in done.stderr


def test_a_work_folder_the_bench_did_not_make_is_left_alone(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mine.txt").write_text("keep me")
    done = subprocess.run([sys.executable, str(SCRIPT), "--sizes", "10", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=guard(120), cwd=REPO)
    assert done.returncode == 1
    assert "was not made by bench_scale" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "work" / "mine.txt").read_text() == "keep me"


def test_bad_sizes_are_a_usage_error():
    done = subprocess.run([sys.executable, str(SCRIPT), "--sizes", "10,x"], capture_output=True,
                          text=True, timeout=guard(120), cwd=REPO)
    assert done.returncode == 2 and "comma-separated whole numbers" in done.stderr


def test_the_python_launcher_reports_the_task_s_own_peak_memory_and_cpu(tmp_path):
    """What bench_scale measures of a task's Python processes: their peak RSS and CPU time
    under the attempt's id, with the task's stdin, stdout and exit status passed through."""
    from relatedpages.bench.launcher import read_python_reports, write_python_launcher

    reports = tmp_path / "reports"
    launcher = write_python_launcher(tmp_path, reports)
    env = {"mapreduce_task_attempt_id": "attempt_1795_0003_r_000001_0", "PATH": "/usr/bin:/bin"}
    grow = "import sys; x = bytearray(60 * 2**20); sys.stdout.write(sys.stdin.read().upper())"
    done = subprocess.run([str(launcher), "-c", grow], input="abc", env=env,
                          capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 0 and done.stdout == "ABC"
    spin = "import time; end = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    assert subprocess.run([str(launcher), "-c", spin], env=env, timeout=guard(60)).returncode == 0
    usage = read_python_reports(reports)
    assert list(usage) == ["task_1795_0003_r_000001"]
    task = usage["task_1795_0003_r_000001"]
    assert 60 * 1024 < task.peak_kb < 200 * 1024  # KB: the 60 MB, not more
    assert 0.5 <= task.cpu_seconds < 5  # both processes' CPU: the spin's half second and more
    assert read_python_reports(reports) == {}  # read once
    failed = subprocess.run([str(launcher), "-c", "raise SystemExit(3)"], env=env, timeout=guard(60))
    assert failed.returncode == 3
