"""Related 1's keys placed on its reducers by a plan: hot pages split, heavy ones routed.
The plan, its file, Hadoop's partitioner, and the keys Mapper1 writes and Reducer1 reads.

Related 1's key is a cited page, and a reducer reads all of a key's values.  A page cited
by many blocks gets values in proportion (each block adds up to two window's worth of
pairs), so past a few hundred reducers one such page outweighs a reducer's fair share (all
values over the reducers), and Hadoop's hash, blind to the loads, piles heavy keys together
well before that (README, "Hot keys").

A plan names heavy pages and, for each, the labels of its pieces: Mapper1 writes the key
``[page, label]`` instead of ``page``.  A page with several labels is split: its pair
values with another page go to the piece :func:`piece_of` that other page gives (every
value of one pair {page, other} reaches one piece, so its score is the same sum), and each
piece gets a copy of the page's auxiliary and cited values (``in_p`` and popularity are the
page's, whichever piece counts them).  Each label is chosen so that Hadoop's partitioner
(:func:`partition`) sends its key to the reducer the plan packed it on, largest first onto
the least loaded (sampling-based partitioning, through the keys).  Reducer1's output is the
same as without a plan, record for record, and Reducer2 sorts its values, so the chain's
output is the same, byte for byte: a stale or wrong plan costs balance, never correctness.
"""
from __future__ import annotations

import heapq
import json
import math
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

#: A page is split when its values exceed this fraction of a reducer's fair share, into
#: pieces of at most that size.
PIECE_OF_FAIR_SHARE = 0.25
#: Pages with more values than this fraction of a fair share are routed (packed onto the
#: least loaded reducer); lighter ones stay where Hadoop's hash puts them: at most 64 routed
#: pages a reducer.  Both chosen on the development input only (31,250 pages of cnr-2000,
#: seed 1, plans from a tenth of them, 64 reducers: 1.16 against 1.52 routing above 1/16;
#: README, "Hot keys"), reported on other seeds, sizes and the generated web.
ROUTED_OF_FAIR_SHARE = 1 / 64
#: The plan file's first line (a comment) and its columns.
PLAN_HEADER = "# relatedpages hot keys: page<TAB>label[,label...] (one label a piece)"

_INT_MASK = 0xFFFFFFFF
_INT_MAX = 0x7FFFFFFF


class PlanError(ValueError):
    """A hot-key plan that cannot be read: the line and why."""


def partition(key: Any, reducers: int) -> int:
    """The reducer Hadoop's ``KeyFieldBasedPartitioner`` (``-k1,1``, what mrjob sets for a
    job with ``SORT_VALUES``) gives a key (a page, or ``[page, label]``): Java's
    ``31 * h + b`` over the key's bytes as StandardJSONProtocol writes them (signed bytes),
    then ``(h & MAX_INT) % reducers``.

    >>> [partition("http://www.p1.org/", n) for n in (1, 4, 64)]
    [0, 1, 49]
    """
    if reducers < 1:
        raise ValueError(f"reducers must be at least 1, got {reducers}")
    return (_java_hash(json.dumps(list(key) if isinstance(key, tuple) else key).encode("utf-8"))
            & _INT_MAX) % reducers


def _java_hash(data: bytes, value: int = 0) -> int:
    for byte in data:
        value = (31 * value + (byte - 256 if byte > 127 else byte)) & _INT_MASK
    return value


def plan_keys(loads: Mapping[str, int], reducers: int, piece: float = PIECE_OF_FAIR_SHARE,
              routed: float = ROUTED_OF_FAIR_SHARE) -> dict[str, list[int]]:
    """A plan from each page's values (a sample's counts will do: only the ratios matter)
    for ``reducers``: pages above ``piece`` of a fair share are split into pieces of at most
    that size, pages above ``routed`` of it are routed whole; the pieces and routed pages,
    largest first, go to the least loaded reducer (counting what the hash puts there of the
    rest), and each gets a label that sends it there.

    >>> plan = plan_keys({"a": 50, "b": 30, "c": 10, "d": 10}, 4, piece=1.0, routed=0.25)
    >>> {page: len(labels) for page, labels in plan.items()}
    {'a': 2, 'b': 2, 'c': 1, 'd': 1}
    >>> [[partition([page, label], 4) for label in plan[page]] for page in "abcd"]
    [[0, 1], [2, 3], [2], [3]]

    (25 on every reducer: a's halves, b's halves with c or d.)
    >>> plan_keys({"a": 50}, 1)
    {}
    """
    if reducers < 1:
        raise ValueError(f"reducers must be at least 1, got {reducers}")
    if not 0 < routed <= piece <= 1:
        raise ValueError(f"need 0 < routed <= piece <= 1, got {routed} and {piece}")
    total = sum(loads.values())
    if reducers == 1 or total == 0:
        return {}
    bins = Bins(reducers, total, routed)  # what stays with the hash
    heavy = {page: load for page, load in loads.items() if bins.add(page, load)}
    return pack_keys(bins.bins, heavy, reducers, piece)


class Bins:
    """One bins task's share of the pages, given the total of all of them: a light page's
    load goes to the chain reducer Hadoop's hash gives it; a page above ``routed`` of a fair
    share is heavy and passed on (:func:`plan_keys` bins its pages the same way).

    >>> bins = Bins(2, total=12, routed=0.5)
    >>> [bins.add(page, load) for page, load in [("a", 5), ("b", 1), ("c", 3), ("d", 2)]]
    [True, False, False, False]
    >>> sum(bins.bins)  # all but a (the line: half of 12 / 2)
    6
    """

    def __init__(self, reducers: int, total: int, routed: float = ROUTED_OF_FAIR_SHARE) -> None:
        if reducers < 1:
            raise ValueError(f"reducers must be at least 1, got {reducers}")
        if not 0 < routed <= 1:
            raise ValueError(f"routed must be in (0, 1], got {routed}")
        self.reducers = reducers
        self.bins = [0] * reducers
        self._line = routed * (total / reducers)

    def add(self, page: str, load: int) -> bool:
        """Bin a light page; True for a heavy one (the caller passes it on)."""
        if load > self._line:
            return True
        self.bins[partition(page, self.reducers)] += load
        return False


def pack_keys(bins: Sequence[int], heavy: Mapping[str, int], reducers: int,
              piece: float = PIECE_OF_FAIR_SHARE) -> dict[str, list[int]]:
    """The plan that packs the ``heavy`` pages (page -> values), largest piece first, onto
    the least loaded of ``reducers`` that already hold ``bins`` from the hash: pages above
    ``piece`` of a fair share (of everything, bins and heavy pages) are split into pieces of
    at most that size (:func:`plan_keys`; ``relatedpages.store.keyloads`` makes the bins
    and the heavy pages with a job instead of one process).

    >>> plan = pack_keys([10, 0], {"a": 10}, 2, piece=1.0)
    >>> [partition(["a", label], 2) for label in plan["a"]]  # the empty reducer
    [1]
    >>> len(pack_keys([10, 0], {"a": 10}, 2)["a"])  # over a quarter of a share: split
    2
    """
    if len(bins) != reducers:
        raise ValueError(f"{len(bins)} bins for {reducers} reducers")
    fair = (sum(bins) + sum(heavy.values())) / reducers
    items: list[tuple[float, str, int]] = []  # (load of a piece, page, pieces)
    for page, load in heavy.items():
        pieces = min(reducers, max(1, math.ceil(load / (piece * fair))))
        items.extend((load / pieces, page, pieces) for _ in range(pieces))
    heap = [(float(load), number) for number, load in enumerate(bins)]
    heapq.heapify(heap)
    plan: dict[str, list[int]] = {}
    finder: _Labels | None = None  # a page's pieces are next to each other in this order
    for size, page, _ in sorted(items, key=lambda item: (-item[0], item[1])):
        least, number = heapq.heappop(heap)
        if finder is None or finder.page != page:
            finder = _Labels(page, reducers)
        plan.setdefault(page, []).append(finder.take(number))
        heapq.heappush(heap, (least + size, number))
    return dict(sorted(plan.items()))


class _Labels:
    """One page's labels by the reducer Hadoop sends ``[page, label]`` to: ``take(r)`` gives
    the smallest label not yet taken that goes to reducer ``r``.  The hash of ``["page", ``
    is computed once, and the labels' reducers a block at a time with numpy (Java's hash of
    the whole key is ``prefix * 31**len(suffix) + hash(suffix)``; a page may need thousands
    of labels before one lands on a given reducer: the low bits of Java's hash of short digit
    strings are far from uniform).

    >>> labels = _Labels("http://a/", 4)
    >>> first, second = labels.take(2), labels.take(2)
    >>> first < second and {partition(["http://a/", first], 4), partition(["http://a/", second], 4)}
    {2}
    """

    def __init__(self, page: str, reducers: int) -> None:
        self.page = page
        self._prefix = _java_hash(json.dumps([page, 0])[:-2].encode("utf-8"))  # '["page", '
        self._reducers = reducers
        self._taken: set[int] = set()
        self._goes: Any = None  # numpy array: the reducer of each label 0, 1, ...

    def take(self, reducer: int) -> int:
        import numpy as np  # only plans need it, not the jobs that read them

        count = max(4096, 8 * self._reducers)
        while True:
            if self._goes is None or len(self._goes) < count:
                hashes, powers = _suffix_hashes(count)
                whole = (np.uint64(self._prefix) * powers + hashes) & np.uint64(_INT_MAX)
                self._goes = whole % np.uint64(self._reducers)
            for label in np.flatnonzero(self._goes == reducer).tolist():
                if label not in self._taken:
                    self._taken.add(label)
                    return label
            count = 2 * len(self._goes)


_SUFFIXES: list[Any] = []  # numpy arrays: hash of f"{label}]" and 31**its length, mod 2**32


def _suffix_hashes(count: int) -> tuple[Any, Any]:
    """Java's hash of ``f"{label}]"`` from 0 and ``31**len`` (mod 2**32) for labels below
    ``count`` (at least), computed once and kept."""
    import numpy as np

    if not _SUFFIXES or len(_SUFFIXES[0]) < count:
        suffixes = [f"{label}]".encode() for label in range(count)]
        _SUFFIXES[:] = [np.array([_java_hash(suffix) for suffix in suffixes], dtype=np.uint64),
                        np.array([pow(31, len(suffix), 1 << 32) for suffix in suffixes],
                                 dtype=np.uint64)]
    return _SUFFIXES[0], _SUFFIXES[1]


def write_plan(plan: Mapping[str, Sequence[int]], path: Path) -> None:
    """The plan as a file ``jobs.related --hot-keys`` reads."""
    lines = [PLAN_HEADER] + [f"{page}\t{','.join(map(str, labels))}"
                             for page, labels in sorted(plan.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_plan(path: str | Path) -> dict[str, list[int]]:
    """A plan file: ``page<TAB>label[,label…]`` per line (distinct whole numbers), ``#``
    comments and blank lines skipped.  A malformed line is an error: a plan is small and
    made by a tool, so a bad one is not data to skip."""
    plan: dict[str, list[int]] = {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PlanError(f"hot-key plan {path}: {error}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        page, tab, field = line.partition("\t")
        labels = field.split(",")
        if (not tab or not page or not all(label.isdigit() for label in labels)
                or len(set(labels)) != len(labels)):
            raise PlanError(f"hot-key plan {path}, line {number}: expected "
                            f"'page<TAB>label[,label...]' (distinct whole numbers), got {line!r}")
        plan[page] = [int(label) for label in labels]
    return plan


def piece_of(other: str, pieces: int) -> int:
    """The piece of a split page that gets its pairs with ``other`` (crc32: the same in
    every task and on every runner).

    >>> piece_of("http://www.p2.org/", 4), piece_of("http://www.p2.org/", 1)
    (2, 0)
    """
    return zlib.crc32(other.encode("utf-8")) % pieces if pieces > 1 else 0


def pair_key(page: str, other: str, plan: Mapping[str, Sequence[int]]) -> str | list[Any]:
    """The key of a pair value of ``page`` with ``other``: the page, or its piece's key."""
    labels = plan.get(page)
    return page if labels is None else [page, labels[piece_of(other, len(labels))]]


def every_key(page: str, plan: Mapping[str, Sequence[int]]) -> Iterator[str | list[Any]]:
    """The keys of a page's auxiliary and cited values: the page, or each piece's key."""
    labels = plan.get(page)
    if labels is None:
        yield page
    else:
        for label in labels:
            yield [page, label]


def page_of(key: Any) -> str | None:
    """The page of a key Reducer1 reads (a page, or ``[page, label]``); None for a key
    that is neither.

    >>> page_of("http://a/"), page_of(["http://a/", 2]), page_of([1, 2])
    ('http://a/', 'http://a/', None)
    """
    if isinstance(key, str):
        return key
    if (isinstance(key, list) and len(key) == 2 and isinstance(key[0], str)
            and isinstance(key[1], int) and key[1] >= 0):
        return key[0]
    return None
