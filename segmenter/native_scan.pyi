"""Types of the compiled scan (``native_scan.pyx``, built by setup.py when Cython and a C
compiler are there)."""
from segmenter.scan import Resolver, ScanResult

SOURCE_SHA256: str
LXML_VERSION: str

def count_words(text: str) -> int: ...
def scan(data: bytes, page_url: str, resolve: Resolver) -> ScanResult | None: ...
