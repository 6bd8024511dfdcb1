"""The databases a server answers from, each swapped for its rebuilt generation within
seconds, and never for one that fails verification.

A build replaces a database by exchanging folders (:mod:`relatedpages.store.dbbuild`), so
the folder at a path changes identity (device, inode) when a new generation is in place.
A watcher thread stats every path once per ``check_every`` seconds; a new identity is opened
with full verification (every checksum, :class:`relatedpages.store.db.Verify`) in the
background, then swapped in by one reference assignment.  Every worker opens every database with the same full check when it starts.  The old
generation stays open for ``grace`` seconds, so requests that hold it finish; a candidate that fails verification is
never served: the old one keeps answering and :meth:`Sources.health` says why.  Swaps,
refusals and failed looks are counted in the worker's :class:`~relatedpages.serve.metrics.Metrics`.

A partition found corrupt under a running server (a disk that rots, a careless edit in
place) fails only the lookups that need it (:meth:`PartitionedDB.failures
<relatedpages.store.dbread.PartitionedDB.failures>`); the worker that found it writes it to
the metrics folder (:meth:`Sources.report`), so every worker's health names it while that
generation is served.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relatedpages.serve.answers import StoredRelatedDB
from relatedpages.serve.metrics import ErrorKind, Metrics
from relatedpages.store.db import DatabaseError, Verify

logger = logging.getLogger(__name__)

#: Seconds between the watcher's looks at the database folders.
CHECK_EVERY_DEFAULT = 1.0
#: Seconds a swapped-out generation stays open for the requests still using it.
GRACE_DEFAULT = 30.0


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def folder_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the folder at ``path``; None when there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


@dataclass
class Source:
    """One named database and what the server knows of it."""

    name: str
    path: Path
    database: StoredRelatedDB | None = None
    identity: tuple[int, int] | None = None
    swaps: int = 0  # every generation served was opened with every checksum checked
    refused: tuple[int, int] | None = None  # the identity that failed (not retried)
    problem: str | None = None  # why the newest generation at ``path`` is not served
    loaded_at: float = 0.0

    def health(self, corrupt: list[str] | None = None) -> dict[str, Any]:
        manifest = self.database.manifest if self.database is not None else None
        return {
            "path": str(self.path),
            "serving": self.database is not None,
            "algorithm": manifest.algorithm if manifest else None,
            "built_at": manifest.built_at if manifest else None,
            "records": manifest.records if manifest else None,
            "verified": self.database is not None,
            "swaps": self.swaps,
            "problem": self.problem,
            "corrupt": corrupt or [],
        }


@dataclass
class Sources:
    """Named databases, opened and watched (:meth:`start`), read by request threads."""

    paths: dict[str, Path]
    check_every: float = CHECK_EVERY_DEFAULT
    grace: float = GRACE_DEFAULT
    metrics: Metrics | None = None
    sources: dict[str, Source] = field(default_factory=dict)
    _retired: list[tuple[float, StoredRelatedDB]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        for name, path in self.paths.items():
            source = Source(name, Path(path))
            self._load(source)
            self.sources[name] = source

    def names(self) -> list[str]:
        return list(self.sources)

    def database(self, name: str) -> StoredRelatedDB | None:
        """The generation of ``name`` to answer from now (None: nothing servable)."""
        return self.sources[name].database

    def health(self) -> dict[str, dict[str, Any]]:
        """Each database's health; ``corrupt``: what any worker found corrupt in the
        generation served (one line each, ``part-00017 block 3 at byte … does not
        decompress``)."""
        return {name: source.health(self._corrupt(source)) for name, source in self.sources.items()}

    def report(self, database: StoredRelatedDB) -> None:
        """Tell every worker what this one found corrupt in ``database`` (a file per fault
        in the metrics folder, named by the generation's ETag and the fault)."""
        folder = self._reports()
        if folder is None:
            return
        for detail in database.failures():
            path = folder / f"{_digest(database.tag)}-{_digest(detail)}.json"
            if path.exists():
                continue
            part = path.with_name(f"{path.name}.{os.getpid()}")
            try:
                part.write_text(json.dumps({"tag": database.tag, "detail": detail}), encoding="utf-8")
                os.replace(part, path)
            except OSError as error:  # the health of this worker still says it
                logger.warning("could not share a corrupt partition with the other workers: %s", error)

    def _corrupt(self, source: Source) -> list[str]:
        database = source.database
        if database is None:
            return []
        found = set(database.failures())
        folder = self._reports()
        if folder is not None:
            for path in folder.glob(f"{_digest(database.tag)}-*.json"):
                try:
                    found.add(json.loads(path.read_text(encoding="utf-8"))["detail"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # written by nothing this server knows
        return sorted(found)

    def _reports(self) -> Path | None:
        if self.metrics is None or self.metrics.folder is None:
            return None
        folder = self.metrics.folder / "corrupt"
        folder.mkdir(exist_ok=True)
        return folder

    def start(self) -> None:
        """Watch the folders from a daemon thread (one per server process)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="relatedpages-db-watch",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        for source in self.sources.values():
            if source.database is not None:
                source.database.close()
        for _, old in self._retired:
            old.close()

    def check(self) -> None:
        """One look at every folder: swap in a new generation that verifies."""
        for source in self.sources.values():
            identity = folder_identity(source.path)
            if identity is None or identity in (source.identity, source.refused):
                continue
            self._load(source)
        now = time.monotonic()
        keep = []
        for retired_at, old in self._retired:
            if now - retired_at >= self.grace:
                old.close()
            else:
                keep.append((retired_at, old))
        self._retired = keep

    def _load(self, source: Source) -> None:
        """Open the generation at ``source.path`` with every checksum checked (at start
        too: a worker that boots after a careless copy into place must not serve it), and
        swap it in; or keep what is served and say why."""
        identity = folder_identity(source.path)
        try:
            database = StoredRelatedDB(source.path, verify=Verify.FULL)
        except (DatabaseError, OSError) as error:
            source.refused, source.problem = identity, str(error)
            logger.warning("%s: not serving %s: %s", source.name, source.path, error)
            if self.metrics is not None:
                self.metrics.error(ErrorKind.DATABASE_REFUSED)
            return
        old = source.database
        source.database, source.identity, source.refused = database, identity, None
        source.problem = None
        source.loaded_at = time.time()
        if old is not None:
            source.swaps += 1
            if self.metrics is not None:
                self.metrics.swap(source.name)
            self._retired.append((time.monotonic(), old))
            logger.info("%s: now serving %s (%d records)", source.name, database.manifest.built_at,
                        database.manifest.records)

    def _watch(self) -> None:
        while not self._stop.wait(self.check_every):
            try:
                self.check()
            except Exception:  # the watcher must outlive any one bad look
                logger.exception("database watcher")
                if self.metrics is not None:
                    self.metrics.error(ErrorKind.WATCHER_FAILED)
