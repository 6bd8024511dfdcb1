"""The unit of co-citation: the segmenter's blocks, or the heading sections they lie in.

The paper co-cites two pages when one *block* links both.  Editors often split what they
group under one heading into several lists (a list per sub-topic, a paragraph, then a list),
and the segmenter keeps those lists apart, as it should.  With ``granularity = heading``
consecutive blocks of a page that lie under the same heading (``headings`` of the segment
record: the n-th h1-h6 of the page; 0, above the first heading, never merges) are co-cited
as one block, in page order, before the link filters.  Measured on the development split
of the hub lists and on a generated web (README, "Two presets").

A record without ``headings`` (written before the field existed), or with one that does not
match its blocks, is read at block granularity: nothing is lost, and the caller counts it.
"""
from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any


class Granularity(str, Enum):
    """What one co-citing unit is."""

    BLOCK = "block"  # the paper's: a block of the segmenter
    HEADING = "heading"  # consecutive blocks under one heading


def headings_of(record: Mapping[str, Any]) -> list[int] | None:
    """The record's per-block headings, or None when absent or not one int per block.

    >>> headings_of({"blocks": [[], []], "headings": [0, 3]})
    [0, 3]
    >>> headings_of({"blocks": [[]], "headings": [0, 1]}) is None  # one per block, or none
    True
    >>> headings_of({"blocks": [[]], "headings": [True]}) is None
    True
    """
    blocks, headings = record.get("blocks"), record.get("headings")
    if not isinstance(blocks, list) or not isinstance(headings, list) or len(headings) != len(blocks):
        return None
    if not all(type(h) is int and h >= 0 for h in headings):
        return None
    return headings


def units(record: Mapping[str, Any], granularity: Granularity) -> tuple[Any, bool]:
    """The co-citing units of a segment record and whether its ``headings`` were usable
    (always True at block granularity).  The blocks are the record's own, unchanged, at
    block granularity or when ``headings`` is unusable; merged links keep their order and
    are renumbered (``pos``), so Eq. 5's distances run across the merged lists.

    >>> def block(*hrefs):
    ...     return [{"href": h, "anchor": h, "pos": i} for i, h in enumerate(hrefs)]
    >>> record = {"blocks": [block("a", "b"), block("c", "d"), block("e", "f"), block("g", "h")],
    ...           "headings": [0, 2, 2, 3]}
    >>> merged, ok = units(record, Granularity.HEADING)
    >>> ok, [[link["href"] + str(link["pos"]) for link in b] for b in merged]
    (True, [['a0', 'b1'], ['c0', 'd1', 'e2', 'f3'], ['g0', 'h1']])
    >>> units({"blocks": record["blocks"]}, Granularity.HEADING)[1]
    False
    >>> units(record, Granularity.BLOCK)[0] is record["blocks"]
    True
    """
    blocks = record.get("blocks")
    if granularity is Granularity.BLOCK:
        return blocks, True
    headings = headings_of(record)
    if headings is None or not isinstance(blocks, list):
        return blocks, False
    merged: list[Any] = []
    grown: set[int] = set()  # indices of merged units: only these are renumbered
    previous = 0
    for block, heading in zip(blocks, headings):
        if heading and heading == previous and isinstance(block, list) and isinstance(merged[-1], list):
            merged[-1] = merged[-1] + block
            grown.add(len(merged) - 1)
        else:
            merged.append(block)
        previous = heading
    for index in grown:
        merged[index] = [{**link, "pos": pos} if isinstance(link, dict) else link
                         for pos, link in enumerate(merged[index])]
    return merged, True
