"""Hot keys: related 1's load per key predicted as Mapper1 makes it, placed as Hadoop's
partitioner places it, and split and routed by a plan without changing one byte of the
output."""
from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from jobrun import run_job, write_segments
from jobs.hot_key_bins import MRHotKeyBins
from jobs.related import MRRelatedPages
from jobs.segment import MRSegment
from relatedpages.bench.key_skew import (
    default_chain_params, key_loads, plan_and_predict, read_segment_records, reducer_skew)
from relatedpages.scoring.options import preset_link_params
from relatedpages.scoring.parameters import preset_params
from relatedpages.store.hotkeys import (
    PlanError, every_key, pair_key, partition, plan_keys, read_plan, write_plan)
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
HUB_PAGES = 40  # the first pages of awesomehub: lists of 100-1,000 links


@pytest.fixture(scope="module")
def hub_records(shared_data, tmp_path_factory) -> list[dict]:
    """Segment records of the first awesomehub pages, made by the segment job."""
    folder = tmp_path_factory.mktemp("hub")
    head = folder / "hub.warc.gz"
    with shared_data("awesomehub/awesomehub.warc.gz").open("rb") as inp, head.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for ordinal, record in enumerate(ArchiveIterator(inp)):
            if ordinal == HUB_PAGES:
                break
            writer.write_record(record)
    job = MRSegment(["-r", "inline", "--no-conf", str(head)])
    with job.make_runner() as runner:
        runner.run()
        records = [record for _, record in job.parse_output(runner.cat_output())]
    assert len(records) > 20
    return records


def _plan_for(records: list[dict], reducers: int, preset: str = "default") -> dict[str, list[int]]:
    loads = key_loads(records, preset_link_params(preset), preset_params(preset))
    return plan_keys(loads, reducers)


def _placed(plan: dict[str, list[int]], loads: dict[str, int], reducers: int) -> list[float]:
    """Each reducer's load under the plan, a piece counted as its page's load over its pieces."""
    bins = [0.0] * reducers
    for page, load in loads.items():
        labels = plan.get(page)
        if labels is None:
            bins[partition(page, reducers)] += load
        for label in labels or ():
            bins[partition([page, label], reducers)] += load / len(labels)
    return bins


def test_a_plan_splits_heavy_pages_routes_them_and_evens_the_reducers():
    loads = {"a": 400, "b": 100, "c": 30, "d": 20, **{f"p{n}": 1 for n in range(50)}}
    # fair share 600 / 4 = 150: split above a quarter of it (37.5), route above a sixteenth
    plan = plan_keys(loads, 4)
    assert {page: len(labels) for page, labels in plan.items()} == {"a": 4, "b": 3, "c": 1, "d": 1}
    assert all(len(set(labels)) == len(labels) for labels in plan.values())
    bins = _placed(plan, loads, 4)
    assert max(bins) / (sum(bins) / 4) < 1.1  # the hash alone: a's 400 on one reducer
    assert max(_placed({}, loads, 4)) >= 400
    assert plan_keys(loads, 1) == {} and plan_keys({}, 64) == {}
    for bad in ({"reducers": 0}, {"reducers": 4, "piece": 0.1, "routed": 0.2}):
        with pytest.raises(ValueError):
            plan_keys(loads, **bad)


def test_a_split_page_s_pairs_go_to_one_piece_per_other_page_and_its_counts_to_all():
    plan = {"http://hot/": [7, 3, 12], "http://warm/": [5]}
    assert pair_key("http://cold/", "http://hot/", plan) == "http://cold/"
    labels = {pair_key("http://hot/", f"http://o{n}/", plan)[1] for n in range(50)}
    assert labels == {7, 3, 12}
    assert pair_key("http://hot/", "http://o7/", plan) == pair_key("http://hot/", "http://o7/", plan)
    assert pair_key("http://warm/", "http://o7/", plan) == ["http://warm/", 5]
    assert list(every_key("http://hot/", plan)) == [["http://hot/", n] for n in (7, 3, 12)]
    assert list(every_key("http://cold/", plan)) == ["http://cold/"]


def test_a_plan_file_round_trips_and_a_bad_line_is_named(tmp_path):
    path = tmp_path / "plan.tsv"
    write_plan({"http://b/": [2], "http://a/": [5, 0, 9]}, path)
    assert read_plan(path) == {"http://a/": [5, 0, 9], "http://b/": [2]}
    for line in ("http://b/ 2", "http://b/\tmany", "http://b/\t1,1", "http://b/\t-1"):
        path.write_text(f"# hot keys\nhttp://a/\t5\n{line}\n")
        with pytest.raises(PlanError, match=r"line 3: expected 'page<TAB>label"):
            read_plan(path)


def test_the_job_refuses_a_bad_plan_before_any_work(tmp_path):
    plan = tmp_path / "plan.tsv"
    plan.write_text("http://a/\tmany\n")
    segments = write_segments(tmp_path / "seg.jsonl", [])
    done = subprocess.run([sys.executable, "-m", "jobs.related", "-r", "inline", "--no-conf",
                           "--hot-keys", str(plan), str(segments)], cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "hot-key plan" in done.stderr and "line 1" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("preset", ["default", "paper"])
def test_the_chain_with_hot_keys_split_gives_the_same_output_and_counters(
        hub_records, tmp_path, preset):
    segments = write_segments(tmp_path / "seg.jsonl", hub_records)
    plan = _plan_for(hub_records, 1024, preset)
    assert sum(len(labels) >= 5 for labels in plan.values()) >= 5  # real splits, many pieces
    assert sum(len(labels) > 1 for labels in plan.values()) >= 50
    write_plan(plan, tmp_path / "plan.tsv")
    args = ["--preset", preset, "--t", "0.5"]
    plain, plain_counters = run_job(MRRelatedPages, [*args, segments])
    split, split_counters = run_job(MRRelatedPages, [*args, "--hot-keys", tmp_path / "plan.tsv",
                                                     segments])
    assert len(plain) > 100
    assert json.dumps(split, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert split_counters == plain_counters


def _mapper_keys(records: list[dict], tmp_path: Path, *args: str) -> Counter:
    """Related 1's map output keys, counted: Mapper1 run as a Hadoop task runs it."""
    segments = write_segments(tmp_path / "seg.jsonl", records)
    job = MRRelatedPages(["--mapper", "--step-num=0", *args])
    job.sandbox(stdin=io.BytesIO(segments.read_bytes()))
    job.execute()
    keys: Counter = Counter()
    for line in job.stdout.getvalue().splitlines():
        key = json.loads(line.split(b"\t", 1)[0])
        keys[key if isinstance(key, str) else tuple(key)] += 1
    return keys


def test_the_predicted_loads_are_what_mapper1_emits(hub_records, tmp_path):
    link_params, sim_params = default_chain_params()
    assert _mapper_keys(hub_records, tmp_path) == key_loads(hub_records, link_params, sim_params)
    plan = _plan_for(hub_records, 1024)
    write_plan(plan, tmp_path / "plan.tsv")
    split = _mapper_keys(hub_records, tmp_path, "--hot-keys", str(tmp_path / "plan.tsv"))
    assert split == key_loads(hub_records, link_params, sim_params, plan)
    assert any(isinstance(key, tuple) for key in split)


@pytest.mark.parametrize("reducers, bound", [(64, 1.15), (1024, 1.6)])
def test_a_plan_lowers_the_skew_with_and_without_a_key_above_a_reducer_s_share(
        hub_records, reducers, bound):
    loads = key_loads(hub_records, *default_chain_params())
    plain = reducer_skew(loads, reducers)
    assert (plain.floor > 2) == (reducers == 1024)  # one page over twice a reducer's share
    plan, (without, with_plan) = plan_and_predict(hub_records, reducers, seed=1, sample=1.0)
    assert without == pytest.approx(plain.skew)
    # what the hash leaves of the light pages stays: 1.31 → 1.11; 3.94 → 1.52
    assert with_plan < bound and without > with_plan + 0.15


def test_the_partitioner_is_hadoop_s_key_field_hash():
    # KeyFieldBasedPartitioner -k1,1 over the JSON key: h = 31 h + b (signed bytes);
    # tests/test_hadoop.py checks it against Hadoop's own
    assert partition("http://a/", 1) == 0
    h = 0
    for byte in b'"http://a/"':
        h = (31 * h + byte) % 2**32
    assert partition("http://a/", 1000) == (h & 0x7FFFFFFF) % 1000
    # a byte above 127 counts negative, as Java's byte does
    assert partition("http://\u00e9/", 7) == partition("http://\u00e9/", 7)
    assert partition(("http://a/", 2), 64) == partition(["http://a/", 2], 64)


def test_key_skew_prints_the_skew_and_writes_a_plan(shared_data, tmp_path):
    arcs = tmp_path / "arcs.tsv"
    with gzip.open(shared_data("graphs/cnr-2000") / "cnr-2000.arcs.tsv.gz", "rt") as whole:
        arcs.write_text("".join(line for _, line in zip(range(3000), whole)))
    script = REPO / "scripts" / "key_skew.py"
    done = subprocess.run([sys.executable, str(script), "--graph", str(arcs), "--pages", "200",
                           "--reducers", "4,64", "--sample", "1"], capture_output=True, text=True,
                          cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert "| arcs, 200 pages (seed 1) | 64 |" in done.stdout
    assert "64 reducers: skew" in done.stdout
    plan = tmp_path / "plan.tsv"
    done = subprocess.run([sys.executable, str(script), "--graph", str(arcs), "--pages", "200",
                           "--plan", "64", "--out", str(plan), "--sample", "1"],
                          capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert read_plan(plan) and f"wrote {plan}" in done.stdout
    done = subprocess.run([sys.executable, str(script), "--web", "120", "--reducers", "4"],
                          capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert "| generated web, 120 pages (seed 1) | 4 |" in done.stdout
    records = tmp_path / "seg.jsonl"
    records.write_text("not a record\n" + "".join(
        json.dumps(f"http://www.p{n}.org/") + "\t" + json.dumps(
            {"url": f"http://www.p{n}.org/", "site": f"p{n}.org",
             "blocks": [[{"href": "http://x/", "anchor": "", "pos": 0},
                         {"href": "http://y/", "anchor": "", "pos": 1}]]}) + "\n"
        for n in range(3)))
    assert len(list(read_segment_records(records))) == 3  # the bad line is skipped
    # the same plan counted by the job (jobs.hot_keys), on the inline runner
    by_job = tmp_path / "by-job.tsv"
    done = subprocess.run([sys.executable, str(script), "--records", str(records), "--plan", "2",
                           "--out", str(by_job), "--runner", "inline", "--sample", "1"],
                          capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert "of 3 sampled records" in done.stdout and f"wrote {by_job}" in done.stdout
    in_process = tmp_path / "in-process.tsv"
    done = subprocess.run([sys.executable, str(script), "--records", str(records), "--plan", "2",
                           "--out", str(in_process), "--sample", "1"],
                          capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert read_plan(by_job) == read_plan(in_process) != {}
    # several record files: every one is an input of the count job
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps("http://www.q.org/") + "\t" + json.dumps(
        {"url": "http://www.q.org/", "site": "q.org",
         "blocks": [[{"href": "http://x/", "anchor": "", "pos": 0},
                     {"href": "http://z/", "anchor": "", "pos": 1}]]}) + "\n")
    plans = []
    for runner in (["--runner", "inline"], []):
        plans.append(tmp_path / f"both{len(runner)}.tsv")
        done = subprocess.run([sys.executable, str(script), "--records", str(records), str(more),
                               "--plan", "2", "--out", str(plans[-1]), "--sample", "1", *runner],
                              capture_output=True, text=True, cwd=REPO, timeout=guard(600))
        assert done.returncode == 0, done.stderr
        assert ("of 4 sampled records" in done.stdout) == bool(runner)  # the job read both
    assert read_plan(plans[0]) == read_plan(plans[1]) != read_plan(in_process)
    done = subprocess.run([sys.executable, str(script), "--records", str(records),
                           "--reducers", "2", "--with-plan", str(by_job)],
                          capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert f"the plan in {by_job} (2 pages routed" in done.stdout
    assert "| seg.jsonl | 2 |" in done.stdout
    done = subprocess.run([sys.executable, str(script), "--records", str(records),
                           "--runner", "inline"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2 and "--runner counts --records for a --plan" in done.stderr
    done = subprocess.run([sys.executable, str(script), "--records", str(records),
                           "--reducers", "0"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2 and "--reducers: at least 1" in done.stderr


def test_reducer1_counts_a_key_that_is_neither_a_page_nor_a_piece():
    job = MRRelatedPages(["--reducer", "--step-num=0"])
    job.sandbox(stdin=io.BytesIO(b'[1, 2]\t["0", "a.org"]\n'
                                 b'["http://b/", 3]\t["0", "a.org"]\n'))
    job.execute()
    counters = [line for line in job.stderr.getvalue().decode().splitlines()
                if line.startswith("reporter:counter:related,bad_intermediate_key,")]
    assert counters == ["reporter:counter:related,bad_intermediate_key,1"]
    # the good piece was read as its page: under the default preset it reports popularity
    assert job.stdout.getvalue().startswith(b'"http://b/"\t')


# -- the plan counted by jobs (jobs.hot_keys, jobs.hot_key_bins, relatedpages.store.keyloads) --


def _plan_by_jobs(segments: Path, reducers: int, tmp_path: Path, runner: str = "inline",
                  *args: str):
    from jobs.pipeline import plan_hot_keys

    return plan_hot_keys([str(segments)], reducers, tmp_path / "plan.tsv", runner=runner,
                         work=tmp_path / "work", chain_args=args[:2], count_args=args[2:])


@pytest.mark.parametrize("runner, reducers, sample, preset", [
    ("inline", 256, 0.5, "default"), ("inline", 64, 1.0, "paper"), ("local", 64, 0.5, "default")])
def test_the_count_jobs_make_the_plan_one_process_makes_from_the_same_sample(
        hub_records, tmp_path, runner, reducers, sample, preset):
    from relatedpages.store.keyloads import sampled

    segments = write_segments(tmp_path / "seg.jsonl", hub_records)
    planned = _plan_by_jobs(segments, reducers, tmp_path, runner, "--preset", preset,
                            "--sample", str(sample))
    chosen = [record for record in hub_records if sampled(record["url"], 1, sample)]
    assert 0 < len(chosen) <= len(hub_records) and (len(chosen) < len(hub_records)) == (sample < 1)
    loads = key_loads(chosen, preset_link_params(preset), preset_params(preset))
    assert planned.values == sum(loads.values()) == planned.count.counters["hot keys"]["values"]
    assert planned.count.counters["hot keys"]["sampled_records"] == len(chosen)
    heavy = planned.bins.counters["hot keys"]["heavy_pages"]
    assert heavy < 64 * reducers and heavy >= len(planned.plan)  # routed or not, once packed
    assert planned.plan and planned.plan == plan_keys(loads, reducers)
    assert read_plan(tmp_path / "plan.tsv") == planned.plan


def test_binned_counts_give_plan_keys_plan_however_the_pages_are_split():
    # any pages over any number of bins tasks: the summed arrays and the heavy pages give
    # plan_keys' plan over all the loads
    import random

    from relatedpages.store.hotkeys import Bins
    from relatedpages.store.keyloads import BINS, HEAVY, plan_from_counts

    rng = random.Random(5)
    for trial in range(12):
        reducers = rng.choice([2, 3, 8, 16])
        loads = {f"http://p{n}.example/": int(rng.paretovariate(0.8)) + 1
                 for n in range(rng.randint(1, 400))}
        total = sum(loads.values())
        tasks = [Bins(reducers, total) for _ in range(rng.randint(1, 5))]
        rows = []
        for page, load in loads.items():
            if rng.choice(tasks).add(page, load):
                rows.append((HEAVY, [page, load]))
        rows += [(BINS, task.bins) for task in tasks]
        rng.shuffle(rows)
        plan, values = plan_from_counts(rows, reducers, total)
        assert values == total
        assert plan == plan_keys(loads, reducers), trial


def test_bins_that_make_no_plan_are_named():
    from relatedpages.store.keyloads import plan_from_counts

    with pytest.raises(PlanError, match="for 2 reducers, not 4: count again with --reducers 4"):
        plan_from_counts([("bins", [1, 2])], 4)
    with pytest.raises(PlanError, match="counted twice"):
        plan_from_counts([("bins", [1, 2]), ("heavy", ["a", 1]), ("heavy", ["a", 1])], 2)
    with pytest.raises(PlanError, match="not a bins job's output line"):
        plan_from_counts([("http://a/", [["http://b/", 1.0, []]])], 2)
    with pytest.raises(PlanError, match="output is empty"):
        plan_from_counts([], 2)
    with pytest.raises(PlanError, match="the bins hold 3 values, the count 4"):
        plan_from_counts([("bins", [1, 2])], 2, total=4)
    assert plan_from_counts([("bins", [0, 0])], 2) == ({}, 0)


def test_the_count_jobs_count_bad_records_and_lines_and_refuse_bad_options(tmp_path):
    segments = tmp_path / "seg.jsonl"
    good = {"url": "http://www.p1.org/", "site": "p1.org",
            "blocks": [[{"href": "http://x.org/", "anchor": "x", "pos": 0},
                        {"href": "http://y.org/", "anchor": "y", "pos": 1}]]}
    segments.write_text('"a"\t[1, 2]\n"b"\t{"url": "http://b/", "blocks": []}\n'
                        + json.dumps(good["url"]) + "\t" + json.dumps(good) + "\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mine.txt").write_text("not the jobs'")
    planned = _plan_by_jobs(segments, 4, tmp_path, "inline", "--preset", "default",
                            "--sample", "1")
    assert (tmp_path / "work" / "mine.txt").read_text() == "not the jobs'"  # left alone
    assert planned.count.counters["hot keys"]["bad_segment_record"] == 2
    assert planned.count.counters["hot keys"]["sampled_records"] == 1
    assert planned.values == planned.count.counters["hot keys"]["values"] > 0
    loads = tmp_path / "loads.jsonl"
    loads.write_text('"http://x.org/"\t3\n[1]\t2\n"http://y.org/"\t"many"\n')
    _, counters = run_job(MRHotKeyBins, ["--reducers", "2", "--total", "3", loads])
    assert counters["hot keys"]["bad_count_line"] == 2
    for module, bad, message in [("jobs.hot_key_bins", ["--reducers", "0", "--total", "1"], "--reducers"),
                                 ("jobs.hot_key_bins", ["--reducers", "2"], "--total"),
                                 ("jobs.hot_keys", ["--sample", "0"], "--sample")]:
        done = subprocess.run([sys.executable, "-m", module, "-r", "inline", "--no-conf",
                               *bad, str(segments)], capture_output=True, text=True, cwd=REPO)
        assert done.returncode == 2 and message in done.stderr
        assert "Traceback" not in done.stderr


def _record(url: str, site: str) -> dict:
    links = [("http://p.org/", "Pea soup"), ("http://q.org/", "Quince jam")]
    return {"url": url, "site": site, "headings": [], "loose": [],
            "blocks": [[{"href": href, "anchor": anchor, "pos": n}
                        for n, (href, anchor) in enumerate(links)]]}


def test_a_combiner_would_fold_a_task_s_auxiliary_values_and_a_site_s_cited_values(hub_records):
    """combiner_fold by hand: each record gives p and q an auxiliary value, a cited value
    (the default preset's site fallback needs popularity) and a pair value: 12 values."""
    from relatedpages.bench.key_skew import combiner_fold

    link, params = default_chain_params()
    a1, a2, b1 = _record("http://a.com/1", "a.com"), _record("http://a.com/2", "a.com"), _record("http://b.com/1", "b.com")
    one_task = combiner_fold([a1, a2], link, params, 1)
    assert (one_task.values, one_task.aux, one_task.cited, one_task.pairs) == (12, 4, 4, 4)
    assert one_task.after == 8  # aux 4 -> 2 (p, q), cited 4 -> 2 (one site), pairs 4
    assert (one_task.hottest_values, one_task.hottest_after) == (6, 4)
    assert combiner_fold([a1, a2], link, params, 2).after == 12  # a task each: nothing folds
    assert combiner_fold([a1, b1], link, params, 1).after == 10  # two citing sites
    assert combiner_fold([a1, {"junk": 1}, a2], link, params, 1).after == 8  # rejected: none
    # on real pages: Mapper1's values as key_loads counts them, and folding only shrinks
    fold = combiner_fold(hub_records, link, params, 4)
    assert fold.values == sum(key_loads(hub_records, link, params).values())
    assert fold.pairs < fold.after < fold.values
    assert combiner_fold(hub_records, link, params, len(hub_records)).after >= fold.after
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "key_skew.py"), "--web", "120",
                           "--combiner", "4"], capture_output=True, text=True, cwd=REPO, timeout=guard(600))
    assert done.returncode == 0, done.stderr
    assert "a combiner over 4 map tasks would leave" in done.stdout and "the hottest page, " in done.stdout
