"""The ``relatedpages`` command.

    relatedpages segment INPUT… [-o OUT] [-r inline|local|hadoop]   crawl → link blocks, summary
    relatedpages build INPUT… --db DIR [--algorithm block|cocitation] [--runner …] [--work DIR]
    relatedpages query --db DIR [--json] [--input FILE|-] [URL …]
    relatedpages verify --db DIR                                     every checksum, key order
    relatedpages query --links DIR --algorithm companion|dh-cocitation|extended-cocitation|lli
                       [--json] [--input FILE|-] [--parents B …] [URL …]   the literature's baselines
    relatedpages linkgraph import --edges FILE[.gz] --db DIR [--keys auto|url|id]   a link index
    relatedpages linkgraph build INPUT… --db DIR [--runner …] [--work DIR]        … from a crawl
    relatedpages equivalent-links --links DIR PAGE ANCHOR TARGET [--json]   Courtenage & Williams
    relatedpages moved --old DIR --new DIR [--json] [--input FILE|-] [URL …]   Spertus
    relatedpages authorities --links DIR --roots FILE --algorithm sfp|hits [--json]   Zhou et al.
    relatedpages generate --pages N --seed S -o FILE.warc.gz        the synthetic web
    relatedpages demo [--pages N] [--out DIR] [--force]             generate, build, query
    relatedpages eval segmentation DIR [--split dev|test|all] [--sweep-t1 …]   Table 1, Fig. 4
    relatedpages eval related DATA_DIR [--holdout F] [--seed S] [--plot PNG]   Fig. 10
    relatedpages eval moved DATA_DIR [--pages N] [--seed S] [--updated F] [--json]   Spertus, simulated moves

Exit status: 0 on success, 2 on usage errors, 1 on failure, 130 on Ctrl-C and 143 on SIGTERM
(one line each; the work in progress removes its temporary folders on the way out).  Each subcommand is a module of
:mod:`relatedpages.commands` (``add_parser`` and ``run``); this module keeps the parser and
``main``: one line per error, no traceback unless ``--debug``.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from types import FrameType
from typing import Iterator, Sequence

from relatedpages.commands import (
    authorities,
    build,
    demo,
    equivalent,
    evaluate,
    generate,
    linkgraph,
    moved,
    query,
    segment,
    serve,
    study,
    verify,
)
from relatedpages.commands.common import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    Terminated,
    UsageError,
)

#: The subcommands in the order ``--help`` lists them.
COMMANDS = (verify, segment, build, query, serve, study, generate, demo, evaluate, linkgraph,
            equivalent, moved, authorities)


def _version() -> str:
    """The installed package's version (setup.py), or "unknown" when run from a tree
    that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("relatedpages")
    except PackageNotFoundError:
        return "unknown"


#: What ``relatedpages --help`` says first, in plain words (a terminal renders no markup).
DESCRIPTION = ("Related web pages by block co-citation: segment a crawl, build the related-pages "
               "database, then query, serve and evaluate it. 'relatedpages COMMAND --help' "
               "describes each command.")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relatedpages", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"relatedpages {_version()}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an unexpected error (and mrjob's debug log)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM unwind the command (its ``finally`` blocks remove what it made) as
    :class:`KeyboardInterrupt` / :class:`Terminated`.  A process forked by the work inherits
    the handlers: it leaves Ctrl-C to the command, which ends it (a pool worker that died on
    its own could hold the pool's queue lock, and the pool's clean-up would wait for it
    forever), and ends silently on SIGTERM instead of printing its own traceback."""
    owner = os.getpid()

    def handle(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C does not cut the clean-up
        raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)

    before = {signum: signal.signal(signum, handle) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _stop_children() -> None:
    """The forked workers of an interrupted run: ended, so none writes after the command."""
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
        child.join(timeout=5)


def _job_failures() -> tuple[type[BaseException], ...]:
    """Failures of a run (a job step, the database build), reported with exit status 1."""
    from jobs.pipeline import FAILURES

    return FAILURES


def _log_hint() -> str:
    """Where the failed run's full log is, when it was written to a file."""
    from jobs import progress as job_progress

    log_file = job_progress.log_file()
    return f" (the job's log: {log_file})" if log_file is not None else ""


def _stop_progress() -> None:
    from jobs import progress as job_progress

    job_progress.disable()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    given = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in given  # accepted anywhere on the line, not only before the command
    args = parser.parse_args([arg for arg in given if arg != "--debug"])
    args.debug = debug
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        with _interruptible():
            return int(args.run(args))
    except UsageError as error:
        print(f"relatedpages: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `relatedpages query … | head`: the reader has what it wanted; end quietly (and
        # keep Python from reporting the pipe again when it flushes stdout at exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt as error:  # Terminated too
        _stop_children()
        terminated = isinstance(error, Terminated)
        print(f"relatedpages: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 128 + (signal.SIGTERM if terminated else signal.SIGINT)
    except _job_failures() as error:
        if args.debug:
            raise
        print(f"relatedpages: failed: {error}{_log_hint()}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as error:  # anything unforeseen: one line, the traceback on --debug
        if args.debug:
            raise
        print(f"relatedpages: internal error: {type(error).__name__}: {error} (run again "
              "with --debug for the traceback, and please report it)", file=sys.stderr)
        return EXIT_FAILURE
    finally:  # the command's progress ends with it (main may be called again in one process)
        _stop_progress()


if __name__ == "__main__":
    sys.exit(main())
