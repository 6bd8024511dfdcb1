"""Byte-sortable intermediate values and exact arithmetic for jobs.related.

Sort1 (paper, "Parallel implementation"): for each key page, the auxiliary values come
first, then the pair values grouped by (other page, citing site TSD, anchor) with
similarity descending.  mrjob's ``SORT_VALUES`` (and Hadoop's comparator) sorts the
*encoded* bytes of ``key<TAB>value`` lines, so the value is a JSON list whose encoding
sorts that way:

* a type tag first: ``"0"`` (auxiliary) sorts before ``"1"`` (pair);
* the grouping fields next, as JSON strings: all values sharing a prefix are contiguous
  in byte order, whatever the characters, so every group arrives in one run;
* last, a fixed-width decimal of ``SORT_TOP − S_p`` in micro-units: higher similarity,
  smaller string, earlier.

    >>> import json
    >>> values = [encode_pair_value("http://b/", "s.com", "x", 0.5),
    ...           encode_pair_value("http://b/", "s.com", "x", 1.25), encode_aux_value("c.com")]
    >>> [decode_pair_value(v)[3] if v[0] == PAIR_TAG else "aux"
    ...  for v in sorted(values, key=json.dumps)]
    ['aux', 1250000, 500000]

Similarities are rounded to 6 decimals when a pair is made and summed as integers of
micro-units: sums are exact and independent of order, so a reducer streams its values
once in constant memory and every runner gives byte-identical output.
"""
from __future__ import annotations

from typing import Any

from relatedpages.scoring.similarity import micro

AUX_TAG = "0"
#: Sorts after AUX_TAG and before PAIR_TAG: one per (raw block, href), for popularity.
CITED_TAG = "0p"
PAIR_TAG = "1"
SORT_TOP = 99_999_999  # > any S_p in micro-units (S_p = P·(1 + A) <= 2)
_SORT_WIDTH = 8


def encode_aux_value(site: str) -> list[str]:
    """The auxiliary value: one per (filtered block, page), counted into in_p; it carries
    the citing page's site, so a reducer counts the distinct sites citing the page (equal
    values sort together)."""
    return [AUX_TAG, site]


def encode_cited_value(site: str) -> list[str]:
    """One per (block before the filters, href): the page is linked from ``site`` (the
    popularity of the default preset's tie-break; equal values sort together)."""
    return [CITED_TAG, site]


def encode_pair_value(other: str, site: str, anchor: str, similarity: float,
                      page: str = "", text: str = "", links: int = 0,
                      context: float = 0.0) -> list[str]:
    """(other page, TSD(p), anchor of the key page in p, S_p, p, the key page's anchor
    text in p, the pages p links, the pair's description overlap) as a byte-sortable list
    (the last four are evidence, the citing site's worth and the description term, after
    the sort key)."""
    s_micro = micro(similarity)
    if not 0 <= s_micro <= SORT_TOP:
        raise ValueError(f"similarity out of range: {similarity}")
    return [PAIR_TAG, other, site, anchor, str(SORT_TOP - s_micro).zfill(_SORT_WIDTH), page, text,
            str(links), str(micro(context)) if context else "0"]


def decode_pair_value(value: Any) -> tuple[str, str, str, int, str, str, int, int]:
    """(other page, site, anchor, S_p in micro-units, citing page, anchor text, the pages
    the citing page links, the description overlap in micro-units) of an encoded pair value.

    >>> decode_pair_value(encode_pair_value("http://b/", "s.com", "x", 0.5, "http://s.com/", "B", 12,
    ...                                     0.25))
    ('http://b/', 's.com', 'x', 500000, 'http://s.com/', 'B', 12, 250000)
    """
    _, other, site, anchor, inverted, page, text, links, context = value
    return other, site, anchor, SORT_TOP - int(inverted), page, text, int(links), int(context)
