"""The production server under ``relatedpages serve``: gunicorn (pre-fork, several worker
processes, keep-alive connections) running the Flask app, each worker with its own open databases
and its own watcher that swaps rebuilt ones in (:mod:`relatedpages.serve.sources`)."""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from relatedpages.serve.app import MAX_REQUEST_LINE, Methods, create_app
from relatedpages.serve.sources import CHECK_EVERY_DEFAULT, Sources

#: Loopback unless told otherwise: a server started for a try-out is not a public one.
HOST_DEFAULT = "127.0.0.1"
PORT_DEFAULT = 8080
WORKERS_DEFAULT = 2
#: One thread per worker: Python threads share one interpreter lock, and on 2 cores four
#: threads per worker halved the lookups/s (scripts/bench_serve.py: 1,759/s vs 3,695/s).
THREADS_DEFAULT = 1


@dataclass(frozen=True)
class ServeSettings:
    databases: dict[str, Path]
    links: Path | None = None
    host: str = HOST_DEFAULT
    port: int = PORT_DEFAULT
    workers: int = WORKERS_DEFAULT
    threads: int = THREADS_DEFAULT
    check_every: float = CHECK_EVERY_DEFAULT


def app_factory(settings: ServeSettings) -> Callable[[], Any]:
    """A function that makes one worker's app: its databases opened and watched, the link
    index (when given) loaded with every page-level method at its defaults."""
    def make() -> Any:
        sources = Sources(dict(settings.databases), check_every=settings.check_every)
        sources.start()
        methods = None
        if settings.links is not None:
            from relatedpages.baselines.methods import PAGE_METHODS
            from relatedpages.store.linkload import load_link_graph

            graph = load_link_graph(settings.links, verify="full")
            methods = Methods(graph, {name: method.params() for name, method in PAGE_METHODS.items()},
                              str(settings.links))
        logging.getLogger(__name__).info(
            "worker %d ready: %s", os.getpid(),
            "; ".join(f"{name} {item['records']} records, built {item['built_at']}"
                      if item["serving"] else f"{name} NOT serving ({item['problem']})"
                      for name, item in sources.health().items()) or "link index only")
        return create_app(sources, methods)
    return make


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, make_app: Callable[[], Any], options: dict[str, Any]):
        self._make_app, self._options = make_app, options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self._make_app()


def serve_app(make_app: Callable[[], Any], host: str, port: int, *, workers: int,
              threads: int) -> None:
    """Serve the app ``make_app`` builds (in each worker) until SIGINT/SIGTERM."""
    logging.basicConfig(format="[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s",
                        level=logging.WARNING, force=True)
    logging.getLogger("relatedpages").setLevel(logging.INFO)
    _Gunicorn(make_app, {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "preload_app": False,  # each worker opens its own databases and watcher
        "limit_request_line": MAX_REQUEST_LINE,
        "timeout": 60,
        "graceful_timeout": 10,
        "keepalive": 5,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": "info",
        "proc_name": "relatedpages-serve",
        # no control socket in ~/.gunicorn (shared by every gunicorn of the user): stop the
        # server with SIGTERM / Ctrl-C
        "control_socket_disable": True,
    }).run()


def run(settings: ServeSettings) -> None:
    """Serve lookups until interrupted (SIGINT/SIGTERM end it gracefully)."""
    serve_app(app_factory(settings), settings.host, settings.port, workers=settings.workers,
              threads=settings.threads)
