"""Scanning stage: HTML → sections (paper, "The HTML segmentation flow", scanning stage).

The DOM is cut into *sections* with Debnath et al.'s partitioning-tag idea (GetBlocks):
the content between two partitioning tags, leaf-most, is one section.  The scan is a
stream of lxml parser events (a parser *target*), not a tree walk, for two reasons:

* libxml2's tree builder stops at 256 (2048 with ``huge_tree``) levels of nesting and
  silently drops everything deeper; its SAX events have no such limit;
* no recursion and no tree in memory: a page of any depth or size scans in one pass.

``huge_tree=True`` keeps text nodes larger than 10 MB (without it lxml drops the rest of
the page silently).  Per section the scan keeps what the adjusting stage needs: links
(resolved and normalised hrefs with anchors, in page order), word counts (all words and
anchor words), and per text element its non-space character count, boldness and the
CIELAB distance between its font colour and background colour (Eq. 1).

The scan is defined in :mod:`segmenter.sections` (what it makes) and implemented twice:
in pure Python (:mod:`segmenter.scanner`, an lxml parser target) and compiled
(``native_scan.pyx`` and the modules it cimports).  When the package's install compiled
them (setup.py; README "Speed"), :func:`scan_html` runs that: the same state machine on the
same parser events, received in C (libxml2's SAX callbacks, no Python call per event),
calling back into the pure-Python scanner for styles, sheets and URLs.  This module picks
the one to run.
"""
from __future__ import annotations

import gc
import hashlib
import logging
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator

from segmenter.scanner import _scan_events
from segmenter.sections import Resolver, ScanResult

logger = logging.getLogger(__name__)


def scan_html(text: str, page_url: str, resolve: Resolver, utf8: bytes | None = None) -> ScanResult:
    """Scan decoded HTML into sections; links resolved with ``resolve(href, base)``.

    Never raises for any text: NUL characters are replaced (libxml2 truncates text at
    NUL), unencodable surrogates replaced, and a document libxml2 cannot parse at all
    (empty, comment-only) yields no sections.  ``utf8``: the text's UTF-8 bytes without
    NUL, when the caller has them (``segmenter.decode.Decoded.utf8``): they are parsed as
    they are.  The compiled scan (:data:`NATIVE`) runs when it is built; the pure-Python
    parser target (:mod:`segmenter.scanner`) otherwise, and wherever the compiled scan
    declines a page.
    """
    if utf8 is not None:
        data = utf8
    else:
        if "\x00" in text:
            text = text.replace("\x00", "\ufffd")
        data = text.encode("utf-8", "replace")
    with paused_gc():
        if NATIVE is not None:
            native = NATIVE.scan(data, page_url, resolve)
            if native is not None:
                return native
        return _scan_events(data, page_url, resolve)


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector paused for one page: segmenting allocates hundreds of thousands
    of short-lived containers and no reference cycles, so a collection finds nothing and
    costs ~15 % of the segmenter's time (memory does not grow: reference counts free it)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def native_sources_sha256(folder: Path = Path(__file__).parent) -> str | None:
    """sha256 of the compiled scan's sources in ``folder`` (every ``native_*.pyx`` and
    ``native_*.pxd``, by name: setup.py's ``native_sources_sha256``), None where there are
    none (an installed wheel)."""
    sources = sorted([*folder.glob("native_*.pyx"), *folder.glob("native_*.pxd")],
                     key=lambda path: path.name)
    if not sources:
        return None
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_native() -> ModuleType | None:
    """The compiled scan ``segmenter.native_scan`` (built from ``native_*.pyx`` by the
    package's install, setup.py), or None: not built, built for another platform or lxml,
    or stale (a .pyx or .pxd beside it changed since: rebuild with ``pip install -e .``)."""
    try:
        from segmenter import native_scan
    except ImportError as error:
        logger.debug("compiled scan unavailable (%s): pure-Python scan", error)
        return None
    digest = native_sources_sha256()
    if digest is not None and digest != native_scan.SOURCE_SHA256:
        logger.warning("%s changed since it was compiled: pure-Python scan until "
                       "`pip install -e .` rebuilds it",
                       Path(__file__).with_name("native_*.{pyx,pxd}"))
        return None
    return native_scan


#: The compiled scan when it is built and current, else None (the pure-Python scan).
NATIVE: ModuleType | None = load_native()
