"""Hadoop's job history read into per-job figures: time, CPU, shuffle, memory, skew.

A MapReduce job on YARN leaves two files in its history folder (``mapreduce.jobhistory.
intermediate-done-dir``, then ``done-dir``): ``<job id>-….jhist``, the application master's
event log, and ``<job id>_conf.xml``, the job's configuration.  With
``mapreduce.jobhistory.jhist.format=json`` (the default is Avro binary) the event log is
text: a header line ``Avro-Json``, the Avro schema, then one JSON event per line.  The events
read here:

* ``JOB_SUBMITTED`` / ``JOB_FINISHED``: submit and finish time (ms), the job's total counters;
* ``TASK_STARTED`` / ``TASK_FINISHED``: each task's start and finish time and its counters
  (of its successful attempt; killed speculative attempts are not tasks).

Hadoop's own counters used (``org.apache.hadoop.mapreduce.TaskCounter``):
``CPU_MILLISECONDS``, ``REDUCE_SHUFFLE_BYTES`` (map output bytes fetched by the reducers,
compressed if the map output is), ``MAP_OUTPUT_BYTES`` (before compression),
``REDUCE_INPUT_RECORDS``, ``MAP_PHYSICAL_MEMORY_BYTES_MAX`` / ``REDUCE_…`` (a task's peak
resident memory: the container's process tree, the task JVM and the streaming Python process
it started; ``PHYSICAL_MEMORY_BYTES`` is only its last sample).

The configuration names the stage: Hadoop Streaming's ``stream.map.streamprocessor`` holds
mrjob's task command (``… python3 related.py --step-num=0 --mapper …``), so a job reads as
``related 1`` (the job script's name, then its step, counted from 1).
"""
from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping
from urllib.parse import unquote_plus
from xml.etree import ElementTree

TASK_COUNTER_GROUP = "org.apache.hadoop.mapreduce.TaskCounter"
#: The first line of a JSON job history file (Avro's JSON encoding).
JSON_HEADER = "Avro-Json"


class HistoryError(ValueError):
    """A job history file that is not JSON, or has no submit or finish event."""


@dataclass(frozen=True)
class TaskFigures:
    """One task: MAP or REDUCE, its start and finish (ms since the epoch), Hadoop's task
    counters by name (``TaskCounter`` and ``FileSystemCounter`` groups)."""

    kind: str
    start_ms: int
    finish_ms: int
    counters: Mapping[str, int]
    task_id: str = ""
    python_peak_kb: int = 0  # the task's Python process alone, when measured (bench_scale)
    python_cpu_ms: int = 0  # … and its Python processes' CPU time

    @property
    def seconds(self) -> float:
        return (self.finish_ms - self.start_ms) / 1000


@dataclass(frozen=True)
class JobFigures:
    """What one Hadoop job cost, from its history."""

    job_id: str
    stage: str  # e.g. "segment 1", "related 3" (the job script and its step); "" if unknown
    submit_ms: int
    finish_ms: int
    counters: Mapping[str, int]  # the job's total Hadoop counters by name
    tasks: tuple[TaskFigures, ...] = field(default=())

    @property
    def name(self) -> str:
        """The stage, or the job id when the stage is unknown."""
        return self.stage or self.job_id

    @property
    def seconds(self) -> float:
        """Submit to finish (the driver's JVM start and the commit around it not included)."""
        return (self.finish_ms - self.submit_ms) / 1000

    @property
    def cpu_seconds(self) -> float:
        """CPU time of every task (JVM and Python), as Hadoop measured it."""
        return self.counters.get("CPU_MILLISECONDS", 0) / 1000

    @property
    def python_cpu_seconds(self) -> float:
        """CPU time of the tasks' Python processes, when measured (bench_scale's launcher,
        which reads it when each process is reaped).  Not always a part of
        :attr:`cpu_seconds`: Hadoop samples a task's process tree every few seconds and
        misses what a process used after its last sample, so on tasks of a few seconds it
        counts less than the Python processes alone (60 pages: 7.4 s against 17.5 s); on
        tasks of many minutes the difference is small."""
        return sum(task.python_cpu_ms for task in self.tasks) / 1000

    @property
    def shuffle_bytes(self) -> int:
        return self.counters.get("REDUCE_SHUFFLE_BYTES", 0)

    @property
    def map_output_bytes(self) -> int:
        return self.counters.get("MAP_OUTPUT_BYTES", 0)

    @property
    def written_bytes(self) -> int:
        """What the job's output put on HDFS (one replica)."""
        return self.counters.get("HDFS_BYTES_WRITTEN", 0)

    def _of(self, kind: str) -> list[TaskFigures]:
        return [task for task in self.tasks if task.kind == kind]

    def peak_mb(self, kind: str) -> float:
        """The largest peak resident memory of a task of ``kind`` (MAP or REDUCE), MB: Hadoop's
        ``MAP_PHYSICAL_MEMORY_BYTES_MAX`` / ``REDUCE_…`` ("Peak Map Physical memory"), or,
        in a history without them, ``PHYSICAL_MEMORY_BYTES``, the task's last sample
        (Hadoop calls it a snapshot: at 500,000 pages a map task's was 352 MB, its peak 677)."""
        peaks = [task.counters.get(f"{kind}_PHYSICAL_MEMORY_BYTES_MAX",
                                   task.counters.get("PHYSICAL_MEMORY_BYTES", 0))
                 for task in self._of(kind)]
        return max(peaks, default=0) / 2**20

    def python_peak_mb(self, kind: str) -> float:
        """The largest peak resident memory of the Python process of a task of ``kind``, MB
        (0 when not measured: Hadoop sees only the container's whole process tree)."""
        return max((task.python_peak_kb for task in self._of(kind)), default=0) / 1024

    def map_seconds(self) -> float:
        """First map start to last map finish."""
        maps = self._of("MAP")
        if not maps:
            return 0.0
        return (max(t.finish_ms for t in maps) - min(t.start_ms for t in maps)) / 1000

    def reduce_seconds(self) -> float:
        """Last map finish to last reduce finish: the shuffle's tail, the sort, the reducers."""
        maps, reduces = self._of("MAP"), self._of("REDUCE")
        if not reduces:
            return 0.0
        begin = max((t.finish_ms for t in maps), default=min(t.start_ms for t in reduces))
        return max(0.0, (max(t.finish_ms for t in reduces) - begin) / 1000)

    def reduce_skew(self) -> float:
        """Reducer input skew: the largest reducer's input records over the mean (1.0 is an
        even spread; 0.0 with no reducer input)."""
        records = [t.counters.get("REDUCE_INPUT_RECORDS", 0) for t in self._of("REDUCE")]
        mean = statistics.fmean(records) if records else 0.0
        return max(records) / mean if mean else 0.0


def _counters(block: Any) -> dict[str, int]:
    """Hadoop's own counters of a ``counters`` object, by name (user counters left out:
    the jobs report theirs through mrjob)."""
    found: dict[str, int] = {}
    if not isinstance(block, Mapping):
        return found
    for group in block.get("groups", ()) or ():
        if not isinstance(group, Mapping) or not str(group.get("name", "")).startswith(
                "org.apache.hadoop.mapreduce."):
            continue
        for count in group.get("counts", ()) or ():
            if isinstance(count, Mapping) and isinstance(count.get("value"), int):
                found[str(count.get("name"))] = count["value"]
    return found


def stage_of(conf_xml: bytes | str) -> str:
    """``related 1`` from a streaming job's configuration: the script mrjob runs in the
    tasks and its ``--step-num`` + 1 (``""`` when it is not a mrjob streaming job)."""
    try:
        root = ElementTree.fromstring(conf_xml)
    except ElementTree.ParseError:
        return ""
    for prop in root.iter("property"):
        name = prop.findtext("name")
        if name in ("stream.map.streamprocessor", "stream.reduce.streamprocessor"):
            command = unquote_plus(prop.findtext("value") or "")
            found = re.search(r"(\w+)\.py\s+--step-num=(\d+)", command)
            if found:
                return f"{found.group(1)} {int(found.group(2)) + 1}"
    return ""


def read_job_history(jhist: str, conf_xml: bytes | str | None = None) -> JobFigures:
    """The figures of one job from its JSON event log (and configuration, for the stage)."""
    lines = jhist.splitlines()
    if not lines or lines[0].strip() != JSON_HEADER:
        raise HistoryError("not a JSON job history file (run the job with "
                           "mapreduce.jobhistory.jhist.format=json)")
    job_id, submit, finish = "", None, None
    totals: dict[str, int] = {}
    starts: dict[str, int] = {}
    tasks: list[TaskFigures] = []
    for line in _events(lines[2:]):
        kind, body = line
        if kind == "JOB_SUBMITTED":
            job_id, submit = str(body.get("jobid", "")), int(body["submitTime"])
        elif kind == "JOB_FINISHED":
            finish, totals = int(body["finishTime"]), _counters(body.get("totalCounters"))
        elif kind == "TASK_STARTED":
            starts[str(body["taskid"])] = int(body["startTime"])
        elif kind == "TASK_FINISHED":
            task_id = str(body["taskid"])
            finished = int(body["finishTime"])
            tasks.append(TaskFigures(str(body.get("taskType", "")), starts.get(task_id, finished),
                                     finished, _counters(body.get("counters")), task_id))
    if submit is None or finish is None:
        raise HistoryError(f"{job_id or 'a job'}: no submit or finish event (a job that failed "
                           "or is still running)")
    stage = stage_of(conf_xml) if conf_xml is not None else ""
    return JobFigures(job_id, stage, submit, finish, totals, tuple(tasks))


def _events(lines: Iterable[str]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        body = event.get("event", {})
        # {"type": T, "event": {"org.apache.hadoop.mapreduce.jobhistory.X": {...}}}
        inner: Any = next(iter(body.values()), {}) if isinstance(body, Mapping) and body else {}
        yield str(event.get("type", "")), inner if isinstance(inner, Mapping) else {}
