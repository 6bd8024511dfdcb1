"""Segmentation quality against human block annotations (paper, Table 1 and Fig. 4).

For each annotated page (``index.dom.html`` to segment, ``index.blocks.html`` with
``data-block`` marks): manual blocks are the links grouped by their deepest annotated
ancestor, groups with at least two links.  Blocks are compared as sets of resolved,
normalised hrefs.

* E-precision (Eq. 3): share of our blocks equal to some manual block.
* I-precision (Eq. 4): share of our blocks contained in some manual block.

The public annotations are not exhaustive: the annotators marked the page regions they
cared about and left many links (blog post bodies, pin grids, comment links) outside any
``data-block``.  A block of such links can never be "contained in a manual block", so two
views are reported:

* **strict** — our blocks as they are, every link counted;
* **judged** — our blocks restricted to the links the annotators placed in some block,
  and blocks left with fewer than two such links set aside as unjudged (the paper's
  annotators segmented every link, so this is the comparable view).  Before adjusting,
  judged I-precision is 100 % on the public pages: the annotated boundaries agree with
  the partitioning tags, and the whole strict/judged gap is unannotated links.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from lxml import etree

from relatedpages.evaluation.container import base_url, nearest_container_blocks, parse_dom
from segmenter import AdjustParams, Link, segment_bytes

_MAPPING_RE = re.compile(r'"(?P<url>[^"]+)"\s*:\s*"(?P<path>[^"]+)"')


@dataclass(frozen=True)
class AnnotatedPage:
    name: str  # <site>/…: the split by site reads the first part
    url: str
    dom_path: Path
    blocks_path: Path  # the page with data-block marks (Kreuzer), or dom_path itself
    #: XPaths of the annotated elements on dom_path (annotations/*.tsv), instead of marks
    block_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageScore:
    name: str
    blocks: int
    manual_blocks: int
    exact: int  # our blocks equal to a manual block
    included: int  # our blocks contained in a manual block


@dataclass
class Scores:
    """Table 1's row for one algorithm variant."""

    pages: list[PageScore] = field(default_factory=list)
    block_sizes: Counter[int] = field(default_factory=Counter)

    @property
    def blocks(self) -> int:
        return sum(p.blocks for p in self.pages)

    @property
    def manual_blocks(self) -> int:
        return sum(p.manual_blocks for p in self.pages)

    @property
    def e_precision(self) -> float:
        return sum(p.exact for p in self.pages) / self.blocks if self.blocks else 0.0

    @property
    def i_precision(self) -> float:
        return sum(p.included for p in self.pages) / self.blocks if self.blocks else 0.0


def annotated_pages(folder: Path) -> list[AnnotatedPage]:
    """The annotated pages of a Kreuzer-style data set, located and named by ``mapping.txt``.

    Each mapping line is ``"URL" : "/opt/dataset-random/<site>/<path>/index.html",``;
    the page's files are ``<folder>/<site>/<path>/index.{dom,blocks}.html``.
    """
    mapping = folder / "mapping.txt"
    if not mapping.is_file():
        raise FileNotFoundError(f"{folder}: no mapping.txt (is this an annotated data set?)")
    pages: dict[Path, AnnotatedPage] = {}
    for match in _MAPPING_RE.finditer(mapping.read_text(encoding="utf-8", errors="replace")):
        parts = Path(match.group("path")).parts
        if "dataset-random" not in parts:
            continue
        relative = Path(*parts[parts.index("dataset-random") + 1 : -1])
        inner = folder / relative
        dom, blocks = inner / "index.dom.html", inner / "index.blocks.html"
        if dom.is_file() and blocks.is_file():
            pages[inner] = AnnotatedPage(str(relative), match.group("url"), dom, blocks)
    return [pages[key] for key in sorted(pages)]


def path_annotated_pages(annotations: Path) -> list[AnnotatedPage]:
    """The pages of an annotation file (``annotations/*.tsv``, module
    :mod:`relatedpages.evaluation.annotations`), read from the shared data folder; each is
    named ``<folder>/<file>``: pages of one folder are one site for the split."""
    from relatedpages.corpus.shared_data import shared_data_dir
    from relatedpages.evaluation.annotations import AnnotationError, read_annotations

    data = shared_data_dir()
    pages = []
    for annotation in read_annotations(annotations):
        path = data / annotation.page
        if not path.is_file():
            raise AnnotationError(f"{annotations}: {annotation.page} is not in {data}")
        pages.append(AnnotatedPage(f"{path.parent.name}/{path.name}", annotation.url, path, path,
                                   annotation.paths))
    return pages


def load_annotated(source: Path) -> list[AnnotatedPage]:
    """A Kreuzer-style folder (``mapping.txt``) or an annotation file (``*.tsv``)."""
    if source.is_file():
        return path_annotated_pages(source)
    return annotated_pages(source)


@dataclass(frozen=True)
class ManualBlocks:
    blocks: list[frozenset[str]]  # groups of >= 2 links
    annotated: frozenset[str]  # every link inside some data-block element


def manual_blocks(page: AnnotatedPage) -> ManualBlocks:
    """Links grouped by their deepest ``data-block`` ancestor; groups of >= 2 links."""
    from filters.urls import normalise_url

    root = parse_dom(page.blocks_path.read_bytes())
    if root is None:
        return ManualBlocks([], frozenset())
    if page.block_paths:
        from relatedpages.evaluation.annotations import mark_blocks

        mark_blocks(root, page.block_paths, page.name)
    base = base_url(root, page.url)
    # Keyed by the element itself: it keeps lxml's proxy alive, so identity is stable
    # (id() of a proxy is reused once the proxy is garbage-collected).
    groups: dict[etree._Element, list[str]] = {}
    for anchor in root.iter("a"):
        href = anchor.get("href")
        if href is None:
            continue
        resolved = normalise_url(href, base)
        if resolved is None:
            continue
        owner = next((a for a in anchor.iterancestors() if a.get("data-block")), None)
        if anchor.get("data-block"):
            owner = anchor
        if owner is not None:
            groups.setdefault(owner, []).append(resolved)
    return ManualBlocks(
        blocks=[frozenset(links) for links in groups.values() if len(links) >= 2],
        annotated=frozenset(href for links in groups.values() for href in links),
    )


def _hrefs(blocks: Sequence[tuple[Link, ...]]) -> list[list[str]]:
    return [[link.href for link in block] for block in blocks]


def _score(
    name: str, ours: Sequence[Sequence[str]], manual: ManualBlocks, judged: bool
) -> PageScore:
    exact = included = counted = 0
    manual_set = set(manual.blocks)
    for block in ours:
        hrefs = frozenset(block)
        if judged:
            hrefs &= manual.annotated
            if len(hrefs) < 2:
                continue
        counted += 1
        if hrefs in manual_set:
            exact += 1
        if any(hrefs <= m for m in manual.blocks):
            included += 1
    return PageScore(name, counted, len(manual.blocks), exact, included)


@dataclass(frozen=True)
class Evaluation:
    """Table 1 for one parameter setting; ``judged`` and ``strict`` views (module doc)."""

    before: Scores  # judged view
    after: Scores
    before_strict: Scores
    after_strict: Scores
    manual_sizes: Counter[int]
    #: The nearest-container reference (relatedpages.evaluation.container), both views.
    reference: Scores = field(default_factory=Scores)
    reference_strict: Scores = field(default_factory=Scores)
    split: str = "all"  # which pages: "all", or "dev" / "test" of split_by_site (and seed)


#: The development/test split of the annotated pages: half the sites each, by seed.
SPLIT_SEED_DEFAULT = 1
SPLITS = ("dev", "test", "all")


def site_of_page(page: AnnotatedPage) -> str:
    """The site folder of an annotated page (``<site>/<site>/…``: the first part)."""
    return Path(page.name).parts[0]


def split_by_site(pages: Sequence[AnnotatedPage], seed: int = SPLIT_SEED_DEFAULT,
                  ) -> tuple[list[AnnotatedPage], list[AnnotatedPage]]:
    """(development, test): the sites shuffled by ``Random(seed)`` in sort order, the first
    half (rounded down) for development; every page of a site on one side.

    >>> pages = [AnnotatedPage(f"s{i}/s{i}", "", Path(), Path()) for i in range(5)]
    >>> dev, test = split_by_site(pages, 1)
    >>> len(dev), len(test), {p.name for p in dev} & {p.name for p in test}
    (2, 3, set())
    """
    import random

    sites = sorted({site_of_page(page) for page in pages})
    random.Random(seed).shuffle(sites)
    dev_sites = set(sites[: len(sites) // 2])
    dev = [page for page in pages if site_of_page(page) in dev_sites]
    return dev, [page for page in pages if site_of_page(page) not in dev_sites]


def select_pages(folder: Path, split: str = "all", seed: int = SPLIT_SEED_DEFAULT,
                 ) -> list[AnnotatedPage]:
    """The annotated pages of ``folder`` (or an annotation file) on one side of
    :func:`split_by_site` (or all)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    pages = load_annotated(folder)
    if split == "all":
        return pages
    dev, test = split_by_site(pages, seed)
    return dev if split == "dev" else test


def evaluate(folder: Path, params: AdjustParams = AdjustParams(), split: str = "all",
             seed: int = SPLIT_SEED_DEFAULT) -> Evaluation:
    """Table 1 on an annotated data set (or one side of its split by site): our blocks
    before and after adjusting, and the nearest-container reference."""
    before, after, before_strict, after_strict = Scores(), Scores(), Scores(), Scores()
    reference, reference_strict = Scores(), Scores()
    manual_sizes = Counter[int]()
    for page in select_pages(folder, split, seed):
        manual = manual_blocks(page)
        manual_sizes.update(len(m) for m in manual.blocks)
        data = page.dom_path.read_bytes()
        seg = segment_bytes(data, page.url, params=params)
        nearest = nearest_container_blocks(data, page.url)
        for scores, blocks, judged in (
            (before, _hrefs(seg.blocks_before_adjusting), True),
            (after, _hrefs(seg.blocks), True),
            (before_strict, _hrefs(seg.blocks_before_adjusting), False),
            (after_strict, _hrefs(seg.blocks), False),
            (reference, nearest, True),
            (reference_strict, nearest, False),
        ):
            scores.pages.append(_score(page.name, blocks, manual, judged))
            if not judged:
                scores.block_sizes.update(len(b) for b in blocks)
    label = split if split == "all" else f"{split} (seed {seed})"
    return Evaluation(before, after, before_strict, after_strict, manual_sizes, reference,
                      reference_strict, label)


def format_table(evaluation: Evaluation) -> str:
    """Table 1's layout, judged view first, then strict."""
    header = f"{'Algorithm':<28}{'No. of blocks':>14}{'E-precision (%)':>17}{'I-precision (%)':>17}"
    lines = [f"pages: {evaluation.split}", header, f"{'By human':<28}{evaluation.after.manual_blocks:>14}{100.0:>17.1f}{100.0:>17.1f}"]
    for label, scores in (
        ("Nearest container (judged)", evaluation.reference),
        ("Before adjusting (judged)", evaluation.before),
        ("After adjusting (judged)", evaluation.after),
        ("Nearest container (strict)", evaluation.reference_strict),
        ("Before adjusting (strict)", evaluation.before_strict),
        ("After adjusting (strict)", evaluation.after_strict),
    ):
        lines.append(
            f"{label:<28}{scores.blocks:>14}{100 * scores.e_precision:>17.1f}"
            f"{100 * scores.i_precision:>17.1f}"
        )
    after = evaluation.after_strict
    ratio = after.blocks / after.manual_blocks if after.manual_blocks else 0.0
    unjudged = evaluation.after_strict.blocks - evaluation.after.blocks
    lines.append(
        f"{len(after.pages)} pages; {ratio:.2f} blocks per manual block after adjusting; "
        f"{unjudged} blocks after adjusting have < 2 annotated links (unjudged)"
    )
    return "\n".join(lines)


def worst_pages(evaluation: Evaluation, count: int = 10) -> str:
    """Per-page E/I (judged, after adjusting, beside the reference), the lowest
    I-precision first: the pages to read when a figure falls."""
    def ratio(part: int, whole: int) -> str:
        return f"{100 * part / whole:5.1f}" if whole else "    -"

    reference = {score.name: score for score in evaluation.reference.pages}
    ranked = sorted(evaluation.after.pages, key=lambda p: (
        p.included / p.blocks if p.blocks else 1.0, p.exact / p.blocks if p.blocks else 1.0,
        p.name))
    lines = [f"Per page, judged view (lowest I-precision after adjusting first; "
             f"{min(count, len(ranked))} of {len(ranked)}):",
             f"{'page':<44}{'manual':>7}{'ours':>6}{'E':>7}{'I':>7}{'ref':>6}{'E':>7}{'I':>7}"]
    for page in ranked[:count]:
        ref = reference[page.name]
        lines.append(f"{page.name[:43]:<44}{page.manual_blocks:>7}{page.blocks:>6}"
                     f"{ratio(page.exact, page.blocks):>7}{ratio(page.included, page.blocks):>7}"
                     f"{ref.blocks:>6}{ratio(ref.exact, ref.blocks):>7}"
                     f"{ratio(ref.included, ref.blocks):>7}")
    return "\n".join(lines)


def sweep_t1(
    folder: Path, values: Iterable[float], base: AdjustParams = AdjustParams(),
    split: str = "dev", seed: int = SPLIT_SEED_DEFAULT,
) -> Iterator[tuple[float, Evaluation]]:
    """Table 1 for each T1 (the other parameters from ``base``) on the development split:
    how T1 is chosen."""
    for t1 in values:
        yield t1, evaluate(folder, dataclasses.replace(base, t1=t1), split, seed)


def plot_block_sizes(evaluation: Evaluation, path: Path) -> None:
    """Fig. 4: the distribution of block sizes, before/after adjusting and by hand."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buckets = [(2, 2), (3, 3), (4, 5), (6, 9), (10, 19), (20, 49), (50, 10**9)]
    labels = [f"{lo}" if lo == hi else (f"{lo}–{hi}" if hi < 10**9 else f"≥{lo}") for lo, hi in buckets]

    def shares(sizes: Counter[int]) -> list[float]:
        total = sum(sizes.values()) or 1
        return [100 * sum(c for s, c in sizes.items() if lo <= s <= hi) / total for lo, hi in buckets]

    series = [
        ("by human", shares(evaluation.manual_sizes)),
        ("before adjusting", shares(evaluation.before_strict.block_sizes)),
        ("after adjusting", shares(evaluation.after_strict.block_sizes)),
    ]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.27
    for offset, (name, values) in enumerate(series):
        xs = [i + (offset - 1) * width for i in range(len(buckets))]
        ax.bar(xs, values, width=width, label=name)
    ax.set_xticks(range(len(buckets)), labels)
    ax.set_xlabel("block size (links)")
    ax.set_ylabel("share of blocks (%)")
    ax.set_title("Block size distribution (cf. paper Fig. 4)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def evaluation_as_json(evaluation: Evaluation) -> str:
    def row(scores: Scores) -> dict[str, float | int]:
        return {
            "blocks": scores.blocks,
            "e_precision": round(scores.e_precision, 4),
            "i_precision": round(scores.i_precision, 4),
        }

    return json.dumps(
        {
            "split": evaluation.split,
            "reference": row(evaluation.reference),
            "reference_strict": row(evaluation.reference_strict),
            "pages": len(evaluation.after.pages),
            "manual_blocks": evaluation.after.manual_blocks,
            "before_adjusting": row(evaluation.before),
            "after_adjusting": row(evaluation.after),
            "before_adjusting_strict": row(evaluation.before_strict),
            "after_adjusting_strict": row(evaluation.after_strict),
        },
        sort_keys=True,
    )
