"""``/api/related`` answered as bytes: a GET from its query string (with the ETag of the
database generation that answers, and 304 for a client that holds it), a batch from its
parsed body; every error the JSON object ``{"error": …, "status": …}``.  The Flask app and
the server's compiled-core front (:mod:`relatedpages.serve.rsgi`) both answer through
:class:`Lookups`, so their bytes are the same; each lookup is counted
(:mod:`relatedpages.serve.metrics`)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

import werkzeug.urls  # noqa: F401  (registers the "werkzeug.url_quote" codec error handler)

from filters.urls import normalise_url
from relatedpages.serve.answers import answer_bytes, encode_json
from relatedpages.serve.metrics import UNKNOWN_ALGORITHM, ErrorKind, Metrics
from relatedpages.serve.sources import Sources
from relatedpages.store.db import DatabaseError

#: Results per lookup at most (a database holds M = 15 per page by default).
MAX_N = 100
#: URLs per batch at most.
MAX_BATCH = 1000
#: The longest URL a lookup takes (longer: 414).
MAX_URL_CHARS = 4096
#: The API returns data only: nothing in it may load or run anything in a browser.
API_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: A lookup answer may be kept, but only used once its ETag is confirmed (If-None-Match):
#: a rebuilt database answers differently at the same URL.  Everything else: never kept.
ANSWER_CACHE_CONTROL = "no-cache"
API_CACHE_CONTROL = "no-store"
_JSON = ("Content-Type", "application/json")
_SECURITY = tuple(API_SECURITY_HEADERS.items())


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Reply:
    """A response: status, headers (security headers included), body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass
class Methods:
    """The link index's page-level methods (``--links``): the graph and their parameters."""

    graph: Any
    params: dict[str, Any]
    path: str


def error_reply(status: int, message: str) -> Reply:
    """An error as the API sends it (what Flask's ``jsonify`` makes of the object)."""
    return Reply(status, (_JSON, ("Cache-Control", API_CACHE_CONTROL), *_SECURITY),
                 encode_json({"error": message, "status": status}).encode("utf-8") + b"\n")


def query_args(query_string: str) -> dict[str, str]:
    """What Flask's ``request.args`` holds: the first value of each name, ``+`` a space,
    escapes that are not UTF-8 kept as they are.

    >>> query_args("url=https%3A%2F%2Fa.example%2F%C3%A9&n=1&n=2&bad=%FF+x")
    {'url': 'https://a.example/é', 'n': '1', 'bad': '%FF x'}
    """
    if "&" not in query_string and query_string.startswith("url="):  # the usual lookup: parse_qsl's steps
        return {"url": unquote(query_string[4:].replace("+", " "), "utf-8", "werkzeug.url_quote")}
    args: dict[str, str] = {}
    for name, value in parse_qsl(query_string, keep_blank_values=True, errors="werkzeug.url_quote"):
        args.setdefault(name, value)
    return args


def tag_matches(if_none_match: str, tag: str) -> bool:
    """Whether an If-None-Match header names ``tag`` (weakly compared, RFC 9110 13.1.2).

    >>> tag_matches('W/"block-1", "block-2"', '"block-1"'), tag_matches('"other"', '"block-1"')
    (True, False)
    >>> tag_matches("*", '"block-1"')
    True
    """
    if if_none_match.strip() == "*":
        return True
    return any(candidate.strip().removeprefix("W/") == tag for candidate in if_none_match.split(","))


class Lookups:
    """The lookups of one worker: its databases (``sources``), the ``--links`` methods
    (``methods``) and its counters (``metrics``)."""

    def __init__(self, sources: Sources, methods: Methods | None, metrics: Metrics):
        self.sources, self.methods, self.metrics = sources, methods, metrics
        self.link_names = list(methods.params) if methods is not None else []
        self.default_algorithm = (sources.names() or self.link_names or [""])[0]

    def names(self) -> list[str]:
        """The algorithms this server answers with, the databases first."""
        return self.sources.names() + self.link_names

    def algorithm_of(self, value: Any) -> str:
        name = self.default_algorithm if value in (None, "") else value
        if not isinstance(name, str) or (name not in self.sources.sources and name not in self.link_names):
            raise ApiError(404, f"unknown algorithm {name!r}; this server answers with "
                                f"{', '.join(self.names())}")
        return name

    @staticmethod
    def limit_of(value: Any) -> int | None:
        if value in (None, ""):
            return None
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ApiError(400, f"n must be a whole number, got {value!r}") from None
        if not 1 <= n <= MAX_N:
            raise ApiError(400, f"n must be between 1 and {MAX_N}, got {n}")
        return n

    def get(self, query_string: str, if_none_match: str | None = None) -> Reply:
        """``GET /api/related?<query_string>``: the answer with its generation's ETag, a 304
        when ``if_none_match`` names it, or the error; counted and timed."""
        started = time.perf_counter()
        algorithm = UNKNOWN_ALGORITHM
        try:
            args = query_args(query_string)
            algorithm = self.algorithm_of(args.get("algorithm"))
            reply = self._answer_reply(args.get("url"), algorithm, self.limit_of(args.get("n")), if_none_match)
        except ApiError as error:
            reply = error_reply(error.status, str(error))
        self.metrics.lookup(algorithm, reply.status, time.perf_counter() - started)
        return reply

    def _answer_reply(self, url: Any, algorithm: str, limit: int | None, if_none_match: str | None) -> Reply:
        body, tag = self.answer(url, algorithm, limit, if_none_match)
        if tag is None:
            return Reply(200, (_JSON, ("Cache-Control", API_CACHE_CONTROL), *_SECURITY), body + b"\n")
        headers = (("ETag", tag), ("Cache-Control", ANSWER_CACHE_CONTROL), *_SECURITY)
        if not body:
            return Reply(304, headers, b"")
        return Reply(200, (_JSON, *headers), body + b"\n")

    def answer(self, url: Any, algorithm: str, limit: int | None,
               if_none_match: str | None = None) -> tuple[bytes, str | None]:
        """(the answer's JSON bytes, the ETag of the database generation that answered;
        None for a --links method); the bytes are empty when ``if_none_match`` names that
        ETag (the answer is unchanged).  Raises :class:`ApiError`."""
        if not isinstance(url, str) or not url.strip():
            raise ApiError(400, "url is required")
        if len(url) > MAX_URL_CHARS:
            raise ApiError(414, f"URL of {len(url)} characters; at most {MAX_URL_CHARS}")
        database = None
        try:
            if algorithm in self.sources.sources:
                database = self.sources.database(algorithm)
                if database is None:
                    raise ApiError(503, f"{algorithm}: no database to answer from "
                                        f"({self.sources.sources[algorithm].problem})")
                normalised = normalise_url(url)
                if normalised is None:
                    raise ValueError(url)
                if if_none_match is not None and tag_matches(if_none_match, database.tag):
                    return b"", database.tag
                return answer_bytes(database, url, normalised, limit), database.tag
            from relatedpages.baselines.methods import links_answer

            assert self.methods is not None
            return encode_json(links_answer(self.methods.graph, url, algorithm, self.methods.params[algorithm],
                                            limit)).encode("utf-8"), None
        except ValueError:
            raise ApiError(400, f"malformed URL: {url!r}") from None
        except DatabaseError as error:
            self.metrics.error(ErrorKind.DATABASE_CORRUPT)
            if database is not None:
                self.sources.report(database)
            raise ApiError(503, str(error)) from None

    def batch(self, body: Any) -> bytes:
        """``POST /api/related`` with the parsed JSON ``body``: one answer (or error
        object) per URL, in order, as the response's bytes.  Raises :class:`ApiError` for
        the batch as a whole."""
        try:
            if not isinstance(body, dict) or not isinstance(body.get("urls"), list):
                raise ApiError(400, 'expected a JSON object {"urls": [URL, …], "algorithm": …, "n": …}')
            urls = body["urls"]
            if len(urls) > MAX_BATCH:
                raise ApiError(413, f"{len(urls)} URLs in one batch; at most {MAX_BATCH}")
            algorithm, limit = self.algorithm_of(body.get("algorithm")), self.limit_of(body.get("n"))
        except ApiError as error:
            self.metrics.lookup(UNKNOWN_ALGORITHM, error.status)
            raise
        results = []
        for url in urls:
            try:
                results.append(self.answer(url, algorithm, limit)[0])
                self.metrics.lookup(algorithm, 200)
            except ApiError as error:  # one bad URL does not fail the batch
                results.append(encode_json({"query": url, "error": str(error), "status": error.status}).encode("utf-8"))
                self.metrics.lookup(algorithm, error.status)
        return b'{"algorithm":%s,"results":[%s]}\n' % (encode_json(algorithm).encode("utf-8"), b",".join(results))
