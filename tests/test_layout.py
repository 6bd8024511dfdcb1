"""The house (issue 13, item 7; issue 46, item 4): ``relatedpages/`` is grouped by kind, no
import runs from a lower group back up, no module imports itself through others, no module
is longer than :data:`MAX_LINES`, each names its one job; the CLI reports an unexpected
error in one line."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
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


# -- the shape of every module (issue 46, item 4) ----------------------------------------

REPO = PACKAGE.parent
#: The project's code: its modules, their imports and their lengths are checked.
SOURCE_DIRS = ("relatedpages", "jobs", "segmenter", "filters")
#: The longest a module may be: longer, it does more than one job.
MAX_LINES = 600
#: Modules allowed past MAX_LINES, each with the reason (also in its docstring and in
#: docs/design.md).  None: the compiled scan is six cimported modules, no speed lost.
LONG_MODULES: Mapping[str, str] = {}
_SOURCE_SUFFIXES = (".py", ".pyx", ".pxd", ".pyi")
# A .pyx's (c)imports: ``from X (c)import a, b`` (names in parentheses may span lines) and
# ``(c)import X, Y as Z``.
_PYX_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_PYX_IMPORT = re.compile(r"^[ \t]*c?import[ \t]+([^\n#]*)", re.M)


def source_files(root: Path = REPO, dirs: Iterable[str] = SOURCE_DIRS) -> list[Path]:
    """The modules of ``dirs`` under ``root``: Python, Cython (.pyx, .pxd) and stubs."""
    return sorted(path for folder in dirs for path in (root / folder).rglob("*")
                  if path.suffix in _SOURCE_SUFFIXES and "__pycache__" not in path.parts)


def module_name(path: Path, root: Path = REPO) -> str:
    """``segmenter/scan.py`` → ``segmenter.scan``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = REPO) -> list[tuple[str, list[str]]]:
    """Every import of a module, wherever it is (module level, inside a function, under
    ``TYPE_CHECKING``): ``(module, names)`` per ``from module import names`` (``names``
    empty for ``import module``), relative imports resolved.  A .pyx (or .pxd) is read line
    by line: its ``cimport`` lines too."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".pyx", ".pxd"):
        found: list[tuple[str, list[str]]] = []
        for match in _PYX_FROM.finditer(text):
            names = match.group(2).split("#")[0] if "(" not in match.group(2) else \
                re.sub(r"#[^\n]*", "", match.group(2))
            found.append((match.group(1), [name.split()[0] for name in names.strip("() \t").split(",")
                                           if name.strip()]))
        for match in _PYX_IMPORT.finditer(text):
            found += [(name.split()[0], []) for name in match.group(1).split(",") if name.strip()]
        return found
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.append((base, [alias.name for alias in node.names]))
    return found


def import_graph(root: Path = REPO, dirs: Iterable[str] = SOURCE_DIRS) -> dict[str, set[str]]:
    """Module → the project's modules it imports.  ``from package import module`` is an
    edge to the module, ``from module import name`` to the module; a package a module is in
    is not an edge of its own (Python imports it first, whoever imports the module)."""
    paths = source_files(root, dirs)
    modules = {module_name(path, root) for path in paths}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for path in paths:
        name = module_name(path, root)
        for module, names in imported_modules(path, root):
            targets = [f"{module}.{item}" for item in names if f"{module}.{item}" in modules]
            if len(targets) < len(names) or not names:
                targets.append(module)
            for target in targets:
                while target and target not in modules:  # import a.b.c: the project's a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def import_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle through each group of modules that import each other (a strongly
    connected component), named from its first module: ``[a, b, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for component in components:
        start = min(component)
        paths = {start: [start]}
        queue = [start]
        while queue:  # breadth first: the shortest way round
            node = queue.pop(0)
            for target in sorted(graph[node]):
                if target == start:
                    queue = []
                    cycles.append(paths[node] + [start])
                    break
                if target in component and target not in paths:
                    paths[target] = paths[node] + [target]
                    queue.append(target)
    return sorted(cycles)


def test_no_module_imports_itself_through_others() -> None:
    cycles = import_cycles(import_graph())
    assert not cycles, "import circles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def _length(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_longer_than_max_lines() -> None:
    long = {str(path.relative_to(REPO)): _length(path) for path in source_files()
            if _length(path) > MAX_LINES}
    assert long.keys() == LONG_MODULES.keys(), (
        f"over {MAX_LINES} lines (split by job): "
        + ", ".join(f"{name} {lines}" for name, lines in sorted(long.items()) if name not in LONG_MODULES)
        + "".join(f"; {name} is back under, drop its exception" for name in LONG_MODULES if name not in long))


@pytest.mark.parametrize("path", [path for path in source_files() if path.suffix in (".py", ".pyx")],
                         ids=lambda path: str(path.relative_to(REPO)))
def test_every_module_starts_with_a_docstring_naming_its_job(path: Path) -> None:
    """(A .pxd declares what its .pyx shares, and a .pyi types it: the .pyx names the job.)"""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if not line.startswith("# cython:")]  # Cython's directives come first
    assert not lines or lines[0].startswith('"""'), \
        f"{path.relative_to(REPO)}: starts with a docstring naming its one job"


def test_the_import_graph_sees_every_import(tmp_path: Path) -> None:
    """Lazy imports, imports under TYPE_CHECKING, relative imports and a .pyx's cimports
    are edges, and a circle is named."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from . import c\ng = 1\n")
    (package / "c.pyx").write_text("# cython: language_level=3\ncimport pkg.d as d\n"
                                   "from pkg.e import (\n    x,  # x\n    y,\n)\n")
    (package / "d.pxd").write_text("")
    (package / "e.py").write_text("import pkg.a\nx = y = 0\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"},
                     "pkg.c": {"pkg.d", "pkg.e"}, "pkg.d": set(), "pkg.e": {"pkg.a"}}
    assert import_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.e", "pkg.a"]]


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
