"""The jobs' lines between steps (jobs/base.py): ChainJSONProtocol writes and reads exactly
what mrjob's StandardJSONProtocol does, and a task's output is buffered even when Python's
own buffer is off (``PYTHONUNBUFFERED``), with the same bytes."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mrjob.protocol import StandardJSONProtocol

from jobs.base import ChainJSONProtocol, LenientJSONProtocol
from jobs.related import MRRelatedPages
from relatedpages.bench.pair_census import page_records
from relatedpages.corpus.generate import generate_crawl

REPO = Path(__file__).resolve().parent.parent

_text = st.text(st.characters(exclude_categories=["Cs"]) | st.sampled_from("\t\n\"\\\x00\x7f"))
_scalar = st.none() | st.booleans() | st.integers() | st.floats() | _text
_json = st.recursive(
    _scalar,
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner)
                   | st.dictionaries(_text | st.integers() | st.floats() | st.booleans(), inner,
                                     max_size=3)),
    max_leaves=12)


@given(key=_json, value=_json)
def test_the_chain_protocol_writes_and_reads_the_standard_bytes(key: object, value: object) -> None:
    line = StandardJSONProtocol().write(key, value)
    assert ChainJSONProtocol().write(key, value) == line
    # read back as json.loads reads it (NaN != NaN: compare what each reads, re-encoded)
    assert (StandardJSONProtocol().write(*ChainJSONProtocol().read(line))
            == StandardJSONProtocol().write(*StandardJSONProtocol().read(line)))


class _Odd:
    """Not JSON: both protocols raise json.dumps's TypeError."""


def test_values_json_cannot_encode_raise_json_dumps_errors() -> None:
    circular: list[object] = []
    circular.append(circular)
    for value, error in (([_Odd()], TypeError), ({"a": _Odd()}, TypeError),
                         (circular, ValueError), ({(1, 2): 1}, TypeError)):
        with pytest.raises(error) as standard:
            StandardJSONProtocol().write("k", value)
        with pytest.raises(error) as chain:
            ChainJSONProtocol().write("k", value)
        assert str(chain.value) == str(standard.value)


@given(value=st.lists(_text, max_size=8))
def test_lists_of_strings_take_the_fast_path_and_keep_the_bytes(value: list[str]) -> None:
    assert ChainJSONProtocol()._dumps(value) == json.dumps(value).encode("utf-8")


@pytest.mark.parametrize("raw", [b' "a"\t[1] ', b'"a"\t[1] ', b'"a"\t [1]', b'"a"\t1 2',
                                 b'"a"\tnope', b'"a"\t', b'no tab', b'"a"\t"\xff"'])
def test_unusual_lines_read_as_json_loads_reads_them(raw: bytes) -> None:
    def outcome(protocol: object) -> object:
        try:
            return protocol.read(raw)  # type: ignore[attr-defined]
        except ValueError as error:
            return type(error)
    assert outcome(ChainJSONProtocol()) == outcome(StandardJSONProtocol())
    expected = outcome(StandardJSONProtocol())
    assert LenientJSONProtocol().read(raw) == (expected if isinstance(expected, tuple)
                                               else (None, None))


@pytest.fixture(scope="module")
def segment_lines(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    crawl = generate_crawl(tmp_path_factory.mktemp("web") / "web.warc.gz", pages=150, seed=4)
    return "".join(json.dumps(record["url"]) + "\t" + json.dumps(record) + "\n"
                   for record in page_records(crawl.path)).encode("utf-8")


class _CountingRaw(io.RawIOBase):
    """An unbuffered stdout that counts the calls that write to it."""

    def __init__(self) -> None:
        self.calls = 0
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, chunk: bytes) -> int:  # type: ignore[override]
        self.calls += 1
        self.data += chunk
        return len(chunk)


def test_a_task_buffers_its_output_when_pythons_buffer_is_off(
        segment_lines: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    sandboxed = MRRelatedPages(["--mapper", "--step-num=0"])
    sandboxed.sandbox(stdin=io.BytesIO(segment_lines))
    sandboxed.execute()
    expected = sandboxed.stdout.getvalue()
    lines = expected.count(b"\n")
    assert lines > 1000

    raw = _CountingRaw()
    monkeypatch.setattr(sys, "stdout", types.SimpleNamespace(buffer=raw))
    job = MRRelatedPages(["--mapper", "--step-num=0"])
    job._stdin = io.BytesIO(segment_lines)
    job._stderr = io.BytesIO()
    job.execute()
    assert bytes(raw.data) == expected
    assert raw.calls <= len(expected) // (1 << 15) + 2  # unbuffered: two calls a line
    assert not raw.closed  # the stream is the process's: let go of, never closed
    assert job._stdout is None


def test_the_task_output_is_the_same_with_pythonunbuffered(segment_lines: bytes,
                                                           tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.write_bytes(segment_lines)
    outputs = []
    for unbuffered in (True, False):
        env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
        env["PYTHONHASHSEED"] = "7"  # Mapper1's order within a page follows set order
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
        with open(source, "rb") as stdin:
            run = subprocess.run([sys.executable, "jobs/related.py", "--step-num=0", "--mapper"],
                                 stdin=stdin, capture_output=True, cwd=REPO, env=env, check=True)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") > 1000
