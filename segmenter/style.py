"""Text style features for the adjusting stage: colours, CIELAB distance, simple CSS.

The paper's Eq. (1) needs, for every text element, the Euclidean distance between its
font colour and its background colour in CIELAB space, normalised to [0, 1].  Colours
come from HTML attributes (``<font color>``, ``bgcolor``, ``<body text link>``), inline
``style`` attributes and simple ``<style>`` rules whose selector is one compound of tag,
``.class`` and ``#id`` (descendant and pseudo selectors are ignored: a streaming scan
cannot evaluate them, and they rarely carry the page's main colours).

colormath's ``delta_e_*`` functions crash on NumPy >= 1.23, so only its sRGB -> Lab
*conversion* is used and the distance (CIE76, i.e. Euclidean) is computed here.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Iterable, Mapping, NamedTuple

RGB = tuple[int, int, int]

WHITE: RGB = (255, 255, 255)
BLACK: RGB = (0, 0, 0)
LINK_BLUE: RGB = (0, 0, 238)  # the browsers' default unvisited-link colour (#0000EE)

# CSS Color Module Level 4 named colours (the 16 HTML 4 colours plus the common extended
# ones seen on real pages); unknown names are ignored rather than guessed.
NAMED_COLOURS: Mapping[str, RGB] = {
    "black": (0, 0, 0), "silver": (192, 192, 192), "gray": (128, 128, 128),
    "grey": (128, 128, 128), "white": (255, 255, 255), "maroon": (128, 0, 0),
    "red": (255, 0, 0), "purple": (128, 0, 128), "fuchsia": (255, 0, 255),
    "magenta": (255, 0, 255), "green": (0, 128, 0), "lime": (0, 255, 0),
    "olive": (128, 128, 0), "yellow": (255, 255, 0), "navy": (0, 0, 128),
    "blue": (0, 0, 255), "teal": (0, 128, 128), "aqua": (0, 255, 255),
    "cyan": (0, 255, 255), "orange": (255, 165, 0), "darkblue": (0, 0, 139),
    "darkred": (139, 0, 0), "darkgreen": (0, 100, 0), "darkgray": (169, 169, 169),
    "darkgrey": (169, 169, 169), "lightgray": (211, 211, 211),
    "lightgrey": (211, 211, 211), "gainsboro": (220, 220, 220),
    "whitesmoke": (245, 245, 245), "dimgray": (105, 105, 105), "dimgrey": (105, 105, 105),
    "lightblue": (173, 216, 230), "skyblue": (135, 206, 235), "steelblue": (70, 130, 180),
    "royalblue": (65, 105, 225), "midnightblue": (25, 25, 112), "beige": (245, 245, 220),
    "ivory": (255, 255, 240), "linen": (250, 240, 230), "wheat": (245, 222, 179),
    "tan": (210, 180, 140), "brown": (165, 42, 42), "gold": (255, 215, 0),
    "pink": (255, 192, 203), "crimson": (220, 20, 60), "orangered": (255, 69, 0),
    "firebrick": (178, 34, 34), "indigo": (75, 0, 130), "violet": (238, 130, 238),
    "lightyellow": (255, 255, 224), "lightgreen": (144, 238, 144),
    "forestgreen": (34, 139, 34), "seagreen": (46, 139, 87), "khaki": (240, 230, 140),
    "lavender": (230, 230, 250), "aliceblue": (240, 248, 255), "azure": (240, 255, 255),
    "honeydew": (240, 255, 240), "mintcream": (245, 255, 250), "snow": (255, 250, 250),
    "ghostwhite": (248, 248, 255), "floralwhite": (255, 250, 240),
    "oldlace": (253, 245, 230), "seashell": (255, 245, 238), "cornsilk": (255, 248, 220),
    "lemonchiffon": (255, 250, 205), "papayawhip": (255, 239, 213),
    "blanchedalmond": (255, 235, 205), "mistyrose": (255, 228, 225),
    "slategray": (112, 128, 144), "slategrey": (112, 128, 144),
    "lightslategray": (119, 136, 153), "darkslategray": (47, 79, 79),
    "darkslategrey": (47, 79, 79), "cornflowerblue": (100, 149, 237),
    "dodgerblue": (30, 144, 255), "deepskyblue": (0, 191, 255),
    "darkorange": (255, 140, 0), "chocolate": (210, 105, 30), "sienna": (160, 82, 45),
    "saddlebrown": (139, 69, 19), "olivedrab": (107, 142, 35),
    "darkolivegreen": (85, 107, 47), "darkcyan": (0, 139, 139),
    "darkmagenta": (139, 0, 139), "darkviolet": (148, 0, 211), "orchid": (218, 112, 214),
    "plum": (221, 160, 221), "salmon": (250, 128, 114), "tomato": (255, 99, 71),
    "coral": (255, 127, 80), "goldenrod": (218, 165, 32), "peru": (205, 133, 63),
}

_HEX_RE = re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})\Z")
_FUNC_RE = re.compile(r"rgba?\(\s*([^)]*)\)", re.IGNORECASE)
_COLOUR_TOKEN_RE = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\([^)]*\)|[a-zA-Z]+")


def parse_colour(value: str) -> RGB | None:
    """Parse a CSS/HTML colour value; None when it is not a colour we can use.

    >>> parse_colour("#FFF"), parse_colour("navy"), parse_colour("rgb(255, 0, 0)")
    ((255, 255, 255), (0, 0, 128), (255, 0, 0))
    >>> parse_colour("transparent") is None, parse_colour("ff0000")
    (True, (255, 0, 0))
    """
    text = value.strip().lower()
    if not text:
        return None
    named = NAMED_COLOURS.get(text)
    if named is not None:
        return named
    match = _HEX_RE.match(text)
    if match:
        digits = match.group(1)
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16))
    match = _FUNC_RE.match(text)
    if match:
        return _parse_rgb_function(match.group(1))
    return None


def _parse_rgb_function(body: str) -> RGB | None:
    parts = [p for p in re.split(r"[\s,/]+", body.strip()) if p]
    if len(parts) < 3:
        return None
    channels = []
    for part in parts[:3]:
        try:
            if part.endswith("%"):
                channel = float(part[:-1]) * 2.55
            else:
                channel = float(part)
        except ValueError:
            return None
        if not math.isfinite(channel):
            return None
        channels.append(int(round(min(255.0, max(0.0, channel)))))
    return (channels[0], channels[1], channels[2])


def colour_in_background(value: str) -> RGB | None:
    """The colour inside a CSS ``background`` shorthand, if any.

    >>> colour_in_background("url(x.png) no-repeat #336699")
    (51, 102, 153)
    """
    without_urls = re.sub(r"url\([^)]*\)", " ", value, flags=re.IGNORECASE)
    for token in _COLOUR_TOKEN_RE.findall(without_urls):
        colour = parse_colour(token)
        if colour is not None:
            return colour
    return None


@lru_cache(maxsize=4096)
def rgb_to_lab(rgb: RGB) -> tuple[float, float, float]:
    """sRGB (0–255) → CIELAB (D65), via colormath's conversion."""
    from colormath2.color_conversions import convert_color
    from colormath2.color_objects import LabColor, sRGBColor

    lab = convert_color(sRGBColor(*rgb, is_upscaled=True), LabColor)
    return (float(lab.lab_l), float(lab.lab_a), float(lab.lab_b))


# The largest CIE76 distance between two sRGB colours (blue (0,0,255) vs. lime (0,255,0)),
# used to normalise edis into [0, 1] as Eq. (1) requires.  Pinned by a test that
# searches the sRGB cube's corners.
MAX_LAB_DISTANCE = 258.6890


@lru_cache(maxsize=4096)
def colour_distance(font: RGB, background: RGB) -> float:
    """Normalised Euclidean distance in CIELAB between two colours: edis in Eq. (1).

    >>> colour_distance((0, 0, 0), (255, 255, 255))
    0.3866
    >>> colour_distance((1, 2, 3), (1, 2, 3))
    0.0
    """
    a = rgb_to_lab(font)
    b = rgb_to_lab(background)
    return round(min(1.0, math.dist(a, b) / MAX_LAB_DISTANCE), 4)


# ---------------------------------------------------------------------------------------
# Style declarations


class Declarations(NamedTuple):
    """The style properties the segmenter uses; None = not set here (inherit).  A tuple,
    not a frozen dataclass: made once per rule and cascade step on the hot path."""

    colour: RGB | None = None
    background: RGB | None = None
    bold: bool | None = None
    font_family: str | None = None
    font_size: str | None = None

    def over(self, other: "Declarations") -> "Declarations":
        """self's values where set, else other's (self has higher precedence)."""
        if other is EMPTY_DECLARATIONS:
            return self
        if self is EMPTY_DECLARATIONS:
            return other
        return Declarations(
            colour=self.colour if self.colour is not None else other.colour,
            background=self.background if self.background is not None else other.background,
            bold=self.bold if self.bold is not None else other.bold,
            font_family=self.font_family if self.font_family is not None else other.font_family,
            font_size=self.font_size if self.font_size is not None else other.font_size,
        )


EMPTY_DECLARATIONS = Declarations()

_BOLD_WEIGHTS = {"bold", "bolder", "600", "700", "800", "900"}
_NORMAL_WEIGHTS = {"normal", "lighter", "100", "200", "300", "400", "500"}


@lru_cache(maxsize=8192)
def parse_declarations(text: str) -> Declarations:
    """Parse a CSS declaration list (an inline ``style`` or a rule body).

    >>> d = parse_declarations("color: #f00; background: url(a.gif) white; font-weight: 700")
    >>> d.colour, d.background, d.bold
    ((255, 0, 0), (255, 255, 255), True)
    """
    colour = background = bold = family = size = None
    for declaration in text.split(";"):
        name, sep, value = declaration.partition(":")
        if not sep:
            continue
        name = name.strip().lower()
        value = value.replace("!important", "").strip()
        if name == "color":
            colour = parse_colour(value) or colour
        elif name == "background-color":
            background = parse_colour(value) or background
        elif name == "background":
            background = colour_in_background(value) or background
        elif name == "font-weight":
            weight = value.lower()
            if weight in _BOLD_WEIGHTS:
                bold = True
            elif weight in _NORMAL_WEIGHTS:
                bold = False
        elif name == "font-family":
            family = value.split(",")[0].strip().strip("'\"").lower() or family
        elif name == "font-size":
            size = value.lower() or size
        elif name == "font":
            lowered = value.lower().split()
            if any(w in _BOLD_WEIGHTS for w in lowered):
                bold = True
    declarations = Declarations(colour, background, bold, family, size)
    return EMPTY_DECLARATIONS if declarations == EMPTY_DECLARATIONS else declarations


_COMMENT_RE = re.compile(r"/\*.*?\*/", re.DOTALL)
_SIMPLE_SELECTOR_RE = re.compile(
    r"\A(?P<tag>[a-zA-Z][a-zA-Z0-9]*|\*)?(?P<rest>(?:[.#][-_a-zA-Z0-9]+)*)\Z"
)
_PART_RE = re.compile(r"([.#])([-_a-zA-Z0-9]+)")


class SimpleSelector(NamedTuple):
    """One compound selector: optional tag, classes, optional id."""

    tag: str | None
    classes: frozenset[str]
    element_id: str | None

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (1 if self.element_id else 0, len(self.classes), 1 if self.tag else 0)


@lru_cache(maxsize=16384)
def parse_selector(text: str) -> SimpleSelector | None:
    """A compound selector of tag/.class/#id, or None for anything else.

    >>> parse_selector("td.nav#x")
    SimpleSelector(tag='td', classes=frozenset({'nav'}), element_id='x')
    >>> parse_selector("div a") is None, parse_selector("a:hover") is None
    (True, True)
    """
    match = _SIMPLE_SELECTOR_RE.match(text.strip())
    if not match or not (match.group("tag") or match.group("rest")):
        return None
    tag = match.group("tag")
    classes: set[str] = set()
    element_id = None
    for kind, name in _PART_RE.findall(match.group("rest")):
        if kind == ".":
            classes.add(name.lower())
        else:
            element_id = name.lower()
    return SimpleSelector(
        tag=None if tag in (None, "*") else tag.lower(),
        classes=frozenset(classes),
        element_id=element_id,
    )


@lru_cache(maxsize=1024)
def sheet_rules(css: str) -> tuple[tuple[SimpleSelector, Declarations], ...]:
    """The rules of one ``<style>`` sheet a streaming scan can use, in order: each simple
    selector (:func:`parse_selector`) of a rule that sets a colour, background or font.
    Memoised: the pages of a site repeat their sheets.

    >>> [(sel.classes, d.bold) for sel, d in sheet_rules(".a, div b {font-weight:bold} p {margin:0}")]
    [(frozenset({'a'}), True)]
    """
    if "/*" in css:
        css = _COMMENT_RE.sub(" ", css)
    rules: list[tuple[SimpleSelector, Declarations]] = []
    # Split at "}" and take the last "{" of each piece: linear in the sheet's size
    # (a rule regex backtracks badly on nested @media blocks), and the rules inside
    # @media are read as if unconditional.
    for piece in css.split("}"):
        head, brace, body = piece.rpartition("{")
        if not brace:
            continue
        # Most rules of a modern stylesheet set layout only: skip them before parsing.
        if "color" not in body and "background" not in body and "font" not in body:
            continue
        selectors = head.rpartition("{")[2]
        if "@" in selectors:
            continue
        simple = [sel for sel in map(parse_selector, selectors.split(",")) if sel is not None]
        if not simple:
            continue  # descendant, pseudo-class … selectors: a streaming scan can't match them
        declarations = parse_declarations(body)
        if declarations is EMPTY_DECLARATIONS:
            continue
        rules.extend((selector, declarations) for selector in simple)
    return tuple(rules)


class StyleSheet:
    """Simple rules from ``<style>`` elements, indexed by tag, class and id."""

    def __init__(self) -> None:
        self._rules: list[tuple[tuple[int, int, int], int, SimpleSelector, Declarations]] = []
        self._by_tag: dict[str, list[int]] = {}
        self._by_class: dict[str, list[int]] = {}
        self._by_id: dict[str, list[int]] = {}
        self._universal: list[int] = []
        self.has_id_rules = False
        self.has_class_rules = False
        self._matched: dict[tuple[str, frozenset[str], str | None], Declarations] = {}
        self._class_hits: dict[str, bool] = {}
        self._class_names: set[str] = set()  # in any selector (by_class misses "#x.y")

    def __bool__(self) -> bool:
        return bool(self._rules)

    def names_a_class(self, class_attribute: str) -> bool:
        """Some rule names one of these classes (a ``class`` attribute's value): when none
        does, the attribute cannot change the element's style.  Memoised per value."""
        named = self._class_hits.get(class_attribute)
        if named is None:
            named = self._class_hits[class_attribute] = not self._class_names.isdisjoint(
                [name.lower() for name in class_attribute.split()])
        return named

    def names_an_id(self, element_id: str) -> bool:
        """Some rule names this id (compared lower-case, as :meth:`match` does)."""
        return element_id.lower() in self._by_id

    def styled_tags(self) -> frozenset[str] | None:
        """Tags some rule may match regardless of class and id; None = every tag."""
        return None if self._universal else frozenset(self._by_tag)

    def add_css(self, css: str) -> None:
        self.add_rules(sheet_rules(css))

    def add_rules(self, rules: Iterable[tuple[SimpleSelector, Declarations]]) -> None:
        """A sheet's rules (:func:`sheet_rules`), after the rules already added."""
        self._matched.clear()  # memoised matches predate these rules
        self._class_hits.clear()
        for selector, declarations in rules:
            index = len(self._rules)
            self._rules.append((selector.specificity, index, selector, declarations))
            if selector.classes:  # "#x.y" too: indexed by its id, it still reads classes
                self.has_class_rules = True
                self._class_names.update(selector.classes)
            if selector.element_id:
                self.has_id_rules = True
                self._by_id.setdefault(selector.element_id, []).append(index)
            elif selector.classes:
                for name in selector.classes:
                    self._by_class.setdefault(name, []).append(index)
            elif selector.tag:
                self._by_tag.setdefault(selector.tag, []).append(index)
            else:
                self._universal.append(index)

    def match(self, tag: str, classes: Iterable[str], element_id: str | None) -> Declarations:
        """The cascaded declarations of the matching rules (specificity, then order),
        memoised per (tag, classes, id) until the next sheet."""
        class_set = frozenset(c.lower() for c in classes)
        key = (tag, class_set, element_id)
        matched = self._matched.get(key)
        if matched is None:
            matched = self._matched[key] = self._match(tag, class_set, element_id)
        return matched

    def _match(self, tag: str, class_set: frozenset[str], element_id: str | None) -> Declarations:
        candidates: set[int] = set(self._by_tag.get(tag, ()))
        candidates.update(self._universal)
        for name in class_set:
            candidates.update(self._by_class.get(name, ()))
        if element_id:
            candidates.update(self._by_id.get(element_id.lower(), ()))
        if not candidates:
            return EMPTY_DECLARATIONS
        if len(candidates) == 1:
            (index,) = candidates
            _, _, selector, declarations = self._rules[index]
            if (selector.tag in (None, tag) and selector.classes <= class_set
                    and selector.element_id in (None, (element_id or "").lower())):
                return declarations
            return EMPTY_DECLARATIONS
        result = EMPTY_DECLARATIONS
        matched = []
        for index in candidates:
            specificity, order, selector, declarations = self._rules[index]
            if selector.tag and selector.tag != tag:
                continue
            if not selector.classes <= class_set:
                continue
            if selector.element_id and selector.element_id != (element_id or "").lower():
                continue
            matched.append((specificity, order, declarations))
        for _, _, declarations in sorted(matched, key=lambda m: (m[0], m[1]), reverse=True):
            result = result.over(declarations)
        return result
