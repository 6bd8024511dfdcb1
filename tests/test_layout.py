"""The house (issue 13, item 7): ``relatedpages/`` is grouped by kind, and no import runs
from a lower group back up; the CLI reports an unexpected error in one line."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from relatedpages import cli

PACKAGE = Path(__file__).resolve().parent.parent / "relatedpages"

#: Lower groups first: a module may import its own group and the groups before it.
LAYERS = ("corpus", "scoring", "store", "baselines", "evaluation", "serve", "study", "commands")


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
    allowed = set(LAYERS[: LAYERS.index(group) + 1])
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
