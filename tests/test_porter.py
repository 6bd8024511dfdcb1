"""Tests for filters.porter: nltk's Porter stemmer without the rest of nltk.

The lean load only happens in a process that has not imported nltk, so it runs in a fresh
interpreter (this test process imports nltk itself, for the comparison).
"""
from __future__ import annotations

import doctest
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import lxml.html
import nltk
import pytest
from nltk.stem.porter import PorterStemmer

from filters import porter
from filters.porter import porter_stemmer_class
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent

#: Runs in a fresh interpreter: loads the class leanly, stems the words on stdin, reports
#: which modules the load left behind, then imports nltk for real.
_LEAN_PROBE = """
import json, sys
from filters.porter import porter_stemmer_class
Porter = porter_stemmer_class()
left = sorted(name for name in sys.modules if name == "nltk" or name.startswith("nltk."))
heavy = sorted(name for name in ("numpy", "scipy", "sqlite3") if name in sys.modules)
stemmer = Porter(mode=Porter.ORIGINAL_ALGORITHM)
stems = [stemmer.stem(word, to_lowercase=False) for word in json.load(sys.stdin)]
import nltk
from nltk.stem import SnowballStemmer
real = nltk.stem.porter.PorterStemmer
print(json.dumps({"stems": stems, "left": left, "heavy": heavy,
                  "version": nltk.__version__, "same_class": real is Porter,
                  "same_source": real.stem.__code__.co_code == Porter.stem.__code__.co_code,
                  "snowball": SnowballStemmer("english").stem("running")}))
"""


def _probe(script: str, words: list[str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(words), cwd=REPO,
                          capture_output=True, text=True, timeout=guard(120))
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def hub_words(shared_data: Any) -> list[str]:
    """The distinct lower-case Latin words of the first 60 hub pages' text (real English)."""
    from relatedpages.corpus.ingest import Page, read_pages

    words: set[str] = set()
    for item in read_pages(shared_data("awesomehub/awesomehub.warc.gz")):
        if isinstance(item, Page):
            text = str(lxml.html.document_fromstring(item.body).xpath("string(.)")).lower()
            words.update(re.findall(r"[a-z]+", text))
            if item.ordinal >= 60:
                break
    assert len(words) > 2000
    return sorted(words)


def test_doctests() -> None:
    result = doctest.testmod(porter)
    assert result.attempted > 0 and result.failed == 0


def test_lean_load_stems_as_nltk_and_leaves_nltk_whole(hub_words: list[str]) -> None:
    found = _probe(_LEAN_PROBE, hub_words)
    reference = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)
    assert found["stems"] == [reference.stem(word, to_lowercase=False) for word in hub_words]
    # Nothing of nltk stays loaded (no stand-in could shadow the real package later), and
    # the rest of the toolkit, numpy and scipy were never imported.
    assert found["left"] == []
    assert found["heavy"] == []
    # A later `import nltk` is the complete package, with its own copy of the class.
    assert found["version"] == nltk.__version__
    assert found["snowball"] == "run"
    assert found["same_class"] is False and found["same_source"] is True


def test_failed_lean_load_falls_back_and_cleans_up() -> None:
    # The lean load of a module that does not exist fails inside the stand-ins: they and
    # everything loaded through them go, and the class comes from the ordinary import.
    script = """
import json, sys
from filters import porter
porter.PORTER_MODULE = "nltk.stem.no_such_stemmer"
Porter = porter.porter_stemmer_class()
import nltk
print(json.dumps({"module": Porter.__module__, "real": nltk.stem.porter.PorterStemmer is Porter,
                  "version": nltk.__version__}))
"""
    found = _probe(script, [])
    assert found == {"module": "nltk.stem.porter", "real": True, "version": nltk.__version__}


def test_imported_nltk_is_used_as_it_is() -> None:
    # This process imported nltk (above): the class is the package's own.
    assert porter_stemmer_class() is PorterStemmer
