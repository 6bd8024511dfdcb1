"""The server's counters for ``GET /metrics`` in Prometheus' text format: lookups by
algorithm and status, a latency histogram of single lookups, database swaps and errors,
summed over every worker process.

Each worker counts in a file of its own (``<pid>-….counters``: one float64 per series) in a
folder the server makes at start, mapped into memory: an increment is one store, with no
lock between processes, and whichever worker answers ``/metrics`` adds up every file in the
folder, those of workers that have since exited too (so counters never go down).  Every
worker lays its file out alike, from the same algorithm names.  Without a folder (one
process, e.g. an app made in a test) the counts stay in the process.

    >>> metrics = Metrics(["block"])
    >>> metrics.lookup("block", 200, 0.0004)
    >>> metrics.error(ErrorKind.SERVER_ERROR)
    >>> text = metrics.render()
    >>> 'relatedpages_lookups_total{algorithm="block",status="200"} 1' in text.splitlines()
    True
    >>> 'relatedpages_lookup_seconds_bucket{le="0.0005"} 1' in text.splitlines()
    True
    >>> 'relatedpages_errors_total{kind="server_error"} 1' in text.splitlines()
    True
"""
from __future__ import annotations

import logging
import mmap
import os
import tempfile
import threading
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

logger = logging.getLogger(__name__)

#: The statuses a lookup is counted under (any other, e.g. a 500, under "other").
LOOKUP_STATUSES = (200, 304, 400, 404, 413, 414, 503)
#: The algorithm label of a lookup that named no algorithm the server answers with (404).
UNKNOWN_ALGORITHM = "(unknown)"
#: Upper bounds of the latency histogram's buckets, in seconds (a lookup takes ~0.1 ms).
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SUFFIX = ".counters"


class ErrorKind(str, Enum):
    """What went wrong, one counter each (``relatedpages_errors_total{kind=…}``)."""

    DATABASE_REFUSED = "database_refused"  # a new generation failed verification: not served
    DATABASE_CORRUPT = "database_corrupt"  # a lookup found a corrupt partition (503)
    SERVER_ERROR = "server_error"  # an unexpected exception, answered with a 500
    WATCHER_FAILED = "watcher_failed"  # one look of the database watcher failed


class Metrics:
    """One worker's counters (writing) and every worker's sums (:meth:`render`)."""

    def __init__(self, algorithms: Sequence[str], databases: Sequence[str] = (),
                 folder: Path | None = None):
        self.folder = folder
        # a lookup that names no known algorithm is refused whole: 400, 404 or 413
        statuses = {**{algorithm: [*map(str, LOOKUP_STATUSES), "other"] for algorithm in algorithms},
                    UNKNOWN_ALGORITHM: ["400", "404", "413", "other"]}
        series = [f'relatedpages_lookups_total{{algorithm="{_label(algorithm)}",status="{status}"}}'
                  for algorithm, names in statuses.items() for status in names]
        series += [f'relatedpages_lookup_seconds_bucket{{le="{bound:g}"}}' for bound in LATENCY_BUCKETS]
        series += ['relatedpages_lookup_seconds_bucket{le="+Inf"}', "relatedpages_lookup_seconds_sum",
                   "relatedpages_lookup_seconds_count"]
        series += [f'relatedpages_swaps_total{{database="{_label(name)}"}}' for name in databases]
        series += [f'relatedpages_errors_total{{kind="{kind.value}"}}' for kind in ErrorKind]
        self._series = series
        self._slot = {name: index for index, name in enumerate(series)}
        self._lookups = {(algorithm, status): self._slot[
            f'relatedpages_lookups_total{{algorithm="{_label(algorithm)}",status="{status}"}}']
            for algorithm, names in statuses.items() for status in names}
        self._bucket0 = self._slot[f'relatedpages_lookup_seconds_bucket{{le="{LATENCY_BUCKETS[0]:g}"}}']
        self._sum = self._slot["relatedpages_lookup_seconds_sum"]
        self._lock = threading.Lock()  # the watcher thread counts swaps beside request threads
        self._map: mmap.mmap | None = None
        if folder is None:
            self._values = memoryview(bytearray(8 * len(series))).cast("d")
        else:
            handle, name = tempfile.mkstemp(prefix=f"{os.getpid()}-", suffix=_SUFFIX, dir=folder)
            with open(handle, "w+b") as file:
                file.truncate(8 * len(series))
                self._map = mmap.mmap(file.fileno(), 8 * len(series))
            self._values = memoryview(self._map).cast("d")

    def lookup(self, algorithm: str, status: int, seconds: float | None = None) -> None:
        """One lookup answered with ``status``; ``seconds`` (a single lookup's time in the
        app) goes into the histogram."""
        slot = self._lookups.get((algorithm, str(status) if status in LOOKUP_STATUSES else "other"))
        if slot is None:
            slot = self._lookups[(UNKNOWN_ALGORITHM, "other")]
        values = self._values
        with self._lock:
            values[slot] += 1.0
            if seconds is not None:
                bucket = self._bucket0
                for bound in LATENCY_BUCKETS:
                    if seconds <= bound:
                        break
                    bucket += 1
                values[bucket] += 1.0  # one bucket here; render() makes them cumulative
                values[self._sum] += seconds
                values[self._sum + 1] += 1.0

    def swap(self, database: str) -> None:
        self._add(f'relatedpages_swaps_total{{database="{_label(database)}"}}')

    def error(self, kind: ErrorKind) -> None:
        self._add(f'relatedpages_errors_total{{kind="{kind.value}"}}')

    def _add(self, series: str) -> None:
        with self._lock:
            self._values[self._slot[series]] += 1.0

    def totals(self) -> list[float]:
        """Every series summed over the workers' files (this process's alone without a folder)."""
        if self.folder is None:
            return list(self._values)
        totals = [0.0] * len(self._series)
        for path in sorted(self.folder.glob(f"*{_SUFFIX}")):
            try:
                data = path.read_bytes()
            except OSError as error:  # removed as the server stops
                logger.warning("metrics: %s: %s", path, error)
                continue
            if len(data) != 8 * len(self._series):
                logger.warning("metrics: %s holds %d bytes, not %d", path, len(data), 8 * len(self._series))
                continue
            for index, value in enumerate(memoryview(data).cast("d")):
                totals[index] += value
        return totals

    def render(self) -> str:
        """The text of ``GET /metrics``."""
        totals = dict(zip(self._series, self.totals()))
        buckets = [name for name in self._series if name.startswith("relatedpages_lookup_seconds_bucket")]
        running = 0.0
        for name in buckets:  # cumulative, as Prometheus' histograms are
            running += totals[name]
            totals[name] = running
        sections = [
            ("relatedpages_lookups_total", "counter",
             "Lookups answered, by algorithm and HTTP status (a batch counts each URL; a "
             "request refused whole counts once, under algorithm (unknown))."),
            ("relatedpages_lookup_seconds", "histogram",
             "Time in the app of each GET /api/related, from its query string to its answer's bytes."),
            ("relatedpages_swaps_total", "counter",
             "Rebuilt database generations swapped in, counted by every worker process."),
            ("relatedpages_errors_total", "counter",
             "Errors by kind: new generations refused, corrupt partitions met, unexpected "
             "exceptions (500), failed looks of the database watcher."),
        ]
        lines = []
        for family, kind, text in sections:
            lines += [f"# HELP {family} {text}", f"# TYPE {family} {kind}"]
            lines += [f"{name} {_number(value)}" for name, value in totals.items()
                      if name.startswith(family + "{") or name.startswith(family + "_")]
        return "\n".join(lines) + "\n"

    def close(self) -> None:
        self._values.release()
        if self._map is not None:
            self._map.close()


def _label(value: str) -> str:
    """A label value escaped as the text format wants (backslash, quote, line break)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)
