"""``relatedpages serve --db DIR [--db NAME=DIR …] [--links DIR] [--server granian|gunicorn]``:
answer lookups over HTTP (the JSON of ``query --json``) on a multi-process server, loopback
by default; rebuilt databases are swapped in without a failed request (docs/guides/serving.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from relatedpages.commands.common import EXIT_FAILURE, EXIT_OK, UsageError


def add_parser(commands: Any) -> None:
    from relatedpages.serve.server import (
        HOST_DEFAULT,
        PORT_DEFAULT,
        SERVER_DEFAULT,
        THREADS_DEFAULT,
        WORKERS_DEFAULT,
        ServerKind,
    )
    from relatedpages.serve.sources import CHECK_EVERY_DEFAULT

    serve = commands.add_parser("serve", help="answer lookups over HTTP (JSON API)")
    serve.add_argument("--db", action="append", default=[], metavar="[NAME=]DIR",
                       help="a database to answer from (repeatable); NAME is the API's "
                            "algorithm=NAME (default: the algorithm it was built with)")
    serve.add_argument("--links", metavar="DIR",
                       help="a link index: also answer with companion, dh-cocitation, "
                            "extended-cocitation and lli at their defaults")
    serve.add_argument("--host", default=HOST_DEFAULT,
                       help="address to listen on. Default: %(default)s (loopback only)")
    serve.add_argument("--port", type=int, default=PORT_DEFAULT, help="Default: %(default)s")
    serve.add_argument("--workers", type=int, default=WORKERS_DEFAULT,
                       help="server processes (each with its own open databases). Default: %(default)s")
    serve.add_argument("--server", choices=[kind.value for kind in ServerKind], default=SERVER_DEFAULT.value,
                       help="the HTTP server: granian (compiled HTTP core; lookups skip Flask) or "
                            "gunicorn (Flask answers everything; scripts/bench_serve.py measures "
                            "both). Default: %(default)s")
    serve.add_argument("--threads", type=int, default=THREADS_DEFAULT,
                       help="request threads per gunicorn worker (lookups hold the interpreter "
                            "lock; more threads help only slow --links methods; granian answers "
                            "on one). Default: %(default)s")
    serve.add_argument("--check-every", type=float, default=CHECK_EVERY_DEFAULT, metavar="SECONDS",
                       help="how often each worker looks for a rebuilt database. Default: %(default)s")
    serve.set_defaults(run=run)


def _named_databases(given: list[str]) -> dict[str, Path]:
    """``[NAME=]DIR`` arguments as name → folder; each opened once here, so that a missing
    or broken database is one line before the server starts."""
    from relatedpages.store.db import DatabaseError
    from relatedpages.store.dbopen import read_manifest

    named: dict[str, Path] = {}
    for item in given:
        name, _, folder = item.rpartition("=") if "=" in item else ("", "", item)
        try:
            manifest = read_manifest(folder)
        except (DatabaseError, OSError) as error:
            raise UsageError(f"--db {item}: {error}") from None
        name = name or manifest.algorithm
        if name in named:
            raise UsageError(f"--db {item}: a second database named {name!r}; name them, "
                             "e.g. --db block-old=DIR")
        named[name] = Path(folder)
    return named


def run(args: argparse.Namespace) -> int:
    from relatedpages.serve.server import ServerKind, ServeSettings
    from relatedpages.serve.server import run as serve

    if not args.db and not args.links:
        raise UsageError("give at least one --db DIR or --links DIR")
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1-65535, got {args.port}")
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1, got {args.threads}")
    server = ServerKind(args.server)
    if server is ServerKind.GRANIAN and args.threads != 1:
        raise UsageError(f"--threads {args.threads}: granian answers on one thread per worker; "
                         "give --server gunicorn for more")
    if args.check_every <= 0:
        raise UsageError(f"--check-every must be positive, got {args.check_every}")
    databases = _named_databases(args.db)
    if args.links is not None:
        from relatedpages.baselines.methods import PAGE_METHODS
        from relatedpages.store.db import DatabaseError
        from relatedpages.store.dbopen import read_manifest

        try:
            read_manifest(args.links)
        except (DatabaseError, OSError) as error:
            raise UsageError(f"--links {args.links}: {error}") from None
        clash = set(databases) & set(PAGE_METHODS)
        if clash:
            raise UsageError(f"--db names {sorted(clash)} are the --links methods' names")
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        print(f"relatedpages: serving on {args.host}, beyond this machine", file=sys.stderr)
    print(f"relatedpages serve: http://{args.host}:{args.port}/api/health  "
          f"({', '.join(databases) or 'no database'}"
          f"{'; link index ' + args.links if args.links else ''}; {server.value}, {args.workers} workers)",
          file=sys.stderr, flush=True)
    try:
        serve(ServeSettings(databases, Path(args.links) if args.links else None, args.host,
                            args.port, args.workers, args.threads, args.check_every, server))
    except SystemExit as stop:  # a port in use, a failed worker boot (the server said why)
        return EXIT_FAILURE if stop.code not in (0, None) else EXIT_OK
    return EXIT_OK
