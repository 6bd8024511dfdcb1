"""What every job of the project shares: JSON lines between steps, and the packages it
ships to its tasks the way a cluster needs them (``DIRS``, paths relative to the job's
own file; ``-r inline`` would hide a missing one, ``-r local`` and Hadoop do not)."""
from __future__ import annotations

import io
import json
import os
import shutil
from _json import encode_basestring_ascii
from typing import Any, Callable, Sequence

from mrjob.job import MRJob
from mrjob.parse import is_uri
from mrjob.protocol import StandardJSONProtocol

from filters.config import conf_path

#: The configuration shipped as ``conf/`` beside the packages in every task's folder (where
#: ``filters.site`` and Companion look first): a checkout's ``conf/``, or an installed
#: wheel's ``share/relatedpages/conf``; none when neither exists (built-in copies apply).
_CONF = conf_path("sites.tsv").parent


#: A task's output buffer when Python's own is off (``python -u``, ``PYTHONUNBUFFERED``).
OUTPUT_BUFFER_BYTES = 1 << 16

_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # json.loads's C scanner


def _c_encoder() -> Callable[[Any, int], Sequence[str]] | None:
    """The C encoder ``json.dumps`` builds on every call (``JSONEncoder.iterencode``, its
    default settings), built once; without cycle checks, so a value it cannot encode is
    handed to ``json.dumps``, which says why.  None where the C module is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    defaults = json.JSONEncoder()
    return make(None, defaults.default, encode_basestring_ascii, None,  # type: ignore[no-any-return]
                defaults.key_separator, defaults.item_separator, defaults.sort_keys,
                defaults.skipkeys, defaults.allow_nan)


_encode_json = _c_encoder()


class ChainJSONProtocol(StandardJSONProtocol):  # type: ignore[misc]
    """StandardJSONProtocol, byte for byte, at half its cost: the records the chain writes
    most (a page's URL as key, a list of strings as value) with the C string encoder
    ``json.dumps`` itself uses, any other value with the C encoder it builds on each call,
    built once; a line is read with the C scanner behind ``json.loads``, or by
    ``json.loads`` when it is not one whole JSON value.  Sort1 orders the encoded bytes
    (relatedpages.store.chain), so the bytes must not change.

    >>> values = ["é\\t\\"x\\"", ["1", "http://a/", "ß"], ["p", 2], [], 1.5, {"a": [None]}]
    >>> all(ChainJSONProtocol()._dumps(v) == json.dumps(v).encode() for v in values)
    True
    >>> ChainJSONProtocol().read(b'"http://a/"\\t["1", "b", 0.5]')
    ('http://a/', ['1', 'b', 0.5])
    """

    def _dumps(self, value: Any) -> bytes:
        kind = type(value)
        try:
            if kind is str:
                return encode_basestring_ascii(value).encode("ascii")  # type: ignore[no-any-return]
            if kind is list:
                return ("[" + ", ".join(map(encode_basestring_ascii, value)) + "]").encode("ascii")
        except TypeError:  # a list that holds more than strings
            pass
        if _encode_json is not None:
            try:
                return "".join(_encode_json(value, 0)).encode("ascii")
            except (TypeError, ValueError, RecursionError):  # json.dumps raises its own error
                pass
        return json.dumps(value).encode("utf_8")

    def _loads(self, value: bytes) -> Any:
        text = value.decode("utf_8")
        try:
            decoded, end = _scan_json(text, 0)
        except StopIteration:  # not JSON where it starts: json.loads says why
            return json.loads(text)
        return decoded if end == len(text) else json.loads(text)


class LenientJSONProtocol(ChainJSONProtocol):
    """ChainJSONProtocol for a job's input, except that a line it cannot read (no tab,
    not JSON, not UTF-8) comes through as ``(None, None)``: the first mapper counts it as a
    bad record and goes on; one bad line never kills a job.

    >>> LenientJSONProtocol().read(b'"a"\\t{"b": 1}'), LenientJSONProtocol().read(b"not a record")
    (('a', {'b': 1}), (None, None))
    """

    def read(self, line: bytes) -> tuple[Any, Any]:
        try:
            return super().read(line)  # type: ignore[no-any-return]
        except ValueError:  # no tab; JSONDecodeError and UnicodeDecodeError are ValueErrors
            return None, None


class ShippedJob(MRJob):
    """Base of the project's jobs: StandardJSONProtocol's bytes in (lenient: a line that
    cannot be read reaches the mapper as ``(None, None)``), between steps and out (never
    the auto-picked JSONProtocol, whose bytes depend on what is installed), a task's
    output buffered, and the project's packages shipped to every task."""

    INPUT_PROTOCOL = LenientJSONProtocol
    INTERNAL_PROTOCOL = ChainJSONProtocol
    OUTPUT_PROTOCOL = ChainJSONProtocol
    DIRS = ["../jobs#jobs", "../relatedpages#relatedpages", "../segmenter#segmenter",
            "../filters#filters", *([f"{_CONF}#conf"] if _CONF.is_dir() else [])]

    def execute(self) -> None:
        """mrjob's execute; a mapper's, combiner's or reducer's output goes through a
        buffer of its own when Python's is off (``python -u`` or ``PYTHONUNBUFFERED``,
        which many container images set): else every record is two ``write`` calls to
        the kernel (Mapper1: 16 % of its CPU).  Flushed, and let go of, when the task ends."""
        options = self.options
        buffered: io.BufferedWriter | None = None
        task = options.run_mapper or options.run_combiner or options.run_reducer
        if task and self._stdout is None and isinstance(self.stdout, io.RawIOBase):  # type: ignore[has-type]
            buffered = io.BufferedWriter(self.stdout, OUTPUT_BUFFER_BYTES)
            self._stdout = buffered
        try:
            super().execute()
        finally:
            if buffered is not None:
                self._stdout = None  # type: ignore[assignment]
                buffered.flush()
                buffered.detach()  # the raw stream stays open: Python closes it at exit

    def _wrap_protocols(self, step_num: int, step_type: str) -> tuple[Any, Any]:
        """mrjob's line reader and writer for a task, the writer one ``write`` call a
        line (mrjob's makes two, each looking its stream up again; mrjob 0.7.4, the last
        release, fixes this private method's shape)."""
        read_lines, _ = super()._wrap_protocols(step_num, step_type)
        _, write = self.pick_protocols(step_num, step_type)
        out = self.stdout.write

        def write_line(key: Any, value: Any) -> None:
            out(write(key, value) + b"\n")

        return read_lines, write_line

    def _runner_class(self) -> Any:
        """``-r spark`` gets :func:`spark_runner_class`; every other runner is mrjob's."""
        runner_class = super()._runner_class()
        return spark_runner_class() if runner_class.alias == "spark" else runner_class


def spark_runner_class() -> Any:
    """mrjob 0.7.4's Spark runner, with its local scratch folder made and removed.

    On a local master (``--spark-master local[N]``, the default) the runner names a scratch
    folder (``<tmp>/<job key>-spark``, or ``<--spark-tmp-dir>/<job key>``) that nothing
    creates; the Spark harness then fails to ``os.mkdir`` the counters' folder inside it
    after the job's steps have run (the local write came with Yelp/mrjob#2177, 0.7.3), so
    the run exits 1 without counters.  This runner makes
    that folder before the steps (if it is not there) and removes it with its other
    scratch files, only when it made it.  Imported only for ``-r spark``: a Hadoop task
    never loads Spark's runner."""
    from mrjob.spark.runner import SparkMRJobRunner

    class LocalSparkRunner(SparkMRJobRunner):  # type: ignore[misc]
        _made_spark_tmp: str | None = None

        def _run(self) -> None:
            folder = self._spark_tmp_dir
            if not is_uri(folder) and not os.path.exists(folder):
                os.makedirs(folder)
                self._made_spark_tmp = folder
            super()._run()

        def _cleanup_local_tmp(self) -> None:
            super()._cleanup_local_tmp()
            if self._made_spark_tmp:
                shutil.rmtree(self._made_spark_tmp, ignore_errors=True)
                self._made_spark_tmp = None

    return LocalSparkRunner


def summed_counters(steps: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """A runner's per-step counters (``runner.counters()``) summed into group → name → n."""
    total: dict[str, dict[str, int]] = {}
    for step in steps:
        for group, values in step.items():
            for name, value in values.items():
                total.setdefault(group, {})
                total[group][name] = total[group].get(name, 0) + value
    return total
