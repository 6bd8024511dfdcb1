#!/usr/bin/env python
"""The chain's time and peak memory per stage as the input grows 1×, 2×, 4×.

    python scripts/bench_chain.py [--base-pages 5000] [--seed 1] [--runs 3] [--work DIR]

Generates synthetic crawls (``relatedpages.corpus.generate``) of B, 2B and 4B pages and
segments each once (``jobs.segment``, inline runner, in a subprocess: wall time and
peak RSS shown as context).  Then, for every run and size, runs the stages of
``jobs.related`` one at a time, each task a subprocess of the job script the way
Hadoop Streaming runs it (one task per stage, a fresh working folder each, so every
Mapper1 builds its own jieba cache as a cluster task would):

    Mapper1   python jobs/related.py --step-num=0 --mapper   < segments  > map1
    Sort1     LC_ALL=C sort map1                                           > sorted1
    Reducer1  python jobs/related.py --step-num=0 --reducer  < sorted1   > step1
    Sort2     LC_ALL=C sort step1   (Mapper2 is the identity)              > sorted2
    Reducer2  python jobs/related.py --step-num=1 --reducer  < sorted2   > related

With the site fallback (the default preset) two more pairs follow, Sort3/Reducer3 and
Sort4/Reducer4 (``--step-num=2`` and ``3``); the last reducer writes ``related``.

The sorts are the ones mrjob's local runner does for a ``SORT_VALUES`` job: whole
lines, byte order (GNU sort holds its whole input in memory when it fits, so Sort's
peak grows with the input; Hadoop's sort spills to disk instead).  Each task runs
under a tiny launcher (``relatedpages.bench.launcher``) that times it with
``time.perf_counter`` and reads its CPU time and peak RSS from ``os.wait4`` (``ru_maxrss``,
KB on Linux; never below the launcher's ~8 MB).  The first run of the smallest size is checked
against ``run_job(MRRelatedPages, …)`` (inline runner) before any other run: the
benchmark measures the real chain or stops.  An "empty" row runs every task once on
empty input: the fixed cost (interpreter start, imports) a larger input does not pay
again (jieba's dictionary is loaded lazily, so it is not in that row).

Prints the sizes, then wall seconds and peak MB per stage (median of the runs), with
growth ratios 2×/1× and 4×/1×, and verdict lines.  Target (paper, "Parallel
implementation"): time grows linearly with the input, reducer memory stays flat.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jobs.pipeline import iter_output, run_job  # noqa: E402
from jobs.related import MRRelatedPages  # noqa: E402
from relatedpages.bench.launcher import LAUNCHER  # noqa: E402
from relatedpages.corpus.generate import SEED_DEFAULT, generate_crawl  # noqa: E402

BASE_PAGES_DEFAULT = 5_000
RUNS_DEFAULT = 3
FACTORS = (1, 2, 4)
#: The stages of the chain being measured (set by :func:`set_stages` for the preset).
STAGES: list[str] = ["Mapper1", "Sort1", "Reducer1", "Sort2", "Reducer2"]
REDUCERS: list[str] = ["Reducer1", "Reducer2"]


def set_stages(job_args: list[str]) -> None:
    """Mapper1, Sort1, Reducer1, then a Sort and a Reducer per further step of the job."""
    steps = len(MRRelatedPages(job_args).steps())
    REDUCERS[:] = [f"Reducer{step}" for step in range(1, steps + 1)]
    STAGES[:] = ["Mapper1", "Sort1", "Reducer1"]
    for step in range(2, steps + 1):
        STAGES.extend((f"Sort{step}", f"Reducer{step}"))
RELATED_JOB = REPO / "jobs" / "related.py"
#: Verdict bands: 4×/1× time within ±20 % of 4.0 is "linear"; reducer peak within 10 %
#: of the 1× peak is "flat".
LINEAR_BAND = 0.2
FLAT_BAND = 0.1


@dataclass(frozen=True)
class Measure:
    """One finished subprocess: wall seconds, CPU seconds (user + system), peak RSS."""

    seconds: float
    cpu_seconds: float
    peak_mb: float


@dataclass(frozen=True)
class Size:
    """One input size: its segments file and what flows through the chain."""

    label: str
    pages: int
    segments: Path
    records: int
    segment: Measure | None  # None for the empty input


class TaskFailed(RuntimeError):
    pass


def measure(args: Sequence[str], *, stdin: Path, stdout: Path, stderr: Path,
            cwd: Path, env: dict[str, str]) -> Measure:
    """Run ``args`` to completion under the launcher: its wall time, CPU time and peak
    RSS (its own and that of any children it waited for)."""
    report = stderr.with_suffix(".rusage")
    with stdin.open("rb") as source, stdout.open("wb") as sink, stderr.open("wb") as errors:
        subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(report), *map(str, args)],
                       stdin=source, stdout=sink, stderr=errors, cwd=cwd, env=env)
    if not report.exists():  # the launcher itself failed
        tail = stderr.read_bytes()[-2000:].decode("utf-8", "replace")
        raise TaskFailed(f"{' '.join(map(str, args))}: no report from the launcher:\n{tail}")
    seconds, cpu_seconds, maxrss_kb, exit_code = report.read_text().split()
    report.unlink()
    if int(exit_code) != 0:
        tail = stderr.read_bytes()[-2000:].decode("utf-8", "replace")
        raise TaskFailed(f"{' '.join(map(str, args))} exited {exit_code}:\n{tail}")
    return Measure(float(seconds), float(cpu_seconds), int(maxrss_kb) / 1024)  # KB on Linux


def count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def task_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["TMPDIR"] = env["TMP"] = str(work)  # sort's spill files stay in the work folder
    return env


#: Arguments every run of the chain gets (``--preset``), set by ``main``.
JOB_ARGS: list[str] = []


def prepare(work: Path, label: str, pages: int, seed: int, env: dict[str, str]) -> Size:
    """Generate and segment one crawl (once; not part of the medians)."""
    folder = work / label
    folder.mkdir(parents=True, exist_ok=True)
    crawl = generate_crawl(folder / "crawl.warc.gz", pages=pages, seed=seed)
    out = folder / "segment-output"
    shutil.rmtree(out, ignore_errors=True)
    segment = measure(
        [sys.executable, "-m", "jobs.segment", "-r", "inline", "--no-conf", str(crawl.path),
         "-o", str(out)],
        stdin=Path(os.devnull), stdout=folder / "segment.out", stderr=folder / "segment.err",
        cwd=REPO, env=env,
    )
    segments = folder / "segments.jsonl"
    with segments.open("wb") as sink:
        for part in sorted(out.glob("part-*")):
            with part.open("rb") as source:
                shutil.copyfileobj(source, sink)
    shutil.rmtree(out)
    return Size(label, crawl.pages, segments, count_lines(segments), segment)


def empty_size(work: Path) -> Size:
    folder = work / "empty"
    folder.mkdir(parents=True, exist_ok=True)
    segments = folder / "segments.jsonl"
    segments.write_bytes(b"")
    return Size("empty", 0, segments, 0, None)


def run_chain(size: Size, env: dict[str, str]) -> dict[str, Measure]:
    """Mapper1 → Sort1 → Reducer1 → Sort2 → Reducer2 (→ … Reducer4) on ``size``'s segments,
    one task each.
    Outputs stay in the size's folder (``map1``, ``step1``, ``related/part-00000``)."""
    folder = size.segments.parent
    (folder / "related").mkdir(exist_ok=True)
    sort_env = dict(env, LC_ALL="C")  # byte order, as mrjob's local runner sorts
    job = [sys.executable, str(RELATED_JOB), *JOB_ARGS]
    plan: list[tuple[str, list[str], str, str, dict[str, str]]] = [
        ("Mapper1", [*job, "--step-num=0", "--mapper"], size.segments.name, "map1", env),
        ("Sort1", ["sort"], "map1", "sorted1", sort_env),
    ]
    for step in range(1, len(REDUCERS) + 1):
        if step > 1:  # Mapper2 and later mappers are the identity
            plan.append((f"Sort{step}", ["sort"], f"step{step - 1}", f"sorted{step}", sort_env))
        target = "related/part-00000" if step == len(REDUCERS) else f"step{step}"
        plan.append((f"Reducer{step}", [*job, f"--step-num={step - 1}", "--reducer"],
                     f"sorted{step}", target, env))
    measures: dict[str, Measure] = {}
    for stage, args, source, target, stage_env in plan:
        wd = folder / f"wd-{stage}"  # a fresh task working folder (jieba's cache goes here)
        shutil.rmtree(wd, ignore_errors=True)
        wd.mkdir()
        measures[stage] = measure(args, stdin=folder / source, stdout=folder / target,
                                  stderr=folder / f"{stage}.err", cwd=wd, env=stage_env)
        shutil.rmtree(wd)
    return measures


def check_against_job(size: Size) -> int:
    """The stage-by-stage output equals the job's own (inline runner); its record count."""
    folder = size.segments.parent
    reference = folder / "reference"
    shutil.rmtree(reference, ignore_errors=True)
    run_job(MRRelatedPages, [*JOB_ARGS, str(size.segments)], runner="inline", output_dir=reference)
    expected = sorted(iter_output(reference), key=lambda record: record[0])
    got = sorted(iter_output(folder / "related"), key=lambda record: record[0])
    if got != expected:
        raise SystemExit(
            f"stage-by-stage output differs from run_job(MRRelatedPages) at {size.pages} pages "
            f"({len(got)} vs {len(expected)} records): not measuring the real chain"
        )
    return len(expected)


def medians(measured: list[dict[str, Measure]], field: str) -> dict[str, float]:
    """Stage → the median of one field of :class:`Measure` over the runs."""
    return {stage: statistics.median(getattr(run[stage], field) for run in measured)
            for stage in STAGES}


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def print_table(title: str, sizes: list[Size], rows: dict[str, dict[str, float]],
                fmt: str, with_ratios: bool) -> None:
    columns = ["Segment*", *STAGES, "chain"]
    print(f"\n{title}")
    print(f"{'size':<8}" + "".join(f"{column:>10}" for column in columns))
    for size in sizes:
        row = rows[size.label]
        print(f"{size.label:<8}" + "".join(
            f"{row[c]:>10{fmt}}" if c in row else f"{'-':>10}" for c in columns))
    if with_ratios:
        base = rows["1x"]
        for label in ("2x", "4x"):
            print(f"{label + '/1x':<8}" + "".join(
                f"{ratio(rows[label][c], base[c]):>10.2f}" if c in base else f"{'-':>10}"
                for c in columns))


def verdict_time(value: float, factor: int) -> str:
    if abs(value / factor - 1) <= LINEAR_BAND:
        return "linear"
    return "super-linear" if value > factor else "sub-linear"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-pages", type=int, default=BASE_PAGES_DEFAULT,
                        help="pages of the 1x crawl. Default: %(default)s")
    parser.add_argument("--seed", type=int, default=SEED_DEFAULT,
                        help="generator seed. Default: %(default)s")
    parser.add_argument("--runs", type=int, default=RUNS_DEFAULT,
                        help="runs per size (medians are printed). Default: %(default)s")
    parser.add_argument("--preset", choices=("default", "paper"), default="default",
                        help="the chain's parameter preset (jobs.related --preset). "
                             "Default: %(default)s")
    parser.add_argument("--work", type=Path,
                        help="keep crawls and stage outputs here (default: a temporary folder)")
    args = parser.parse_args()
    JOB_ARGS[:] = ["--preset", args.preset]
    set_stages(JOB_ARGS)
    if args.base_pages < 1 or args.runs < 1:
        parser.error("--base-pages and --runs must be >= 1")
    if shutil.which("sort") is None:
        print("no `sort` binary on PATH (Sort1 and Sort2 use it)", file=sys.stderr)
        return 1

    work = (args.work or Path(tempfile.mkdtemp(prefix="bench-chain-"))).resolve()  # tasks run elsewhere
    work.mkdir(parents=True, exist_ok=True)
    env = task_env(work)
    try:
        sizes = [empty_size(work)]
        for factor in FACTORS:
            pages = factor * args.base_pages
            print(f"generating and segmenting {pages} pages …", file=sys.stderr, flush=True)
            sizes.append(prepare(work, f"{factor}x", pages, args.seed, env))

        runs: dict[str, list[dict[str, Measure]]] = {size.label: [] for size in sizes}
        runs["empty"].append(run_chain(sizes[0], env))
        smallest = sizes[1]
        runs[smallest.label].append(run_chain(smallest, env))
        related_records = check_against_job(smallest)
        print(f"check: stage-by-stage output at {smallest.pages} pages equals "
              f"run_job(MRRelatedPages) ({related_records} pages with related pages)",
              file=sys.stderr, flush=True)
        for run in range(args.runs):
            for size in sizes[1:]:
                if run == 0 and size is smallest:
                    continue  # its first run was the checked one
                print(f"run {run + 1}/{args.runs}: {size.pages} pages …", file=sys.stderr,
                      flush=True)
                runs[size.label].append(run_chain(size, env))

        print(f"chain of jobs/related.py (--preset {args.preset}) by stage, one task per stage "
              f"(median of {args.runs} runs; seed {args.seed})")
        print(f"{'size':<8}{'pages':>8}{'records':>10}{'values':>12}{'step1 out':>11}{'related':>9}")
        for size in sizes:
            folder = size.segments.parent
            print(f"{size.label:<8}{size.pages:>8}{size.records:>10}"
                  f"{count_lines(folder / 'map1'):>12}{count_lines(folder / 'step1'):>11}"
                  f"{count_lines(folder / 'related' / 'part-00000'):>9}")
        print("records: segment records in; values: Mapper1 output (intermediate values); "
              "step1 out: Reducer1 output; related: pages with related pages")

        seconds: dict[str, dict[str, float]] = {}
        cpu: dict[str, dict[str, float]] = {}
        memory: dict[str, dict[str, float]] = {}
        for size in sizes:
            measured = runs[size.label]
            seconds[size.label] = medians(measured, "seconds")
            cpu[size.label] = medians(measured, "cpu_seconds")
            memory[size.label] = medians(measured, "peak_mb")
            seconds[size.label]["chain"] = sum(seconds[size.label][s] for s in STAGES)
            cpu[size.label]["chain"] = sum(cpu[size.label][s] for s in STAGES)
            memory[size.label]["chain"] = max(memory[size.label][s] for s in STAGES)
            if size.segment is not None:
                seconds[size.label]["Segment*"] = size.segment.seconds
                cpu[size.label]["Segment*"] = size.segment.cpu_seconds
                memory[size.label]["Segment*"] = size.segment.peak_mb
        print_table("wall time, s", sizes, seconds, ".2f", True)
        print_table("CPU time (user + system), s", sizes, cpu, ".2f", True)
        print_table("peak RSS, MB", sizes, memory, ".1f", True)
        print("Segment*: the segment job (inline runner, whole job in one process), run once "
              "per size; chain: sum of the stages (peak: their maximum)")

        print("\nverdict")
        fixed = seconds["empty"]["chain"]
        for label, factor in (("2x", 2), ("4x", 4)):
            value = ratio(seconds[label]["chain"], seconds["1x"]["chain"])
            net = ratio(seconds[label]["chain"] - fixed, seconds["1x"]["chain"] - fixed)
            print(f"time ratio {label}/1x = {value:.2f} (linear = {factor:.1f}): "
                  f"{verdict_time(value, factor)}; above the empty-input tasks' "
                  f"{fixed:.2f} s: {net:.2f}")
        values = {label: count_lines(work / label / "map1") for label in ("1x", "4x")}
        print(f"intermediate values 4x/1x = {ratio(values['4x'], values['1x']):.2f} "
              f"(pages 4x/1x = 4.0)")
        value = ratio(cpu["4x"]["chain"], cpu["1x"]["chain"])
        print(f"CPU time ratio 4x/1x = {value:.2f} (linear = 4.0): {verdict_time(value, 4)}")
        for stage in REDUCERS:
            value = ratio(memory["4x"][stage], memory["1x"][stage])
            # + 0.0: no "-0.0 MB" when a peak is a hair below the empty-input one
            above = [round(memory[label][stage] - memory["empty"][stage], 1) + 0.0
                     for label in ("1x", "4x")]
            flat = "flat" if abs(value - 1) <= FLAT_BAND else "growing"
            print(f"{stage} peak memory 4x/1x = {value:.2f} (flat = 1.0): {flat}; "
                  f"above an empty-input task: {above[0]:.1f} MB at 1x, {above[1]:.1f} MB at 4x")
    except TaskFailed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
