"""The documentation site builds with warnings as errors (issue 46, item 2), and its generated
pages hold every command and every API path."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from relatedpages import cli
from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))

import relatedpages_docs  # noqa: E402  (docs/_ext is not a package)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(REPO / "docs"), str(out)],
                          capture_output=True, text=True, timeout=guard(300))
    assert done.returncode == 0, f"sphinx -W failed:\n{done.stderr[-4000:]}"
    return out


def test_the_site_builds_without_a_warning(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "guides" / "hadoop.html").is_file()


def test_the_cli_reference_holds_every_command(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    commands = relatedpages_docs._commands(cli._parser(), "relatedpages")
    assert len(commands) > 15
    for name, parser in commands:
        assert f">{name}<" in page, f"{name} missing from the CLI reference"
        first = parser.format_usage().split()[1]
        assert first in page


def test_the_http_reference_holds_every_path(site: Path) -> None:
    from relatedpages.serve.app import openapi_document

    page = (site / "reference" / "http-api.html").read_text(encoding="utf-8")
    for path, methods in openapi_document(["block"])["paths"].items():
        for method in methods:
            assert f"{method.upper()} {path}" in page


def test_help_is_plain_words() -> None:
    """``--help`` is read in a terminal: no reStructuredText markup in it."""
    for name, parser in relatedpages_docs._commands(cli._parser(), "relatedpages"):
        text = parser.format_help()
        assert "``" not in text and ":func:" not in text and ":mod:" not in text, name
