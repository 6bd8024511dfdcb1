"""``relatedpages verify --db DIR``: check a database (related pages or a link index) in full.

Every partition's size, sha256 and record count against the manifest, and the order,
uniqueness and partition of its keys (:func:`relatedpages.store.db.check_database`).
Prints one line per fault, naming the partition, and exits 1 on any fault; a sound
database prints its summary and exits 0.  Use it after copying a database between
machines.  Every build (``relatedpages build``, ``scripts/nightly``, ``linkgraph``) runs
the same check on what it wrote before it is swapped in.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from relatedpages.commands.common import EXIT_FAILURE, EXIT_OK, UsageError


def add_parser(commands: Any) -> None:
    verify = commands.add_parser(
        "verify", help="check every checksum and the key order of a database")
    verify.add_argument("--db", required=True, metavar="DIR",
                        help="a related-pages database or a link index")
    verify.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from relatedpages.store.db import check_database
    from relatedpages.store.dbopen import read_manifest

    path = Path(args.db)
    if not path.exists():
        raise UsageError(f"no such database: {path}")
    if not path.is_dir():
        raise UsageError(f"not a database folder: {path}")
    started = time.monotonic()
    problems = check_database(path)
    for problem in problems:
        print(f"relatedpages: {path}: {problem}", file=sys.stderr)
    if problems:
        print(f"{path}: {len(problems)} fault(s); do not serve it", file=sys.stderr)
        return EXIT_FAILURE
    manifest = read_manifest(path)
    print(f"{path}: sound: {manifest.algorithm}, {manifest.records} records in "
          f"{len(manifest.partitions)} partitions, {manifest.bytes} bytes, built "
          f"{manifest.built_at}; checked in {time.monotonic() - started:.1f} s")
    return EXIT_OK
