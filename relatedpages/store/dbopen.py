"""A database folder opened as one generation: its manifest read and checked
(:func:`read_manifest`), then every partition file opened, with the size the manifest says,
through one descriptor of the folder, so that a rebuild swapping the folder meanwhile never
mixes two generations (:mod:`relatedpages.store.db` reads what this opens)."""
from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from relatedpages.store.dbformat import (
    _MAX_PARTITIONS,
    _OPEN_ATTEMPTS,
    ALGORITHMS,
    FORMAT_NAME,
    KEY_NORMALISED_URL,
    MANIFEST_NAME,
    STRINGS_NAME,
    DatabaseError,
    DatabaseProblem,
    FormatVersion,
    Manifest,
    PartitionInfo,
    StringsInfo,
    partition_name,
)

#: The versions this reader reads, as a refusal names them.
_READABLE = " and ".join(str(version.value) for version in FormatVersion)

logger = logging.getLogger(__name__)


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """The checked manifest of the database at ``path`` (partition files not looked at)."""
    path = Path(path)
    folder = _open_folder(path)
    try:
        return _load_manifest(path, folder)
    finally:
        os.close(folder)


def _open_folder(path: Path) -> int:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, "no such folder", path_first=True) from None
    except NotADirectoryError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, "not a folder", path_first=True) from None


def _load_manifest(path: Path, folder: int) -> Manifest:
    try:
        fd = os.open(MANIFEST_NAME, os.O_RDONLY, dir_fd=folder)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.NOT_A_DATABASE, path, f"no {MANIFEST_NAME}", path_first=True) from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatabaseError(DatabaseProblem.CORRUPT, path, f"{MANIFEST_NAME} is not valid JSON ({error})") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise DatabaseError(
            DatabaseProblem.NOT_A_DATABASE, path, f"{MANIFEST_NAME} is not a relatedpages manifest",
            path_first=True,
        )
    version = raw.get("format_version")
    if type(version) is not int or version not in tuple(FormatVersion):
        raise DatabaseError(
            DatabaseProblem.UNSUPPORTED_VERSION, path,
            f"format version {version!r}, this reader reads versions {_READABLE}",
        )
    try:
        return _manifest_from_json(raw)
    except (KeyError, TypeError, ValueError) as error:
        raise DatabaseError(DatabaseProblem.CORRUPT, path, f"{MANIFEST_NAME}: {error}") from None


def _open_generation(path: Path) -> tuple[Manifest, list[IO[bytes]], IO[bytes] | None]:
    """The manifest, the open partition files and the open string table (format 2; else
    None) of one and the same database.

    Everything is opened relative to one descriptor of the folder, so a rebuild that
    swaps the folder meanwhile cannot mix two generations; if the folder was swapped
    (and the old one is being deleted) while we opened it, start again on the new one.
    """
    for attempt in range(_OPEN_ATTEMPTS):
        folder = _open_folder(path)
        files: list[IO[bytes]] = []
        try:
            manifest = _load_manifest(path, folder)
            for part in manifest.partitions:
                files.append(_open_partition(path, folder, part.name, part.bytes))
            if manifest.strings is not None:
                files.append(_open_partition(path, folder, STRINGS_NAME, manifest.strings.bytes))
                return manifest, files[:-1], files[-1]
            return manifest, files, None
        except DatabaseError:
            for handle in files:
                handle.close()
            if attempt + 1 < _OPEN_ATTEMPTS and _swapped(path, folder):
                logger.info("%s was replaced while being opened; opening the new database", path)
                continue
            raise
        finally:
            os.close(folder)
    raise AssertionError("unreachable")


def _swapped(path: Path, folder: int) -> bool:
    try:
        now = os.stat(path)
    except OSError:
        return True
    then = os.fstat(folder)
    return (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino)


def _open_partition(path: Path, folder: int, name: str, expected: int) -> IO[bytes]:
    """A data file of the database (a partition, the string table), of the size the
    manifest says."""
    try:
        fd = os.open(name, os.O_RDONLY, dir_fd=folder)
    except FileNotFoundError:
        raise DatabaseError(DatabaseProblem.PARTIAL, path, f"{name} missing") from None
    handle = os.fdopen(fd, "rb", buffering=0)
    size = os.fstat(fd).st_size
    if size != expected:
        handle.close()
        kind = DatabaseProblem.PARTIAL if size < expected else DatabaseProblem.CORRUPT
        raise DatabaseError(kind, path, f"{name} has {size} bytes, the manifest says {expected}")
    return handle


def _manifest_from_json(raw: dict[str, Any]) -> Manifest:
    def integer(value: Any, what: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{what} is not a count: {value!r}")
        return value

    parts = []
    for index, entry in enumerate(raw["partitions"]):
        name = entry["name"]
        if name != partition_name(index):
            raise ValueError(f"partition {index} is named {name!r}")
        sha256 = entry["sha256"]
        if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise ValueError(f"{name}: bad sha256 {sha256!r}")
        parts.append(PartitionInfo(
            name, integer(entry["records"], f"{name} records"), integer(entry["bytes"], f"{name} bytes"), sha256,
        ))
    if not 1 <= len(parts) < _MAX_PARTITIONS:
        raise ValueError(f"{len(parts)} partitions")
    records = integer(raw["records"], "records")
    if records != sum(part.records for part in parts):
        raise ValueError(f"records {records} is not the sum of the partitions' records")
    algorithm, parameters, source, built_at = raw["algorithm"], raw["parameters"], raw["source"], raw["built_at"]
    if not isinstance(algorithm, str) or not isinstance(parameters, dict) or not isinstance(built_at, str):
        raise ValueError("algorithm, parameters or built_at of the wrong type")
    if not isinstance(source, list) or not all(isinstance(item, str) for item in source):
        raise ValueError("source is not a list of strings")
    rejected = raw.get("rejected", {})
    key = raw.get("key", KEY_NORMALISED_URL)
    if not isinstance(key, str):
        raise ValueError("key of the wrong type")
    strings = None
    if raw["format_version"] == FormatVersion.BLOCKS:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"format {FormatVersion.BLOCKS.value} holds related lists, not {algorithm!r}")
        entry = raw["strings"]
        if entry["name"] != STRINGS_NAME or not re.fullmatch(r"[0-9a-f]{64}", str(entry["sha256"])):
            raise ValueError(f"strings: bad name or sha256 {entry!r}")
        strings = StringsInfo(integer(entry["count"], "strings count"), integer(entry["bytes"], "strings bytes"),
                              entry["sha256"])
    return Manifest(
        format_version=raw["format_version"],
        algorithm=algorithm,
        parameters=MappingProxyType(parameters),
        source=tuple(source),
        built_at=built_at,
        records=records,
        partitions=tuple(parts),
        rejected=MappingProxyType(dict(rejected)),
        key=key,
        strings=strings,
    )
