"""The library is typed: mypy finds no errors in the packages and the benchmark scripts
(CONVENTIONS.md, rule 10)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


def test_library_and_jobs_are_mypy_clean(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--python-version", "3.11",
         "--cache-dir", str(tmp_path), "segmenter", "filters", "relatedpages", "jobs",
         "docs/_ext/relatedpages_docs.py",
         *sorted(str(path.relative_to(REPO)) for path in (REPO / "scripts").glob("*.py"))],
        cwd=REPO, capture_output=True, text=True, timeout=guard(600),
    )
    assert done.returncode == 0, done.stdout + done.stderr
