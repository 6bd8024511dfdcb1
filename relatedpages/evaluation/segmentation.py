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

from segmenter import AdjustParams, Link, segment_bytes
from segmenter.decode import decode_html

_MAPPING_RE = re.compile(r'"(?P<url>[^"]+)"\s*:\s*"(?P<path>[^"]+)"')


@dataclass(frozen=True)
class AnnotatedPage:
    name: str
    url: str
    dom_path: Path
    blocks_path: Path


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


@dataclass(frozen=True)
class ManualBlocks:
    blocks: list[frozenset[str]]  # groups of >= 2 links
    annotated: frozenset[str]  # every link inside some data-block element


def manual_blocks(page: AnnotatedPage) -> ManualBlocks:
    """Links grouped by their deepest ``data-block`` ancestor; groups of >= 2 links."""
    from filters.urls import normalise_url

    text = decode_html(page.blocks_path.read_bytes()).text.replace("\x00", "\ufffd")
    parser = etree.HTMLParser(huge_tree=True, recover=True, encoding="utf-8")
    root = etree.fromstring(text.encode("utf-8", "replace"), parser)
    if root is None:
        return ManualBlocks([], frozenset())
    base = normalise_url(page.url) or page.url
    for element in root.iter("base"):
        href = element.get("href")
        if href is not None:
            base = normalise_url(href, base) or base
            break
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


def _score(
    name: str, ours: Sequence[tuple[Link, ...]], manual: ManualBlocks, judged: bool
) -> PageScore:
    exact = included = counted = 0
    manual_set = set(manual.blocks)
    for block in ours:
        hrefs = frozenset(link.href for link in block)
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


def evaluate(folder: Path, params: AdjustParams = AdjustParams()) -> Evaluation:
    """Table 1 on an annotated data set: our blocks before and after adjusting."""
    before, after, before_strict, after_strict = Scores(), Scores(), Scores(), Scores()
    manual_sizes = Counter[int]()
    for page in annotated_pages(folder):
        manual = manual_blocks(page)
        manual_sizes.update(len(m) for m in manual.blocks)
        seg = segment_bytes(page.dom_path.read_bytes(), page.url, params=params)
        for scores, blocks, judged in (
            (before, seg.blocks_before_adjusting, True),
            (after, seg.blocks, True),
            (before_strict, seg.blocks_before_adjusting, False),
            (after_strict, seg.blocks, False),
        ):
            scores.pages.append(_score(page.name, blocks, manual, judged))
            if not judged:
                scores.block_sizes.update(len(b) for b in blocks)
    return Evaluation(before, after, before_strict, after_strict, manual_sizes)


def format_table(evaluation: Evaluation) -> str:
    """Table 1's layout, judged view first, then strict."""
    header = f"{'Algorithm':<26}{'No. of blocks':>14}{'E-precision (%)':>17}{'I-precision (%)':>17}"
    lines = [header, f"{'By human':<26}{evaluation.after.manual_blocks:>14}{100.0:>17.1f}{100.0:>17.1f}"]
    for label, scores in (
        ("Before adjusting (judged)", evaluation.before),
        ("After adjusting (judged)", evaluation.after),
        ("Before adjusting (strict)", evaluation.before_strict),
        ("After adjusting (strict)", evaluation.after_strict),
    ):
        lines.append(
            f"{label:<26}{scores.blocks:>14}{100 * scores.e_precision:>17.1f}"
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


def sweep_t1(
    folder: Path, values: Iterable[float], base: AdjustParams = AdjustParams()
) -> Iterator[tuple[float, Evaluation]]:
    """Table 1 for each T1 (the other parameters from ``base``): how T1 was chosen."""
    for t1 in values:
        yield t1, evaluate(folder, dataclasses.replace(base, t1=t1))


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
            "pages": len(evaluation.after.pages),
            "manual_blocks": evaluation.after.manual_blocks,
            "before_adjusting": row(evaluation.before),
            "after_adjusting": row(evaluation.after),
            "before_adjusting_strict": row(evaluation.before_strict),
            "after_adjusting_strict": row(evaluation.after_strict),
        },
        sort_keys=True,
    )
