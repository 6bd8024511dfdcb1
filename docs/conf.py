"""Sphinx configuration of the relatedpages documentation site (MyST Markdown pages).

Build it as the test suite does: ``python -m sphinx -W -b html docs docs/_build/html``."""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

project = "relatedpages"
author = "the relatedpages developers"
copyright = "2026, the relatedpages developers (MIT licence)"
extensions = ["myst_parser", "relatedpages_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
html_theme = "alabaster"
html_title = "relatedpages"
html_theme_options = {"description": "Related web pages by block co-citation", "page_width": "1100px"}
suppress_warnings: list[str] = []
