"""relatedpages demo: the README's first command never destroys what it did not make."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "relatedpages.cli", "demo", "--pages", "300",
                           "--runner", "inline", "--queries", "1", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=guard(600))


def test_a_folder_the_demo_did_not_make_is_refused_and_kept(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("months of work")
    refused = demo("--out", str(mine))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f"relatedpages: error: --out {mine} is not empty and was not made by relatedpages "
        "demo: choose another folder, or add --force (nothing in it is deleted)")
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]
    forced = demo("--out", str(mine), "--force")
    assert forced.returncode == 0, forced.stderr
    assert (mine / "thesis.tex").read_text() == "months of work"
    assert (mine / "db" / "manifest.json").is_file() and (mine / ".relatedpages-demo").is_file()


def test_the_demo_runs_again_in_its_own_folder_and_refuses_a_file(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert demo("--out", str(out)).returncode == 0
    again = demo("--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "The registration link" in again.stdout
    afile = tmp_path / "afile"
    afile.write_text("x")
    refused = demo("--out", str(afile))
    assert refused.returncode == 2 and "is a file, not a folder" in refused.stderr
    assert afile.read_text() == "x"
