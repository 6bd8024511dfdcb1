"""Types of the compiled scan (``native_scan.pyx``, built by setup.py when Cython and a C
compiler are there)."""
from typing import Callable

from segmenter.sections import Resolver, ScanResult
from segmenter.style import Declarations, SimpleSelector

SOURCE_SHA256: str
LXML_VERSION: str

def count_words(text: str) -> int: ...
def canonical_link(href: str, base: str) -> str | None: ...
def _sheet_rules(css: str) -> tuple[tuple[SimpleSelector, Declarations], ...]: ...

sheet_rules: Callable[[str], tuple[tuple[SimpleSelector, Declarations], ...]]

def scan(data: bytes, page_url: str, resolve: Resolver) -> ScanResult | None: ...
