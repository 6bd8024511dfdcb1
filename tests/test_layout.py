"""The house (issue 13, item 7): ``relatedpages/`` is grouped by kind, and no import runs
from a lower group back up; the CLI reports an unexpected error in one line."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from relatedpages import cli

PACKAGE = Path(__file__).resolve().parent.parent / "relatedpages"

#: Lower groups first: a module may import its own group and the groups before it.
#: ``bench`` (what the runs cost) reads only ``corpus``, ``scoring`` and ``store``; it sits
#: beside ``evaluation`` (how well it works), just before it, and neither imports the other.
LAYERS = ("corpus", "scoring", "store", "baselines", "bench", "evaluation", "serve", "study",
          "commands")
#: Groups side by side in LAYERS: the later one does not import the earlier either.
BESIDE = {"evaluation": frozenset({"bench"})}


def _imported_groups(path: Path) -> set[str]:
    groups = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                 else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            parts = name.split(".")
            if parts[0] == "relatedpages" and len(parts) > 1:
                groups.add(parts[1])
    return groups


def test_every_module_lives_in_a_group() -> None:
    flat = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "cli.py"))
    assert flat == []
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == \
        sorted(LAYERS)


@pytest.mark.parametrize("group", LAYERS)
def test_no_import_runs_back_up(group: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(group) + 1]) - BESIDE.get(group, frozenset())
    for path in sorted((PACKAGE / group).glob("*.py")):
        upward = _imported_groups(path) - allowed
        assert not upward, f"{path.relative_to(PACKAGE)} imports {sorted(upward)} from a higher group"
        assert '"""' in path.read_text(encoding="utf-8").split("\n", 1)[0], \
            f"{path.name}: starts with a docstring naming its one job"


def test_an_unexpected_error_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from relatedpages.commands import generate

    def broken(args: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(generate, "run", broken)
    assert cli.main(["generate", "--pages", "5", "-o", "x.warc.gz"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "relatedpages: internal error: RuntimeError: disk on fire (run again with --debug for "
        "the traceback, and please report it)"]
    with pytest.raises(RuntimeError, match="disk on fire"):  # --debug, anywhere on the line
        cli.main(["generate", "--pages", "5", "-o", "x.warc.gz", "--debug"])


# -- the tests' own house (issue 47): one door to the shared data, timeouts that scale --------

TESTS = Path(__file__).resolve().parent
#: May name the shared data's location: the door itself, a script that pins digests when run
#: alone (under pytest it is always handed the folder the fixture gave), and this file's examples.
SHARED_DATA_DOORS = frozenset({"conftest.py", "segment_digests.py", "test_layout.py"})


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def shared_data_side_doors(source: str) -> list[str]:
    """Where a test module reaches ``../shared/data`` other than by the ``shared_data`` fixture."""
    tree = ast.parse(source)
    docstrings, found = _docstrings(tree), []
    for node in ast.walk(tree):
        name = (node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else None)
        if name in ("shared_data_dir", "ENV_VAR"):
            found.append(f"line {node.lineno}: {name}")
        if isinstance(node, ast.ImportFrom) and node.module == "relatedpages.corpus.shared_data":
            found.append(f"line {node.lineno}: imports relatedpages.corpus.shared_data")
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and any(text in node.value for text in ("RELATEDPAGES_SHARED_DATA", "shared/data"))):
            found.append(f"line {node.lineno}: {node.value[:60]!r}")
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
                and ast.unparse(node.left).endswith(".parent")
                and isinstance(node.right, ast.Constant) and node.right.value == "shared"):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def fixed_timeouts(source: str) -> list[str]:
    """Timeouts written as a bare number instead of ``guard(seconds)`` (tests/prerequisites.py)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.keyword) and node.arg == "timeout"
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, (int, float))):
            found.append(f"line {node.value.lineno}: timeout={node.value.value}")
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
                and isinstance(node.left, ast.Call) and "monotonic" in ast.unparse(node.left.func)
                and isinstance(node.right, ast.Constant)):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda line: int(line.split(":")[0].split()[1]))


def test_the_checks_see_what_they_look_for() -> None:
    side_doors = shared_data_side_doors(
        '"""Reads ../shared/data."""\nfrom relatedpages.corpus.shared_data import shared_data_dir\n'
        'PAGES = REPO.parent / "shared" / "data"\nos.environ.get("RELATEDPAGES_SHARED_DATA")\n'
        'run(["eval", "../shared/data"])\nscratch = root / "shared"\n')
    assert [line.split(":")[0] for line in side_doors] == [
        "line 2", "line 3", "line 4", "line 5"], side_doors
    assert fixed_timeouts("run(x, timeout=120)\nd = time.monotonic() + 30\n"
                          "run(x, timeout=guard(120))\nd = time.monotonic() + guard(30)\n") == [
        "line 1: timeout=120", "line 2: time.monotonic() + 30"]


@pytest.mark.parametrize("path", sorted(TESTS.glob("*.py")), ids=lambda path: path.name)
def test_tests_read_shared_data_only_through_the_fixture(path: Path) -> None:
    if path.name in SHARED_DATA_DOORS:
        return
    found = shared_data_side_doors(path.read_text(encoding="utf-8"))
    assert not found, (f"{path.name} reaches ../shared/data around the shared_data fixture "
                       f"(tests/conftest.py): {found}")


@pytest.mark.parametrize("path", sorted(TESTS.glob("*.py")), ids=lambda path: path.name)
def test_timeouts_in_tests_scale(path: Path) -> None:
    found = fixed_timeouts(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: write timeout=guard(seconds) (tests/prerequisites.py): {found}"
