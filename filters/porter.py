"""nltk's Porter stemmer, loaded without importing the rest of nltk.

``from nltk.stem.porter import PorterStemmer`` first runs ``nltk/__init__.py`` and
``nltk/stem/__init__.py``, which import the whole toolkit: its parsers, classifiers, every
other stemmer, numpy, and scipy when it is installed.  That is a fixed cost on every task
process that reads anchors (Mapper1, a task per input split; the hot-key count): 0.6 s of
CPU and 53 MB a process without scipy (the product's own packages), 1.9 s and 119 MB with
the test extras (scipy) installed, as in this repository's virtual environment.  The
stemmer itself is one module, ``nltk/stem/porter.py``, which imports three small ones
(``nltk.redos``, ``nltk.termsec``, ``nltk.stem.api``).

:func:`porter_stemmer_class` loads just those four files, nltk's own (the pinned release;
nothing is copied or changed), and returns the same class with the same code: while they
load, ``nltk`` and ``nltk.stem`` are stood in for by empty package modules with nltk's own
search path, so that the files' absolute imports (``from nltk import redos``) find their
siblings without running the packages' ``__init__``.  The stand-ins and the modules
loaded through them are taken out of ``sys.modules`` again before it returns, so a later
``import nltk`` anywhere in the process gets the real, complete package.  When nltk is
already imported, or the lean load fails for any reason (another nltk release), the class
comes from the ordinary import.

The load holds a lock, so two threads asking at once get one load; a thread that imports
nltk by itself during those few milliseconds could still see a stand-in, so build the
stemmer before starting threads that do (:func:`filters.anchors._stemmer` builds it once
per process, at its first anchor).
"""
from __future__ import annotations

import importlib
import importlib.machinery
import logging
import os
import sys
import threading
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from nltk.stem.porter import PorterStemmer

logger = logging.getLogger(__name__)

#: The packages whose ``__init__`` the lean load skips.
_PACKAGES = ("nltk", "nltk.stem")
#: The module that defines the stemmer.
PORTER_MODULE = "nltk.stem.porter"
_LOAD_LOCK = threading.Lock()


def porter_stemmer_class() -> type[PorterStemmer]:
    """nltk's ``PorterStemmer`` class (see the module docstring for how it is loaded).

    >>> Porter = porter_stemmer_class()
    >>> Porter(mode=Porter.ORIGINAL_ALGORITHM).stem("generalization", to_lowercase=False)
    'gener'
    """
    with _LOAD_LOCK:
        if "nltk" not in sys.modules:
            try:
                return _load_lean()
            except Exception as error:  # noqa: BLE001 - any failure: the ordinary import
                logger.debug("nltk's Porter module alone did not load (%s): importing nltk",
                             error)
    from nltk.stem.porter import PorterStemmer as Imported

    return Imported  # type: ignore[no-any-return]


def _load_lean() -> type[PorterStemmer]:
    """Load ``nltk.stem.porter`` under stand-ins for its packages, then take every nltk
    module it loaded out of ``sys.modules`` again (other modules it imported stay)."""
    spec = importlib.machinery.PathFinder.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("nltk is not installed")
    package_path = list(spec.submodule_search_locations)
    before = {name for name in sys.modules if _is_nltk(name)}
    try:
        for name, path in zip(_PACKAGES, (package_path, [os.path.join(package_path[0], "stem")])):
            stand_in = types.ModuleType(name)
            stand_in.__path__ = path
            stand_in.__package__ = name
            sys.modules[name] = stand_in
        module = importlib.import_module(PORTER_MODULE)
        return module.PorterStemmer  # type: ignore[no-any-return]
    finally:
        for name in [name for name in sys.modules if _is_nltk(name) and name not in before]:
            del sys.modules[name]


def _is_nltk(name: str) -> bool:
    return name == "nltk" or name.startswith("nltk.")
