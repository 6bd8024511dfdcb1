"""The HTTP API of ``relatedpages serve`` (a Flask WSGI app): lookups that return exactly
what ``relatedpages query --json`` prints, in one request or a batch, the databases' health,
and an OpenAPI description.  Every error is JSON with its status.

    GET  /api/related?url=U[&algorithm=A][&n=N]   one lookup
    POST /api/related  {"urls": [U, …], "algorithm": A, "n": N}   a batch
    GET  /api/health                                each database: algorithm, build, records, verified
    GET  /api/openapi.json
    GET  /                                          the explorer page (static/explore.*)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from relatedpages.serve.sources import Sources
from relatedpages.store.db import DatabaseError

#: Results per lookup at most (a database holds M = 15 per page by default).
MAX_N = 100
#: URLs per batch at most, and the largest request body.
MAX_BATCH = 1000
MAX_BODY_BYTES = 1 << 20
#: An oversized body is read and dropped up to this many bytes before the 413 is sent, so a
#: client still sending sees the answer rather than a reset (werkzeug's get_input_stream
#: warns of it; gunicorn's graceful close drains only 64 KiB).  Beyond it the connection is
#: cut, and such a client may see a reset: reading more would let anyone hold a thread.
DRAIN_BODY_BYTES = 16 << 20
#: The longest URL a lookup takes (longer: 414), and the longest request line the server
#: reads at all (gunicorn's own limit; longer: its own 414).
MAX_URL_CHARS = 4096
MAX_REQUEST_LINE = 8190
#: The API returns data only: nothing in it may load or run anything in a browser.
API_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: The explorer runs only its own script and style, and talks only to this server: no
#: inline script (an injected one would not run), no other origin, no plugin, no framing.
PAGE_SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; "
                                "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                                "form-action 'self'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
STATIC = Path(__file__).resolve().parent / "static"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Methods:
    """The link index's page-level methods (``--links``): the graph and their parameters."""

    graph: Any
    params: dict[str, Any]
    path: str


def create_app(sources: Sources, methods: Methods | None = None) -> Flask:
    """The WSGI app over ``sources`` (and the ``--links`` methods)."""
    app = Flask("relatedpages.serve", static_folder=str(STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    link_names = list(methods.params) if methods is not None else []
    default_algorithm = (sources.names() or link_names or [""])[0]

    def algorithm_of(value: Any) -> str:
        name = default_algorithm if value in (None, "") else value
        if not isinstance(name, str) or (name not in sources.sources and name not in link_names):
            raise ApiError(404, f"unknown algorithm {name!r}; this server answers with "
                                f"{', '.join(sources.names() + link_names)}")
        return name

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

    def lookup(url: Any, algorithm: str, limit: int | None) -> dict[str, Any]:
        if not isinstance(url, str) or not url.strip():
            raise ApiError(400, "url is required")
        if len(url) > MAX_URL_CHARS:
            raise ApiError(414, f"URL of {len(url)} characters; at most {MAX_URL_CHARS}")
        try:
            if algorithm in sources.sources:
                database = sources.database(algorithm)
                if database is None:
                    raise ApiError(503, f"{algorithm}: no database to answer from "
                                        f"({sources.sources[algorithm].problem})")
                return database.answer(url, limit)
            from relatedpages.baselines.methods import links_answer

            assert methods is not None
            return links_answer(methods.graph, url, algorithm, methods.params[algorithm], limit)
        except ValueError:
            raise ApiError(400, f"malformed URL: {url!r}") from None
        except DatabaseError as error:
            raise ApiError(503, str(error)) from None

    @app.get("/api/related")
    def related_one() -> Any:
        algorithm = algorithm_of(request.args.get("algorithm"))
        return jsonify(lookup(request.args.get("url"), algorithm, limit_of(request.args.get("n"))))

    @app.post("/api/related")
    def related_batch() -> Any:
        body = json_body(request.environ, request.is_json, MAX_BODY_BYTES)
        if not isinstance(body, dict) or not isinstance(body.get("urls"), list):
            raise ApiError(400, 'expected a JSON object {"urls": [URL, …], "algorithm": …, "n": …}')
        urls = body["urls"]
        if len(urls) > MAX_BATCH:
            raise ApiError(413, f"{len(urls)} URLs in one batch; at most {MAX_BATCH}")
        algorithm, limit = algorithm_of(body.get("algorithm")), limit_of(body.get("n"))
        results = []
        for url in urls:
            try:
                results.append(lookup(url, algorithm, limit))
            except ApiError as error:  # one bad URL does not fail the batch
                results.append({"query": url, "error": str(error), "status": error.status})
        return jsonify({"algorithm": algorithm, "results": results})

    @app.get("/api/health")
    def health() -> Any:
        databases = sources.health()
        serving = all(item["serving"] for item in databases.values())
        fresh = all(item["problem"] is None for item in databases.values())
        payload: dict[str, Any] = {
            "status": "ok" if serving and fresh else ("degraded" if serving else "down"),
            "databases": databases,
        }
        if methods is not None:
            payload["links"] = {"path": methods.path, "algorithms": link_names,
                                "nodes": len(methods.graph), "links": int(methods.graph.edges)}
        return jsonify(payload), 200 if serving else 503

    @app.get("/api/openapi.json")
    def openapi() -> Any:
        return jsonify(openapi_document(sources.names() + link_names))

    @app.get("/")
    def explore() -> Any:
        return app.send_static_file("explore.html")

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Any:
        return jsonify({"error": str(error), "status": error.status}), error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        status = error.code or 500
        return jsonify({"error": error.description, "status": status}), status

    @app.after_request
    def secure(response: Response) -> Response:
        api = request.path.startswith("/api/")
        response.headers.update(API_SECURITY_HEADERS if api else PAGE_SECURITY_HEADERS)
        response.headers.setdefault("Cache-Control", "no-store" if api else "no-cache")
        return response

    return app


def json_body(environ: dict[str, Any], is_json: bool, limit: int) -> Any:
    """The request body parsed as JSON (None when it is not JSON or not labelled so), past
    ``limit`` bytes a 413, whether its length was given (Content-Length) or not (chunked:
    werkzeug's own reading would cut it at the limit silently, and answer 400)."""
    if not is_json:
        return None
    declared = environ.get("CONTENT_LENGTH", "")
    if declared.strip().isdigit():
        if int(declared) > limit:
            raise _too_large(environ, f"of {int(declared)} bytes", limit)
        data = environ["wsgi.input"].read(int(declared))
    elif environ.get("wsgi.input_terminated"):  # the server ends the stream at the body's end
        data = environ["wsgi.input"].read(limit + 1)
        if len(data) > limit:
            raise _too_large(environ, f"over {limit} bytes", limit)
    else:  # no length and no end the server marks: nothing is safe to read (as werkzeug)
        return None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None


def _too_large(environ: dict[str, Any], said: str, limit: int) -> RequestEntityTooLarge:
    """The 413 for a body ``said`` (its size), once what is left of it is read and dropped,
    DRAIN_BODY_BYTES at most, so that a client still sending sees it.  The server reads no
    further than the body's end."""
    stream, read = environ["wsgi.input"], 0
    while read < DRAIN_BODY_BYTES:
        chunk = stream.read(min(1 << 16, DRAIN_BODY_BYTES - read))
        if not chunk:
            break
        read += len(chunk)
    return RequestEntityTooLarge(f"request body {said}; at most {limit} bytes")


def openapi_document(algorithms: list[str]) -> dict[str, Any]:
    """The API's OpenAPI 3.1 description."""
    error = {"$ref": "#/components/schemas/Error"}
    algorithm = {"name": "algorithm", "in": "query", "required": False,
                 "schema": {"type": "string", "enum": algorithms},
                 "description": "which database or method answers (default: the first)"}
    n = {"name": "n", "in": "query", "required": False,
         "schema": {"type": "integer", "minimum": 1, "maximum": MAX_N},
         "description": "results at most (default: all the database holds)"}
    answer = {"$ref": "#/components/schemas/Answer"}
    return {
        "openapi": "3.1.0",
        "info": {"title": "relatedpages", "version": "1",
                 "description": "Related pages by block co-citation: the answers of "
                                "`relatedpages query --json`, over HTTP."},
        "paths": {
            "/api/related": {
                "get": {
                    "summary": "the related pages of one URL",
                    "parameters": [{"name": "url", "in": "query", "required": True,
                                    "schema": {"type": "string"}}, algorithm, n],
                    "responses": {
                        "200": {"description": "an answer; found = false for an unknown page",
                                "content": {"application/json": {"schema": answer}}},
                        "400": {"description": "malformed URL or parameter",
                                "content": {"application/json": {"schema": error}}},
                        "404": {"description": "unknown algorithm",
                                "content": {"application/json": {"schema": error}}},
                        "414": {"description": f"URL over {MAX_URL_CHARS} characters"},
                        "503": {"description": "no sound database to answer from",
                                "content": {"application/json": {"schema": error}}},
                    },
                },
                "post": {
                    "summary": f"the related pages of up to {MAX_BATCH} URLs",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": {
                        "type": "object", "required": ["urls"],
                        "properties": {"urls": {"type": "array", "items": {"type": "string"},
                                                "maxItems": MAX_BATCH},
                                       "algorithm": {"type": "string", "enum": algorithms},
                                       "n": {"type": "integer", "minimum": 1, "maximum": MAX_N}}}}}},
                    "responses": {
                        "200": {"description": "one answer (or error object) per URL, in order"},
                        "400": {"description": "not such an object"},
                        "404": {"description": "unknown algorithm"},
                        "413": {"description": f"more than {MAX_BATCH} URLs or {MAX_BODY_BYTES} bytes"},
                    },
                },
            },
            "/api/health": {"get": {"summary": "each database: algorithm, build time, records, "
                                               "whether it verified, why a newer one is not served",
                                    "responses": {"200": {"description": "serving"},
                                                  "503": {"description": "a database has nothing to serve"}}}},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "properties": {"error": {"type": "string"},
                                                       "status": {"type": "integer"}}},
            "Answer": {"type": "object", "properties": {
                "query": {"type": "string"}, "url": {"type": "string"},
                "found": {"type": "boolean"}, "matched": {"type": ["string", "null"]},
                "related": {"type": "array", "items": {"type": "object", "properties": {
                    "url": {"type": "string"}, "score": {"type": "number"},
                    "evidence": {"type": "array", "description": (
                        "the strongest citing sites, best first: [citing site, weight, citing "
                        "page, the result's anchor text on it] (weight: DS_d, sites or pages "
                        "as the algorithm counts; a database built before citing pages were "
                        "kept gives [citing site, weight])"),
                        "items": {"type": "array", "minItems": 2, "maxItems": 4, "prefixItems": [
                            {"type": "string"}, {"type": "number"}, {"type": "string"},
                            {"type": "string"}]}},
                    "fallback": {"type": "string"},
                    "via": {"type": "string"}}}}}},
        }},
    }
