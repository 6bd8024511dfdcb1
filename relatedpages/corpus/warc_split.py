"""A WARC.gz cut into several files of whole records, for the map tasks of a benchmark.

A WARC.gz record is one gzip member, so each part is a byte copy of consecutive members: no
record is decompressed or rewritten.  ``scripts/bench_scale.py`` puts one part per map task
on HDFS (issue 14).
"""
from __future__ import annotations

from pathlib import Path


def split_warc(path: Path, parts: int, folder: Path) -> list[Path]:
    """``path`` cut into ``parts`` WARC files of consecutive records, each a byte copy of
    whole gzip members (a WARC.gz record is one member); fewer when there are fewer records."""
    from warcio.archiveiterator import ArchiveIterator

    spans: list[tuple[int, int]] = []
    with path.open("rb") as handle:
        records = ArchiveIterator(handle)
        for _ in records:
            records.read_to_end()
            spans.append((records.get_record_offset(), records.get_record_length()))
    folder.mkdir(parents=True, exist_ok=True)
    count = max(1, min(parts, len(spans)))
    written = []
    with path.open("rb") as source:
        for part in range(count):
            chunk = spans[part * len(spans) // count: (part + 1) * len(spans) // count]
            target = folder / f"part-{part:05d}.warc.gz"
            with target.open("wb") as sink:
                for offset, length in chunk:
                    source.seek(offset)
                    sink.write(source.read(length))
            written.append(target)
    return written
