"""``relatedpages study create|serve|report``: the paper's blind user study, repeatable —
made from two or more databases and a list of query pages, graded in a browser by several
graders, reported as R-score curves with agreement and confidence intervals (README,
"A user study")."""
from __future__ import annotations

import argparse
import re
import secrets
import sys
from pathlib import Path
from typing import Any

from relatedpages.commands.common import EXIT_OK, UsageError

STUDIES_DEFAULT = Path("out") / "studies"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}")


def add_parser(commands: Any) -> None:
    from relatedpages.serve.server import HOST_DEFAULT
    from relatedpages.study.store import TOP_K_DEFAULT

    study = commands.add_parser("study", help="the paper's blind user study: create, grade, report")
    steps = study.add_subparsers(dest="study_command", required=True)

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--name", required=True, help="the study's name (letters, digits, . _ -)")
        parser.add_argument("--studies", default=str(STUDIES_DEFAULT), metavar="DIR",
                            help="where studies are kept, one SQLite file each. Default: %(default)s")

    create = steps.add_parser("create", help="store the shuffled, blind union of the systems' results")
    common(create)
    create.add_argument("--systems", required=True, metavar="NAME=DIR,NAME=DIR",
                        help="the databases to compare, e.g. block=out/db,cocitation=out/cc")
    create.add_argument("--queries", required=True, metavar="FILE",
                        help="query pages, one per line: URL or URL<TAB>topic (# comments)")
    create.add_argument("--k", type=int, default=TOP_K_DEFAULT, help="results per system. Default: %(default)s")
    create.add_argument("--seed", type=int, help="shuffle seed (default: drawn, and recorded in the study)")
    create.set_defaults(run=run_create)

    serve = steps.add_parser("serve", help="the grading page (keyboard, resume, several graders)")
    common(serve)
    serve.add_argument("--host", default=HOST_DEFAULT, help="Default: %(default)s (loopback only)")
    serve.add_argument("--port", type=int, default=8090, help="Default: %(default)s")
    serve.set_defaults(run=run_serve)

    report = steps.add_parser("report", help="R-score curves (Figs. 10, 11), agreement, intervals, CSV")
    common(report)
    report.add_argument("--plot", metavar="PREFIX",
                        help="write PREFIX-rscore.png and PREFIX-topics.png. Default: the study's file "
                             "name without .sqlite")
    report.add_argument("--csv", metavar="FILE", help="also export every grade as CSV")
    report.set_defaults(run=run_report)


def _study_path(args: argparse.Namespace) -> Path:
    if not _NAME.fullmatch(args.name):
        raise UsageError(f"--name {args.name!r}: letters, digits, '.', '_' and '-' only (1-60)")
    return Path(args.studies) / f"{args.name}.sqlite"


def run_create(args: argparse.Namespace) -> int:
    from relatedpages.store.db import DatabaseError, RelatedPagesDB
    from relatedpages.study.store import StudyError, create_study, read_queries

    path = _study_path(args)
    systems: dict[str, Path] = {}
    for item in filter(None, (part.strip() for part in args.systems.split(","))):
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            raise UsageError(f"--systems: {item!r} is not NAME=DIR")
        if name in systems:
            raise UsageError(f"--systems: {name!r} twice")
        systems[name] = Path(folder)
    if len(systems) < 2:
        raise UsageError("--systems: a study compares at least two systems")
    if not Path(args.queries).is_file():
        raise UsageError(f"--queries: no such file: {args.queries}")
    if args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    queries = read_queries(args.queries)
    if not queries:
        raise UsageError(f"--queries {args.queries}: no query page in it")
    opened = {}
    try:
        for name, folder in systems.items():
            opened[name] = RelatedPagesDB(folder, verify="full")
    except DatabaseError as error:
        for database in opened.values():
            database.close()
        raise UsageError(f"--systems: {error}") from None
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    try:
        report = create_study(path, args.name, opened, queries, seed=seed, k=args.k,
                              sources={name: str(folder.resolve()) for name, folder in systems.items()})
    except StudyError as error:
        raise UsageError(str(error)) from None
    finally:
        for database in opened.values():
            database.close()
    print(f"created {path}: {report.queries} query pages, {report.results} results to grade "
          f"(systems {', '.join(systems)}, top {args.k} each, shuffled with seed {seed})")
    if report.skipped:
        print(f"  skipped {len(report.skipped)} query page(s) no system knows: "
              + ", ".join(report.skipped[:5]) + (" …" if len(report.skipped) > 5 else ""))
    print(f"next: relatedpages study serve --name {args.name}" +
          ("" if args.studies == str(STUDIES_DEFAULT) else f" --studies {args.studies}"))
    return EXIT_OK


def run_serve(args: argparse.Namespace) -> int:
    from relatedpages.serve.server import serve_app
    from relatedpages.study.app import create_app

    path = _study_path(args)
    if not path.is_file():
        raise UsageError(f"no study {args.name!r} in {args.studies} (relatedpages study create first)")
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1-65535, got {args.port}")
    print(f"relatedpages study: http://{args.host}:{args.port}/  (study {path})", file=sys.stderr, flush=True)
    try:
        # one process: SQLite serialises writers anyway, and grading is a person's pace
        serve_app(lambda: create_app(path), args.host, args.port, workers=1, threads=4)
    except SystemExit as stop:
        return 1 if stop.code not in (0, None) else EXIT_OK
    return EXIT_OK


def run_report(args: argparse.Namespace) -> int:
    from contextlib import closing

    from relatedpages.study.report import build_report, export_csv, format_report, plot_report
    from relatedpages.study.store import StudyError, connect

    path = _study_path(args)
    try:
        connection = connect(path)
    except StudyError as error:
        raise UsageError(str(error)) from None
    with closing(connection):
        report = build_report(connection)
        print(format_report(report))
        prefix = args.plot or str(path.with_suffix(""))
        plot_report(report, Path(f"{prefix}-rscore.png"), Path(f"{prefix}-topics.png"))
        print(f"\nR-score curves (Fig. 10): {prefix}-rscore.png; per topic (Fig. 11): {prefix}-topics.png")
        if args.csv:
            rows = export_csv(connection, Path(args.csv))
            print(f"grades as CSV: {args.csv} ({rows} rows)")
    return EXIT_OK
