"""Format 2 (relatedpages.store.dbblocks, relatedpages.store.dbstrings): blocks, their sparse
index, the string table, exact numbers, refusals of what does not read, and the same answers
as format 1 for every reader."""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import zstandard

from relatedpages.store.db import (
    MANIFEST_NAME,
    STRINGS_NAME,
    DatabaseError,
    PartitionedDB,
    Related,
    RelatedPagesDB,
    partition_name,
    partition_of,
)
from relatedpages.store.dbblocks import BlockPartition, Compression
from relatedpages.store.dbbuild import _is_related_list, build_database
from relatedpages.store.dbopen import read_manifest
from relatedpages.store.dbstrings import StringTableWriter, stored_number
from tests.test_db import as_related, make_records, related_list


def build(path: Path, records: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("algorithm", "block")
    kwargs.setdefault("parameters", {})
    kwargs.setdefault("source", ["test"])
    return build_database(records, path, **kwargs)


class StoredDB(PartitionedDB[bytes]):
    """A reader written for format 1 that takes the stored JSON bytes as they are (as the
    HTTP server's does): it must get format 1's bytes from format 2 too."""

    def _decode_value(self, data: bytes) -> bytes:
        return data


@contextmanager
def blocks_of(path: Path, index: int) -> Iterator[BlockPartition]:
    file = path / partition_name(index)
    with open(file, "rb") as handle:
        yield BlockPartition(handle.fileno(), file.stat().st_size)


# -- the layout ------------------------------------------------------------------------


def test_blocks_index_and_string_table(tmp_path: Path) -> None:
    records = make_records(400)
    build(tmp_path / "db", records, partitions=2, compression=Compression(block_bytes=1024))
    manifest = read_manifest(tmp_path / "db")
    assert manifest.format_version == 2 and manifest.strings is not None
    for index in range(2):
        data = (tmp_path / "db" / partition_name(index)).read_bytes()
        assert data[-8:] == b"RPDBIDX2"
        with blocks_of(tmp_path / "db", index) as part:
            assert part.blocks > 10  # ~1 KiB of lines each
            params = zstandard.get_frame_parameters(data[:part._offsets[1]])
            assert params.has_checksum and params.content_size == part._sizes[0]
            lines = list(part.lines())
        assert len(lines) == manifest.partitions[index].records
        assert [key for key, _ in lines] == sorted(key for key, _ in lines)
        # values hold ids and millionths: no URL, no float in the blocks
        assert all(b"http" not in value and b"." not in value for _, value in lines)
    strings = (tmp_path / "db" / STRINGS_NAME).read_bytes()
    assert strings.startswith(b"RPSTR2") and b"http://r7-1.example/page" in strings
    assert strings.count(b"hub0.example") == 1  # once, for the 400 records that cite it


@pytest.mark.parametrize("block_bytes", [256, 2048])
def test_every_key_at_block_edges_and_the_gaps_between(tmp_path: Path, block_bytes: int) -> None:
    urls = [f"http://a.example/{i:05d}" for i in range(0, 1200, 3)]
    build(tmp_path / "db", [(url, related_list(i % 5, n=i % 3)) for i, url in enumerate(urls)], partitions=1,
          compression=Compression(block_bytes=block_bytes))
    with blocks_of(tmp_path / "db", 0) as part:
        firsts = set(part._first_keys)
        assert len(firsts) == part.blocks > 1
    with RelatedPagesDB(tmp_path / "db") as database:
        for i, url in enumerate(urls):
            assert database.related(url) == as_related(related_list(i % 5, n=i % 3))
        for miss in [f"http://a.example/{i:05d}" for i in range(1, 1200, 3)] + [
                "http://a.example/", "http://a.example/0", "http://a.example/99999", "http://0.example/",
                "http://b.example/00000"]:
            assert database.related(miss) is None
    assert {url.encode() for url in urls} >= firsts


# -- numbers and strings -------------------------------------------------------------------


NUMBERS = [3.162882, 0.0, -2.5, 1, 7, 232.017, 1 / 3, 1e-07, 5e12, 1e300, -1e-300, 123456.789012, 0.1 + 0.2]


def test_numbers_come_back_exactly(tmp_path: Path) -> None:
    records = [(f"http://n.example/{i}", [["http://r.example/", value, [["hub.example", value, "http://p/", "a"]]]])
               for i, value in enumerate(NUMBERS)]
    build(tmp_path / "db", records, partitions=3)
    with RelatedPagesDB(tmp_path / "db") as database:
        for i, value in enumerate(NUMBERS):
            (found,) = database.related(f"http://n.example/{i}") or []
            assert found.score == float(value) and found.evidence[0][1] == float(value)
            assert isinstance(found.score, float) and math.copysign(1, found.score) == math.copysign(1, value)
    assert [stored_number(value) for value in (3.162882, 7, 1 / 3)] == [3162882, 7000000, 1 / 3]


MALFORMED: list[Any] = [
    {"not": "a list"}, "text", None, [["u", 1.0]], [["u", 1.0, [], "f", "v", "x"]], [[1, 1.0, []]],
    [["u", "1", []]], [["u", True, []]], [["u", float("nan"), []]], [["u", float("inf"), []]], [["u", 1.0, {}]],
    [["u", 1.0, [["s"]]]], [["u", 1.0, [["s", 1.0, "p"]]]], [["u", 1.0, [[2, 1.0]]]], [["u", 1.0, [["s", "1"]]]],
    [["u", 1.0, [["s", 1.0, "p", 4]]]], [["u", 1.0, [], 3]], [["u", 1.0, [], "f", None]], [["u", 1.0, ["s"]]],
]
WELL_FORMED: list[Any] = [
    [], [("u", 3, (("s", 2),))], [["u", 1.0, [], "cocitation", "http://via/"]], [["u", -1, [["s", 0, "p", ""]]]],
    related_list(4),
]


@pytest.mark.parametrize("value", MALFORMED + WELL_FORMED)
def test_the_encoder_accepts_exactly_what_format_1_accepts(value: Any) -> None:
    """Format 2 checks a value as it encodes it (one walk); format 1 by _is_related_list."""
    assert (StringTableWriter().encode_related(value) is not None) == _is_related_list(value)


# -- what does not read ------------------------------------------------------------------------


@pytest.fixture
def built(tmp_path: Path) -> Path:
    build(tmp_path / "db", make_records(300), partitions=4, compression=Compression(block_bytes=2048))
    return tmp_path / "db"


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["magic", "header", "middle", "checksum"])
def test_a_flipped_byte_in_a_block_is_refused_at_lookup(built: Path, where: str) -> None:
    """The default open trusts the sizes; zstd's checksum (and the index's sizes) refuse
    the block, never answer from it, wherever the byte is."""
    with blocks_of(built, 1) as part:
        end, first = part._offsets[1], part._first_keys[0].decode()
    flip(built / partition_name(1), {"magic": 1, "header": 5, "middle": end // 2, "checksum": end - 2}[where])
    url = next(url for url, _ in make_records(300) if partition_of(url, 4) == 1)
    with RelatedPagesDB(built) as database:
        with pytest.raises(DatabaseError, match=r"^corrupt database: part-00001 block 0 at byte 0 does not"):
            database.related(first)
        with pytest.raises(DatabaseError, match="part-00001 block 0"):
            database.related(url)  # nothing more is answered


def test_a_partition_without_its_index_is_refused(built: Path) -> None:
    data = (built / "part-00002").read_bytes()
    (built / "part-00002").write_bytes(data[:-16] + b"\0" * 16)
    url = next(url for url, _ in make_records(300) if partition_of(url, 4) == 2)
    with RelatedPagesDB(built) as database:
        with pytest.raises(DatabaseError, match="part-00002 does not end with a block index"):
            database.related(url)


@pytest.mark.parametrize("verify", ["sizes", "lazy", "full"])
def test_a_missing_or_truncated_string_table(built: Path, verify: str) -> None:
    data = (built / STRINGS_NAME).read_bytes()
    (built / STRINGS_NAME).write_bytes(data[:-3])
    with pytest.raises(DatabaseError, match=f"partial database: strings has {len(data) - 3} bytes, "
                                            f"the manifest says {len(data)}"):
        RelatedPagesDB(built, verify=verify)
    (built / STRINGS_NAME).unlink()
    with pytest.raises(DatabaseError, match="partial database: strings missing"):
        RelatedPagesDB(built, verify=verify)


def test_a_string_table_edited_in_place_is_refused_by_lazy_and_full(built: Path) -> None:
    flip(built / STRINGS_NAME, (built / STRINGS_NAME).stat().st_size - 5)
    url = make_records(1)[0][0]
    with RelatedPagesDB(built, verify="lazy") as database:
        with pytest.raises(DatabaseError, match="^corrupt database: strings checksum mismatch"):
            database.related(url)
    with pytest.raises(DatabaseError, match="strings checksum mismatch"):
        RelatedPagesDB(built, verify="full")


def test_a_string_table_that_is_not_one(built: Path) -> None:
    flip(built / STRINGS_NAME, 0)
    with pytest.raises(DatabaseError, match="^corrupt database: strings is not a string table"):
        RelatedPagesDB(built)


def test_format_2_holds_related_lists_only(tmp_path: Path) -> None:
    links = [("1", {"out": [["2", "", -1]], "in": [], "crawled": True})]
    with pytest.raises(ValueError, match="format 2 holds related lists"):
        build(tmp_path / "links", links, algorithm="links", normalise_keys=False, format_version=2)
    build(tmp_path / "links", links, algorithm="links", normalise_keys=False)
    assert read_manifest(tmp_path / "links").format_version == 1  # a link index keeps format 1
    raw = json.loads((tmp_path / "links" / MANIFEST_NAME).read_text())
    raw.update(format_version=2, strings={"name": "strings", "count": 0, "bytes": 20, "sha256": "0" * 64})
    (tmp_path / "links" / MANIFEST_NAME).write_text(json.dumps(raw))
    with pytest.raises(DatabaseError, match="format 2 holds related lists, not 'links'"):
        read_manifest(tmp_path / "links")
    for wrong in (0, 3, "2", True):
        with pytest.raises(ValueError, match="format_version must be one of 1, 2"):
            build(tmp_path / "db", [], format_version=wrong)
    for compression in ({"block_bytes": 10}, {"level": 0}, {"level": 23}):
        with pytest.raises(ValueError):
            Compression(**compression)
    assert not (tmp_path / "db").exists()


# -- the same answers as format 1 ------------------------------------------------------------


def test_format_2_answers_as_format_1_does(tmp_path: Path) -> None:
    records = make_records(300) + [
        ("http://f.example/", [["http://g.example/", 2.5, [["hub.example", 1.0, "http://hub.example/l", "G \"g\""]],
                                "cocitation"],
                               ["http://h.example/", 1.5, [["hub.example", 0.5, "http://hub.example/l", "H"]],
                                "site", "http://f.example/other"]]),
        ("http://empty.example/", []), ("http://中文.example/路径", [["http://例子.example/", 1.0, [["站.example", 1.0]]]])]
    build(tmp_path / "v1", records, partitions=8, format_version=1)
    build(tmp_path / "v2", records, partitions=8, compression=Compression(block_bytes=512))
    with RelatedPagesDB(tmp_path / "v1") as one, RelatedPagesDB(tmp_path / "v2") as two:
        assert list(one.records()) == list(two.records())
        for url in [url for url, _ in records] + ["http://www.f.example", "http://missing.example/"]:
            assert one.find(url) == two.find(url)
            assert one.answer(url, 3) == two.answer(url, 3)
        assert [one.partition_data(i) for i in range(8)] == [two.partition_data(i) for i in range(8)]
        assert two.related("http://f.example/") == [
            Related("http://g.example/", 2.5, (("hub.example", 1.0, "http://hub.example/l", 'G "g"'),), "cocitation"),
            Related("http://h.example/", 1.5, (("hub.example", 0.5, "http://hub.example/l", "H"),), "site",
                    "http://f.example/other")]
    with StoredDB(tmp_path / "v1") as one, StoredDB(tmp_path / "v2") as two:
        for url, _ in records:
            key = url.encode()
            assert one._lookup(key) == two._lookup(key)
    assert os.path.getsize(tmp_path / "v2" / STRINGS_NAME) < read_manifest(tmp_path / "v2").bytes


def test_answers_survive_the_string_cache_emptying(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from relatedpages.store import dbstrings

    monkeypatch.setattr(dbstrings, "CACHE_STRINGS", 5)  # emptied every few strings
    records = make_records(200)
    build(tmp_path / "db", records, partitions=4)
    with RelatedPagesDB(tmp_path / "db") as database:
        for _ in range(2):
            for url, value in records:
                assert database.related(url) == as_related(value)
