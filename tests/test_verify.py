"""relatedpages verify: every checksum and the key order of a database, faults named by
partition (or the string table), a non-zero exit on any fault; on format 2 (the default)
and format 1 (lines, edited here line by line)."""
from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from relatedpages.cli import main
from relatedpages.store.db import STRINGS_NAME, partition_name
from relatedpages.store.dbblocks import BlockPartition, BlockWriter, Compression
from relatedpages.store.dbbuild import build_database

RECORDS = [(f"http://p{i}.example/", [[f"http://q{i}.example/", 1.0, []]]) for i in range(40)]


@pytest.fixture()
def database(tmp_path: Path) -> Path:
    build_database(iter(RECORDS), tmp_path / "db", algorithm="block", parameters={},
                   source=["test"], partitions=4)
    return tmp_path / "db"


@pytest.fixture()
def lines_database(tmp_path: Path) -> Path:
    """Format 1: lines a test can reorder or edit."""
    build_database(iter(RECORDS), tmp_path / "db", algorithm="block", parameters={},
                   source=["test"], partitions=4, format_version=1)
    return tmp_path / "db"


def _largest(db: Path) -> Path:
    return max((db / partition_name(i) for i in range(4)), key=lambda p: p.stat().st_size)


def _rewrite(db: Path, part: Path, data: bytes) -> None:
    """Replace a partition and make the manifest agree with it (a fault only the order
    check, or zstd's checksum of a block, can see)."""
    part.write_bytes(data)
    manifest = json.loads((db / "manifest.json").read_text())
    for entry in manifest["partitions"]:
        if entry["name"] == part.name:
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["bytes"] = len(data)
    (db / "manifest.json").write_text(json.dumps(manifest))


def _lines(part: Path) -> list[bytes]:
    """A format-2 partition's lines."""
    with open(part, "rb") as handle:
        return [b"%s\t%s" % line for line in BlockPartition(handle.fileno(), part.stat().st_size).lines()]


def _blocks(lines: list[bytes]) -> bytes:
    """Lines written as a format-2 partition, in the order given, two to a block."""
    with tempfile.TemporaryFile() as handle:
        writer = BlockWriter(handle, Compression(block_bytes=256))
        for line in lines:
            writer.add(line)
        writer.finish()
        handle.seek(0)
        return handle.read()


def test_a_sound_database_passes(database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--db", str(database)]) == 0
    out = capsys.readouterr().out
    assert "sound: block, 40 records in 4 partitions" in out


def test_a_flipped_byte_of_the_same_size_is_named(database: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    part = _largest(database)
    data = bytearray(part.read_bytes())
    data[5] ^= 0x01
    part.write_bytes(bytes(data))
    assert main(["verify", "--db", str(database)]) == 1
    err = capsys.readouterr().err
    assert f"{part.name} checksum mismatch" in err and "1 fault(s)" in err


def test_a_flipped_byte_in_a_compressed_block_is_named(database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Format 2: the sha256 of the file names the partition; with the manifest made to agree
    (a copy that lost its manifest, or bit rot before the build's own read-back), zstd's
    checksum of the block still names the block."""
    part = _largest(database)
    data = bytearray(part.read_bytes())
    data[len(data) // 4] ^= 0x01  # inside block 0: the blocks come first, the index last
    part.write_bytes(bytes(data))
    assert main(["verify", "--db", str(database)]) == 1
    assert f"{part.name} checksum mismatch" in capsys.readouterr().err
    _rewrite(database, part, bytes(data))
    assert main(["verify", "--db", str(database)]) == 1
    err = capsys.readouterr().err
    assert f"{part.name} block 0 at byte 0 does not decompress" in err and "1 fault(s)" in err


def test_a_flipped_byte_in_the_string_table_is_named(database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strings = database / STRINGS_NAME
    data = strings.read_bytes()
    strings.write_bytes(data.replace(b"http://q7", b"http://Q7", 1))
    assert main(["verify", "--db", str(database)]) == 1
    assert f"{STRINGS_NAME} checksum mismatch" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", [1, 2], ids=["lines", "blocks"])
def test_keys_out_of_order_or_in_the_wrong_partition_are_named(
        fmt: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "db"
    build_database(iter(RECORDS), database, algorithm="block", parameters={}, source=["test"], partitions=4,
                   format_version=fmt)
    part = _largest(database)
    lines = part.read_bytes().splitlines() if fmt == 1 else _lines(part)
    write = (lambda lines: b"".join(line + b"\n" for line in lines)) if fmt == 1 else _blocks
    copy = tmp_path / "copy"
    shutil.copytree(database, copy)
    _rewrite(database, part, write(list(reversed(lines))))
    assert main(["verify", "--db", str(database)]) == 1
    err = capsys.readouterr().err
    assert f"{part.name} key at byte" in err if fmt == 1 else f"{part.name} block 0 at byte 0: key 1 is out of order" in err
    # a line moved to another partition (manifest counts fixed): it is named there
    other = next(copy / partition_name(i) for i in range(4) if copy / partition_name(i) != copy / part.name)
    moved = lines[0]
    _rewrite(copy, other, write((other.read_bytes().splitlines() if fmt == 1 else _lines(other)) + [moved]))
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in manifest["partitions"]:
        if entry["name"] == other.name:
            entry["records"] += 1
    manifest["records"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", "--db", str(copy)]) == 1
    err = capsys.readouterr().err
    assert f"{other.name} " in err and (f"belongs to {part.name}" in err or "out of order" in err)


def test_a_missing_partition_or_folder(database: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (database / partition_name(2)).unlink()
    assert main(["verify", "--db", str(database)]) == 1
    assert f"partial database: {partition_name(2)} missing" in capsys.readouterr().err
    assert main(["verify", "--db", str(tmp_path / "nothing")]) == 2
    assert "no such database" in capsys.readouterr().err


def test_a_link_index_is_verified_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edges = tmp_path / "edges.tsv"
    edges.write_text("1\t2\n1\t3\n2\t3\n")
    assert main(["linkgraph", "import", "--edges", str(edges), "--db", str(tmp_path / "links")]) == 0
    capsys.readouterr()
    assert main(["verify", "--db", str(tmp_path / "links")]) == 0
    assert "sound: links" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("relatedpages ")


def test_a_build_whose_output_fails_the_check_is_not_installed(
        database: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build reads back what it wrote before the swap (check_database); a fault
    keeps the database in place."""
    from relatedpages.store import db as db_module

    before = (database / "manifest.json").read_bytes()
    seen: list[Path] = []

    def faulty(path: Path) -> list[str]:
        seen.append(Path(path))
        return ["part-00001 checksum mismatch"]

    monkeypatch.setattr(db_module, "check_database", faulty)
    with pytest.raises(db_module.DatabaseError, match="part-00001 checksum mismatch after writing"):
        build_database(iter([("http://x.example/", [])]), database, algorithm="block",
                       parameters={}, source=["test"], partitions=4)
    assert seen and seen[0].name.startswith(".db.building-")
    assert (database / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in database.parent.iterdir()) == ["db"]


def test_query_verify_refuses_a_partition_edited_in_place(
        lines_database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Same size, one byte changed inside a related URL: the default open (sizes) cannot
    see it; ``query --verify`` checks every checksum first and refuses, naming it."""
    database = lines_database
    part = _largest(database)
    data = part.read_bytes()
    edited = data.replace(b"http://q", b"http://Q", 1)
    assert len(edited) == len(data) and edited != data
    part.write_bytes(edited)
    url = data.split(b"\t", 1)[0].decode()
    assert main(["query", "--db", str(database), "--json", url]) == 0
    capsys.readouterr()
    assert main(["query", "--db", str(database), "--verify", "--json", url]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and f"{part.name} checksum mismatch" in captured.err


def test_query_verify_refuses_a_string_table_edited_in_place(
        database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Format 2: a URL edited in the string table (same size) is what the default open
    answers; ``query --verify`` refuses, naming the table."""
    strings = database / STRINGS_NAME
    strings.write_bytes(strings.read_bytes().replace(b"http://q7.", b"http://Q7.", 1))
    assert main(["query", "--db", str(database), "--json", "http://p7.example/"]) == 0
    assert "http://Q7.example/" in capsys.readouterr().out
    assert main(["query", "--db", str(database), "--verify", "--json", "http://p7.example/"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and f"{STRINGS_NAME} checksum mismatch" in captured.err
