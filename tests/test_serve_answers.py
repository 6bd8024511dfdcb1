"""``relatedpages.serve.answers``: the answer spliced from a stored record is, byte for byte,
``RelatedPagesDB.answer`` encoded as the Flask app did (``json.dumps``, compact, UTF-8 as is),
for every record the build accepts (any text in its strings, integer and float numbers,
empty fallback names); the ETag of a generation is the same for every reader of it and
another for a generation that holds anything else."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from filters.urls import normalise_url
from relatedpages.serve.answers import StoredRelatedDB, answer_bytes, related_bytes
from relatedpages.store.db import RelatedPagesDB
from relatedpages.store.dbbuild import build_database

TEXT = st.text(max_size=12)  # quotes, backslashes, brackets, control characters, any script
FLOAT = st.floats(allow_nan=False, allow_infinity=False)  # what the jobs write
NUMBER = st.one_of(FLOAT, st.integers(-10**6, 10**20))  # what the build also accepts


def _related(number: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    evidence = st.one_of(st.tuples(TEXT, number), st.tuples(TEXT, number, TEXT, TEXT)).map(list)
    entry = st.tuples(TEXT, number, st.lists(evidence, max_size=4),
                      st.one_of(st.just(()), st.tuples(TEXT), st.tuples(TEXT, TEXT))).map(
        lambda parts: [parts[0], parts[1], parts[2], *parts[3]])
    return st.lists(entry, max_size=5)


def _expected(database: RelatedPagesDB, query: str, limit: int | None) -> bytes:
    return json.dumps(database.answer(query, limit), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _check_every_answer(records: list[tuple[str, Any]], queries: list[str]) -> None:
    """Format 2 (written from the ids and millionths) and format 1 (spliced from the text)."""
    for version in (2, 1):
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "db"
            build_database(records, db, algorithm="block", parameters={}, source=["test"], partitions=2,
                           format_version=version)
            with RelatedPagesDB(db) as database, StoredRelatedDB(db) as stored:
                assert stored.compact == (version == 2)
                for query in queries:
                    for limit in (None, 1, 2):
                        assert answer_bytes(stored, query, normalise_url(query) or "", limit) == \
                            _expected(database, query, limit), (version, query, limit)


@settings(max_examples=30, deadline=None)
@given(st.lists(_related(FLOAT), min_size=1, max_size=6), st.lists(_related(NUMBER), min_size=1, max_size=3))
def test_a_spliced_answer_is_the_librarys_answer_encoded(floats: list[list[Any]], mixed: list[list[Any]]) -> None:
    records = [(f"https://page{number}.example/", related) for number, related in enumerate(floats + mixed)]
    # each page as stored, under another spelling, and one not stored
    _check_every_answer(records, [url for url, _ in records] + ["http://www.page0.example", "https://none.example/"])


HOSTILE = [
    'a "quote", a \\ backslash, a\ttab, [x], ],["',  # strings that look like structure
    '"],["https://evil.example/",1.0,[]],["',
    ',1.0,[]]',
    "新浪新闻 \u2028 \x7f",
    "\\",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_strings_that_look_like_the_record_are_copied_as_text(text: str) -> None:
    related = [[f"https://a.example/{text}", 0.5, [["site.example", 1.0, text, text], [text, 2.5]], text],
               ["https://b.example/", 1e-05, [[text, 1e16]]]]
    _check_every_answer([("https://page.example/", related)], ["https://page.example/"])


def test_the_record_is_spliced_unless_it_holds_what_the_answer_rewrites() -> None:
    assert related_bytes(b'[["https://b.example/",1.0,[["s",2.0,"p","a"]],"site","https://c.example/"]]', 1) == \
        b'[{"url":"https://b.example/","score":1.0,"evidence":[["s",2.0,"p","a"]],"fallback":"site",' \
        b'"via":"https://c.example/"}]'
    assert related_bytes(b'[["https://b.example/",1.0,[["s",2]]]]', None) is None  # an integer weight
    assert related_bytes(b'[["https://b.example/",1.0,[]],["https://c.example/",2,[]]]', 1) is not None  # cut first
    assert related_bytes(b'[["https://b.example/",1.0,[]]] ', None) is None  # not the whole record


def test_the_etag_is_the_generations(tmp_path: Path) -> None:
    records = [("https://a.example/", [["https://b.example/", 1.0, []]])]
    build_database(records, tmp_path / "db", algorithm="block", parameters={}, source=["test"], partitions=2)
    with StoredRelatedDB(tmp_path / "db") as first, StoredRelatedDB(tmp_path / "db") as second:
        tag = first.tag
        assert tag == second.tag and tag.startswith('"block-') and tag.endswith('"')
    changed = [("https://a.example/", [["https://c.example/", 1.0, []]])]
    build_database(changed, tmp_path / "db", algorithm="block", parameters={}, source=["test"], partitions=2)
    with StoredRelatedDB(tmp_path / "db") as rebuilt:
        assert rebuilt.tag != tag  # the manifest holds every partition's checksum
