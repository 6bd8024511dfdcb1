"""A user study in one SQLite file (WAL; every grade committed when it is given).

Tables: ``meta`` (name, seed, systems, k, created), ``queries`` (position, url, topic),
``results`` (per query, the union of the systems' top k in shuffled order: what graders see,
with no system named), ``ranks`` (which system returned a result at which rank), ``graders``
and ``grades`` (0 = unrelated, 1 = somewhat, 2 = related: the paper's scale; a grader's
later grade of the same result replaces the earlier one).
"""
from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Results per system per query (the paper's M).
TOP_K_DEFAULT = 15
GRADES = (0, 1, 2)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queries (id INTEGER PRIMARY KEY, position INTEGER NOT NULL UNIQUE,
    url TEXT NOT NULL UNIQUE, topic TEXT);
CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, query_id INTEGER NOT NULL REFERENCES queries(id),
    position INTEGER NOT NULL, url TEXT NOT NULL, UNIQUE (query_id, url), UNIQUE (query_id, position));
CREATE TABLE IF NOT EXISTS ranks (result_id INTEGER NOT NULL REFERENCES results(id), system TEXT NOT NULL,
    rank INTEGER NOT NULL, PRIMARY KEY (result_id, system));
CREATE TABLE IF NOT EXISTS graders (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grades (grader_id INTEGER NOT NULL REFERENCES graders(id),
    result_id INTEGER NOT NULL REFERENCES results(id), grade INTEGER NOT NULL CHECK (grade IN (0, 1, 2)),
    graded_at TEXT NOT NULL, PRIMARY KEY (grader_id, result_id));
"""


class StudyError(Exception):
    """A study that cannot be made or used (one line for the user)."""


def connect(path: str | Path, *, create: bool = False) -> sqlite3.Connection:
    """The study at ``path`` (WAL, foreign keys on); it must exist unless ``create``."""
    path = Path(path)
    if not create and not path.is_file():
        raise StudyError(f"no study at {path}")
    connection = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute("PRAGMA synchronous=FULL")  # a grade given is a grade kept
    connection.executescript(_SCHEMA)
    return connection


@dataclass(frozen=True)
class QueryPage:
    url: str
    topic: str | None


def read_queries(path: str | Path) -> list[QueryPage]:
    """Query pages, one per line: ``URL`` or ``URL<TAB>topic``; ``#`` comments and blank
    lines skipped; a URL twice is kept once."""
    pages: dict[str, QueryPage] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        url, _, topic = line.strip().partition("\t")
        pages.setdefault(url.strip(), QueryPage(url.strip(), topic.strip() or None))
    return list(pages.values())


@dataclass(frozen=True)
class CreateReport:
    queries: int
    results: int
    skipped: list[str]  # query pages no system knows


def create_study(path: str | Path, name: str, systems: Mapping[str, Any], queries: Sequence[QueryPage],
                 *, seed: int, k: int = TOP_K_DEFAULT, sources: Mapping[str, str] | None = None) -> CreateReport:
    """Store a new study: per query page the union of each system's top ``k`` (systems:
    name → an object with ``find(url) -> (matched, [related…]) | None``, e.g. a
    :class:`~relatedpages.store.db.RelatedPagesDB`), shuffled by ``random.Random`` seeded
    with ``seed`` and the query (recorded).  Refuses an existing file."""
    path = Path(path)
    if path.exists():
        raise StudyError(f"{path} exists: a study is created once (choose another --name)")
    if len(systems) < 2:
        raise StudyError("a study compares at least two systems")
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = connect(path, create=True)
    skipped: list[str] = []
    stored = results = 0
    try:
        connection.execute("BEGIN")
        meta = {"name": name, "seed": seed, "k": k, "systems": sorted(systems),
                "sources": dict(sources or {}), "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        connection.executemany("INSERT INTO meta VALUES (?, ?)", [(key, json.dumps(value)) for key, value in meta.items()])
        for page in queries:
            ranked: dict[str, dict[str, int]] = {}
            for system, database in systems.items():
                try:
                    found = database.find(page.url)
                except ValueError:
                    found = None
                for rank, item in enumerate((found[1] if found else [])[:k], 1):
                    ranked.setdefault(item.url, {})[system] = rank
            if not ranked:
                skipped.append(page.url)
                continue
            urls = sorted(ranked)
            random.Random(f"{seed}:{page.url}").shuffle(urls)
            query_id = connection.execute("INSERT INTO queries (position, url, topic) VALUES (?, ?, ?)",
                                          (stored, page.url, page.topic)).lastrowid
            stored += 1
            for position, url in enumerate(urls):
                result_id = connection.execute("INSERT INTO results (query_id, position, url) VALUES (?, ?, ?)",
                                               (query_id, position, url)).lastrowid
                connection.executemany("INSERT INTO ranks VALUES (?, ?, ?)",
                                       [(result_id, system, rank) for system, rank in ranked[url].items()])
                results += 1
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK") if connection.in_transaction else None
        connection.close()
        path.unlink(missing_ok=True)
        raise
    connection.close()
    if stored == 0:
        path.unlink(missing_ok=True)
        raise StudyError("no query page is known to any system: nothing to grade")
    return CreateReport(stored, results, skipped)


def meta(connection: sqlite3.Connection) -> dict[str, Any]:
    return {key: json.loads(value) for key, value in connection.execute("SELECT key, value FROM meta")}


def grader_id(connection: sqlite3.Connection, name: str) -> int:
    """The grader called ``name`` (made on first use; names are trimmed, 1-60 characters)."""
    name = name.strip()
    if not 0 < len(name) <= 60:
        raise StudyError("a grader's name has 1 to 60 characters")
    connection.execute("INSERT OR IGNORE INTO graders (name, created_at) VALUES (?, ?)",
                       (name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
    return int(connection.execute("SELECT id FROM graders WHERE name = ?", (name,)).fetchone()[0])


def set_grade(connection: sqlite3.Connection, grader: int, result: int, grade: int) -> None:
    """Store (or replace) one grade, committed before this returns."""
    if grade not in GRADES:
        raise StudyError(f"a grade is 0, 1 or 2, not {grade!r}")
    if connection.execute("SELECT 1 FROM results WHERE id = ?", (result,)).fetchone() is None:
        raise StudyError(f"no result {result} in this study")
    connection.execute("INSERT INTO grades VALUES (?, ?, ?, ?) ON CONFLICT (grader_id, result_id) "
                       "DO UPDATE SET grade = excluded.grade, graded_at = excluded.graded_at",
                       (grader, result, grade, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))


def query_page(connection: sqlite3.Connection, position: int, grader: int) -> dict[str, Any] | None:
    """What a grader sees for the query at ``position``: its URL and the shuffled results
    with the grader's grades so far (no system names)."""
    row = connection.execute("SELECT id, url FROM queries WHERE position = ?", (position,)).fetchone()
    if row is None:
        return None
    results = [{"id": result_id, "url": url, "grade": grade} for result_id, url, grade in connection.execute(
        "SELECT r.id, r.url, g.grade FROM results r LEFT JOIN grades g ON g.result_id = r.id AND g.grader_id = ? "
        "WHERE r.query_id = ? ORDER BY r.position", (grader, row[0]))]
    return {"position": position, "url": row[1], "results": results}


def progress(connection: sqlite3.Connection, grader: int) -> tuple[int, int, int | None]:
    """(queries the grader has finished, queries, the first unfinished position or None)."""
    rows = connection.execute(
        "SELECT q.position, COUNT(r.id), COUNT(g.grade) FROM queries q JOIN results r ON r.query_id = q.id "
        "LEFT JOIN grades g ON g.result_id = r.id AND g.grader_id = ? GROUP BY q.id ORDER BY q.position",
        (grader,)).fetchall()
    done = [position for position, total, graded in rows if graded == total]
    first = next((position for position, total, graded in rows if graded < total), None)
    return len(done), len(rows), first


def grade_rows(connection: sqlite3.Connection) -> Iterable[tuple[str, int, str, str | None, str, int, dict[str, int]]]:
    """Every grade: (grader, query position, query URL, topic, result URL, grade, {system: rank})."""
    ranks: dict[int, dict[str, int]] = {}
    for result_id, system, rank in connection.execute("SELECT result_id, system, rank FROM ranks"):
        ranks.setdefault(result_id, {})[system] = rank
    for name, position, query, topic, result_id, url, grade in connection.execute(
            "SELECT gr.name, q.position, q.url, q.topic, r.id, r.url, g.grade FROM grades g "
            "JOIN graders gr ON gr.id = g.grader_id JOIN results r ON r.id = g.result_id "
            "JOIN queries q ON q.id = r.query_id ORDER BY gr.name, q.position, r.position"):
        yield name, position, query, topic, url, grade, ranks.get(result_id, {})
