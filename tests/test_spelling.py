"""filters.spelling: a page found under the other spellings of its URL."""
from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from filters import spelling
from filters.spelling import spelling_variants
from filters.urls import normalise_url
from relatedpages.store.db import RelatedPagesDB
from relatedpages.store.dbbuild import build_database


def test_doctests() -> None:
    failures, tried = doctest.testmod(spelling)
    assert tried > 0 and failures == 0


STORED = "https://github.com/psf/requests"


@pytest.mark.parametrize("query", [
    "https://github.com/psf/requests",
    "http://github.com/psf/requests",
    "https://github.com/psf/requests/",
    "https://www.github.com/psf/requests",
    "HTTP://WWW.GitHub.com:80/psf/requests/#readme",
    "https://github.com/psf/requests?",
    "https://github.com/psf/requests/index.html",
])
def test_the_same_page_under_any_spelling_is_found(tmp_path, query: str) -> None:
    build_database(iter([(STORED, [["https://github.com/encode/httpx", 2.0, []]])]), tmp_path / "db",
                   algorithm="block", parameters={}, source=["test"], partitions=4)
    with RelatedPagesDB(tmp_path / "db") as database:
        found = database.find(query)
        assert found is not None
        assert found[0] == STORED and found[1][0].url == "https://github.com/encode/httpx"
        assert database.find("https://github.com/psf/requests-oauthlib") is None


def test_the_exact_spelling_wins_over_another(tmp_path) -> None:
    records = [("http://a.com/x", [["http://b.com/", 1.0, []]]),
               ("https://a.com/x", [["http://c.com/", 1.0, []]])]
    build_database(iter(records), tmp_path / "db", algorithm="block", parameters={},
                   source=["test"], partitions=4)
    with RelatedPagesDB(tmp_path / "db") as database:
        assert database.find("http://a.com/x/")[0] == "http://a.com/x"
        assert database.find("https://www.a.com/x")[0] == "https://a.com/x"


urls = st.builds(lambda scheme, www, path, slash: f"{scheme}://{www}example.com{path}{slash}",
                 st.sampled_from(["http", "https"]), st.sampled_from(["", "www."]),
                 st.sampled_from(["", "/a", "/a/b", "/a.html"]), st.sampled_from(["", "/"]))


@settings(max_examples=200, deadline=None)
@given(urls, urls)
def test_variants_are_symmetric(first: str, second: str) -> None:
    a, b = normalise_url(first), normalise_url(second)
    assert a is not None and b is not None
    assert spelling_variants(a)[0] == a
    assert (b in spelling_variants(a)) == (a in spelling_variants(b))
    assert len(set(spelling_variants(a))) == len(spelling_variants(a))
