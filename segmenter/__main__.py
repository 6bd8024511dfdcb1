"""Segment saved pages from the command line.

    python -m segmenter --json PAGE.html --url URL
    python -m segmenter --json --manifest FILE.tsv        (path<TAB>url per line)
    python -m segmenter --sections PAGE.html --url URL    (sections before adjusting,
                                                           their features and merge rules)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from segmenter import AdjustParams, Segmentation, blocks_as_json, segment_bytes
from segmenter.adjust import (
    add_adjust_options,
    adjust_params_from,
    list_groups,
    merge_rule,
    section_type,
)
from segmenter.sections import Section

EXIT_USAGE = 2
EXIT_FAILURE = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m segmenter", description="HTML pages → link blocks (block co-citation's segmenter)."
    )
    parser.add_argument("page", nargs="?", help="a saved HTML page")
    parser.add_argument("--url", help="the page's URL (resolves relative links)")
    parser.add_argument("--manifest", help="TSV of path<TAB>url lines; paths relative to the TSV")
    parser.add_argument("--json", action="store_true", help="one JSON object per page")
    parser.add_argument("--sections", action="store_true",
                        help="show the sections before adjusting, with features and merge rules")
    add_adjust_options(parser.add_argument)
    return parser


def _manifest_entries(manifest: Path) -> Iterator[tuple[Path, str] | str]:
    """(path, url) per usable line, or an error message for a bad line."""
    for number, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            yield f"{manifest}:{number}: expected 'path<TAB>url', got {line[:80]!r}"
            continue
        yield manifest.parent / parts[0].strip(), parts[1].strip()


def _section_record(section: Section, params: AdjustParams, rule: str | None) -> dict[str, Any]:
    return {
        "label": section.label,
        "type": section_type(section, params).value,
        "links": section.link_count,
        "web_links": len(section.links),
        "words": section.words,
        "anchor_words": section.anchor_words,
        "bold": section.bold,
        "background": "#%02x%02x%02x" % section.background,
        "afs": round(section.afs, 4),
        "fonts": list(section.fonts),
        "nested": section.nested,  # with the section before it (rules 1 and 5)
        "lists": len(section.lists),  # list and card groups around it (rule 0)
        "with_next": rule,
        "anchors": [link.anchor for link in section.links[:5]],
    }


def _sections_view(seg: Segmentation, params: AdjustParams) -> list[dict[str, Any]]:
    records = []
    sections = seg.sections
    lists = list_groups(sections, params, seg.outline)
    for index, section in enumerate(sections):
        rule = None
        if index + 1 < len(sections):
            rule = merge_rule(section, sections[index + 1], params, lists).value
        records.append(_section_record(section, params, rule))
    return records


def _print_sections(seg: Segmentation, params: AdjustParams, out: Any) -> None:
    print(f"# {seg.url}: {len(seg.sections)} sections before adjusting, "
          f"{len(seg.adjusted)} after, {len(seg.blocks)} blocks", file=out)
    print(f"{'#':>4} {'type':<8}{'links':>6}{'words':>6}{'anch':>5} {'bold':<5}{'bg':<8}"
          f"{'afs':>6}  label / anchors / rule with next", file=out)
    for number, record in enumerate(_sections_view(seg, params)):
        anchors = ", ".join(a[:20] for a in record["anchors"][:3])
        print(f"{number:>4} {record['type']:<8}{record['links']:>6}{record['words']:>6}"
              f"{record['anchor_words']:>5} {str(record['bold']):<5}{record['background']:<8}"
              f"{record['afs']:>6.3f}  {record['label']}"
              f"{'' if record['nested'] else ' (not nested in the one above)'}  [{anchors}]", file=out)
        if record["with_next"]:
            print(f"{'':>10}└─ rule {record['with_next']}", file=out)


def _print_blocks(seg: Segmentation, out: Any) -> None:
    print(f"# {seg.url} ({seg.charset}): {len(seg.blocks)} blocks", file=out)
    for number, block in enumerate(seg.blocks):
        print(f"block {number} ({len(block)} links)", file=out)
        for link in block:
            print(f"  {link.anchor[:50]!s:<52} {link.href}", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        params = adjust_params_from(args)
    except ValueError as error:
        parser.error(str(error))
    if bool(args.page) == bool(args.manifest):
        parser.error("give either PAGE (with --url) or --manifest FILE.tsv")
    jobs: list[tuple[Path, str] | str]
    if args.manifest:
        manifest = Path(args.manifest)
        if not manifest.is_file():
            parser.error(f"no such manifest: {manifest}")
        jobs = list(_manifest_entries(manifest))
    else:
        if not args.url:
            parser.error("PAGE needs --url URL (relative links are resolved against it)")
        jobs = [(Path(args.page), args.url)]
    failures = 0
    out = sys.stdout
    for job in jobs:
        if isinstance(job, str):
            print(job, file=sys.stderr)
            failures += 1
            continue
        path, url = job
        try:
            body = path.read_bytes()
        except OSError as error:
            print(f"{path}: {error.strerror or error}", file=sys.stderr)
            failures += 1
            continue
        seg = segment_bytes(body, url, params=params)
        if args.json:
            record: dict[str, Any] = {"file": str(path), "url": seg.url,
                                      "blocks": blocks_as_json(seg.blocks)}
            if args.sections:
                record["sections"] = _sections_view(seg, params)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        elif args.sections:
            _print_sections(seg, params, out)
        else:
            _print_blocks(seg, out)
    return EXIT_FAILURE if failures else 0


if __name__ == "__main__":
    sys.exit(main())
