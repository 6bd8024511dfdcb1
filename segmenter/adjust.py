"""Adjusting stage: merge neighbouring sections (paper, "The HTML segmentation flow").

For two neighbouring sections S and T the first rule that applies decides (each rule is
used only if no earlier rule applied):

1. *link* section ⇔ anchor words / words > T1 and links > T2.  Both link sections with
   the same background colour, and nested partitions → merge.
2. Either has bold text → no merge.
3. |afs(S) − afs(T)| > 0.5 (Eq. 1, the average font score) → no merge.
4. Both have more than 10 words → no merge.
5. Types differ, but the merged section has the type of the larger (more words), and
   nested partitions → merge.
6. Otherwise → no merge.

*Nested partitions* (``Section.nested``): T's partitioning element lies inside S's, or
encloses it - a menu and its sub-menu, a list and the text around it - not a sibling's or a
cousin's (the next cell, column, box or list).  This is the project's addition to the
paper's rules 1 and 5 (README "Segmentation"): the paper's visual cues separate neighbouring
boxes by their background, but a modern page sets backgrounds in external style sheets the
scanner never sees, so every box reads as white and rule 1 merged a page's whole header,
or a footer's columns, into one block.  Chosen on the development halves of both annotated
sets (judged E 50.0 → 54.7 % on Kreuzer's, 43.2 → 65.3 % on the Chinese pages').

The paper's Fig. 3 pseudo-code reads ``s2 = next(S)`` outside the loop and never emits
the last section; this implements the evident intent: walk every neighbour pair, and
emit the final accumulated section too.  Sections with fewer than two links are
dropped; a block is the ordered link list of a remaining section.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from segmenter.scan import Link, Section

# T1, the anchor-word ratio above which a section is a *link* section, is not given by the
# paper.  Chosen on the development half (by site, seed 1) of the public human-annotated
# pages (../shared/data/segmentation): the highest judged E-precision there, then the
# highest I-precision, then the smallest T1 (flat from 0.2 to 0.7 since rules 1 and 5 join
# nested partitions only).  Table 1 is reported on the other half.  See README "Choosing
# T1" and `relatedpages eval segmentation --sweep-t1`.
T1_DEFAULT = 0.2
T2_DEFAULT = 2  # PAKDD version of the paper: a link section has more than 2 links
AFS_GAP_DEFAULT = 0.5  # rule 3
WORDY_DEFAULT = 10  # rule 4: "more than 10 words"
MIN_BLOCK_LINKS = 2  # "the is valid routine discards all sections which have only one link"


# The command-line form of each parameter, for every tool that exposes them (the mrjob job,
# ``python -m segmenter``, ``relatedpages``): (flag, AdjustParams field, type, help).
ADJUST_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("--t1", "t1", float, "Anchor-word ratio above which a section is a link section."),
    ("--t2", "t2", int, "A link section has more than this many links."),
    ("--afs-gap", "afs_gap", float, "Rule 3: no merge when average font scores differ by more."),
    ("--wordy", "wordy", int, "Rule 4: no merge when both sections have more words."),
)


def add_adjust_options(add_argument: Callable[..., Any]) -> None:
    """Declare the adjusting parameters with ``argparse``'s ``add_argument`` or mrjob's
    ``add_passthru_arg`` (same signature), defaults from :class:`AdjustParams`."""
    defaults = AdjustParams()
    for flag, field_name, kind, text in ADJUST_OPTIONS:
        add_argument(flag, dest=field_name, type=kind, default=getattr(defaults, field_name),
                     help=text + " Default: %(default)s")


def adjust_params_from(options: Any) -> "AdjustParams":
    """AdjustParams from parsed options; ValueError for impossible values."""
    return AdjustParams(**{name: getattr(options, name) for _, name, _, _ in ADJUST_OPTIONS})


@dataclass(frozen=True)
class AdjustParams:
    """The adjusting stage's thresholds, with the paper's defaults."""

    t1: float = T1_DEFAULT
    t2: int = T2_DEFAULT
    afs_gap: float = AFS_GAP_DEFAULT
    wordy: int = WORDY_DEFAULT

    def __post_init__(self) -> None:
        if not 0.0 <= self.t1 <= 1.0:
            raise ValueError(f"T1 is a ratio in [0, 1], got {self.t1}")
        if self.t2 < 0:
            raise ValueError(f"T2 is a link count >= 0, got {self.t2}")
        if self.afs_gap < 0:
            raise ValueError(f"the afs gap must be >= 0, got {self.afs_gap}")
        if self.wordy < 0:
            raise ValueError(f"the word limit must be >= 0, got {self.wordy}")


class SectionType(enum.Enum):
    LINK = "link"
    NON_LINK = "non-link"


class MergeRule(enum.Enum):
    """Which rule decided a pair, for ``--sections`` and for tests."""

    LINK_SAME_BACKGROUND = "1: both link, same background, nested -> merge"
    BOLD = "2: bold text -> no merge"
    FONT_SCORE = "3: afs differs by more than the gap -> no merge"
    BOTH_WORDY = "4: both have more than 10 words -> no merge"
    TYPE_OF_LARGER = "5: merged keeps the larger's type, nested -> merge"
    NO_RULE = "6: no rule applies -> no merge"

    @property
    def merges(self) -> bool:
        return self in (MergeRule.LINK_SAME_BACKGROUND, MergeRule.TYPE_OF_LARGER)


def section_type(section: Section, params: AdjustParams) -> SectionType:
    """Rule 1's classification: link iff anchor words / words > T1 and links > T2."""
    return _type_of(section.anchor_words, section.words, section.link_count, params)


def _type_of(anchor_words: int, words: int, links: int, params: AdjustParams) -> SectionType:
    ratio = anchor_words / words if words else 0.0
    return SectionType.LINK if ratio > params.t1 and links > params.t2 else SectionType.NON_LINK


def merge_sections(first: Section, second: Section) -> Section:
    """Both texts and both link lists; the larger section's background and label; the
    heading of both, or none (0) when they differ."""
    larger = first if first.words >= second.words else second
    # Section's fields set as its __init__ would (a frozen dataclass's __init__ sets each
    # through object.__setattr__: most of the cost of a merge)
    merged = object.__new__(Section)
    merged.__dict__.update(
        links=first.links + second.links,
        link_count=first.link_count + second.link_count,
        words=first.words + second.words,
        anchor_words=first.anchor_words + second.anchor_words,
        chars=first.chars + second.chars,
        weighted_chars=first.weighted_chars + second.weighted_chars,
        bold=first.bold or second.bold,
        background=larger.background,
        label=first.label if first.label == second.label else f"{first.label}+{second.label}",
        fonts=larger.fonts,
        heading=first.heading if first.heading == second.heading else 0,
        nested=first.nested,
    )
    return merged


def merge_rule(s: Section, t: Section, params: AdjustParams) -> MergeRule:
    """The first of the paper's rules that applies to neighbours S and T."""
    # section_type and Section.afs, read once into locals (this runs for every neighbour
    # pair of every page)
    t1, t2 = params.t1, params.t2
    s_words, t_words = s.words, t.words
    s_link = (s.anchor_words / s_words if s_words else 0.0) > t1 and s.link_count > t2
    t_link = (t.anchor_words / t_words if t_words else 0.0) > t1 and t.link_count > t2
    if s_link and t_link and s.background == t.background and t.nested:
        return MergeRule.LINK_SAME_BACKGROUND
    if s.bold or t.bold:
        return MergeRule.BOLD
    s_afs = s.weighted_chars / s.chars if s.chars else 0.0
    t_afs = t.weighted_chars / t.chars if t.chars else 0.0
    if abs(s_afs - t_afs) > params.afs_gap:
        return MergeRule.FONT_SCORE
    if s_words > params.wordy and t_words > params.wordy:
        return MergeRule.BOTH_WORDY
    if s_link is not t_link and t.nested:
        larger = s_link if s_words >= t_words else t_link
        # section_type of merge_sections(s, t), from the summed counts alone
        merged = _type_of(s.anchor_words + t.anchor_words, s_words + t_words,
                          s.link_count + t.link_count, params) is SectionType.LINK
        if merged is larger:
            return MergeRule.TYPE_OF_LARGER
    return MergeRule.NO_RULE


def adjust(sections: Iterable[Section], params: AdjustParams = AdjustParams()) -> list[Section]:
    """Fig. 3, as intended: merge neighbours left to right; keep the merged sections."""
    merged: list[Section] = []
    current: Section | None = None
    for section in sections:
        if current is None:
            current = section
        elif merge_rule(current, section, params) in _MERGING:
            current = merge_sections(current, section)
        else:
            merged.append(current)
            current = section
    if current is not None:
        merged.append(current)
    return merged


_MERGING = frozenset(rule for rule in MergeRule if rule.merges)


def blocks_of(sections: Sequence[Section]) -> list[tuple[Link, ...]]:
    """isValid + getBlock: the link lists of sections with at least two links."""
    return [s.links for s in sections if len(s.links) >= MIN_BLOCK_LINKS]
