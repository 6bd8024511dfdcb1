"""``relatedpages generate --pages N --seed S -o FILE.warc.gz``: write a deterministic
synthetic crawl (with its topic sidecar)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from relatedpages.commands.common import EXIT_OK, UsageError


def add_parser(commands: Any) -> None:
    generate = commands.add_parser("generate", help="write a deterministic synthetic crawl")
    generate.add_argument("--pages", type=int, required=True)
    generate.add_argument("--seed", type=int, default=1)
    generate.add_argument("-o", "--output", required=True, help="FILE.warc.gz")
    generate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from relatedpages.corpus.generate import generate_crawl

    if args.pages <= 0:
        raise UsageError("--pages must be positive")
    started = time.monotonic()
    crawl = generate_crawl(Path(args.output), pages=args.pages, seed=args.seed)
    seconds = time.monotonic() - started
    print(f"wrote {crawl.pages} pages of {crawl.sites} sites in {crawl.topics} topics to {args.output} "
          f"({seconds:.1f} s, {crawl.pages / max(seconds, 1e-9):,.0f} pages/s)")
    return EXIT_OK
