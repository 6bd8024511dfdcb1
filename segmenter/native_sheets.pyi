"""Types of the compiled scan's style-sheet reader (``native_sheets.pyx``)."""
from typing import Callable

from segmenter.style import Declarations, SimpleSelector

def _sheet_rules(css: str) -> tuple[tuple[SimpleSelector, Declarations], ...]: ...

sheet_rules: Callable[[str], tuple[tuple[SimpleSelector, Declarations], ...]]
