"""The HTTP API of ``relatedpages serve`` (a Flask WSGI app): lookups that return exactly
what ``relatedpages query --json`` prints, in one request or a batch, the databases' health,
the server's counters and an OpenAPI description.  Every error is JSON with its status.

    GET  /api/related?url=U[&algorithm=A][&n=N]   one lookup (ETag per database generation)
    POST /api/related  {"urls": [U, …], "algorithm": A, "n": N}   a batch
    GET  /api/health                                each database: algorithm, build, records, verified
    GET  /api/openapi.json
    GET  /metrics                                   counters, Prometheus' text format
    GET  /                                          the explorer page (static/explore.*)

The lookups themselves are :class:`relatedpages.serve.related.Lookups`; the server's
compiled-core front (:mod:`relatedpages.serve.rsgi`) answers ``GET /api/related`` through
them too, and hands everything else to this app.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from relatedpages.serve.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from relatedpages.serve.metrics import ErrorKind
from relatedpages.serve.related import (  # noqa: F401  (the names users of this module know)
    API_SECURITY_HEADERS,
    MAX_BATCH,
    MAX_N,
    MAX_URL_CHARS,
    ApiError,
    Lookups,
    Methods,
    Reply,
)

#: The largest request body.
MAX_BODY_BYTES = 1 << 20
#: An oversized body is read and dropped up to this many bytes before the 413 is sent, so a
#: client still sending sees the answer rather than a reset (werkzeug's get_input_stream
#: warns of it; gunicorn's graceful close drains only 64 KiB).  Beyond it the connection is
#: cut, and such a client may see a reset: reading more would let anyone hold a thread.
DRAIN_BODY_BYTES = 16 << 20
#: The longest request line the server reads at all (longer: 414).
MAX_REQUEST_LINE = 8190
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


def _response(reply: Reply) -> Response:
    response = Response(reply.body, status=reply.status, headers=list(reply.headers))
    if reply.status == 304:
        del response.headers["Content-Type"]  # werkzeug's default; a 304 has no body
    return response


def create_app(lookups: Lookups) -> Flask:
    """The WSGI app answering from ``lookups`` (one worker's databases, methods, counters)."""
    app = Flask("relatedpages.serve", static_folder=str(STATIC), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    sources, methods = lookups.sources, lookups.methods

    @app.get("/api/related")
    def related_one() -> Any:
        return _response(lookups.get(request.query_string.decode(), request.headers.get("If-None-Match")))

    @app.post("/api/related")
    def related_batch() -> Any:
        body = json_body(request.environ, request.is_json, MAX_BODY_BYTES)
        return Response(lookups.batch(body), content_type="application/json")

    @app.get("/api/health")
    def health() -> Any:
        databases = sources.health()
        serving = all(item["serving"] for item in databases.values())
        fresh = all(item["problem"] is None and not item["corrupt"] for item in databases.values())
        payload: dict[str, Any] = {
            "status": "ok" if serving and fresh else ("degraded" if serving else "down"),
            "databases": databases,
        }
        if methods is not None:
            payload["links"] = {"path": methods.path, "algorithms": lookups.link_names,
                                "nodes": len(methods.graph), "links": int(methods.graph.edges)}
        return jsonify(payload), 200 if serving else 503

    @app.get("/api/openapi.json")
    def openapi() -> Any:
        return jsonify(openapi_document(lookups.names()))

    @app.get("/metrics")
    def metrics() -> Any:
        return Response(lookups.metrics.render(), content_type=METRICS_CONTENT_TYPE)

    @app.get("/")
    def explore() -> Any:
        return app.send_static_file("explore.html")

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Any:
        return jsonify({"error": str(error), "status": error.status}), error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        status = error.code or 500
        if status >= 500:
            lookups.metrics.error(ErrorKind.SERVER_ERROR)
        return jsonify({"error": error.description, "status": status}), status

    @app.after_request
    def secure(response: Response) -> Response:
        data = request.path.startswith("/api/") or request.path == "/metrics"
        response.headers.update(API_SECURITY_HEADERS if data else PAGE_SECURITY_HEADERS)
        response.headers.setdefault("Cache-Control", "no-store" if data else "no-cache")
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
                    "description": (
                        "An answer from a database carries the ETag of the database generation "
                        "that answered (Cache-Control: no-cache): the same until a rebuilt "
                        "database is swapped in. Sent back in If-None-Match, it gets a 304 "
                        "without a body while it is still current. Answers of the --links "
                        "methods carry none."),
                    "parameters": [{"name": "url", "in": "query", "required": True,
                                    "schema": {"type": "string"}}, algorithm, n,
                                   {"name": "If-None-Match", "in": "header", "required": False,
                                    "schema": {"type": "string"},
                                    "description": "the ETag of an answer held: 304 if unchanged"}],
                    "responses": {
                        "200": {"description": "an answer; found = false for an unknown page",
                                "headers": {"ETag": {
                                    "description": "the database generation that answered",
                                    "schema": {"type": "string"}}},
                                "content": {"application/json": {"schema": answer}}},
                        "304": {"description": "If-None-Match names the generation that would "
                                               "answer: the answer held is current"},
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
                                               "whether it verified, why a newer one is not served, "
                                               "what was found corrupt in it since",
                                    "responses": {"200": {"description": "serving"},
                                                  "503": {"description": "a database has nothing to serve"}}}},
            "/metrics": {"get": {
                "summary": "the server's counters in Prometheus' text format, summed over its "
                           "worker processes: relatedpages_lookups_total{algorithm, status}, "
                           "relatedpages_lookup_seconds (histogram), "
                           "relatedpages_swaps_total{database}, relatedpages_errors_total{kind}",
                "responses": {"200": {"description": "the counters",
                                      "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
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
