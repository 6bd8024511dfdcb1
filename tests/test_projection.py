"""Issue 14, item 4: the costed plan printed from a scale bench's ``scale.json``
(relatedpages.bench.projection, scripts/project_scale.py).  The JSON here is the one
``scale_report`` writes, from job figures as the job history reads them; the MiniCluster
test in tests/test_bench_scale.py runs the script on a real bench's file."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from relatedpages.bench.job_history import JobFigures, TaskFigures
from relatedpages.bench.projection import (
    Assumptions,
    ProjectionError,
    compute_row,
    format_projection,
    load_sizes,
    per_page,
    pick_size,
    storage,
)
from relatedpages.bench.scale import BenchShape, PipelineRun, scale_report, summarise

KB = 1024
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "project_scale.py"


def load_script():
    spec = importlib.util.spec_from_file_location("project_scale", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


main = load_script().main


def job(stage: str, cpu_ms: int, python_cpu_ms: int, shuffle: int, written: int) -> JobFigures:
    tasks = (TaskFigures("MAP", 0, 1000, {}, python_cpu_ms=python_cpu_ms),)
    return JobFigures(f"job_{stage}", stage, 0, 60_000,
                      {"CPU_MILLISECONDS": cpu_ms, "REDUCE_SHUFFLE_BYTES": shuffle,
                       "HDFS_BYTES_WRITTEN": written}, tasks)


def bench_json(tmp_path: Path, pages: tuple[int, ...] = (1000, 4000), graph: str | None = None,
               name: str = "scale.json") -> Path:
    """A scale.json as the bench writes it: per size, 3 ms (segment) and 9 ms (related 1) of
    task CPU a page, two thirds of it Python's; 2 + 6 KB of shuffle, 1 + 3 KB to HDFS; a
    database of 18 KB and 4.5 records a page."""
    sizes = []
    for p in pages:
        jobs = (job("segment 1", 3 * p, 2 * p, 2 * KB * p, KB * p),
                job("related 1", 9 * p, 6 * p, 6 * KB * p, 3 * KB * p))
        sizes.append(summarise([PipelineRun(p, p / 10, 1.0, jobs, records=p * 9 // 2,
                                            db_bytes=18 * KB * p, pairs=p * 100)]))
    _, figures = scale_report(BenchShape(4, 4, 1, 1, "snappy", graph), tmp_path, sizes, None,
                              {}, {}, {}, {})
    path = tmp_path / name
    path.write_text(json.dumps(figures))
    return path


def test_a_bench_s_figures_per_page(tmp_path):
    figures, sizes = load_sizes(bench_json(tmp_path))
    assert figures["seed"] == 1 and [s.pages for s in sizes] == [1000, 4000]
    p = per_page(pick_size(sizes, None), "x")
    assert p.pages == 4000  # the largest, by default
    assert p.cpu_ms == pytest.approx(12.0) and p.python_cpu_ms == pytest.approx(8.0)
    assert p.shuffle_kb == pytest.approx(8.0) and p.hdfs_kb == pytest.approx(4.0)
    assert p.db_kb == pytest.approx(18.0) and p.db_records == pytest.approx(4.5)
    assert p.stage_cpu_ms == (("segment 1", pytest.approx(3.0), pytest.approx(2.0)),
                              ("related 1", pytest.approx(9.0), pytest.approx(6.0)))
    assert pick_size(sizes, 1000).pages == 1000
    with pytest.raises(ProjectionError, match="no size of 2,000 pages .measured: 1,000, 4,000"):
        pick_size(sizes, 2000)


def test_the_crawl_s_compute_and_storage_are_the_figures_times_the_assumptions():
    a = Assumptions(pages=1e9, node_vcpus=10, busy=0.5, replication=2, warc_kb=20,
                    nodes=(10, 40), partitions=8)
    row = compute_row("x", 36.0, a)  # 36 ms × 10⁹ pages = 10,000 CPU-hours
    assert row.cpu_hours == pytest.approx(10_000)
    assert row.node_hours == pytest.approx(2_000)  # 10 vCPUs at half their CPU
    assert dict(row.hours) == {10: pytest.approx(200), 40: pytest.approx(50)}
    p = per_page(summarise([PipelineRun(1000, 1.0, 0.0, (job("related 1", 1, 0, KB * 1000, KB * 1000),),
                                        records=4000, db_bytes=KB * 1000)]), "y")
    s = storage(p, a)  # 1 KB a page each, 10⁹ pages: 10⁹ KB = 0.93 TB
    one = 1e9 * KB / 1024 ** 4
    assert s.shuffle_tb == pytest.approx(one) and s.db_tb == pytest.approx(one)
    assert s.hdfs_tb == pytest.approx(2 * one) and s.warc_tb == pytest.approx(20 * one)
    assert s.hdfs_peak_tb == pytest.approx(2 * (20 + 1) * one)
    assert s.partition_records == pytest.approx(4e9 / 8)
    assert s.partition_gb == pytest.approx(1e9 * KB / 1024 ** 3 / 8)


def test_bad_assumptions_and_figures_are_refused():
    for bad in ({"pages": 0}, {"busy": 1.5}, {"busy": 0}, {"replication": 0}, {"nodes": ()},
                {"nodes": (10, 0)}, {"warc_kb": -1}, {"partitions": 0},
                {"pages": float("nan")}, {"pages": float("inf")}, {"warc_kb": float("nan")}):
        with pytest.raises(ProjectionError):
            Assumptions(**bad)  # type: ignore[arg-type]
    with pytest.raises(ProjectionError, match="negative"):
        compute_row("x", -1.0, Assumptions())
    with pytest.raises(ProjectionError, match="nothing measured"):
        format_projection([], [], Assumptions())


def test_the_script_prints_the_plan_from_the_bench_s_files(tmp_path, capsys):
    pipeline = bench_json(tmp_path)
    chain = bench_json(tmp_path, (2000,), graph="/data/cnr-2000.arcs.tsv.gz", name="chain.json")
    assert main([str(pipeline), str(chain), "--cpu-ms", "real pages=98", "--pages", "1e9",
                 "--nodes", "10,40", "--db-record", "format 2=256"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("projected to 1,000,000,000 pages; nodes of 16 vCPUs, 70% of their "
                          "CPU doing task work; HDFS replication 3; input WARC 30 KB a page")
    assert (f"| the pipeline, generated web, 4,000 pages ({pipeline}) | 12.00 ms | 8.00 ms | "
            "8.00 KB | 4.00 KB | 18.00 KB | 4.50 |") in out
    assert "| … related 1 | 9.00 ms | 6.00 ms | | | | |" in out
    # 12 ms × 10⁹ pages = 3,333 CPU-hours; / (16 × 0.7) = 298 node-hours; / 10 nodes
    assert (f"| the pipeline, generated web, 4,000 pages ({pipeline}) | 12.00 ms | 3,333 | 298 "
            "| 29.8 h | 7.4 h |") in out
    assert f"| the chain on cnr-2000.arcs.tsv.gz, 2,000 pages ({chain}) | 12.00 ms |" in out
    assert "| real pages | 98.00 ms | 27,222 | 2,431 | 243 h | 60.8 h |" in out
    assert "| all jobs' outputs on HDFS, 3 replicas | 12.0 KB | 11.2 TB |" in out
    assert ("| HDFS at the build's end (the input and every output, 3 replicas) | 102.0 KB | "
            "95.0 TB |") in out
    assert "| database | 18.0 KB | 16.8 TB |" in out
    assert "serving: 64 partitions of 268 GB and 70,312,500 records each" in out
    # 4.5 records a page of 256 bytes: 1.125 KB a page, 10⁹ pages: 1.05 TB
    assert "| database, 256 bytes a record (format 2) | 1.1 KB | 1.0 TB |" in out
    assert "serving at 256 bytes a record: 64 partitions of 17 GB and 70,312,500 records each" in out


@pytest.mark.parametrize("args, message", [
    (["missing.json"], "missing.json: cannot read it"),
    (["notjson.json"], "notjson.json: not JSON"),
    (["other.json"], "other.json: not a scale bench's scale.json"),
    (["scale.json", "--size", "7"], "no size of 7 pages"),
    (["strings.json"], "strings.json: a size whose figures are not numbers"),
    (["lacking.json"], "lacking.json: a size without a figure the projection needs"),
])
def test_bad_files_and_sizes_are_a_clear_error(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    bench_json(tmp_path)
    (tmp_path / "notjson.json").write_text("{")
    (tmp_path / "other.json").write_text('{"sizes": []}')
    figures = json.loads((tmp_path / "scale.json").read_text())
    figures["sizes"][0]["cpu_seconds"] = "12"
    (tmp_path / "strings.json").write_text(json.dumps(figures))
    del figures["sizes"][0]["pages"]
    (tmp_path / "lacking.json").write_text(json.dumps(figures))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("project_scale: ") and message in err and "Traceback" not in err


@pytest.mark.parametrize("args", [["x.json", "--cpu-ms", "98"], ["x.json", "--cpu-ms", "a=b"],
                                  ["x.json", "--db-record", "251"], ["x.json", "--db-record", "a=0"],
                                  ["x.json", "--nodes", "0"], ["x.json", "--nodes", "a"]])
def test_bad_options_are_a_usage_error(args, capsys):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2 and "expected" in capsys.readouterr().err
