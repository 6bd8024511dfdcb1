"""Crawl records → link blocks: DESIGN.md's segment records.

    python -m jobs.segment -r inline|local|hadoop INPUT… -o OUT

INPUT: WARC / WARC.gz, JSON lines (``.jsonl[.gz]``), or a ``.tsv`` manifest of
``file<TAB>url`` for a folder of ``.html`` files.  Output, one line per page:
``"<url>"\\t{"url": …, "site": …, "blocks": [[{"href", "anchor", "pos"[, "text"]}, …], …]}``
(``text``: a list entry's description, segmenter.sections.Link).

Every skipped record is counted under a reason (counter group ``ingest``); the same
URL twice keeps the last record (by input path, then position in the file).
"""
from __future__ import annotations


import enum
import os
import sys
from typing import Any, Iterator

from mrjob.step import MRStep

if __name__ == "__main__":
    # A Hadoop task runs this file as a script from its working folder, where DIRS put the
    # project's packages: make them importable whatever PYTHONPATH the node sets.
    sys.path.insert(0, os.getcwd())

from jobs.base import ShippedJob
from jobs.progress import READ_STATUS

from filters.site import site_of
from filters.urls import normalise_url
from relatedpages.corpus.ingest import MAX_PAGE_BYTES_DEFAULT, Skip, read_pages
from segmenter import segment_bytes, segment_record
from segmenter.adjust import add_adjust_options, adjust_params_from

INGEST_GROUP = "ingest"
SEGMENT_GROUP = "segment"
RAW_INPUT_SH_BIN = "/bin/sh -x"  # mrjob's default is "sh -ex"
STATUS_EVERY = 200  # pages between task status updates (Hadoop treats them as keepalives)


class SegmentCounter(str, enum.Enum):
    PAGES_SEGMENTED = "pages_segmented"
    PAGES_WITHOUT_BLOCKS = "pages_without_blocks"
    BLOCKS = "blocks"
    LINKS_IN_BLOCKS = "links_in_blocks"
    PAGE_TRUNCATED = "page_truncated_to_size_cap"
    PAGE_URL_UNUSABLE = "page_url_not_http"
    DUPLICATE_URL = "duplicate_url_earlier_record_dropped"
    PAGES_WRITTEN = "pages_written"


def raw_input_paths(path: str, uri: str) -> tuple[str, str | None]:
    """The file to read for ``mapper_raw(path, uri)``, and the folder manifest paths are
    relative to.

    mrjob's raw-input wrapper copies the input to ``./input-XXXX.ext`` and gunzips
    ``.gz`` copies.  gunzip deletes its output when the last gzip member is truncated (a
    damaged crawl file), leaving only the compressed copy: read that one, and let the
    reader skip and count the broken record instead of losing the whole file.  (With
    ``sh -e``, the default ``sh_bin``, the failed gunzip ends the task before the mapper
    starts, so this job defaults ``--sh-bin`` to ``/bin/sh -x``.)
    """
    local = path
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        local = path + ".gz"
    base_dir = None
    if "://" not in uri or uri.startswith("file://"):
        base_dir = os.path.dirname(uri[len("file://"):] if uri.startswith("file://") else uri)
    return local, base_dir


class MRSegment(ShippedJob):
    """HTML pages of a crawl → the link blocks of each page."""


    def configure_args(self) -> None:
        super().configure_args()
        # The raw-input wrapper must survive a failed gunzip (see raw_input_paths); an
        # explicit --sh-bin still wins.
        self.arg_parser.set_defaults(sh_bin=RAW_INPUT_SH_BIN)
        self.add_passthru_arg(
            "--max-page-bytes", type=int, default=MAX_PAGE_BYTES_DEFAULT,
            help="Truncate pages larger than this many bytes. Default: %(default)s",
        )
        add_adjust_options(self.add_passthru_arg)

    def load_args(self, args: list[str]) -> None:
        super().load_args(args)
        if self.options.max_page_bytes <= 0:
            self.arg_parser.error("--max-page-bytes must be positive")
        try:
            self.adjust_params = adjust_params_from(self.options)
        except ValueError as error:
            self.arg_parser.error(str(error))

    def steps(self) -> list[MRStep]:
        return [
            MRStep(mapper_raw=self.mapper_segment_pages, reducer=self.reducer_last_record_wins)
        ]

    def mapper_segment_pages(self, path: str, uri: str) -> Iterator[tuple[str, list[Any]]]:
        """Input: a crawl file.  Output: url → [input uri, record ordinal, segment record]."""
        pages = 0
        local_path, base_dir = raw_input_paths(path, uri)
        for item in read_pages(local_path, max_page_bytes=self.options.max_page_bytes,
                               base_dir=base_dir):
            if isinstance(item, Skip):
                self.increment_counter(INGEST_GROUP, item.reason.value)
                continue
            url = normalise_url(item.url)
            if url is None:
                self.increment_counter(SEGMENT_GROUP, SegmentCounter.PAGE_URL_UNUSABLE.value)
                continue
            if item.truncated:
                self.increment_counter(SEGMENT_GROUP, SegmentCounter.PAGE_TRUNCATED.value)
            segmentation = segment_bytes(item.body, url, item.http_charset, self.adjust_params)
            record = segment_record(segmentation)
            blocks = record["blocks"]
            self._count_page(blocks)
            pages += 1
            if pages % STATUS_EVERY == 0:
                self.set_status(f"segmented {pages} pages of {uri}")
            yield url, [uri, item.ordinal, {**record, "url": url, "site": site_of(url)}]
        self.set_status(f"{READ_STATUS}{uri}")  # the whole file is read (jobs.progress: ETA)

    def _count_page(self, blocks: list[list[dict[str, Any]]]) -> None:
        self.increment_counter(SEGMENT_GROUP, SegmentCounter.PAGES_SEGMENTED.value)
        if not blocks:
            self.increment_counter(SEGMENT_GROUP, SegmentCounter.PAGES_WITHOUT_BLOCKS.value)
        self.increment_counter(SEGMENT_GROUP, SegmentCounter.BLOCKS.value, len(blocks))
        self.increment_counter(
            SEGMENT_GROUP, SegmentCounter.LINKS_IN_BLOCKS.value, sum(len(b) for b in blocks)
        )

    def reducer_last_record_wins(
        self, url: str, values: Iterator[list[Any]]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Input: url → [uri, ordinal, record], one per crawl record of that URL.
        Output: url → the record of the last one (by input uri, then ordinal)."""
        last: list[Any] | None = None
        seen = 0
        for value in values:
            seen += 1
            if last is None or (value[0], value[1]) > (last[0], last[1]):
                last = value
        if last is None:
            return
        if seen > 1:
            self.increment_counter(SEGMENT_GROUP, SegmentCounter.DUPLICATE_URL.value, seen - 1)
        self.increment_counter(SEGMENT_GROUP, SegmentCounter.PAGES_WRITTEN.value)
        yield url, last[2]


if __name__ == "__main__":
    MRSegment.run()
