"""The production server under ``relatedpages serve``, chosen by measurement
(scripts/bench_serve.py): granian by default, whose HTTP core is compiled (Rust), with
several worker processes, each running the RSGI front (:mod:`relatedpages.serve.rsgi`)
that answers lookups itself and hands the rest to the Flask app; or gunicorn (pre-fork,
Python HTTP parsing) running the Flask app for everything.  Either way each worker has its
own open databases and its own watcher that swaps rebuilt ones in
(:mod:`relatedpages.serve.sources`), and counts into the server's metrics folder."""
from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from gunicorn.app.base import BaseApplication

from relatedpages.serve.app import MAX_REQUEST_LINE, create_app
from relatedpages.serve.metrics import Metrics
from relatedpages.serve.related import Lookups, Methods
from relatedpages.serve.sources import CHECK_EVERY_DEFAULT, Sources

#: Loopback unless told otherwise: a server started for a try-out is not a public one.
HOST_DEFAULT = "127.0.0.1"
PORT_DEFAULT = 8080
WORKERS_DEFAULT = 2
#: One thread per worker (gunicorn's; granian's front answers on its event loop): Python
#: threads share one interpreter lock, and on 2 cores four threads per worker halved the
#: lookups/s (scripts/bench_serve.py: 1,759/s vs 3,695/s).
THREADS_DEFAULT = 1


class ServerKind(str, Enum):
    """The HTTP server under the app."""

    GRANIAN = "granian"  # compiled HTTP core; lookups skip Flask (relatedpages.serve.rsgi)
    GUNICORN = "gunicorn"  # Python HTTP parsing; Flask answers everything


SERVER_DEFAULT = ServerKind.GRANIAN


@dataclass(frozen=True)
class ServeSettings:
    databases: dict[str, Path]
    links: Path | None = None
    host: str = HOST_DEFAULT
    port: int = PORT_DEFAULT
    workers: int = WORKERS_DEFAULT
    threads: int = THREADS_DEFAULT
    check_every: float = CHECK_EVERY_DEFAULT
    server: ServerKind = SERVER_DEFAULT
    #: where the workers count (relatedpages.serve.metrics); :func:`run` makes one
    metrics_folder: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.server is ServerKind.GRANIAN and self.threads != 1:
            raise ValueError("granian answers on one thread per worker: threads must be 1")


def worker_lookups(settings: ServeSettings) -> Lookups:
    """One worker's lookups: its databases opened and watched, the link index (when given)
    loaded with every page-level method at its defaults, its counters."""
    link_names: list[str] = []
    if settings.links is not None:
        from relatedpages.baselines.methods import PAGE_METHODS

        link_names = list(PAGE_METHODS)
    metrics = Metrics([*settings.databases, *link_names], list(settings.databases), settings.metrics_folder)
    sources = Sources(dict(settings.databases), check_every=settings.check_every, metrics=metrics)
    sources.start()
    methods = None
    if settings.links is not None:
        from relatedpages.baselines.methods import PAGE_METHODS
        from relatedpages.store.linkload import load_link_graph

        graph = load_link_graph(settings.links, verify="full")
        methods = Methods(graph, {name: method.params() for name, method in PAGE_METHODS.items()},
                          str(settings.links))
    return Lookups(sources, methods, metrics)


def log_ready(lookups: Lookups) -> None:
    """The worker's "ready" line, once it answers: what it serves."""
    logging.getLogger(__name__).info(
        "worker %d ready: %s", os.getpid(),
        "; ".join(f"{name} {item['records']} records, built {item['built_at']}"
                  if item["serving"] else f"{name} NOT serving ({item['problem']})"
                  for name, item in lookups.sources.health().items()) or "link index only")


def app_factory(settings: ServeSettings) -> Callable[[], Any]:
    """A function that makes one worker's app: the Flask WSGI app (gunicorn), or the RSGI
    front over it (granian)."""
    def make() -> Any:
        lookups = worker_lookups(settings)
        app = create_app(lookups)
        if settings.server is ServerKind.GUNICORN:
            log_ready(lookups)  # the arbiter listens already: a connection waits for a worker
            return app
        from relatedpages.serve.rsgi import RelatedPagesRSGI

        # a granian worker listens once its event loop runs
        return RelatedPagesRSGI(lookups, app, settings.host, settings.port, on_start=lambda: log_ready(lookups))
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


#: Every worker's log lines on stderr, relatedpages' at INFO (a worker's "ready" line).
_GRANIAN_LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"generic": {"()": "logging.Formatter",
                               "fmt": "[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s"}},
    "handlers": {"console": {"formatter": "generic", "class": "logging.StreamHandler",
                             "stream": "ext://sys.stderr"}},
    "loggers": {"_granian": {"handlers": ["console"], "level": "INFO", "propagate": False},
                "relatedpages": {"handlers": ["console"], "level": "INFO", "propagate": False}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}


def serve_granian(make_app: Callable[[], Any], host: str, port: int, *, workers: int) -> None:
    """Serve the RSGI app ``make_app`` builds (in each worker) on granian until
    SIGINT/SIGTERM."""
    from granian.constants import HTTPModes, Interfaces, Loops, TaskImpl
    from granian.log import LogLevels
    from granian.server import Server

    server = Server(
        "relatedpages.serve", address=host, port=port, interface=Interfaces.RSGI, workers=workers,
        http=HTTPModes.http1, websockets=False,
        log_level=LogLevels.info, log_dictconfig=_GRANIAN_LOGGING,
        respawn_failed_workers=True,
        workers_kill_timeout=10,  # as gunicorn's graceful_timeout
        # uvloop's event loop and granian's Rust tasks (Python < 3.12): 137-155 µs of CPU a
        # lookup against asyncio's 150-196, the fastest of the combinations measured
        # (scripts/bench_serve.py, docs/guides/serving.md)
        loop=Loops.uvloop, task_impl=TaskImpl.rust,
    )
    try:
        server.serve(target_loader=make_app, wrap_loader=False)
    except RuntimeError as error:  # granian's bind: "Address already in use (os error 98)"
        if "os error" not in str(error):
            raise
        print(f"relatedpages serve: cannot listen on {host}:{port}: {error}", file=sys.stderr)
        raise SystemExit(1) from None


def run(settings: ServeSettings) -> None:
    """Serve lookups until interrupted (SIGINT/SIGTERM end it gracefully), the workers
    counting into a metrics folder of this run's, removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="relatedpages-serve-metrics-"))
    try:
        settings = replace(settings, metrics_folder=folder)
        if settings.server is ServerKind.GUNICORN:
            serve_app(app_factory(settings), settings.host, settings.port, workers=settings.workers,
                      threads=settings.threads)
        else:
            serve_granian(app_factory(settings), settings.host, settings.port, workers=settings.workers)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
