"""The front of ``relatedpages serve`` on granian (its HTTP core compiled, in Rust): an RSGI
app that answers ``GET /api/related`` itself, through the same
:class:`~relatedpages.serve.related.Lookups` as the Flask app, and hands every other request
(the explorer, the batch POST, health, OpenAPI, ``/metrics``) to the Flask app as WSGI,
with its body read to at most the app's limit (and drained to
:data:`~relatedpages.serve.app.DRAIN_BODY_BYTES`), so the app's own 413s are what a client
sees.  gunicorn and Flask cost about four times the CPU per lookup of granian and this
front (scripts/bench_serve.py, docs/guides/serving.md); the hot path skips Flask.
"""
from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

from relatedpages.serve.app import DRAIN_BODY_BYTES, MAX_BODY_BYTES, MAX_REQUEST_LINE
from relatedpages.serve.metrics import ErrorKind
from relatedpages.serve.related import Lookups, Reply, error_reply

logger = logging.getLogger(__name__)

_WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class RelatedPagesRSGI:
    """One worker's RSGI app: ``lookups`` for ``GET /api/related``, ``wsgi_app`` for the rest."""

    def __init__(self, lookups: Lookups, wsgi_app: _WSGIApp, host: str, port: int,
                 on_start: Callable[[], None] | None = None):
        self.lookups, self.wsgi_app, self.host, self.port = lookups, wsgi_app, host, str(port)
        self.on_start = on_start

    def __rsgi_init__(self, loop: Any) -> None:
        """granian's call before the worker serves: ``on_start`` runs once its loop does."""
        if self.on_start is not None:
            loop.call_soon(self.on_start)

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        if scope.proto != "http":  # websockets are off; nothing else is spoken here
            return
        try:
            if len(scope.path) + len(scope.query_string) > MAX_REQUEST_LINE:
                reply = error_reply(414, f"request line over {MAX_REQUEST_LINE} bytes")
            elif scope.method == "GET" and scope.path == "/api/related":
                reply = self.lookups.get(scope.query_string, scope.headers.get("if-none-match"))
            else:
                reply = self.call_wsgi(scope, await read_body(protocol, scope.headers))
        except Exception:  # a request must get an answer, and the worker must live on
            logger.exception("%s %s", scope.method, scope.path)
            self.lookups.metrics.error(ErrorKind.SERVER_ERROR)
            reply = error_reply(500, "internal server error")
        protocol.response_bytes(reply.status, list(reply.headers), reply.body)

    def call_wsgi(self, scope: Any, body: bytes | None) -> Reply:
        """The Flask app's response to the request of ``scope`` with ``body`` (None: none)."""
        environ: dict[str, Any] = {
            "REQUEST_METHOD": scope.method,
            "SCRIPT_NAME": "",
            # WSGI's strings carry the request's bytes one to a character (PEP 3333)
            "PATH_INFO": scope.path.encode("utf-8").decode("latin-1"),
            "QUERY_STRING": scope.query_string.encode("utf-8").decode("latin-1"),
            "SERVER_NAME": self.host,
            "SERVER_PORT": self.port,
            "SERVER_PROTOCOL": f"HTTP/{scope.http_version}",
            "REMOTE_ADDR": scope.client.rsplit(":", 1)[0],
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": scope.scheme,
            "wsgi.input": io.BytesIO(body or b""),
            "wsgi.input_terminated": True,  # the body is whole (or cut past the limit)
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        for name, value in scope.headers.items():
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            environ[key] = f"{environ[key]},{value}" if key in environ else value
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers]
            return chunks.append

        result = self.wsgi_app(environ, start_response)
        try:
            chunks.extend(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = started
        return Reply(int(status.split(" ", 1)[0]), tuple(headers), b"".join(chunks))


async def read_body(protocol: Any, headers: Any) -> bytes | None:
    """The request body, at most MAX_BODY_BYTES + 1 bytes of it (the app answers 413 past
    the limit); the rest is read and dropped up to DRAIN_BODY_BYTES, so that a client still
    sending sees the 413.  None when the request has no body."""
    if "content-length" not in headers and "transfer-encoding" not in headers:
        return None
    kept: list[bytes] = []
    size = 0
    async for chunk in protocol:
        if size <= MAX_BODY_BYTES:
            kept.append(chunk)
        size += len(chunk)
        if size >= DRAIN_BODY_BYTES:
            break
    return b"".join(kept)[:MAX_BODY_BYTES + 1]
