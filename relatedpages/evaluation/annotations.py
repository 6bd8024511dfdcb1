"""Block annotations kept as element paths: pages of ``../shared/data`` annotated by this
project, without copying a page into the repository.

A Kreuzer-style data set ships each page twice, once with ``data-block`` attributes on the
annotated elements.  The pages this project annotates itself (``annotations/*.tsv``; issue 11,
items 3 and 5) stay where they are in ``../shared/data``: an annotation file lists, per page,
the XPath of each element a person marked as a block (the element that would carry
``data-block``), as lxml's ``getpath`` gives it on the page parsed the way the evaluation
parses it (:func:`relatedpages.evaluation.container.parse_dom`).  :func:`mark_blocks` puts
``data-block`` on those elements, and the evaluation reads them as it reads Kreuzer's.

File format (UTF-8, tab-separated, ``#`` comments)::

    page<TAB>url<TAB>xpath<TAB>type

``page`` relative to the shared data folder; ``url`` the page's URL (a placeholder where the
data set has none: links resolve against it on both sides alike); ``type`` free text (Menu,
LinkList, Content, …).  :func:`outline` prints what an annotator needs to choose the paths.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from filters.urls import normalise_url
from relatedpages.evaluation.container import base_url, parse_dom


@dataclass(frozen=True)
class PathAnnotation:
    """One annotated page: the shared-data file, its URL, the XPaths of its blocks."""

    page: str  # relative to the shared data folder
    url: str
    paths: tuple[str, ...]


class AnnotationError(ValueError):
    """An annotation file that cannot be used (its line, and why)."""


def read_annotations(path: Path) -> list[PathAnnotation]:
    """The pages of an annotation file, in the order they first appear."""
    pages: dict[str, tuple[str, list[str]]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AnnotationError(f"{path}: {error}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or not all(field.strip() for field in fields[:3]):
            raise AnnotationError(f"{path}:{number}: expected page, url, xpath and type "
                                  f"separated by tabs")
        page, url, xpath = (field.strip() for field in fields[:3])
        known_url, paths = pages.setdefault(page, (url, []))
        if known_url != url:
            raise AnnotationError(f"{path}:{number}: {page} has two URLs ({known_url}, {url})")
        if xpath in paths:
            raise AnnotationError(f"{path}:{number}: {xpath} annotated twice on {page}")
        paths.append(xpath)
    return [PathAnnotation(page, url, tuple(paths)) for page, (url, paths) in pages.items()]


def mark_blocks(root: etree._Element, paths: tuple[str, ...], page: str = "") -> None:
    """Put ``data-block`` on the element at each path (AnnotationError when a path finds
    no element: the page or the parser changed since it was annotated)."""
    tree = root.getroottree()
    for xpath in paths:
        found = tree.xpath(xpath)
        if not isinstance(found, list) or len(found) != 1 or not isinstance(found[0], etree._Element):
            raise AnnotationError(f"{page}: {xpath} does not name one element of the page")
        found[0].set("data-block", "1")


def outline(data: bytes, url: str, min_links: int = 2, anchors: int = 4) -> str:
    """The page's elements that hold links, for an annotator: one line per element with at
    least ``min_links`` links whose parent holds more (a chain of wrappers shows once),
    indented by nesting, with its XPath, ``tag#id.class``, its link count and its first
    anchors.

    >>> print(outline(b"<body><div id='nav'><ul><li><a href='/a'>A</a><li><a href='/b'>B</a>"
    ...               b"</ul></div><p><a href='/c'>C</a> and <a href='/d'>D</a></p></body>",
    ...               "http://s.org/"))
    /html  html  4  A | B | C | D
      /html/body/div  div#nav  2  A | B
      /html/body/p  p  2  C | D
    """
    root = parse_dom(data)
    if root is None:
        return ""
    base = base_url(root, url)
    counts: dict[etree._Element, list[str]] = {}
    for anchor in root.iter("a"):
        href = anchor.get("href")
        if href is None or normalise_url(href, base) is None:
            continue
        text = " ".join("".join(str(t) for t in anchor.itertext()).split())[:30] or "·"
        for element in anchor.iterancestors():
            counts.setdefault(element, []).append(text)
    tree = root.getroottree()
    lines: list[str] = []
    depth: dict[etree._Element, int] = {}
    for element in root.iter():
        texts = counts.get(element)
        if texts is None or len(texts) < min_links:
            continue
        parent = element.getparent()
        if parent is not None and len(counts.get(parent, ())) == len(texts):
            depth[element] = depth.get(parent, 0)  # a wrapper of the same links: not shown
            continue
        level = depth[element] = depth.get(parent, -1) + 1 if parent is not None else 0
        name = str(element.tag)
        if element.get("id"):
            name += "#" + element.get("id", "").strip()[:20]
        if element.get("class"):
            name += "." + ".".join(element.get("class", "").split()[:2])[:30]
        shown = " | ".join(texts[:anchors]) + (" …" if len(texts) > anchors else "")
        lines.append(f"{'  ' * level}{tree.getpath(element)}  {name}  {len(texts)}  {shown}")
    return "\n".join(lines)
