"""Other spellings of one page's URL, so lookups forgive how a user typed it.

:func:`filters.urls.normalise_url` already folds case, default ports, dot segments,
fragments, empty queries and default index pages (``/index.html``).  What it must not fold —
they can be different pages on the web — are the scheme (``http``/``https``), a leading
``www.`` and a trailing slash.  For a *lookup* they almost always name the same page, so
:func:`spelling_variants` lists them in a fixed order, nearest first, and a lookup takes
the first spelling the database holds (``RelatedPagesDB.find``).  Keys are stored
normalised and unchanged at build, so build and lookup agree on what a key is.
"""
from __future__ import annotations

from urllib.parse import urlsplit


def _toggle_slash(path: str) -> str | None:
    if path in ("", "/"):
        return None  # the root has one spelling after normalisation
    return path[:-1] if path.endswith("/") else path + "/"


def _toggle_www(host: str) -> str | None:
    if host.startswith("www."):
        rest = host[4:]
        return rest if "." in rest else None
    if host.count(".") >= 1 and not host.replace(".", "").isdigit() and not host.startswith("["):
        return "www." + host
    return None


def spelling_variants(url: str) -> list[str]:
    """``url`` (normalised) and its other spellings: trailing slash, scheme, ``www.``,
    then their combinations; no duplicates, ``url`` first.

    >>> spelling_variants("http://github.com/psf/requests/")  # doctest: +NORMALIZE_WHITESPACE
    ['http://github.com/psf/requests/', 'http://github.com/psf/requests',
     'https://github.com/psf/requests/', 'https://github.com/psf/requests',
     'http://www.github.com/psf/requests/', 'http://www.github.com/psf/requests',
     'https://www.github.com/psf/requests/', 'https://www.github.com/psf/requests']
    >>> spelling_variants("https://www.python.org/")
    ['https://www.python.org/', 'http://www.python.org/', 'https://python.org/', 'http://python.org/']
    >>> spelling_variants("https://a.com/search?q=1")  # a query keeps its path as is
    ['https://a.com/search?q=1', 'http://a.com/search?q=1', 'https://www.a.com/search?q=1', 'http://www.a.com/search?q=1']
    >>> spelling_variants("ftp://x/")
    ['ftp://x/']
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return [url]
    other_scheme = "https" if parts.scheme == "http" else "http"
    host = parts.netloc
    hosts = [host] + ([alt] if (alt := _toggle_www(host)) is not None else [])
    schemes = [parts.scheme, other_scheme]
    paths = [parts.path]
    if not parts.query and (slash := _toggle_slash(parts.path)) is not None:
        paths.append(slash)
    tail = f"?{parts.query}" if parts.query else ""
    variants: list[str] = []
    for spelled_host in hosts:
        for scheme in schemes:
            for path in paths:
                candidate = f"{scheme}://{spelled_host}{path}{tail}"
                if candidate not in variants:
                    variants.append(candidate)
    return variants
