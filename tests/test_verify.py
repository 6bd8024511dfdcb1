"""relatedpages verify: every checksum and the key order of a database, faults named by
partition, a non-zero exit on any fault."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from relatedpages.cli import main
from relatedpages.store.db import partition_name
from relatedpages.store.dbbuild import build_database


@pytest.fixture()
def database(tmp_path: Path) -> Path:
    records = [(f"http://p{i}.example/", [[f"http://q{i}.example/", 1.0, []]]) for i in range(40)]
    build_database(iter(records), tmp_path / "db", algorithm="block", parameters={},
                   source=["test"], partitions=4)
    return tmp_path / "db"


def _largest(db: Path) -> Path:
    return max((db / partition_name(i) for i in range(4)), key=lambda p: p.stat().st_size)


def _rewrite(db: Path, part: Path, data: bytes) -> None:
    """Replace a partition and make the manifest agree with it (a fault only the order
    check can see)."""
    part.write_bytes(data)
    manifest = json.loads((db / "manifest.json").read_text())
    for entry in manifest["partitions"]:
        if entry["name"] == part.name:
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["bytes"] = len(data)
    (db / "manifest.json").write_text(json.dumps(manifest))


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


def test_keys_out_of_order_or_in_the_wrong_partition_are_named(
        database: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    part = _largest(database)
    lines = part.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "copy"
    shutil.copytree(database, copy)
    _rewrite(database, part, b"".join(reversed(lines)))
    assert main(["verify", "--db", str(database)]) == 1
    assert f"{part.name} key at byte" in capsys.readouterr().err
    # a line moved to another partition (manifest counts fixed): it is named there
    other = next(copy / partition_name(i) for i in range(4) if copy / partition_name(i) != copy / part.name)
    moved = lines[0]
    _rewrite(copy, other, other.read_bytes() + moved)
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in manifest["partitions"]:
        if entry["name"] == other.name:
            entry["records"] += 1
    manifest["records"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", "--db", str(copy)]) == 1
    err = capsys.readouterr().err
    assert f"{other.name} key at byte" in err and (
        f"belongs to {part.name}" in err or "out of order" in err)


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
        database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Same size, one byte changed inside a related URL: the default open (sizes) cannot
    see it; ``query --verify`` checks every checksum first and refuses, naming it."""
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
