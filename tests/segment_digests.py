"""Per-page digests of the segmenter's output on every page of ``../shared/data``, and the
fixture that pins them (``tests/fixtures/segment_digests.tsv``).

The fixture was written by the segmenter as it was before the scan was compiled (issue 11,
item 4); ``tests/test_segmenter_same_output.py`` recomputes every digest and compares.  Two
digests per page:

* ``record``: the segment record (``segmenter.segment_record``: URL, site, blocks, headings,
  loose links) and the charset: what the rest of the system reads;
* ``sections``: every scanned and every adjusted section with all its features (word and
  character counts, Eq. 1's weighted characters, background, label, fonts, heading) and the
  base URL: what the scan computes, so a change that cancels out in the blocks still shows.

Rewrite the fixture only for a documented accuracy fix (README "Segmentation"):

    python tests/segment_digests.py --write
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script
    sys.path.insert(0, str(REPO))

from relatedpages.corpus.ingest import Page, read_pages  # noqa: E402
from relatedpages.corpus.shared_data import shared_data_dir  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "segment_digests.tsv"
#: The crawl files segmented as a job reads them (URL and HTTP charset from the record).
WARCS = ("web/aeb-pages.warc.gz", "web/trafilatura-pages.warc.gz", "awesomehub/awesomehub.warc.gz")
ANNOTATED = "segmentation/kreuzer-random"
ZH_PAGES = "zh/gne-pages"
#: The GNE pages come without URLs: each gets one under a reserved name (RFC 2606).
ZH_URL = "http://gne-pages.invalid/"

#: (key, raw bytes, page URL, HTTP charset) of one page.
PageInput = tuple[str, bytes, str, "str | None"]
Segment = Callable[[bytes, str, "str | None"], Any]


def pages(data: Path | None = None) -> Iterator[PageInput]:
    """Every page of the shared data, keyed by file (and WARC ordinal), in a fixed order."""
    from relatedpages.evaluation.segmentation import annotated_pages

    data = data or shared_data_dir()
    for relative in WARCS:
        for item in read_pages(data / relative):
            if isinstance(item, Page):
                yield f"{relative}#{item.ordinal}", item.body, item.url, item.http_charset
    for page in annotated_pages(data / ANNOTATED):
        # the DOM the evaluation reads, and the raw HTTP body beside it (charset detection)
        for name in ("index.dom.html", "index.html.orig"):
            path = page.dom_path.parent / name
            if path.is_file():
                yield f"{ANNOTATED}/{page.name}/{name}", path.read_bytes(), page.url, None
    zh = data / ZH_PAGES
    for path in sorted(zh.glob("**/*.html")):
        relative = path.relative_to(zh).as_posix()
        yield f"{ZH_PAGES}/{relative}", path.read_bytes(), ZH_URL + relative, None


def _digest(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def digests_of(segmentation: Any) -> tuple[str, str]:
    """(record digest, sections digest) of one page's :class:`segmenter.Segmentation`."""
    from segmenter import segment_record

    record = {**segment_record(segmentation), "charset": segmentation.charset}
    sections = {
        "base_url": segmentation.base_url,
        "scanned": [dataclasses.asdict(s) for s in segmentation.sections],
        "adjusted": [dataclasses.asdict(s) for s in segmentation.adjusted],
    }
    return _digest(record), _digest(sections)


def compute(segment: Segment, data: Path | None = None,
            keep: Callable[[str], bool] = lambda key: True) -> dict[str, tuple[str, str]]:
    """key → digests of ``segment(body, url, http_charset)`` on the pages ``keep`` selects."""
    return {key: digests_of(segment(body, url, charset))
            for key, body, url, charset in pages(data) if keep(key)}


def read_fixture(path: Path = FIXTURE) -> dict[str, tuple[str, str]]:
    pinned: dict[str, tuple[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            key, record, sections = line.split("\t")
            pinned[key] = (record, sections)
    return pinned


def write_fixture(digests: dict[str, tuple[str, str]], path: Path = FIXTURE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# page\trecord digest\tsections digest (tests/segment_digests.py)"]
    lines += [f"{key}\t{record}\t{sections}" for key, (record, sections) in digests.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the fixture")
    args = parser.parse_args()
    from segmenter import segment_bytes

    digests = compute(segment_bytes)
    if args.write:
        write_fixture(digests)
        print(f"wrote {len(digests)} pages to {FIXTURE}")
        return 0
    pinned = read_fixture()
    changed = sorted(key for key in pinned.keys() | digests.keys()
                     if pinned.get(key) != digests.get(key))
    print(f"{len(digests)} pages, {len(changed)} differ from the fixture")
    for key in changed:
        print(key)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
