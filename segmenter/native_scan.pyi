"""Types of the compiled scan (``native_scan.pyx`` and the modules it cimports, built by
setup.py when Cython and a C compiler are there)."""
from segmenter.sections import Resolver, ScanResult

SOURCE_SHA256: str
LXML_VERSION: str

def scan(data: bytes, page_url: str, resolve: Resolver) -> ScanResult | None: ...
