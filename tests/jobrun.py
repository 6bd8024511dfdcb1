"""Run a job in-process the way the model tests of mrjob do: output and summed counters."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from mrjob.job import MRJob

from jobs.base import summed_counters


def run_job(job_class: type[MRJob], args: Iterable[Any], runner: str = "inline"
            ) -> tuple[dict[Any, Any], dict[str, dict[str, int]]]:
    """Run ``job_class`` with ``--no-conf``; return {key: value} of its output and the
    counters summed over its steps."""
    job = job_class(["-r", runner, "--no-conf", *map(str, args)])
    with job.make_runner() as job_runner:
        job_runner.run()
        output = dict(job.parse_output(job_runner.cat_output()))
        counters = summed_counters(job_runner.counters())
    return output, counters


def write_segments(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    """Segment records as jobs.segment writes them (key = URL)."""
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record["url"]) + "\t" + json.dumps(record) + "\n")
    return path
