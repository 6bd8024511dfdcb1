"""``relatedpages demo``: the README's first command — generate a synthetic web, build its
database, query a few sites and count where the footer template lands — in a folder it
claims (never one it did not make, and it deletes nothing)."""
from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from relatedpages.commands import build as build_command
from relatedpages.commands import generate as generate_command
from relatedpages.commands import query as query_command
from relatedpages.commands.common import EXIT_OK, RUNNERS, UsageError


def add_parser(commands: Any) -> None:
    demo = commands.add_parser("demo", help="generate a crawl, build its database, query it")
    demo.add_argument("--pages", type=int, default=3000, help="Default: %(default)s")
    demo.add_argument("--seed", type=int, default=1, help="Default: %(default)s")
    demo.add_argument("--out", default="out/demo", help="working folder. Default: %(default)s")
    demo.add_argument("--runner", choices=RUNNERS, default="local", help="Default: %(default)s")
    demo.add_argument("--queries", type=int, default=4, help="sites to query. Default: %(default)s")
    demo.add_argument("--force", action="store_true",
                      help="use --out even if it holds files the demo did not make (they are "
                           "left alone; the demo writes only crawl.warc.gz, its sidecar and db/)")
    demo.set_defaults(run=run)


def _build_args(argv: list[str]) -> argparse.Namespace:
    """``relatedpages build`` arguments parsed by the build command's own parser."""
    parser = argparse.ArgumentParser(prog="relatedpages")
    build_command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["build", *argv])


#: Left in a folder ``relatedpages demo`` made: a later demo may write there again.
DEMO_MARKER = ".relatedpages-demo"


def _claim_demo_folder(out: Path, force: bool) -> None:
    """Make ``out`` the demo's folder, or refuse (UsageError) a file, or a non-empty folder
    the demo did not make (unless ``force``).  Nothing in it is ever deleted: the demo
    overwrites only its own files (the crawl, its sidecar; ``db/`` is replaced atomically,
    and a ``db`` that is not a database is refused by the build)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / DEMO_MARKER).exists() and not force:
        raise UsageError(f"--out {out} is not empty and was not made by relatedpages demo: "
                         "choose another folder, or add --force (nothing in it is deleted)")
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARKER).write_text("made by relatedpages demo\n", encoding="utf-8")


def run(args: argparse.Namespace) -> int:
    """The README's first command: the whole system on the synthetic web, in under a minute."""
    from relatedpages.store.db import RelatedPagesDB
    from relatedpages.corpus.generate import registration_url, sample_queries

    out = Path(args.out)
    _claim_demo_folder(out, args.force)
    crawl = out / "crawl.warc.gz"
    print(f"==> relatedpages generate --pages {args.pages} --seed {args.seed} -o {crawl}", flush=True)
    generate_command.run(argparse.Namespace(pages=args.pages, seed=args.seed, output=str(crawl)))
    print(f"==> relatedpages build {crawl} --db {out / 'db'} --runner {args.runner}", flush=True)
    build_command.run(_build_args([str(crawl), "--db", str(out / "db"), "--runner", args.runner]))
    queries = sample_queries(crawl, args.queries)
    print(f"==> relatedpages query --db {out / 'db'} {' '.join(queries)}", flush=True)
    query_command.run_query(argparse.Namespace(urls=queries, db=str(out / "db"), json=False, input=None,
                                 verify=False))
    template = registration_url()
    with RelatedPagesDB(out / "db") as database:
        kinds = {"block": lambda item: item.fallback is None,
                 "site": lambda item: item.fallback == "site",
                 "fallback": lambda item: item.fallback not in (None, "site")}
        lists = dict.fromkeys(kinds, 0)
        holders: dict[str, list[str]] = {kind: [] for kind in kinds}
        vias: Counter[str] = Counter()  # the site pages whose lists carry it to others
        for url, related in database.records():
            if url == template or not related:
                continue
            for kind, belongs in kinds.items():
                mine = [item for item in related if belongs(item)]
                lists[kind] += bool(mine)
                if any(item.url == template for item in mine):
                    holders[kind].append(url)
                    if kind == "site":
                        vias[str(mine[0].via)] += 1
    print(f"\nThe registration link {template} sits in the footer template of most pages of "
          f"every site. It is a block result in {len(holders['block'])} of the "
          f"{lists['block']} lists with block results"
          + (f" (those of {', '.join(holders['block'][:3])}, …: pages where the segmenter "
             "merges another block with the footer)" if holders["block"] else "")
          + f", in {len(holders['site'])} of the {lists['site']} lists answered from a page "
          "of the same site (the site fallback"
          + (f"; most from {', '.join(f'{via} ({n})' for via, n in vias.most_common(3))}"
             if vias else "") + ")"
          + f", and a fallback result in {len(holders['fallback'])} of the "
          f"{lists['fallback']} lists the co-citation fallback answers or fills (co-citation "
          "has no template damping).")
    return EXIT_OK
