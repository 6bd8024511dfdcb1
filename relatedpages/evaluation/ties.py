"""Ties in a ranked list: results whose score equals a neighbour's once both are rounded to
three significant digits (issue 43: a vanishing term added to break ties does not separate
two results), the "ties" line of ``relatedpages eval related``; and the exact ties among
them, results with their neighbour's very score (the score carries six decimals, so these
rest on the same evidence: no weighting of it could order them), its "exact ties" line."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def significant(value: float, digits: int = 3) -> float:
    """``value`` rounded to ``digits`` significant digits.

    >>> significant(2.0047), significant(0.012345), significant(0.0), significant(-1234.5)
    (2.0, 0.0123, 0.0, -1230.0)
    """
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def tied_results(entries: Sequence[Sequence[Any]], digits: int | None = 3) -> tuple[int, int]:
    """(results tied with a neighbour at ``digits`` significant digits, or with its very
    score when ``digits`` is None; results with a score).

    >>> tied_results([["a", 2.0001], ["b", 2.0004], ["c", 1.5], ["d"], ["e", None]])
    (2, 3)
    >>> tied_results([["a", 2.0001], ["b", 2.0004], ["c", 1.5], ["d", 1.5]], digits=None)
    (2, 4)
    """
    scores = [_rounded(float(entry[1]), digits)
              if len(entry) > 1 and isinstance(entry[1], (int, float))
              and not isinstance(entry[1], bool) else None for entry in entries]
    tied = sum(1 for i, score in enumerate(scores) if score is not None
               and ((i > 0 and scores[i - 1] == score)
                    or (i + 1 < len(scores) and scores[i + 1] == score)))
    return tied, sum(1 for score in scores if score is not None)


def _rounded(value: float, digits: int | None) -> float:
    return value if digits is None else significant(value, digits)

