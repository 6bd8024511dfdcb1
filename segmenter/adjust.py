"""Adjusting stage: merge neighbouring sections (paper, "The HTML segmentation flow").

For two neighbouring sections S and T the first rule that applies decides (each rule is
used only if no earlier rule applied):

0. *Repeated siblings* (the project's, issue 42): S and T lie in one list group (the items
   of a ul, ol or dl, the rows of a table, same-class cards of one parent; ``Section.lists``)
   that is a list of links, not page layout (:func:`list_groups`), with no heading between
   them; with the same background, both with text (or both images only), average font
   scores within rule 3's gap, not both link sections (rule 1 decides those), and not an
   item of two links or more followed by another (each is a block already) → merge.
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

Rule 0 exists because partitioning tags cut a list into one section per item whenever an
item holds a ``p``, a sub-list or a cell (a table row, a loose Markdown list, an entry with
a one-link sub-list): each such section has one link, rule 1 never sees a link section, rule
4 keeps described entries apart, and the single links are dropped.  Its conditions were
chosen on the development splits (README "Lists": the hub pages' shapes report and the
annotated pages' development half): a sidebar's titled boxes, a layout table's columns and
a table of small link boxes are what the annotators keep apart.  ``--rules`` selects the
adjusting: ``lists`` (the default: rule 0 and the nested partitions), ``nested`` (the nested
partitions without rule 0) or ``paper`` (rules 1-6 exactly as the paper has them, for its
Table 1).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from segmenter.sections import Group, Link, Outline, Section

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
#: The adjustings --rules selects (module doc): the project's, without rule 0, the paper's.
RULES = ("lists", "nested", "paper")
RULES_DEFAULT = "lists"
# Rule 0's test that a group is a list of links, not prose: at most this many words per link
# in all its items (a described entry has a sentence or two; a run of paragraphs with a link
# here and there has hundreds).  Chosen on the development splits (README "Lists").
LIST_WORDS_DEFAULT = 100
# Rule 0's layout test: a table or a grid of cards of fewer items than this lays out the lists
# in its cells (a layout table's columns, a sidebar's boxes: each list a block of its own); one
# of this many items or more is itself a list of entries, and the lists in its items are the
# entries' sub-lists (a table of categories, each with its links).  Chosen on the development
# splits (README "Lists"): 6 keeps Kreuzer's judged E/I as they were and the hub lists'
# table and card renderings' sub-lists together (95.6 -> 98.8 %).
LAYOUT_ITEMS_DEFAULT = 6


# The command-line form of each parameter, for every tool that exposes them (the mrjob job,
# ``python -m segmenter``, ``relatedpages``): (flag, AdjustParams field, type, help).
ADJUST_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("--t1", "t1", float, "Anchor-word ratio above which a section is a link section."),
    ("--t2", "t2", int, "A link section has more than this many links."),
    ("--afs-gap", "afs_gap", float, "Rule 3: no merge when average font scores differ by more."),
    ("--wordy", "wordy", int, "Rule 4: no merge when both sections have more words."),
    ("--rules", "rules", str, "The adjusting: lists (rule 0 joins the items of a list, table "
     "or card grid; rules 1 and 5 join nested partitions), nested (without rule 0) or paper "
     "(the paper's rules 1-6 exactly)."),
    ("--list-words", "list_words", float, "Rule 0: a group is a list of links when its items "
     "have at most this many words per link."),
    ("--layout-items", "layout_items", int, "Rule 0: a table or card grid of fewer items lays "
     "out the lists in it (each its own block); one of more is a list of entries with "
     "sub-lists."),
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
    rules: str = RULES_DEFAULT
    list_words: float = LIST_WORDS_DEFAULT
    layout_items: int = LAYOUT_ITEMS_DEFAULT

    def __post_init__(self) -> None:
        if not 0.0 <= self.t1 <= 1.0:
            raise ValueError(f"T1 is a ratio in [0, 1], got {self.t1}")
        if self.t2 < 0:
            raise ValueError(f"T2 is a link count >= 0, got {self.t2}")
        if self.afs_gap < 0:
            raise ValueError(f"the afs gap must be >= 0, got {self.afs_gap}")
        if self.wordy < 0:
            raise ValueError(f"the word limit must be >= 0, got {self.wordy}")
        if self.rules not in RULES:
            raise ValueError(f"the rules are one of {', '.join(RULES)}, got {self.rules!r}")
        if not self.list_words >= 0:
            raise ValueError(f"the words per link of a list must be >= 0, got {self.list_words}")
        if self.layout_items < 0:
            raise ValueError(f"the items of a layout must be >= 0, got {self.layout_items}")


class SectionType(enum.Enum):
    LINK = "link"
    NON_LINK = "non-link"


class MergeRule(enum.Enum):
    """Which rule decided a pair, for ``--sections`` and for tests."""

    LIST_ITEMS = "0: items of one list, same style -> merge"
    LINK_SAME_BACKGROUND = "1: both link, same background, nested -> merge"
    BOLD = "2: bold text -> no merge"
    FONT_SCORE = "3: afs differs by more than the gap -> no merge"
    BOTH_WORDY = "4: both have more than 10 words -> no merge"
    TYPE_OF_LARGER = "5: merged keeps the larger's type, nested -> merge"
    NO_RULE = "6: no rule applies -> no merge"

    @property
    def merges(self) -> bool:
        return self in (MergeRule.LIST_ITEMS, MergeRule.LINK_SAME_BACKGROUND,
                        MergeRule.TYPE_OF_LARGER)


def section_type(section: Section, params: AdjustParams) -> SectionType:
    """Rule 1's classification: link iff anchor words / words > T1 and links > T2."""
    return _type_of(section.anchor_words, section.words, section.link_count, params)


def _type_of(anchor_words: int, words: int, links: int, params: AdjustParams) -> SectionType:
    ratio = anchor_words / words if words else 0.0
    return SectionType.LINK if ratio > params.t1 and links > params.t2 else SectionType.NON_LINK


def merge_sections(first: Section, second: Section) -> Section:
    """Both texts and both link lists; the larger section's background and fonts; both
    labels (each once); the heading of both, or none (0) when they differ; the second's
    place in the lists and headings (rule 0 compares the next section with it)."""
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
        label=first.label if second.label in first.label.split("+")
        else f"{first.label}+{second.label}",
        fonts=larger.fonts,
        heading=first.heading if first.heading == second.heading else 0,
        nested=first.nested,
        lists=second.lists,
        headings_seen=second.headings_seen,
    )
    return merged


def merge_rule(s: Section, t: Section, params: AdjustParams,
               lists: frozenset[Group] = frozenset(), last: Section | None = None,
               placed: bool | None = None) -> MergeRule:
    """The first rule that applies to neighbours S and T; ``lists``: the page's list groups
    (:func:`list_groups`, rule 0); ``last``: the section S ends with, when S is merged;
    ``placed``: rule 0's place test of ``last`` and T (:func:`_one_list`), when the caller
    has it already."""
    # section_type and Section.afs, read once into locals (this runs for every neighbour
    # pair of every page)
    t1, t2 = params.t1, params.t2
    s_words, t_words = s.words, t.words
    s_link = (s.anchor_words / s_words if s_words else 0.0) > t1 and s.link_count > t2
    t_link = (t.anchor_words / t_words if t_words else 0.0) > t1 and t.link_count > t2
    s_afs = s.weighted_chars / s.chars if s.chars else 0.0
    t_afs = t.weighted_chars / t.chars if t.chars else 0.0
    if lists and t.lists:
        end = last or s
        # rule 0 (module doc); an item that is a block already (two links or more) stays
        # apart from a next that is one too: a table of small link boxes, not a list
        if not (s_link and t_link) and not (len(end.links) >= 2 and len(t.links) >= 2) \
                and s.background == t.background and abs(s_afs - t_afs) <= params.afs_gap \
                and (s.chars > 0) is (t.chars > 0) \
                and (_one_list(end, t, lists) is not None if placed is None else placed):
            return MergeRule.LIST_ITEMS
    nested = t.nested or params.rules == "paper"
    if s_link and t_link and s.background == t.background and nested:
        return MergeRule.LINK_SAME_BACKGROUND
    if s.bold or t.bold:
        return MergeRule.BOLD
    if abs(s_afs - t_afs) > params.afs_gap:
        return MergeRule.FONT_SCORE
    if s_words > params.wordy and t_words > params.wordy:
        return MergeRule.BOTH_WORDY
    if s_link is not t_link and nested:
        larger = s_link if s_words >= t_words else t_link
        # section_type of merge_sections(s, t), from the summed counts alone
        merged = _type_of(s.anchor_words + t.anchor_words, s_words + t_words,
                          s.link_count + t.link_count, params) is SectionType.LINK
        if merged is larger:
            return MergeRule.TYPE_OF_LARGER
    return MergeRule.NO_RULE


def _one_list(s: Section, t: Section, lists: frozenset[Group]) -> Group | None:
    """Rule 0's place test: the outermost list group around both S and T, when no heading
    lies between them (a heading ends a list's block, whatever holds it)."""
    if s.headings_seen != t.headings_seen:
        return None
    # the groups open around both are the two stacks' common start (outermost first)
    for (group, _), (other, _) in zip(s.lists, t.lists):
        if group != other:
            return None
        if group in lists:
            return group
    return None


_UNSEEN: Group = (-1, "")  # a key no scan gives


def list_groups(sections: Sequence[Section], params: AdjustParams,
                outline: Outline = Outline()) -> frozenset[Group]:
    """The list groups of a page that rule 0 joins (:func:`_list_places`)."""
    return _list_places(sections, params, outline)[0]


def _list_places(sections: Sequence[Section], params: AdjustParams, outline: Outline
                 ) -> tuple[frozenset[Group], list[Group | None]]:
    """The list groups of a page that rule 0 joins: of two items or more, at most
    ``params.list_words`` words per link in all their sections, and not page layout - a
    group most of whose links lie in lists it lays out (a page's layout table, a sidebar of
    boxes) rather than in its own items.  A point lies in a list its group lays out when
    inside the group there is a table; a grid of two cards or more; or, in a table or a
    card of a grid of fewer than ``params.layout_items`` items, a list of two items or more
    (an entry's one-item sub-list is the entry's own; a list's sub-lists, and those of a
    long table's rows or a long grid's cards, are its entries').  And each section's place for rule 0: the
    outermost of those groups it lies in (:func:`_one_list`: two sections lie in one list,
    with none of those around it, when theirs is one group - a group's place in the tree
    fixes the groups around it)."""
    counted = outline.items
    if params.rules != "lists" or not any(n >= 2 for n in counted.values()):
        return frozenset(), []  # (no group of two items: none to join)
    # the groups form a tree (each lies in one item of the group around it); the tree kept
    # is of the groups that count - tables, and groups of two items or more (sections.Outline)
    # - as a group of one item, not a table, only passes its sections on to the group
    # around it.  A section's words and links are added at the innermost group that counts
    # around it, and summed up the tree after.
    nearest: dict[Group, Group | None] = {}  # the group that counts, at or around a group
    parent: dict[Group, tuple[Group | None, int]] = {}  # of each that counts: that around it
    words: dict[Group, int] = {}
    links: dict[Group, int] = {}
    homes: list[Group | None] = []
    for section in sections:
        around = section.lists
        if not around:
            homes.append(None)
            continue
        home = nearest.get(around[-1][0], _UNSEEN)
        if home is _UNSEEN:  # the groups of this stack not seen before, innermost first
            unseen: list[tuple[Group, int]] = []
            home = None
            for level in range(len(around) - 1, -1, -1):
                group = around[level][0]
                if group in nearest:
                    home = nearest[group]
                    break
                unseen.append((group, level))
            for group, level in reversed(unseen):
                if group[1] == "table" or counted.get(group, 0) >= 2:
                    parent[group] = (home, level)
                    words[group] = links[group] = 0
                    home = group
                nearest[group] = home
        homes.append(home)
        if home is not None:
            words[home] += section.words
            links[home] += section.link_count
    # bottom up: the links inside each group that lie in a table or a grid of cards (each
    # group kept is a table or a list of two items or more: all its links lie in a list),
    # and the links each lays out - those of the lists in it when it is a table or a card,
    # else those of the grids in it
    in_grid: dict[Group, int] = {}
    laid_out: dict[Group, int] = {}
    layout = params.layout_items
    for group in sorted(parent, key=lambda g: parent[g][1], reverse=True):
        total = links[group]
        grid = total if group[1] == "table" or len(group) == 3 else in_grid.get(group, 0)
        outer = parent[group][0]
        if outer is not None:
            words[outer] += words[group]
            links[outer] += total
            if grid:
                in_grid[outer] = in_grid.get(outer, 0) + grid
            laid = total if (len(outer) == 3 or outer[1] == "table") \
                and counted.get(outer, 0) < layout else grid
            if laid:
                laid_out[outer] = laid_out.get(outer, 0) + laid
    joined = frozenset(
        group for group, links_in in links.items()
        if counted.get(group, 0) >= 2
        and 2 * laid_out.get(group, 0) <= links_in
        and words[group] <= params.list_words * links_in)
    # top down: the outermost joined group at or around each group kept
    outermost: dict[Group | None, Group | None] = {None: None}
    for group in sorted(parent, key=lambda g: parent[g][1]):
        outer = outermost[parent[group][0]]
        outermost[group] = group if outer is None and group in joined else outer
    return joined, [outermost[home] for home in homes]


def adjust(sections: Sequence[Section], params: AdjustParams = AdjustParams(),
           outline: Outline = Outline()) -> list[Section]:
    """Fig. 3, as intended: merge neighbours left to right; keep the merged sections.
    ``outline``: the scan's (``ScanResult.outline``), for rule 0.  An item's image-only part
    that rule 0 does not join (a list entry's or card's badge beside its text) is set aside
    as a section of its own, so the next entry can still join the entries before it.  In a
    table only when it has ``params.layout_items`` rows or more (a list of entries, not a
    layout) and the image part follows its row's text (a picture that starts a row is the
    row's own); a table's badges set aside join each other, a column of badges (README
    "Lists": the hubs' table rendering 98.5 -> 99.2 % kept on the development half)."""
    lists, outermost = _list_places(sections, params, outline)
    places = outermost if lists else None
    counts = outline.items
    merged: list[Section] = []
    current: Section | None = None
    last: Section | None = None  # the section current ends with
    place: Group | None = None  # last's outermost list group
    aside: tuple[int, Group] | None = None  # the badges set aside: their place in merged
    for index, section in enumerate(sections):
        placed, here = None, None
        if places is not None:
            here = places[index]
            placed = here is not None and here == place \
                and last is not None and last.headings_seen == section.headings_seen
        if current is None:
            current = section
        elif merge_rule(current, section, params, lists, last, placed) in _MERGING:
            current = merge_sections(current, section)
        elif placed and not section.chars and here is not None and (
                here[1] != "table" or counts.get(here, 0) >= params.layout_items
                and _item(last, here) == _item(section, here)):
            # an entry's badge set aside (see the docstring), with the badges of the
            # entries before it: a column of badges
            if aside is not None and aside[1] == here and here[1] == "table" \
                    and merged[aside[0]].headings_seen == section.headings_seen:
                merged[aside[0]] = merge_sections(merged[aside[0]], section)
            else:
                aside = (len(merged), here)
                merged.append(section)
            continue
        else:
            merged.append(current)
            current = section
        last, place = section, here
    if current is not None:
        merged.append(current)
    return merged


def _item(section: Section | None, group: Group) -> int:
    """The number of the item of ``group`` that ``section`` lies in (-1: none)."""
    if section is not None:
        for around, item in section.lists:
            if around == group:
                return item
    return -1


# a tuple: `in` finds a member by identity first (an Enum's hash is Python code)
_MERGING = tuple(rule for rule in MergeRule if rule.merges)


def blocks_of(sections: Sequence[Section]) -> list[tuple[Link, ...]]:
    """isValid + getBlock: the link lists of sections with at least two links."""
    return [s.links for s in sections if len(s.links) >= MIN_BLOCK_LINKS]
