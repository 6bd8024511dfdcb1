"""What every subcommand shares: exit statuses, the one-line usage error, and the checks
and helpers more than one subcommand runs before any work (runner, inputs, ``--db``
target, job arguments, URL lists, link indexes)."""
from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from segmenter.adjust import AdjustParams, adjust_params_from

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2

RUNNERS = ("inline", "local", "hadoop")  # mrjob runners the commands offer


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is (``relatedpages.cli``) so that it unwinds like
    Ctrl-C: every ``finally`` and ``except KeyboardInterrupt`` clean-up runs."""

    def __init__(self, signum: int = 15) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


class UsageError(Exception):
    """A command line that cannot be run; reported in one line with exit status 2."""


def progress(message: str) -> None:
    """A stage's progress line on stderr (the pipeline's ``progress`` callback)."""
    print(message, file=sys.stderr, flush=True)


#: Where mrjob's and Hadoop's log goes with ``--runner hadoop`` when ``--log`` is not given.
HADOOP_LOG_FOLDER = Path("out") / "logs"


def add_log_option(parser: Any) -> None:
    parser.add_argument("--log", metavar="FILE",
                        help="write mrjob's log (with --runner hadoop: Hadoop's, 1,000+ lines a "
                             f"run) to FILE. Default: {HADOOP_LOG_FOLDER}/<command>-<time>.log "
                             "with --runner hadoop, none otherwise")


def start_progress(command: str, runner: str, log: str | None) -> Path | None:
    """Progress lines on stderr for the jobs to come (``jobs.progress``), and the log file
    mrjob's own log goes to (returned; None when there is none)."""
    from jobs import progress as job_progress

    log_file = Path(log) if log else None
    if log_file is None and runner == "hadoop":
        log_file = HADOOP_LOG_FOLDER / f"{command}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log"
    job_progress.enable(log_file=log_file)
    return log_file


def adjust_params(args: argparse.Namespace) -> AdjustParams:
    try:
        return adjust_params_from(args)
    except ValueError as error:
        raise UsageError(str(error)) from error


def check_runner(runner: str) -> None:
    """``-r hadoop`` needs a ``hadoop`` command and, with the repository's mrjob.conf,
    HADOOP_HOME (its streaming jar is ``$HADOOP_HOME/hadoop-streaming.jar``): say exactly
    what to do, before any work, instead of failing inside mrjob."""
    import shutil

    if runner != "hadoop":
        return
    missing = [what for what, absent in (
        ("no `hadoop` command on PATH", shutil.which("hadoop") is None),
        ("HADOOP_HOME is not set", not os.environ.get("HADOOP_HOME") and not os.environ.get("MRJOB_CONF")),
    ) if absent]
    if missing:
        raise UsageError(f"--runner hadoop: {' and '.join(missing)}. Run scripts/hadoop-setup "
                         "once, then `source hadoop/env.sh` (it sets both); on a cluster node, "
                         "put Hadoop's bin/ on PATH and set HADOOP_HOME (or MRJOB_CONF)")


def check_job_args(algorithm: str, job_args: Sequence[str]) -> None:
    """The chain's arguments parsed and checked by the job itself, before any work: a typo
    or a value out of range is one usage line, not a traceback after the segmentation."""
    if algorithm == "block":
        from jobs.related import MRRelatedPages as chain
    else:
        from jobs.cocitation import MRCocitation as chain
    try:
        chain(args=[*job_args, "-"])
    except (ValueError, SystemExit) as error:
        raise UsageError(f"job arguments {' '.join(job_args)}: {error}") from None


def check_db_target(db: str, inputs: Sequence[str]) -> None:
    """``--db`` refused before any work: a file, a folder inside an input folder, or a
    place that cannot be written (a folder there that is not a database is refused by the
    build itself, which never overwrites it)."""
    target = Path(db).absolute()
    if target.exists() and not target.is_dir():
        raise UsageError(f"--db {db} is a file, not a database folder")
    for name in inputs:
        source = Path(name).absolute()
        if "://" not in name and source.is_dir() and target.is_relative_to(source):
            raise UsageError(f"--db {db} is inside the input folder {name}: the next build "
                             "would read the database as input; put it elsewhere")
    try:
        _probe_folder(target.parent)  # the build writes beside the target, then renames
    except OSError as error:
        where = Path(error.filename or target.parent)
        if where.name.startswith(_PROBE):
            where = where.parent
        raise UsageError(f"--db {db}: cannot write there ({where}: "
                         f"{(error.strerror or str(error)).lower()})") from None


_PROBE = ".relatedpages-probe-"


def _probe_folder(target: Path) -> None:
    """Create ``target`` and a file in it as the build will, then remove what this made,
    so that a build that cannot write its database is refused before any work:
    the only sure test (a root user passes every mode check; /proc, a read-only mount or a
    full disk refuse only when tried)."""
    made = []
    try:
        for folder in reversed([target, *target.parents]):
            if not folder.exists():
                folder.mkdir()
                made.append(folder)
        probe = tempfile.NamedTemporaryFile(dir=target, prefix=_PROBE)
        probe.close()
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def check_inputs(inputs: Sequence[str]) -> list[str]:
    """The input files (folders searched: :func:`relatedpages.corpus.ingest.expand_inputs`), or
    a one-line usage error before any work starts."""
    from relatedpages.corpus.ingest import expand_inputs

    try:
        return expand_inputs(inputs)
    except ValueError as error:
        raise UsageError(str(error)) from None


def query_lines(args: argparse.Namespace) -> list[str]:
    urls = list(args.urls)
    if args.input:
        handle = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
        with handle:
            urls += [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    if not urls:
        raise UsageError("no URL to query: give URLs or --input FILE|-")
    return urls


def one_line(text: str, width: int = 60) -> str:
    """Anchor text from a crawl, printable on one terminal line (control characters out)."""
    clean = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return clean if len(clean) <= width else clean[: width - 1] + "…"


def size_text(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 1e6 else f"{count / 1e3:.1f} kB"


def shared_data_folder(name: str) -> Path:
    """``../shared/data`` as given, or a usage error naming the file it lacks."""
    from relatedpages.evaluation import related as rel

    data = Path(name)
    for relative in (rel.HUB_PATH, *rel.WEB_PATHS):
        if not (data / relative).is_file():
            raise UsageError(f"{data}: not the shared data folder (no {relative})")
    return data


def load_graph(path: str, verify: bool = False) -> Any:
    """The link index at ``path`` as a LinkGraph (every checksum checked first with
    ``verify``); its load time on stderr."""
    from relatedpages.store.linkload import load_link_graph

    started = time.monotonic()
    graph = load_link_graph(path, verify="full" if verify else "sizes")
    print(f"loaded link index {path}: {len(graph)} nodes, {graph.edges} links, "
          f"{graph.key_kind.value} keys in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return graph


def resolve_page(graph: Any, query: str, what: str) -> tuple[str, int | None]:
    """A page given on the command line: (its node name, its node or None); a malformed
    URL is a usage error."""
    from relatedpages.baselines.methods import node_name

    name = node_name(graph, query)
    if name is None:
        raise UsageError(f"malformed URL: {query} ({what})")
    return name, graph.id_of(name)


