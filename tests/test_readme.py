"""The commands of the README and of the documentation site are tested (issue 13, item 5;
issue 46, item 3), so the docs cannot drift.

Every fenced block of README.md and of ``docs/**/*.md`` carries a marker on the line above it
(a MyST directive's fence, ```` ```{name} ````, is markup, not a command, and needs none):

- ``<!-- readme-test: run -->``: its lines are run, in order, by bash from a scratch folder
  laid out like a checkout (the repository's files, ``../shared`` beside it, an ``out/`` of
  its own), and must succeed;
- ``<!-- readme-test: output -->``: printed by the run block before it: its lines appear in
  that output, contiguous and in order;
- ``<!-- readme-test: skip: why -->``: not run here (too long, a cluster, placeholders), and
  the reason says where it is checked instead.

A block without a marker fails the test, so a new command is never silently untested.  The
tables of ``relatedpages eval related`` are checked against the command's ``--json``.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relatedpages.evaluation.naive import NAIVE_STRONG
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
#: The page with the tables of ``relatedpages eval related`` (checked against its ``--json``).
RELATED_PAGE = REPO / "docs" / "evaluation" / "related.md"
#: Every page with command blocks: the README, then the documentation site's pages.
PAGES = [README, *sorted(p for p in (REPO / "docs").rglob("*.md") if "_build" not in p.parts)]
MARKER = re.compile(r"^<!-- readme-test: (run|output|skip: .+) -->$")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    marker: str
    text: str
    page: str = "README.md"

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks of a Markdown text with their markers ("" when missing); MyST
    directives (```` ```{toctree} ````) are not command blocks.

    >>> [b.marker for b in readme_blocks("<!-- readme-test: run -->\\n```\\nls\\n```\\n```\\nx\\n```\\n")]
    ['run', '']
    >>> readme_blocks("```{toctree}\\nguides/inputs\\n```\\n")
    []
    """
    lines = text.split("\n")
    blocks, number = [], 0
    while number < len(lines):
        if lines[number].startswith("```"):
            end = next(i for i in range(number + 1, len(lines)) if lines[i].startswith("```"))
            above = MARKER.match(lines[number - 1]) if number else None
            if not lines[number].startswith("```{"):
                blocks.append(Block(number + 1, above.group(1) if above else "",
                                    "\n".join(lines[number + 1:end]), page))
            number = end + 1
        else:
            number += 1
    return blocks


BLOCKS = [block for page in PAGES
          for block in readme_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(REPO)))]


def test_every_block_is_marked() -> None:
    unmarked = [block.where for block in BLOCKS if not block.marker]
    assert not unmarked, f"blocks without a readme-test marker: {unmarked}"
    for before, block in zip(BLOCKS, BLOCKS[1:]):
        if block.marker == "output":
            assert before.marker == "run" and before.page == block.page, \
                f"{block.where}: output of no run block"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory, shared_data: Any) -> Path:
    """A scratch folder that looks like a checkout beside ``../shared``: commands write
    their ``out/`` there, never into the repository's."""
    root = tmp_path_factory.mktemp("readme")
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(shared_data(".").resolve())
    work = root / "relatedpages"
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in ("out", ".git"):
            (work / entry.name).symlink_to(entry)
    return work


def _run(block: Block, cwd: Path) -> str:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=guard(600))
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return done.stdout


RUNS = [(block, BLOCKS[i + 1] if i + 1 < len(BLOCKS) and BLOCKS[i + 1].marker == "output"
         and BLOCKS[i + 1].page == block.page else None)
        for i, block in enumerate(BLOCKS) if block.marker == "run"]


@pytest.mark.slow
@pytest.mark.parametrize("block, output", RUNS, ids=[f"{block.page}:{block.line}" for block, _ in RUNS])
def test_run_blocks_work_as_written(block: Block, output: Block | None, checkout: Path) -> None:
    # the commands read ../shared/data: ``checkout`` links it (missing: a skip, in CI a failure)
    printed = _run(block, checkout).split("\n")
    if output is None:
        return
    expected = output.text.split("\n")
    starts = [i for i, line in enumerate(printed) if line == expected[0]]
    assert any(printed[i:i + len(expected)] == expected for i in starts), (
        f"{output.where}: the block is not what the command prints now:\n"
        + "\n".join(printed))


# -- the tables of `relatedpages eval related` ------------------------------------------------

#: page row label → (the JSON score field, its index, the page's scale and decimals).
_ROWS = {
    "coverage": ("coverage", None, 100, 1),
    "P@15 same section": ("p_at_k_section_missing_zero", None, 100, 1),
    "P@15 same list": ("p_at_k_list_missing_zero", None, 100, 1),
    "R-score R = 1": ("rscore", 0, 1, 3),
    "R-score R = 3": ("rscore", 2, 1, 3),
    "R-score R = 5": ("rscore", 4, 1, 3),
    "R-score R = 15": ("rscore", 14, 1, 3),
    "ties (3 significant digits)": ("tied_share", None, 100, 1),
    "exact ties (the same score)": ("tied_exact_share", None, 100, 1),
}
#: The JSON rounds scores to 4 decimals: a page figure rounded from the exact value may
#: differ from one rounded from the JSON's by this much (e.g. 0.979 48 → "97.9 %", but the
#: JSON's 0.9795 → "98.0 %").
_JSON_ROUNDING = 0.00005
#: The first header cell of related.md's table of the lead's spread over the held-out lists.
_SPREAD_TITLE = "lead over the naive reference (2,000 draws of the held-out lists)"


def agrees(cell: str, value: float, scale: int, decimals: int) -> bool:
    """The page's ``cell`` is ``value`` as the report rounds it, up to the JSON's rounding.

    >>> agrees("97.9 %", 0.9795, 100, 1), agrees("98.1 %", 0.9795, 100, 1), agrees("0.597", 0.5972, 1, 3)
    (True, False, True)
    """
    written = float(cell.rstrip(" %"))
    return abs(written - scale * value) <= 0.5 * 10 ** -decimals + scale * _JSON_ROUNDING + 1e-9


def readme_table(text: str, title: str) -> tuple[list[str], dict[str, list[str]]]:
    """The columns and rows of the page table whose first header cell is ``title``."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {title} |"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip().replace("**", "") for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return header[1:], rows


def _column_name(header: str) -> str:
    """A page column header as the evaluation's method name: the header without its
    parenthesised settings, matched by prefix below."""
    return re.sub(r"\s*\(.*\)$", "", header)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_eval_related_tables_are_what_the_command_prints(seed: int, tmp_path: Path,
                                                         shared_data) -> None:
    data = shared_data(".")
    done = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "eval", "related", str(data), "--seed", str(seed),
         "--json", "--plot", str(tmp_path / "r.png"), "--plot-categories", str(tmp_path / "c.png")],
        cwd=REPO, capture_output=True, text=True, timeout=guard(900))
    assert done.returncode == 0, done.stderr[-2000:]
    scores = json.loads(done.stdout.strip().split("\n")[-1])["scores"]
    columns, rows = readme_table(RELATED_PAGE.read_text(encoding="utf-8"), f"test split, seed {seed}")
    for column, header in enumerate(columns):
        wanted = _column_name(header)
        names = [name for name in scores if name == wanted or name.startswith(wanted)]
        assert len(names) == 1, f"page column {header!r}: methods {sorted(scores)}"
        method = scores[names[0]]
        for label, (field, index, scale, decimals) in _ROWS.items():
            value = method[field] if index is None else method[field][index]
            if value is None:  # a row without scores has no ties
                assert rows[label][column] == "n/a", (seed, header, label)
                continue
            assert agrees(rows[label][column], value, scale, decimals), (
                f"seed {seed}, {header}, {label}: page {rows[label][column]}, "
                f"the command {scale * value:.{decimals + 2}f}")
    # the lead's spread over the held-out lists (the table after the two)
    spread = json.loads(done.stdout.strip().split("\n")[-1])["lead_spread"][NAIVE_STRONG]
    columns, rows = readme_table(RELATED_PAGE.read_text(encoding="utf-8"), _SPREAD_TITLE)
    for column, measure in enumerate(columns):
        figures = spread[measure]
        lead, interval = (rows[f"seed {seed}: {row}"][column].replace("\u2212", "-")
                          for row in ("lead", "95 % interval"))
        low, high = interval.split(" to ")
        for cell, key in ((lead, "lead"), (low, "low"), (high, "high")):
            assert agrees(cell, figures[key], 100, 1), (seed, measure, key, cell, figures)
        reaching = rows[f"seed {seed}: draws reaching \u2265 5 %"][column]
        assert agrees(reaching, figures["reaching"], 100, 0), (seed, measure, reaching, figures)
