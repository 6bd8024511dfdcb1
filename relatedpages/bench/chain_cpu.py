"""What related 1 costs a related pair in Python, on one machine, at several crawl sizes.

Hadoop's task CPU (``CPU_MILLISECONDS``) counts the task JVM too, grows with its merge
passes when a fixed number of tasks shares a bigger input, and differs between machines:
the same 31,250-page run on the MiniCluster took 44 µs of task CPU per related pair in one
session and 98 µs in another (README, "Scale").  Figures from different sessions can only
be compared as ratios to a baseline measured in the same run.  This is that baseline, and a
size test of its own: it runs the chain's first step the way Hadoop Streaming runs it
(``python jobs/related.py --step-num=0 --mapper``, sort, ``… --reducer``), as plain
processes on a sample of each crawl's pages, and reads each process's CPU time when it is
reaped (``wait4``), less what the same process costs on no input (its imports: about a
second, which would dominate a small sample).  Apart, Mapper1's start-up as a task has it:
its CPU on the sample's first :data:`START_PAGES` pages, whose first anchors load the
stemmer, the stop lists and, at a Han anchor, jieba's dictionary (a fixed cost a map task),
and that process's peak memory.  If the Python work per pair does not grow with the crawl,
what grows in a cluster run is Hadoop's, and the machine's.

The sample: the pages whose normalised URL hashes (CRC-32) to 0 modulo ``pages // sample``,
segmented as ``jobs.segment`` does (:func:`relatedpages.bench.pair_census.page_records`)
and sorted by URL, as the segment job's output reaches Mapper1.  Mapper1's records are
sorted bytewise (``LC_ALL=C sort``: the key, then the value, as Hadoop orders
``SORT_VALUES`` jobs' lines) before Reducer1 reads them.  Reducer1 sees only the sample's
pairs: a pair the crawl repeats on many pages is seldom repeated in a sample, so it writes
more records per pair than on the crawl, the more so the thinner the sample; its CPU per
record it reads or writes is the figure to compare between sizes.

The tasks run without ``PYTHONUNBUFFERED``, as YARN's containers do (they do not inherit
the NodeManager's environment beyond a list of Hadoop's own variables).  Given a second
checkout (``against``: another revision, for a before/after from the same run), each run
times both on the same sample, one after the other, and keeps a digest of Reducer1's
output, which must not change unless the revisions differ in what they compute (a term of
the score: then the table says "changed").  A real crawl (:func:`crawl_pages` counts its
pages) is sampled the same way: the hub lists' WARC, whose list entries carry descriptions
the generated webs do not, times the description term.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from filters.urls import normalise_url
from relatedpages.bench.pair_census import page_records
from relatedpages.corpus.ingest import Page, read_pages

#: Mapper1's counter of related pairs (jobs.related: CHAIN_GROUP, "related_pairs").
PAIRS_COUNTER = "related_pairs"
#: The sample's first pages that Mapper1's start-up is measured on: enough for its first
#: anchors, which load the stemmer, the stop lists and (at a Han anchor) jieba's dictionary.
START_PAGES = 100


class ChainCpuError(RuntimeError):
    """A task process failed: its command and the end of its stderr."""


@dataclass(frozen=True)
class TaskCost:
    """One task process: its CPU time (user + system), its output lines and counters, its
    peak resident memory."""

    cpu_seconds: float
    records_out: int
    counters: dict[str, int]
    peak_mb: float = 0.0  # the kernel's ru_maxrss (KiB on Linux), in MiB


@dataclass(frozen=True)
class ChainCost:
    """Related 1's Python work on the sample of one crawl."""

    pages: int  # the crawl's pages
    sampled: int  # its pages in the sample
    pairs: int  # Mapper1's related pairs
    mapper: TaskCost
    reducer: TaskCost
    mapper_idle: float = 0.0  # CPU seconds of the mapper's process on no input
    reducer_idle: float = 0.0  # … and of the reducer's
    mapper_start: float = 0.0  # … of the mapper's on the sample's first START_PAGES pages
    mapper_start_mb: float = 0.0  # … and its peak memory there
    output_digest: str = ""  # SHA-256 of Reducer1's output (the same for the same code)

    @property
    def pairs_per_page(self) -> float:
        return self.pairs / self.sampled if self.sampled else 0.0

    def _per_pair(self, seconds: float) -> float:
        return max(0.0, seconds) / self.pairs * 1e6 if self.pairs else 0.0

    @property
    def mapper_us_per_pair(self) -> float:
        """Mapper1's CPU per related pair, its start-up left out."""
        return self._per_pair(self.mapper.cpu_seconds - self.mapper_idle)

    @property
    def reducer_us_per_pair(self) -> float:
        """Reducer1's CPU per related pair, its start-up left out."""
        return self._per_pair(self.reducer.cpu_seconds - self.reducer_idle)

    @property
    def reducer_out_per_in(self) -> float:
        """Reducer1's output records per input record.  In the crawl, it writes a record
        each way per distinct pair and one per cited page: a sample's pairs are seldom
        repeated, so its share is higher than the crawl's, and grows as the sample thins."""
        return (self.reducer.records_out / self.mapper.records_out
                if self.mapper.records_out else 0.0)

    @property
    def reducer_us_per_record(self) -> float:
        """Reducer1's CPU per record it reads or writes, its start-up left out."""
        records = self.mapper.records_out + self.reducer.records_out
        busy = max(0.0, self.reducer.cpu_seconds - self.reducer_idle)
        return busy / records * 1e6 if records else 0.0

    @property
    def total_us_per_pair(self) -> float:
        return self.mapper_us_per_pair + self.reducer_us_per_pair


def in_sample(url: str, every: int) -> bool:
    """Whether ``url`` is one of the sampled pages: its CRC-32 is 0 modulo ``every``
    (deterministic, and the same page is in every size's sample that uses the same ``every``).

    >>> in_sample("http://a.example/", 1)
    True
    >>> sum(in_sample(f"http://s{n}.example/", 10) for n in range(10_000))
    985
    """
    return zlib.crc32(url.encode("utf-8")) % every == 0


def crawl_pages(crawl: Path) -> int:
    """The pages of a crawl file that ``jobs.segment`` would segment (their URL normalises),
    counted without segmenting them: a real crawl's size, to sample it as a generated one."""
    return sum(1 for item in read_pages(str(crawl))
               if isinstance(item, Page) and normalise_url(item.url) is not None)


def write_sample(crawl: Path, every: int, out: Path) -> int:
    """Write the segment records of the sampled pages of ``crawl`` to ``out`` as the segment
    job's output lines (``"url"<TAB>record``), sorted by URL; the number written."""
    lines = sorted(json.dumps(record["url"]) + "\t" + json.dumps(record) + "\n"
                   for record in page_records(crawl, keep=lambda url: in_sample(url, every)))
    tmp = out.with_name(out.name + ".partial")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    tmp.replace(out)
    return len(lines)


def task_environment() -> dict[str, str]:
    """This process's environment less ``PYTHONUNBUFFERED``, as a YARN container has it
    (which makes Python write every line with its own system calls)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def run_task(command: list[str], stdin: Path, stdout: Path, *, cwd: Path) -> TaskCost:
    """Run one streaming task process, ``stdin`` to ``stdout``: its CPU time as the kernel
    reports it when the process is reaped, its output lines, its ``reporter:counter`` lines
    summed by name (mrjob's parser)."""
    from mrjob.parse import parse_mr_job_stderr

    err = stdout.with_name(stdout.name + ".stderr")
    with open(stdin, "rb") as source, open(stdout, "wb") as sink, open(err, "wb") as log:
        process = subprocess.Popen(command, stdin=source, stdout=sink, stderr=log, cwd=cwd,
                                   env=task_environment())
        _, status, usage = os.wait4(process.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(err, "rb") as log:
        parsed = parse_mr_job_stderr(log)
    if code != 0:
        tail = "\n".join(line.decode("utf-8", "replace") if isinstance(line, bytes) else line
                         for line in parsed["other"][-20:])
        raise ChainCpuError(f"{' '.join(command)} exited with {code}:\n{tail}")
    err.unlink()
    counters = {name: value for group in parsed["counters"].values()
                for name, value in group.items()}
    with open(stdout, "rb") as handle:
        lines = sum(1 for _ in handle)
    return TaskCost(usage.ru_utime + usage.ru_stime, lines, counters, usage.ru_maxrss / 1024)


def chain_costs(crawl: Path, pages: int, sample: int, work: Path, *, repo: Path,
                runs: int = 1, against: Path | None = None
                ) -> tuple[list[ChainCost], list[ChainCost]]:
    """Related 1's Python CPU on about ``sample`` pages of ``crawl`` (a crawl of ``pages``
    pages), ``runs`` times on the same sample, with the code of ``repo`` and (if given)
    of ``against``, one after the other in each run: the costs of each (the second list
    empty without ``against``).  ``work`` holds the sample and the tasks' output, removed
    when done."""
    every = max(1, pages // max(1, sample))
    work.mkdir(parents=True, exist_ok=True)
    records, mapped, ordered, reduced, empty, first = (
        work / name for name in ("records.jsonl", "map.out", "map.sorted", "reduce.out", "empty",
                                 "first.jsonl"))
    task = [sys.executable, "jobs/related.py", "--step-num=0"]
    checkouts = [repo] + ([against] if against is not None else [])
    costs: tuple[list[ChainCost], list[ChainCost]] = ([], [])
    try:
        sampled = write_sample(crawl, every, records)
        empty.write_bytes(b"")
        with open(records, "rb") as source, open(first, "wb") as sink:
            sink.writelines(line for _, line in zip(range(START_PAGES), source))
        for _ in range(runs):
            for checkout, found in zip(checkouts, costs):
                mapper = run_task([*task, "--mapper"], records, mapped, cwd=checkout)
                sort = subprocess.run(["sort", "-S", "25%", "-T", str(work), "-o", str(ordered),
                                       str(mapped)], env={**os.environ, "LC_ALL": "C"},
                                      capture_output=True, text=True)
                if sort.returncode != 0:
                    raise ChainCpuError(f"sort failed: {sort.stderr.strip()}")
                mapped.unlink()
                reducer = run_task([*task, "--reducer"], ordered, reduced, cwd=checkout)
                with open(reduced, "rb") as handle:
                    digest = hashlib.file_digest(handle, "sha256").hexdigest()
                mapper_idle, reducer_idle = (
                    run_task([*task, role], empty, reduced, cwd=checkout).cpu_seconds
                    for role in ("--mapper", "--reducer"))
                start = run_task([*task, "--mapper"], first, reduced, cwd=checkout)
                found.append(ChainCost(pages, sampled, mapper.counters.get(PAIRS_COUNTER, 0),
                                       mapper, reducer, mapper_idle, reducer_idle,
                                       start.cpu_seconds, start.peak_mb, digest))
    finally:
        for path in (records, mapped, ordered, reduced, empty, first):
            path.unlink(missing_ok=True)
    return costs


def machine() -> str:
    """The CPU model and the cores this process may use (``/proc/cpuinfo``)."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores"


def format_costs(costs: list[ChainCost]) -> Iterator[str]:
    """A Markdown table: a row per crawl size, the last column relative to the first row."""
    yield ("| pages | sampled | related pairs | a page | Mapper1 µs/pair | Reducer1 µs/pair "
           "| Reducer1 records out/in | Reducer1 µs/record (in + out) | together µs/pair "
           f"| Mapper1 on {START_PAGES} pages, s | vs first |")
    yield "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    first = costs[0].total_us_per_pair if costs else 0.0
    for cost in costs:
        ratio = cost.total_us_per_pair / first if first else 0.0
        yield (f"| {cost.pages:,} | {cost.sampled:,} | {cost.pairs:,} | {cost.pairs_per_page:.1f} "
               f"| {cost.mapper_us_per_pair:.1f} | {cost.reducer_us_per_pair:.1f} "
               f"| {cost.reducer_out_per_in:.2f} | {cost.reducer_us_per_record:.1f} "
               f"| {cost.total_us_per_pair:.1f} | {cost.mapper_start:.2f} | {ratio:.2f} |")


def format_comparison(this: list[ChainCost], before: list[ChainCost], label: str) -> Iterator[str]:
    """A Markdown table: per size, the CPU per pair of ``label``'s code and of this
    checkout's, their ratio, and whether Reducer1 wrote the same bytes ("changed" when it
    did not: the revisions compute different scores)."""
    yield (f"| pages | Mapper1 µs/pair ({label} → this) | Reducer1 µs/pair "
           f"| together µs/pair | this / before | Mapper1 on {START_PAGES} pages, s "
           "| its peak memory, MB | Reducer1's output |")
    yield "|---:|---:|---:|---:|---:|---:|---:|---|"
    for now, then in zip(this, before):
        ratio = now.total_us_per_pair / then.total_us_per_pair if then.total_us_per_pair else 0.0
        same = "the same bytes" if now.output_digest == then.output_digest else "changed"
        yield (f"| {now.pages:,} | {then.mapper_us_per_pair:.1f} → {now.mapper_us_per_pair:.1f} "
               f"| {then.reducer_us_per_pair:.1f} → {now.reducer_us_per_pair:.1f} "
               f"| {then.total_us_per_pair:.1f} → {now.total_us_per_pair:.1f} | {ratio:.2f} "
               f"| {then.mapper_start:.2f} → {now.mapper_start:.2f} "
               f"| {then.mapper_start_mb:.0f} → {now.mapper_start_mb:.0f} | {same} |")
