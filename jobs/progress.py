"""Progress of a running job: one live line per stage on a terminal (tqdm), plain periodic
lines otherwise (cron), and mrjob's and Hadoop's own log written to a file, summarised.

What a line shows comes from what the runner exposes while it works:

- ``inline`` / ``local``: every task writes its counters and status to a ``stderr`` file in
  mrjob's work folder as it goes (Hadoop Streaming's ``reporter:`` protocol); they are read
  incrementally.  The segment job counts pages (``segment.pages_segmented``) and reports each
  input file it finished (``reporter:status:read <uri>``): pages/s, and an ETA from the input
  bytes of the finished files once one of several files is done.
- ``hadoop``: the driver's ``map X% reduce Y%`` lines give the percentage and an ETA; its
  other lines (1,000+ per run) go only to the log file, with the job ids.

:func:`enable` switches it on (the CLI does); without it :func:`watch` does nothing.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

#: Seconds between plain progress lines when stderr is not a terminal (the environment
#: variable RELATEDPAGES_PROGRESS_SECONDS overrides it).
INTERVAL_DEFAULT = 30.0
INTERVAL_VARIABLE = "RELATEDPAGES_PROGRESS_SECONDS"
#: Seconds between polls of the tasks' stderr files (and terminal refreshes).
POLL_SECONDS = 0.5
#: The status a segment task sets when it has read a whole input file.
READ_STATUS = "read "

_STEP = re.compile(r"Running step (\d+) of (\d+)")
_PERCENT = re.compile(r"^\s*map\s+(\d+)%\s+reduce\s+(\d+)%\s*$")
_JOB_ID = re.compile(r"Running job: (\S+)|Submitted application (\S+)")


@dataclass
class Observed:
    """What a running job has shown so far (summed over its tasks)."""

    counters: dict[str, dict[str, int]] = field(default_factory=dict)
    files_read: list[str] = field(default_factory=list)
    step: int = 0
    steps: int = 0
    percent: tuple[int, int] | None = None  # Hadoop: (map %, reduce %) of the current step
    job_ids: list[str] = field(default_factory=list)

    def counter(self, group: str, name: str) -> int:
        return self.counters.get(group, {}).get(name, 0)


def read_task_lines(lines: Sequence[bytes], observed: Observed) -> None:
    """Add the ``reporter:`` lines of a task's stderr to ``observed`` (parsed by mrjob's
    own :func:`mrjob.parse.parse_mr_job_stderr`, as the runner does when the task ends).

    >>> seen = Observed()
    >>> read_task_lines([b"reporter:counter:segment,pages_segmented,1", b"noise",
    ...                  b"reporter:counter:segment,pages_segmented,2",
    ...                  b"reporter:status:read file:///crawl/a.warc.gz"], seen)
    >>> seen.counter("segment", "pages_segmented"), seen.files_read
    (3, ['file:///crawl/a.warc.gz'])
    """
    from mrjob.parse import parse_mr_job_stderr

    parsed = parse_mr_job_stderr(lines, counters=observed.counters)
    observed.files_read += [status[len(READ_STATUS):] for status in parsed["statuses"]
                            if status.startswith(READ_STATUS)]


def read_driver_line(message: str, observed: Observed) -> None:
    """Add one line of mrjob's log (the runner, Hadoop's driver) to ``observed``.

    >>> seen = Observed()
    >>> for line in ("Running step 1 of 2...", "  Running job: job_1_0001", "   map 40% reduce 0%"):
    ...     read_driver_line(line, seen)
    >>> seen.step, seen.steps, seen.job_ids, seen.percent
    (1, 2, ['job_1_0001'], (40, 0))
    """
    step = _STEP.search(message)
    if step:
        observed.step, observed.steps = int(step.group(1)), int(step.group(2))
        observed.percent = None
        return
    percent = _PERCENT.match(message)
    if percent:
        observed.percent = (int(percent.group(1)), int(percent.group(2)))
        return
    job = _JOB_ID.search(message)
    if job:
        job_id = job.group(1) or job.group(2)
        if job_id not in observed.job_ids:
            observed.job_ids.append(job_id)


def _sizes(inputs: Sequence[str]) -> tuple[dict[str, int], int]:
    """Bytes of each local input (by each spelling a task may report: as given, as a path,
    absolute, as a file:// URI) and the total over distinct files; remote inputs are unknown."""
    sizes: dict[str, int] = {}
    distinct: dict[str, int] = {}
    for name in inputs:
        path = name[len("file://"):] if name.startswith("file://") else name
        if "://" in path:
            continue
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        absolute = str(Path(path).resolve())
        distinct[absolute] = size
        for key in (name, path, absolute, Path(absolute).as_uri()):
            sizes[key] = size
    return sizes, sum(distinct.values())


def fraction_done(observed: Observed, input_sizes: dict[str, int], total_bytes: int) -> float | None:
    """How much of the job is done, when it can be known: Hadoop's percentage over all
    steps, or the input bytes of the files the tasks have finished reading (a job that
    read several input files). None when unknown.

    >>> fraction_done(Observed(step=2, steps=2, percent=(100, 50)), {}, 0)
    0.875
    >>> fraction_done(Observed(files_read=["a"]), {"a": 30, "b": 70}, 100)
    0.3
    >>> fraction_done(Observed(), {"a": 100}, 100) is None
    True
    """
    if observed.percent is not None and observed.steps:
        mapped, reduced = observed.percent
        within = (mapped + reduced) / 200
        return (observed.step - 1 + within) / observed.steps
    if total_bytes and observed.files_read:
        done = sum(input_sizes.get(uri, 0) for uri in set(observed.files_read))
        return min(1.0, done / total_bytes) if done else None
    return None


def format_line(label: str, observed: Observed, seconds: float, fraction: float | None,
                total_bytes: int) -> str:
    """The plain progress line (the terminal shows the same fields in a bar).

    >>> seen = Observed(counters={"segment": {"pages_segmented": 500}}, step=1, steps=1)
    >>> format_line("segment", seen, 10.0, 0.25, 4_000_000)
    'segment: step 1/1, 500 pages (50.0 pages/s), 4.0 MB of input, 25% done, ETA 30 s, 10 s elapsed'
    """
    parts = [f"step {observed.step}/{observed.steps}"] if observed.steps else []
    pages = observed.counter("segment", "pages_segmented")
    if pages:
        parts.append(f"{pages:,} pages ({pages / max(seconds, 1e-9):,.1f} pages/s)")
    if total_bytes:
        parts.append(f"{total_bytes / 1e6:,.1f} MB of input")
    if observed.percent is not None:
        parts.append(f"map {observed.percent[0]}% reduce {observed.percent[1]}%")
    if fraction is not None:
        parts.append(f"{fraction:.0%} done")
        if 0 < fraction < 1:
            parts.append(f"ETA {_duration(seconds * (1 - fraction) / fraction)}")
    parts.append(f"{_duration(seconds)} elapsed")
    return f"{label}: " + ", ".join(parts)


def _duration(seconds: float) -> str:
    """A duration as people read it.

    >>> _duration(42.4), _duration(125), _duration(7300)
    ('42 s', '2 min 5 s', '2 h 1 min')
    """
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


@dataclass
class _Settings:
    stream: TextIO
    interactive: bool
    interval: float
    log_file: Path | None
    logger_state: tuple[int, bool]  # mrjob's logger before enable(): level, propagate


_settings: _Settings | None = None


def enabled() -> bool:
    """Whether progress is shown (``enable`` was called and ``disable`` not since)."""
    return _settings is not None


def enable(*, stream: TextIO | None = None, interactive: bool | None = None,
           interval: float | None = None, log_file: Path | None = None) -> None:
    """Show progress on ``stream`` (stderr): a live bar when it is a terminal (or
    ``interactive``), else a plain line every ``interval`` seconds and at the end of each
    stage.  mrjob's log (on Hadoop: the driver's) goes to ``log_file`` when given, and only
    its warnings to the stream."""
    global _settings
    out = stream or sys.stderr
    if interval is None:
        try:
            interval = float(os.environ.get(INTERVAL_VARIABLE, INTERVAL_DEFAULT))
        except ValueError:
            interval = INTERVAL_DEFAULT
    job_logger = logging.getLogger("mrjob")
    before = (job_logger.level, job_logger.propagate) if _settings is None else _settings.logger_state
    _settings = _Settings(out, out.isatty() if interactive is None else interactive,
                          interval, log_file, before)
    job_logger.setLevel(logging.INFO)
    job_logger.propagate = False
    for handler in list(job_logger.handlers):
        if getattr(handler, "_relatedpages", False):
            job_logger.removeHandler(handler)
    console = logging.StreamHandler(out)
    console.setLevel(logging.WARNING)
    # the repository passes --no-conf to inline and local runs on purpose (pipeline.run_job),
    # and the segment job sets its own sh_bin, which inline and local runners do not use
    console.addFilter(lambda record: not record.getMessage().startswith(
        ("No configs specified", "Unexpected option sh_bin")))
    if log_file is not None:  # Hadoop's driver lines ("  …", any level) go to the file only
        console.addFilter(lambda record: not record.getMessage().startswith("  "))
    console.setFormatter(logging.Formatter("%(message)s"))
    handlers: list[logging.Handler] = [console]
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(log_file, encoding="utf-8")
        to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handlers.append(to_file)
    for handler in handlers:
        setattr(handler, "_relatedpages", True)
        job_logger.addHandler(handler)


def log_file() -> Path | None:
    """The file mrjob's log goes to (None: progress off, or no file)."""
    return None if _settings is None else _settings.log_file


def disable() -> None:
    """Stop showing progress: mrjob's logger as it was before ``enable``, the stream and
    log file left alone (a command's progress must not outlive it: the next caller in the
    same process may have closed that stream)."""
    global _settings
    settings, _settings = _settings, None
    job_logger = logging.getLogger("mrjob")
    for handler in list(job_logger.handlers):
        if getattr(handler, "_relatedpages", False):
            job_logger.removeHandler(handler)
            handler.close()
    if settings is not None:
        job_logger.setLevel(settings.logger_state[0])
        job_logger.propagate = settings.logger_state[1]


class _DriverLines(logging.Handler):
    """mrjob's log records, read for steps, percentages and job ids."""

    def __init__(self, observed: Observed, lock: threading.Lock):
        super().__init__(logging.DEBUG)
        self._observed, self._lock = observed, lock

    def emit(self, record: logging.LogRecord) -> None:
        with self._lock:
            read_driver_line(record.getMessage(), self._observed)


class _TaskFiles:
    """The tasks' stderr files in mrjob's local work folder, read from where we left off."""

    def __init__(self, job_runner: Any):
        self._root: Path | None = None
        if hasattr(job_runner, "_task_stderr_path"):  # inline and local (mrjob.sim)
            self._root = Path(job_runner._get_local_tmp_dir()) / "step"
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}

    def poll(self, observed: Observed) -> None:
        if self._root is None or not self._root.is_dir():
            return
        for path in sorted(self._root.glob("*/*/*/stderr")):
            try:
                with path.open("rb") as handle:
                    handle.seek(self._offsets.get(path, 0))
                    data = handle.read()
            except OSError:
                continue
            if not data:
                continue
            self._offsets[path] = self._offsets.get(path, 0) + len(data)
            data = self._partial.pop(path, b"") + data
            complete, _, rest = data.rpartition(b"\n")
            if rest:
                self._partial[path] = rest
            read_task_lines(complete.splitlines(), observed)


@contextmanager
def watch(label: str, job_runner: Any, inputs: Sequence[str]) -> Iterator[Observed]:
    """Show the progress of ``job_runner`` (inside ``with``) until it finishes."""
    observed = Observed()
    settings = _settings
    if settings is None:
        yield observed
        return
    lock = threading.Lock()
    driver = _DriverLines(observed, lock)
    job_logger = logging.getLogger("mrjob")
    job_logger.addHandler(driver)
    sizes, total_bytes = _sizes(inputs)
    tasks = _TaskFiles(job_runner)
    started = time.monotonic()
    stop = threading.Event()
    width = 0  # a terminal: one line redrawn in place; else plain lines
    if settings.interactive:
        import shutil

        width = shutil.get_terminal_size((120, 24)).columns

    def line() -> str:
        with lock:
            tasks.poll(observed)
            seconds = time.monotonic() - started
            return format_line(label, observed, seconds,
                               fraction_done(observed, sizes, total_bytes), total_bytes)

    def draw(text: str) -> None:
        fraction = fraction_done(observed, sizes, total_bytes)
        if fraction is not None:  # tqdm's bar and rate formatting, drawn in place
            from tqdm import tqdm

            text = tqdm.format_meter(round(1000 * fraction), 1000, time.monotonic() - started,
                                     prefix=label, bar_format="{l_bar}{bar:20}| ") + text[len(label) + 2:]
        text = text[: max(width - 1, 20)]
        print("\r\x1b[K" + text, end="", file=settings.stream, flush=True)

    def show() -> None:
        last = time.monotonic()
        while not stop.wait(POLL_SECONDS):
            text = line()
            if width:
                draw(text)
            elif time.monotonic() - last >= settings.interval:
                print(text, file=settings.stream, flush=True)
                last = time.monotonic()

    thread = threading.Thread(target=show, name=f"progress-{label}", daemon=True)
    thread.start()
    try:
        yield observed
    finally:
        stop.set()
        thread.join()
        job_logger.removeHandler(driver)
        text = line()
        if width:
            print("\r\x1b[K", end="", file=settings.stream)
        print(text, file=settings.stream, flush=True)  # the stage's last line stays
        if observed.job_ids:
            where = f"; log: {settings.log_file}" if settings.log_file else ""
            print(f"{label}: Hadoop job(s) {', '.join(observed.job_ids)}{where}",
                  file=settings.stream, flush=True)
