"""Related 1's Python CPU per pair (relatedpages/bench/chain_cpu.py, scripts/chain_cpu.py):
the step it times is the chain's own (its pair count is the chain's), a failing task says so,
and the command prints its table."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from relatedpages.bench.chain_cpu import (
    ChainCost, ChainCpuError, TaskCost, chain_costs, format_comparison, in_sample, run_task,
    task_environment, write_sample)
from relatedpages.bench.pair_census import page_records, pair_census
from relatedpages.corpus.generate import generate_crawl, read_topics
from relatedpages.scoring.options import add_chain_options, chain_params_from
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def test_the_step_timed_emits_the_pairs_the_chain_counts(tmp_path: Path) -> None:
    crawl = generate_crawl(tmp_path / "web.warc.gz", pages=400, seed=3)
    parser = argparse.ArgumentParser()
    add_chain_options(parser.add_argument)
    census = pair_census(crawl.path, read_topics(crawl.topics_path),
                         *chain_params_from(parser.parse_args([])))
    costs, none = chain_costs(crawl.path, 400, 400, tmp_path / "work", repo=REPO, runs=2)  # every page
    assert none == []
    assert len(costs) == 2 and costs[0].pairs == costs[1].pairs
    cost = costs[0]
    assert cost.sampled == census.pages == 400
    assert cost.pairs == census.pairs > 0
    # Mapper1 writes each pair both ways, and more: one value per block citing a page
    assert cost.mapper.records_out > 2 * cost.pairs
    assert cost.reducer.records_out > 0 and cost.mapper.cpu_seconds > 0 < cost.reducer.cpu_seconds
    assert 0 < cost.reducer_out_per_in < 1
    # the start-up measured on no input is left out (a tiny web's work may be about as much)
    assert cost.mapper_us_per_pair == pytest.approx(
        max(0.0, cost.mapper.cpu_seconds - cost.mapper_idle) / cost.pairs * 1e6)
    assert cost.mapper_idle > 0 and cost.reducer_idle > 0
    # the start-up on the first 100 pages loads what anchors need, beyond the bare imports
    assert cost.mapper_start > cost.mapper_idle
    assert 10 < cost.mapper_start_mb < 2000 and cost.mapper.peak_mb >= 10
    assert not any((tmp_path / "work").iterdir())  # the sample and the outputs are gone


def test_the_sample_is_the_pages_whose_url_hash_is_kept(tmp_path: Path) -> None:
    crawl = generate_crawl(tmp_path / "web.warc.gz", pages=300, seed=5)
    urls = [record["url"] for record in page_records(crawl.path)]
    kept = sorted(url for url in urls if in_sample(url, 4))
    assert 0 < len(kept) < len(urls)
    out = tmp_path / "records.jsonl"
    assert write_sample(crawl.path, 4, out) == len(kept)
    lines = out.read_text().splitlines()
    assert [json.loads(line.split("\t", 1)[0]) for line in lines] == kept  # sorted by URL
    record = json.loads(lines[0].split("\t", 1)[1])
    assert record["url"] == kept[0] and record["site"] and "blocks" in record


def test_a_failing_task_is_an_error_with_its_stderr(tmp_path: Path) -> None:
    empty = tmp_path / "in"
    empty.write_bytes(b"")
    with pytest.raises(ChainCpuError, match="exited with 3:\nboom"):
        run_task([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"],
                 empty, tmp_path / "out", cwd=tmp_path)


def test_the_command_prints_the_machine_a_row_per_size_and_the_slope() -> None:
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", "--pages", "300,600",
                           "--sample", "150", "--runs", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(900))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("machine: ") and "cores" in lines[0]
    rows = [line for line in lines if line.startswith("| 300 |") or line.startswith("| 600 |")]
    assert len(rows) == 2 and rows[0].endswith("| 1.00 |")
    assert "slopes (log-log), 300 → 600 pages (0: the Python work does not grow with the crawl):" in lines
    assert [line.split(":")[0] for line in lines[-3:]] == [
        "  Mapper1's CPU per pair", "  Reducer1's CPU per record", "  related 1's CPU per pair"]


def test_the_command_refuses_bad_sizes() -> None:
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", "--pages", "300,many"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 2 and "--pages: whole numbers" in done.stderr
    assert "Traceback" not in done.stderr


def _worktrees() -> list[str]:
    listed = subprocess.run(["git", "-C", str(REPO), "worktree", "list", "--porcelain"],
                            capture_output=True, text=True, check=True)
    return [line for line in listed.stdout.splitlines() if line.startswith("worktree ")]


def test_against_a_revision_compares_run_for_run_and_checks_the_output() -> None:
    known = _worktrees()
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", "--pages", "300",
                           "--sample", "300", "--runs", "1", "--against", "HEAD"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(900))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[1].startswith("against: ")
    assert "; HEAD: " in lines[2]
    assert "HEAD → this checkout, the same samples, run for run:" in lines
    row = next(line for line in lines if line.startswith("| 300 | ") and "→" in line)
    assert row.endswith("| the same bytes |")
    assert "| Mapper1 on 100 pages, s | its peak memory, MB |" in lines[lines.index(row) - 2]
    assert [cell.count("→") for cell in row.split(" | ")[-3:-1]] == [1, 1]  # before → this
    assert _worktrees() == known  # the checkout it made is gone


def test_a_revision_git_does_not_know_is_an_error_and_leaves_nothing() -> None:
    known = _worktrees()
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", "--pages", "300",
                           "--runs", "1", "--against", "no-such-revision"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert done.returncode == 1
    assert "chain_cpu: --against: git cannot check out 'no-such-revision'" in done.stderr
    assert "Traceback" not in done.stderr
    assert _worktrees() == known


def test_the_tasks_run_without_pythonunbuffered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    monkeypatch.setenv("RELATEDPAGES_PROBE", "kept")
    environment = task_environment()
    assert "PYTHONUNBUFFERED" not in environment and environment["RELATEDPAGES_PROBE"] == "kept"


def test_a_real_crawl_gets_a_row_of_its_own_and_no_web_is_generated(tmp_path: Path) -> None:
    crawl = generate_crawl(tmp_path / "real.warc.gz", pages=300, seed=5)
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", "--crawl", str(crawl.path),
                           "--sample", "100", "--runs", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(600))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[1].startswith("real.warc.gz (300 pages): ") and "µs a pair" in lines[1]
    rows = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 1 and rows[0].startswith("| 300 | ")  # the crawl only
    assert not any(line.startswith("slopes") for line in lines)  # one size: no slope


@pytest.mark.parametrize("argv, message", [
    (["--crawl", "no/such.warc.gz"], "--crawl: no such file: no/such.warc.gz"),
    (["--pages", "300", "--output-changes"], "--output-changes: only with --against"),
])
def test_the_command_refuses_what_it_cannot_time(argv: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "scripts/chain_cpu.py", *argv],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(60))
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_comparison_says_whether_reducer1_wrote_the_same_bytes() -> None:
    def cost(mapper_seconds: float, digest: str) -> ChainCost:
        return ChainCost(300, 300, 1000, TaskCost(mapper_seconds, 1000, {}), TaskCost(0.05, 500, {}),
                         output_digest=digest)
    same, changed = (list(format_comparison([cost(0.04, "a")], [cost(0.03, then)], "HEAD~1"))[-1]
                     for then in ("a", "b"))
    assert same.startswith("| 300 | 30.0 → 40.0 | 50.0 → 50.0 | 80.0 → 90.0 | 1.12 |")
    assert same.endswith("| the same bytes |") and changed.endswith("| changed |")
