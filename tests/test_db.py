"""Tests for relatedpages.store.db: the on-disk format, lookups, refusals and atomic replace,
on both formats where a reader could tell them apart (``fmt``: format 1, lines; format 2,
blocks, the default); what only format 2 has is tested in tests/test_dbblocks.py."""
from __future__ import annotations

import doctest
import hashlib
import json
import os
import subprocess
import sys
import threading
import tracemalloc
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from filters.urls import normalise_url
from relatedpages.store import db as db_module
from relatedpages.store import dbbuild
from relatedpages.store.db import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    PARTITIONS,
    STRINGS_NAME,
    DatabaseError,
    DatabaseProblem,
    RecordRejection,
    Related,
    RelatedPagesDB,
    Verify,
    partition_name,
    partition_of,
)
from relatedpages.store.dbblocks import BlockPartition
from relatedpages.store.dbbuild import build_database
from relatedpages.store.dbopen import read_manifest
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def related_list(seed: int, n: int = 3) -> list[Any]:
    """A related list as the jobs emit it: best first, evidence (citing site, DS_d)."""
    return [
        [f"http://r{seed}-{i}.example/page", round(10.0 - i - seed / 1000, 6), [[f"hub{i}.example", 2.5], ["dir.example", 1.0]]]
        for i in range(n)
    ]


def as_related(value: list[Any]) -> list[Related]:
    return [Related(url, float(score), tuple((s, float(d)) for s, d in ev)) for url, score, ev in value]


def make_records(n: int) -> list[tuple[str, list[Any]]]:
    return [(f"http://site{i % 37}.example/p/{i}.html", related_list(i)) for i in range(n)]


def build(path: Path, records: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("algorithm", "block")
    kwargs.setdefault("parameters", {"t": 4.0, "m": 15})
    kwargs.setdefault("source", ["crawl.warc.gz"])
    return build_database(records, path, **kwargs)


def part_lines(path: Path, index: int) -> list[bytes]:
    return (path / partition_name(index)).read_bytes().splitlines()


def stored_keys(path: Path, index: int) -> list[bytes]:
    """The keys of a partition in stored order, in either format."""
    file = path / partition_name(index)
    if read_manifest(path).format_version == 1:
        return [line.split(b"\t")[0] for line in part_lines(path, index)]
    with open(file, "rb") as handle:
        size = file.stat().st_size
        return [key for key, _ in BlockPartition(handle.fileno(), size).lines()] if size else []


@pytest.fixture(params=[1, 2], ids=["lines", "blocks"])
def fmt(request: pytest.FixtureRequest) -> int:
    """Each format a build writes: 1 (lines) and 2 (blocks, the default)."""
    return int(request.param)


def test_doctests() -> None:
    result = doctest.testmod(db_module)
    assert result.attempted > 0 and result.failed == 0


# -- round trip and format ---------------------------------------------------------------


def test_round_trip(tmp_path: Path, fmt: int) -> None:
    records = make_records(500) + [("http://lonely.example/", [])]
    summary = build(tmp_path / "db", iter(records), format_version=fmt)
    assert (summary.records, summary.read, summary.partitions) == (501, 501, PARTITIONS)
    assert all(summary.count(reason) == 0 for reason in RecordRejection)
    with RelatedPagesDB(tmp_path / "db") as database:
        assert len(database) == 501
        for url, value in records:
            assert database.related(url) == as_related(value)
        assert database.related("http://lonely.example/") == []  # known, nothing related
        assert dict(database.records()) == {url: as_related(value) for url, value in records}


def test_manifest(tmp_path: Path, fmt: int) -> None:
    summary = build(tmp_path / "db", make_records(200), algorithm="cocitation", parameters={"min_degree": 2},
                    source=["a.warc.gz", "b.warc.gz"], partitions=8, format_version=fmt)
    raw = json.loads((tmp_path / "db" / MANIFEST_NAME).read_text("utf-8"))
    assert raw["format"] == "relatedpages-db" and raw["format_version"] == fmt and FORMAT_VERSION == 2
    assert (raw["algorithm"], raw["parameters"], raw["source"]) == (
        "cocitation", {"min_degree": 2}, ["a.warc.gz", "b.warc.gz"])
    assert raw["built_at"].endswith("Z") and raw["records"] == 200
    assert [p["name"] for p in raw["partitions"]] == [f"part-0000{i}" for i in range(8)]
    data_files = [p["name"] for p in raw["partitions"]] + ([STRINGS_NAME] if fmt == 2 else [])
    assert sorted(os.listdir(tmp_path / "db")) == sorted([MANIFEST_NAME] + data_files)
    for index, entry in enumerate(raw["partitions"]):
        data = (tmp_path / "db" / entry["name"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["records"] == len(stored_keys(tmp_path / "db", index))
        if fmt == 1:
            assert entry["records"] == data.count(b"\n")
    assert sum(p["records"] for p in raw["partitions"]) == 200
    if fmt == 2:
        strings = (tmp_path / "db" / STRINGS_NAME).read_bytes()
        assert raw["strings"] == {"name": STRINGS_NAME, "count": raw["strings"]["count"], "bytes": len(strings),
                                  "sha256": hashlib.sha256(strings).hexdigest()}
        assert raw["strings"]["count"] == len({text for _, value in make_records(200) for entry in value
                                               for text in [entry[0], *(item[0] for item in entry[2])]})
    manifest = read_manifest(tmp_path / "db")
    assert manifest.algorithm == "cocitation" and manifest.records == 200 and manifest.bytes == summary.bytes
    assert manifest.bytes == sum(len((tmp_path / "db" / name).read_bytes()) for name in data_files)
    assert manifest.to_json() == raw


def test_line_format_is_url_tab_compact_json(tmp_path: Path) -> None:
    value = [["http://b.example/", 5.0, [["中文站.example", 2.0]]]]
    build(tmp_path / "db", [("http://a.example/", value)], partitions=1, format_version=1)
    assert part_lines(tmp_path / "db", 0) == [
        b"http://a.example/\t" + json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    ]
    assert "中文站".encode("utf-8") in (tmp_path / "db" / "part-00000").read_bytes()


def test_partitions_by_crc32_of_the_normalised_url(tmp_path: Path, fmt: int) -> None:
    records = make_records(300) + [("HTTP://Upper.Example:80/x/../y", [])]
    build(tmp_path / "db", records, partitions=16, format_version=fmt)
    for url, _ in records:
        key = normalise_url(url)
        assert key is not None
        index = zlib.crc32(key.encode("utf-8")) % 16
        assert index == partition_of(key, 16)
        assert key.encode() in stored_keys(tmp_path / "db", index)
    assert partition_of("http://example.com/") == zlib.crc32(b"http://example.com/") % 64 == 9


def test_build_is_byte_identical_under_another_hash_seed(tmp_path: Path) -> None:
    """Partitioning and order never depend on Python's salted hash()."""
    build(tmp_path / "here", make_records(300))
    script = (
        "import sys; from tests.test_db import build, make_records; from pathlib import Path;"
        "build(Path(sys.argv[1]), make_records(300))"
    )
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", script, str(tmp_path / f"seed{seed}")], cwd=REPO, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}, timeout=guard(60))
        for name in [partition_name(index) for index in range(PARTITIONS)] + [STRINGS_NAME]:
            assert (tmp_path / "here" / name).read_bytes() == (tmp_path / f"seed{seed}" / name).read_bytes()


NON_ASCII = [
    "http://bücher.de/Straße",
    "http://例子.测试/路径/页面",
    "http://example.com/é",
    "http://example.com/%C3%A9t%C3%A9",
    "http://example.com/z",
    "http://example.com/~",
    "http://example.com/",
    "http://example.com/a",
    "http://example.com/a/",
    "http://example.com/a-b",
    "http://example.com/ab",
    "http://example.com/a?q=é",
    "https://пример.рф/",
]


def test_sorted_by_bytes_with_non_ascii_urls(tmp_path: Path, fmt: int) -> None:
    records = [(url, [[url, 1.0, [["ünïcode.example", 1.0]]]]) for url in NON_ASCII]
    build(tmp_path / "db", records, partitions=1, format_version=fmt)
    keys = stored_keys(tmp_path / "db", 0)
    assert keys == sorted(keys) and len(set(keys)) == len(keys) == len(NON_ASCII)
    assert all(key.isascii() for key in keys)  # normalised: punycode hosts, %-encoded paths
    with RelatedPagesDB(tmp_path / "db") as database:
        for url, value in records:
            normalised = normalise_url(url)
            assert normalised is not None
            assert database.related(url) == database.related(normalised) == as_related(value)


def test_prefix_keys_and_misses_between_them(tmp_path: Path, fmt: int) -> None:
    """The search stops on line boundaries: prefixes, neighbours and gaps (format 2: in
    and between its ~20 blocks)."""
    urls = [f"http://a.example/{'x' * (i % 7)}{i}" for i in range(0, 4000, 2)]
    urls += ["http://a.example/", "http://a.example/x", "http://a.example/x/", "http://a.example/xx"]
    build(tmp_path / "db", [(u, related_list(len(u), n=(len(u) % 4))) for u in urls], partitions=1,
          format_version=fmt)
    with RelatedPagesDB(tmp_path / "db") as database:
        for url in urls:
            assert database.related(url) == as_related(related_list(len(url), n=(len(url) % 4)))
        for i in range(1, 4000, 2):
            assert database.related(f"http://a.example/{'x' * (i % 7)}{i}") is None
        for miss in ("http://a.example/w", "http://a.example/xxxxxxxxxxxx", "http://0.example/", "http://z.example/"):
            assert database.related(miss) is None


path_chars = st.text(alphabet=st.sampled_from("ab/~-é中%.?=&"), max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(present=st.lists(path_chars, max_size=30), absent=st.lists(path_chars, max_size=10))
def test_every_key_found_and_no_other(tmp_path_factory: pytest.TempPathFactory, fmt: int, present: list[str],
                                      absent: list[str]) -> None:
    path = tmp_path_factory.mktemp("h") / "db"
    records = [(f"http://h.example/{p}", [[f"http://v.example/{i}", float(i), []]]) for i, p in enumerate(present)]
    build(path, records, partitions=3, format_version=fmt)
    expected: dict[str, list[Related]] = {}
    for url, value in records:  # the last record of a normalised URL wins
        key = normalise_url(url)
        assert key is not None
        expected[key] = as_related(value)
    with RelatedPagesDB(path) as database:
        assert len(database) == len(expected)
        for key, found in expected.items():
            assert database.related(key) == found
        for p in absent:
            key = normalise_url(f"http://h.example/{p}")
            assert key is not None
            assert database.related(key) == expected.get(key)


# -- lookups -----------------------------------------------------------------------------


def test_url_normalisation_at_lookup(tmp_path: Path) -> None:
    build(tmp_path / "db", [("http://example.com/b", related_list(1))])
    with RelatedPagesDB(tmp_path / "db") as database:
        assert database.related("HTTP://Example.com:80/a/../b") == as_related(related_list(1))
        assert database.related("http://example.com/b#fragment") == as_related(related_list(1))


def test_unknown_url_is_none_and_malformed_url_is_value_error(tmp_path: Path) -> None:
    build(tmp_path / "db", make_records(50))
    with RelatedPagesDB(tmp_path / "db") as database:
        assert database.related("http://unknown.example/") is None
        for malformed in ("mailto:someone@example.com", "not a url", "http://example.com:99999/", ""):
            with pytest.raises(ValueError, match="not a web page URL"):
                database.related(malformed)


def test_empty_database(tmp_path: Path, fmt: int) -> None:
    summary = build(tmp_path / "db", [], format_version=fmt)
    assert summary.records == 0
    assert summary.bytes == (0 if fmt == 1 else (tmp_path / "db" / STRINGS_NAME).stat().st_size)
    with RelatedPagesDB(tmp_path / "db", verify="full") as database:
        assert len(database) == 0 and database.related("http://a.example/") is None
        assert list(database.records()) == []


def test_closed_database_refuses_lookups(tmp_path: Path) -> None:
    build(tmp_path / "db", make_records(10))
    database = RelatedPagesDB(tmp_path / "db")
    assert database.related(make_records(1)[0][0]) is not None
    database.close()
    with pytest.raises(ValueError, match="closed"):
        database.related(make_records(1)[0][0])


def test_concurrent_lookups(tmp_path: Path, fmt: int) -> None:
    records = make_records(400)
    build(tmp_path / "db", records, format_version=fmt)
    errors: list[str] = []
    with RelatedPagesDB(tmp_path / "db") as database:
        def worker(offset: int) -> None:
            for url, value in records[offset::4]:
                if database.related(url) != as_related(value):
                    errors.append(url)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


# -- what the build skips and counts --------------------------------------------------------


def test_build_skips_and_counts(tmp_path: Path) -> None:
    records: list[tuple[Any, Any]] = [
        ("http://a.example/", related_list(1)),
        ("HTTP://A.example/index.html", related_list(2)),  # same page: the last one wins
        ("javascript:void(0)", related_list(3)),
        ("relative/page.html", related_list(3)),
        (None, related_list(3)),
        ("http://b.example/", [["http://c.example/", float("nan"), []]]),
        ("http://b.example/x", [["http://c.example/", True, []]]),
        ("http://b.example/y", [["http://c.example/", 1.0]]),
        ("http://b.example/z", {"not": "a list"}),
        ("http://b.example/w", [["http://c.example/", 1.0, [["site", "1.0"]]]]),
        ("http://d.example", [("http://c.example/", 3, (("site", 2),))]),  # tuples and ints are fine
    ]
    summary = build(tmp_path / "db", records)
    assert summary.read == 11 and summary.records == 2
    assert dict(summary.rejected) == {
        RecordRejection.UNUSABLE_URL: 3, RecordRejection.MALFORMED_RELATED: 5, RecordRejection.DUPLICATE_URL: 1}
    assert summary.urls_normalised == 2  # ".../index.html" and "http://d.example" (no path)
    assert read_manifest(tmp_path / "db").rejected == {
        "unusable_url": 3, "malformed_related": 5, "duplicate_url": 1}
    with RelatedPagesDB(tmp_path / "db") as database:
        assert database.related("http://a.example/") == as_related(related_list(2))
        assert database.related("http://d.example/") == [Related("http://c.example/", 3.0, (("site", 2.0),))]
        assert database.related("http://b.example/") is None


def test_build_argument_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown algorithm"):
        build(tmp_path / "db", [], algorithm="pagerank")
    with pytest.raises(ValueError, match="partitions"):
        build(tmp_path / "db", [], partitions=0)
    with pytest.raises(ValueError, match="JSON"):
        build(tmp_path / "db", [], parameters={"when": object()})
    with pytest.raises(ValueError):
        RelatedPagesDB(tmp_path / "db", verify="sometimes")
    assert not (tmp_path / "db").exists() and os.listdir(tmp_path) == []


def test_build_streams_one_partition_at_a_time(tmp_path: Path, fmt: int) -> None:
    """Peak memory does not grow with the input: records are spilled, not held (format 2
    holds the string table, which grows with the distinct strings, not the records)."""
    def records(n: int) -> Iterator[tuple[str, list[Any]]]:
        for i in range(n):
            yield f"http://s{i % 500}.example/page/{i}", related_list(i, n=5)

    peaks, sizes, strings = [], [], []
    for n in ((3_000, 12_000) if fmt == 1 else (1_500, 6_000)):  # format 2 spills slower under tracemalloc
        tracemalloc.start()
        try:
            summary = build(tmp_path / f"db{n}", records(n), format_version=fmt)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert summary.records == n
        sizes.append(summary.bytes)
        manifest = read_manifest(tmp_path / f"db{n}")
        strings.append(manifest.strings.count if manifest.strings else 0)
    # format 1: a fifth of the growth on disk; format 2 (16 times smaller on disk): that,
    # and ~250 bytes a distinct string (here 5 new URLs a record)
    assert peaks[1] - peaks[0] < (sizes[1] - sizes[0]) / 5 + 250 * (strings[1] - strings[0]), (peaks, sizes, strings)


# -- refusals ----------------------------------------------------------------------------


@pytest.fixture
def built(tmp_path: Path, fmt: int) -> Path:
    build(tmp_path / "db", make_records(300), partitions=8, format_version=fmt)
    return tmp_path / "db"


@pytest.fixture
def built_lines(tmp_path: Path) -> Path:
    """A format-1 database: its lines can be edited (format 2's: tests/test_dbblocks.py)."""
    build(tmp_path / "db", make_records(300), partitions=8, format_version=1)
    return tmp_path / "db"


def refused(path: Path, verify: str = "sizes") -> DatabaseError:
    with pytest.raises(DatabaseError) as caught:
        RelatedPagesDB(path, verify=verify)
    return caught.value


@pytest.mark.parametrize("verify", [v.value for v in Verify])
def test_missing_manifest(built: Path, verify: str) -> None:
    (built / MANIFEST_NAME).unlink()
    error = refused(built, verify)
    assert str(error) == f"not a relatedpages database: {built}: no manifest.json"
    assert error.problem is DatabaseProblem.NOT_A_DATABASE


def test_not_a_folder(tmp_path: Path) -> None:
    assert str(refused(tmp_path / "nothing")) == f"not a relatedpages database: {tmp_path / 'nothing'}: no such folder"
    (tmp_path / "file").write_text("x")
    assert str(refused(tmp_path / "file")) == f"not a relatedpages database: {tmp_path / 'file'}: not a folder"


@pytest.mark.parametrize("verify", [v.value for v in Verify])
def test_missing_partition(built: Path, verify: str) -> None:
    (built / "part-00003").unlink()
    error = refused(built, verify)
    assert str(error) == f"partial database: part-00003 missing ({built})"
    assert error.problem is DatabaseProblem.PARTIAL


@pytest.mark.parametrize("verify", [v.value for v in Verify])
def test_truncated_partition(built: Path, verify: str) -> None:
    data = (built / "part-00005").read_bytes()
    (built / "part-00005").write_bytes(data[:-10])
    assert str(refused(built, verify)) == (
        f"partial database: part-00005 has {len(data) - 10} bytes, the manifest says {len(data)} ({built})")


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_flipped_byte_refused_at_open_with_full(built: Path) -> None:
    flip_byte(built / "part-00006", 40)
    error = refused(built, "full")
    assert str(error) == f"corrupt database: part-00006 checksum mismatch ({built})"
    assert error.problem is DatabaseProblem.CORRUPT


def test_flipped_byte_refused_before_first_answer_with_lazy(built: Path) -> None:
    flip_byte(built / "part-00006", 40)
    urls = [url for url, _ in make_records(300)]
    in_6 = next(u for u in urls if partition_of(u, 8) == 6)
    in_2 = next(u for u in urls if partition_of(u, 8) == 2)
    with RelatedPagesDB(built, verify="lazy") as database:  # opens: sizes are right
        assert database.related(in_2) is not None
        with pytest.raises(DatabaseError, match=r"^corrupt database: part-00006 checksum mismatch"):
            database.related(in_6)
        # the corrupt partition answers nothing more; the others, each checked, still answer
        with pytest.raises(DatabaseError, match="part-00006 checksum mismatch"):
            database.related(in_6)
        assert database.related(in_2) is not None
        assert database.failures() == ["part-00006 checksum mismatch"]


def test_broken_record_refused_at_lookup_with_sizes(built_lines: Path) -> None:
    """The default check trusts the sizes; a record that no longer parses is still refused."""
    built = built_lines
    lines = part_lines(built, 1)
    url = lines[0].split(b"\t")[0].decode()
    data = (built / "part-00001").read_bytes()
    flip_byte(built / "part-00001", data.index(b"\t") + 1)  # "[" -> "Z"
    with RelatedPagesDB(built) as database:
        with pytest.raises(DatabaseError, match=r"^corrupt database: part-00001 malformed record at byte 0"):
            database.related(url)
        with pytest.raises(DatabaseError):
            database.related(make_records(1)[0][0])


def test_missing_tab_refused_at_lookup_with_sizes(built_lines: Path) -> None:
    built = built_lines
    data = (built / "part-00001").read_bytes()
    (built / "part-00001").write_bytes(data.replace(b"\t", b" "))
    url = data.split(b"\t")[0].decode()
    with RelatedPagesDB(built) as database:
        with pytest.raises(DatabaseError, match="part-00001 line at byte .* has no tab"):
            database.related(url)


def test_wrong_line_count_refused_with_full(built: Path) -> None:
    manifest = json.loads((built / MANIFEST_NAME).read_text())
    manifest["partitions"][2]["records"] += 1
    manifest["partitions"][3]["records"] -= 1
    (built / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert "part-00002 has" in str(refused(built, "full"))


@pytest.mark.parametrize("version", [0, 3, "1", None, True])
def test_wrong_version(built: Path, version: Any) -> None:
    manifest = json.loads((built / MANIFEST_NAME).read_text())
    manifest["format_version"] = version
    (built / MANIFEST_NAME).write_text(json.dumps(manifest))
    error = refused(built)
    assert str(error) == (
        f"unsupported database version: format version {version!r}, this reader reads versions 1 and 2 ({built})")
    assert error.problem is DatabaseProblem.UNSUPPORTED_VERSION


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.pop("partitions"), "corrupt database: manifest.json: 'partitions'"),
    (lambda m: m.update(records=m["records"] + 1), "is not the sum of the partitions' records"),
    (lambda m: m["partitions"][0].update(name="part-9"), "partition 0 is named 'part-9'"),
    (lambda m: m["partitions"][0].update(sha256="xyz"), "part-00000: bad sha256"),
    (lambda m: m["partitions"][1].update(records=-1), "part-00001 records is not a count"),
    (lambda m: m.update(format="something-else"), "manifest.json is not a relatedpages manifest"),
])
def test_broken_manifest(built: Path, edit: Any, message: str) -> None:
    manifest = json.loads((built / MANIFEST_NAME).read_text())
    edit(manifest)
    (built / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert message in str(refused(built))


def test_manifest_not_json(built: Path) -> None:
    (built / MANIFEST_NAME).write_text("{ half a manifest")
    assert str(refused(built)).startswith("corrupt database: manifest.json is not valid JSON")


# -- atomic replace ------------------------------------------------------------------------


@pytest.fixture(params=["exchange", "two_renames"])
def replace_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of putting a new database in place: renameat2 exchange, or the fallback."""
    if request.param == "exchange":
        if dbbuild._renameat2() is None:
            pytest.skip("no renameat2 here")
    else:
        monkeypatch.setattr(dbbuild, "_exchange", lambda first, second: False)  # where the build calls it
    return str(request.param)


def test_old_database_answers_until_the_rename(tmp_path: Path, replace_by: str) -> None:
    path = tmp_path / "db"
    build(path, [("http://a.example/", related_list(1))])
    old_reader = RelatedPagesDB(path)  # opened before the rebuild, no partition mapped yet
    seen_during_build: list[Any] = []

    def new_records() -> Iterator[tuple[str, list[Any]]]:
        yield "http://a.example/", related_list(2)
        with RelatedPagesDB(path) as during:  # the build is under way: the old one answers
            seen_during_build.append(during.related("http://a.example/"))
        yield "http://b.example/", related_list(3)

    build(path, new_records())
    assert seen_during_build == [as_related(related_list(1))]
    with RelatedPagesDB(path) as new:
        assert new.related("http://a.example/") == as_related(related_list(2))
        assert new.related("http://b.example/") == as_related(related_list(3))
    # The old reader keeps the generation it opened, although its files are deleted.
    assert old_reader.related("http://a.example/") == as_related(related_list(1))
    assert old_reader.related("http://b.example/") is None
    old_reader.close()
    assert os.listdir(tmp_path) == ["db"]  # no building or old folders left behind


def test_failed_build_leaves_the_old_database(tmp_path: Path, replace_by: str) -> None:
    path = tmp_path / "db"
    build(path, [("http://a.example/", related_list(1))])
    before = {name: (path / name).read_bytes() for name in os.listdir(path)}

    def failing() -> Iterator[tuple[str, list[Any]]]:
        yield "http://a.example/", related_list(2)
        raise OSError("input vanished")

    with pytest.raises(OSError, match="input vanished"):
        build(path, failing())
    assert {name: (path / name).read_bytes() for name in os.listdir(path)} == before
    assert os.listdir(tmp_path) == ["db"]
    with RelatedPagesDB(path, verify="full") as database:
        assert database.related("http://a.example/") == as_related(related_list(1))


def test_replace_refuses_a_folder_that_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("years of work")
    with pytest.raises(DatabaseError, match=r"precious: holds other files \(thesis.tex\): refusing to replace it"):
        build(tmp_path / "precious", make_records(5))
    assert os.listdir(tmp_path / "precious") == ["thesis.tex"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatabaseError, match="is not a folder"):
        build(tmp_path / "file", make_records(5))
    assert sorted(os.listdir(tmp_path)) == ["file", "precious"]


def test_build_into_an_empty_folder_or_over_a_broken_database(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    build(tmp_path / "empty", make_records(5))
    assert len(RelatedPagesDB(tmp_path / "empty")) == 5
    (tmp_path / "empty" / MANIFEST_NAME).write_text("garbage")
    build(tmp_path / "empty", make_records(7))
    assert len(RelatedPagesDB(tmp_path / "empty", verify="full")) == 7
    build(tmp_path / "new" / "nested" / "db", make_records(3))  # parents are created
    assert len(RelatedPagesDB(tmp_path / "new" / "nested" / "db")) == 3


def test_readers_opening_during_rebuilds_always_find_a_whole_database(tmp_path: Path) -> None:
    """With the atomic exchange there is no instant without a database at the path."""
    if dbbuild._renameat2() is None:
        pytest.skip("no renameat2 here")
    path = tmp_path / "db"
    generations = [[(f"http://g.example/{i}", related_list(gen)) for i in range(60)] for gen in range(6)]
    build(path, generations[0], partitions=4)
    stop = threading.Event()
    seen: set[int] = set()
    failures: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                with RelatedPagesDB(path) as database:
                    answers = [database.related(f"http://g.example/{i}") for i in range(0, 60, 7)]
            except DatabaseError as error:
                failures.append(str(error))
                continue
            gens = {next((g for g in range(6) if a == as_related(related_list(g))), -1) for a in answers}
            if len(gens) != 1:
                failures.append(f"mixed generations {gens}")
            seen.update(gens)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for records in generations[1:]:
            build(path, records, partitions=4)
    finally:
        stop.set()
        thread.join()
    assert failures == []
    assert os.listdir(tmp_path) == ["db"]


def test_fallback_answers_only_pages_the_main_algorithm_does_not(tmp_path):
    block = [("http://a.example/", [["http://b.example/", 2.0, [["hub.example", 1.0]]]])]
    fallback = [("http://a.example/", [["http://z.example/", 1.0, []]]),
                ("http://c.example/", [["http://d.example/", 3.0,
                                        [["hub.example", 3.0, "http://hub.example/list", "D"]]]]),
                ("http://e.example/", "not a list")]
    summary = build_database(iter(block), tmp_path / "db", algorithm="block", parameters={},
                             source=["test"], partitions=4, fallback=iter(fallback))
    assert summary.records == 2 and summary.fallback_records == 1
    assert summary.count(RecordRejection.FALLBACK_SUPERSEDED) == 1
    assert summary.count(RecordRejection.MALFORMED_RELATED) == 1
    with RelatedPagesDB(tmp_path / "db", verify="full") as database:
        (own,) = database.related("http://a.example/")
        (answered,) = database.related("http://c.example/")
    assert own.url == "http://b.example/" and own.fallback is None
    assert answered.url == "http://d.example/" and answered.fallback == "cocitation"
    # its evidence whole: the citing page and the anchor there
    assert answered.evidence == (("hub.example", 3.0, "http://hub.example/list", "D"),)
    assert read_manifest(tmp_path / "db").rejected["fallback_superseded"] == 1


def test_fallback_fills_short_lists_after_their_own_results(tmp_path):
    """``fill_to``: a block list shorter than M is completed by the fallback's results it
    lacks, after its own, each marked; a full list is left alone (and its fallback record
    counted as superseded)."""
    block = [
        ("http://a.example/", [["http://b.example/", 2.0, [["hub.example", 1.0]]]]),
        ("http://f.example/", [["http://g.example/", 3.0, []], ["http://h.example/", 1.0, []]]),
    ]
    fallback = [
        ("http://a.example/", [["http://b.example/", 9.0, []], ["http://a.example/", 8.0, []],
                               ["http://y.example/", 2.0, [["hub.example", 2.0, "http://hub.example/y", "Y"]]],
                               ["http://z.example/", 1.0, []]]),
        ("http://f.example/", [["http://x.example/", 5.0, []]]),
    ]
    summary = build_database(iter(block), tmp_path / "db", algorithm="block", parameters={},
                             source=["test"], partitions=3, fallback=iter(fallback), fill_to=2)
    assert summary.records == 2 and summary.fallback_records == 0
    assert summary.filled_records == 1
    assert summary.count(RecordRejection.FALLBACK_SUPERSEDED) == 1
    with RelatedPagesDB(tmp_path / "db", verify="full") as database:
        filled = database.related("http://a.example/")
        full = database.related("http://f.example/")
    assert [(r.url, r.fallback) for r in filled] == [
        ("http://b.example/", None), ("http://y.example/", "cocitation")]
    assert filled[1].evidence == (("hub.example", 2.0, "http://hub.example/y", "Y"),)
    assert [(r.url, r.fallback) for r in full] == [
        ("http://g.example/", None), ("http://h.example/", None)]


def test_fill_to_must_not_be_negative(tmp_path):
    with pytest.raises(ValueError, match="fill_to"):
        build_database(iter([]), tmp_path / "db", algorithm="block", parameters={},
                       source=["test"], fill_to=-1)
    assert not (tmp_path / "db").exists()
