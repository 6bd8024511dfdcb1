"""Anchor words: ``words(A)`` of the anchor similarity (paper, Eq. 6).

The paper: "For English anchor texts, all words are first normalized with the Porter
Stemming algorithm; the words set contains all distinct words after normalization.  For
Chinese anchor texts, the words set contains all Chinese words in the anchor output by a
Chinese word segment algorithm [...].  All stop words [...] in each language are removed
before computing."

How :meth:`AnchorWords.words` reads an anchor:

1. Unicode NFKC (full-width ``Ｐｙｔｈｏｎ`` → ``Python``, common on Chinese pages), lower
   case, typographic apostrophes read as ``'``, repeated until nothing changes
   (:func:`normalise_text`: lower-casing can produce text that NFKC changes again).
2. Tokens: maximal runs of Han characters, and runs of other letters and digits (joined by
   inner apostrophes: ``don't``); everything else (spaces, punctuation, ``_``, symbols)
   separates tokens, so ``awesome-python`` is two tokens.
3. Han runs are cut into words with jieba (standing in for the paper's ICTCLAS; accurate
   mode with HMM, deterministic); Chinese stop words (``data/stopwords-zh.txt``) removed.
4. Other tokens: a possessive ``'s`` and other apostrophes dropped, then Latin-script tokens
   are stemmed with Porter's *original* 1980 algorithm (nltk's
   ``PorterStemmer.ORIGINAL_ALGORITHM``: e.g. ``possibly`` → ``possibli``, where the later
   revised C version gives ``possibl``).  Other scripts (Cyrillic, kana, Hangul, …) are kept
   as lower-case tokens.
5. Stop words — the shipped English list (``data/stopwords-en.txt``) and the optional extra
   ones (e.g. :func:`corpus_stop_words`, the corpus's highest document-frequency anchor
   words) — are removed when the surface token (``don't``), the token without its
   apostrophes (``d'o`` → ``do``) or the final word is among them: every filter sees the
   final form, so no stop word ever reaches the anchor term of Eq. 6.

An anchor made only of stop words has no words (``frozenset()``); that is not an *empty
anchor* in the link-filter sense (see ``filters/links.py``), which concerns anchor text.

Heavy resources are built lazily, once per process: the stemmer (nltk's Porter module
alone, :mod:`filters.porter`) and the stop lists on the first anchor, jieba only when an
anchor with Han characters occurs.  jieba's dictionary cache is written only in the
``cache_dir`` given to :class:`AnchorWords` (default: a per-user folder under
:func:`tempfile.gettempdir`); nothing is downloaded.
"""
from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from importlib import resources
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover - typing only; jieba is imported lazily
    import jieba

logger = logging.getLogger(__name__)

#: Anchors whose words are remembered per :class:`AnchorWords` (template links repeat the
#: same anchors on every page of a site, so most lookups hit).
WORDS_CACHE_SIZE_DEFAULT = 1 << 16
#: Stems remembered per process (Porter is the costly part of an uncached anchor).
_STEM_CACHE_SIZE = 1 << 16

STOP_WORDS_EN_RESOURCE = "stopwords-en.txt"
STOP_WORDS_ZH_RESOURCE = "stopwords-zh.txt"
#: jieba's dictionary cache file name inside the cache folder.
JIEBA_CACHE_FILE = "jieba.cache"

# CJK Unified Ideographs: Extension A, the basic block, compatibility ideographs, and the
# supplementary-plane extensions B-H.
_HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HAN = re.compile(f"[{_HAN_CHARS}]")
# A Han run, or a run of other letters/digits with inner apostrophes ("don't", "o'reilly").
_WORD_CHARS = rf"[^\W_{_HAN_CHARS}]"
_TOKEN = re.compile(rf"(?P<han>[{_HAN_CHARS}]+)|{_WORD_CHARS}+(?:'{_WORD_CHARS}+)*")
# Latin script after lower-casing: ASCII, Latin-1, Latin Extended-A/B and Additional.
_LATIN_TOKEN = re.compile(r"[0-9a-z\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f\u1e00-\u1eff]+")
#: Rounds of NFKC + lower case before giving up on a fixed point (real text needs two).
_NORMALISE_MAX_ROUNDS = 8
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u00b4": "'"})


class AnchorWords:
    """``words(anchor)``: the set of normalised, stop-word-free words of an anchor text.

    Build one per process (in a mapper's ``*_init``) and reuse it: results are cached per
    anchor string (bounded LRU, ``cache_size`` anchors).

    >>> analyser = AnchorWords()
    >>> sorted(analyser.words("The Hitchhiker's Guide to Python Programming"))
    ['guid', 'hitchhik', 'program', 'python']
    >>> analyser.words("Click here") == frozenset({"click"})
    True
    >>> analyser.words("about us")
    frozenset()
    """

    def __init__(
        self,
        cache_dir: str | os.PathLike[str] | None = None,
        extra_stop_words: Iterable[str] = (),
        *,
        cache_size: int = WORDS_CACHE_SIZE_DEFAULT,
    ) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be a non-negative int, got {cache_size!r}")
        if isinstance(extra_stop_words, str):
            raise ValueError("extra_stop_words must be an iterable of words, not one str")
        self.cache_dir: str = os.fspath(cache_dir) if cache_dir is not None else _default_cache_dir()
        self.extra_stop_words: frozenset[str] = frozenset(
            normalise_text(word) for word in extra_stop_words
        )
        # An instance-level cache (not one lru_cache on the method shared by all instances):
        # instances with different stop words must not share results.
        self._cached_words: Callable[[str], frozenset[str]] = functools.lru_cache(
            maxsize=cache_size
        )(self._compute_words)

    def __repr__(self) -> str:
        return (
            f"AnchorWords(cache_dir={self.cache_dir!r}, "
            f"extra_stop_words=<{len(self.extra_stop_words)} words>)"
        )

    def words(self, anchor: str) -> frozenset[str]:
        """The word set of ``anchor`` (see the module docstring); never raises for a str.

        >>> sorted(AnchorWords().words("Ｐｙｔｈｏｎ web-frameworks, don't miss it!"))
        ['framework', 'miss', 'python', 'web']
        """
        return self._cached_words(anchor)

    def _compute_words(self, anchor: str) -> frozenset[str]:
        text = normalise_text(anchor)
        stop_en, stop_zh = _stop_words()
        stop = stop_en | self.extra_stop_words
        result: set[str] = set()
        for match in _TOKEN.finditer(text):
            token = match.group(0)
            if match.group("han") is not None:
                for word in _jieba_tokenizer(self.cache_dir).cut(token):
                    # jieba returns substrings of a normalised Han run: already final.
                    if word not in stop_zh and word not in stop:
                        result.add(word)
                continue
            if token in stop:  # the surface form: "don't"
                continue
            bare = token[:-2] if token.endswith("'s") else token
            bare = bare.replace("'", "")
            if not bare or bare in stop:  # "d'o" -> "do"
                continue
            word = porter_stem(bare) if _LATIN_TOKEN.fullmatch(bare) else bare
            if word and word not in stop and word not in stop_zh:  # the final form
                result.add(word)
        return frozenset(result)


def normalise_text(text: str) -> str:
    """NFKC, lower case and ``'`` for typographic apostrophes, to a fixed point.

    One pass is not enough: lower-casing can produce text that NFKC changes again, so a
    single pass would leave forms that no stop list was normalised to.

    >>> normalise_text("Ｄ\u2019Ｏ")
    "d'o"
    >>> all(normalise_text(normalise_text(s)) == normalise_text(s) for s in ("İS", "ǅ", "ﬁ"))
    True
    """
    for _ in range(_NORMALISE_MAX_ROUNDS):
        normalised = unicodedata.normalize("NFKC", text).lower().translate(_APOSTROPHES)
        if normalised == text:
            return text
        text = normalised
    return text


def has_han(text: str) -> bool:
    """Whether ``text`` contains a Han character (the condition for loading jieba).

    >>> has_han("Python 教程"), has_han("Python tutorial")
    (True, False)
    """
    return _HAN.search(text) is not None


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def porter_stem(token: str) -> str:
    """Porter's original (1980) stem of a lower-case token.

    >>> [porter_stem(w) for w in ("caresses", "ponies", "relational", "generalization")]
    ['caress', 'poni', 'relat', 'gener']
    """
    return _stemmer().stem(token, to_lowercase=False)


def corpus_stop_words(
    anchors: Iterable[str], top: int, *, words: AnchorWords | None = None
) -> frozenset[str]:
    """The ``top`` anchor words of highest document frequency (each anchor is a document).

    The paper removes "stop words with highest IDF in each language"; this gives the
    corpus-specific part of that list, to be passed back as ``extra_stop_words``.  Ties
    are broken by the word (ascending), so the result is deterministic.  ``words``
    defaults to a plain :class:`AnchorWords`.

    >>> sorted(corpus_stop_words(["Home", "Home page", "Python home", "Python docs"], 2))
    ['home', 'python']
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ValueError(f"top must be a non-negative int, got {top!r}")
    analyser = words if words is not None else AnchorWords()
    frequency: Counter[str] = Counter()
    for anchor in anchors:
        frequency.update(analyser.words(anchor))
    ranked = sorted(frequency.items(), key=lambda item: (-item[1], item[0]))
    return frozenset(word for word, _ in ranked[:top])


# ---------------------------------------------------------------------------------------
# Per-process resources (built on first use, never at import)


def _default_cache_dir() -> str:
    # Per user, so that one user's task never loads a cache another user could write.
    suffix = f"-{os.getuid()}" if hasattr(os, "getuid") else ""
    return os.path.join(tempfile.gettempdir(), f"relatedpages-jieba{suffix}")


class _Stemmer(Protocol):
    def stem(self, word: str, to_lowercase: bool = True) -> str: ...


@functools.cache
def _stemmer() -> _Stemmer:
    # nltk's own Porter module without the rest of nltk (filters/porter.py: 0.1 s and 15 MB
    # a process instead of 2 s and 119 MB, on every task that reads anchors).
    from filters.porter import porter_stemmer_class

    PorterStemmer = porter_stemmer_class()
    stemmer: _Stemmer
    # The original algorithm as published (Porter 1980), which the paper cites; nltk's
    # default mode adds its own extensions and its MARTIN mode Porter's later departures.
    stemmer = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)
    return stemmer


def _read_words(resource: str) -> frozenset[str]:
    text = resources.files("filters").joinpath("data", resource).read_text(encoding="utf-8")
    return frozenset(
        normalise_text(line.strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )


@functools.cache
def _stop_words() -> tuple[frozenset[str], frozenset[str]]:
    """The shipped English and Chinese stop lists (package data ``filters/data``)."""
    return _read_words(STOP_WORDS_EN_RESOURCE), _read_words(STOP_WORDS_ZH_RESOURCE)


def stop_words_en() -> frozenset[str]:
    """The shipped English stop list."""
    return _stop_words()[0]


def stop_words_zh() -> frozenset[str]:
    """The shipped Chinese stop list."""
    return _stop_words()[1]


#: jieba tokenizers kept per process (each holds its whole dictionary, ~100 MB).  Bounded:
#: a process that runs many jobs (mrjob's inline runner, a test run) gives every task a
#: folder of its own, and an unbounded cache keyed by folder grew until the kernel killed it.
_JIEBA_TOKENIZERS = 2


@functools.lru_cache(maxsize=_JIEBA_TOKENIZERS)
def _jieba_tokenizer(cache_dir: str) -> _JiebaCutter:
    """jieba with its bundled dictionary, its cache file in ``cache_dir``; once per process
    and folder (the last :data:`_JIEBA_TOKENIZERS` folders)."""
    import jieba as jieba_module

    # jieba logs its set-up at DEBUG to its own stderr handler; keep task logs quiet.
    jieba_module.setLogLevel(logging.WARNING)
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
    except OSError as error:  # jieba still works, it only cannot write its cache
        logger.warning("cannot create the jieba cache folder %s: %s", cache_dir, error)
    tokenizer = jieba_module.Tokenizer()
    tokenizer.tmp_dir = cache_dir
    tokenizer.cache_file = JIEBA_CACHE_FILE  # relative: joined to tmp_dir by jieba
    tokenizer.initialize()
    logger.debug("jieba dictionary ready (cache folder %s)", cache_dir)
    return _JiebaCutter(tokenizer)


class _JiebaCutter:
    """The one jieba call we make: accurate mode with HMM for unknown words."""

    def __init__(self, tokenizer: jieba.Tokenizer) -> None:
        self._tokenizer = tokenizer

    def cut(self, han_run: str) -> list[str]:
        return [word for word in self._tokenizer.cut(han_run, HMM=True) if word.strip()]
