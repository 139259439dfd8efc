"""The font rules of KaTeX's stylesheet (`parse_font_rules`: its @font-face rules and every rule that sets a
font property) and the CSS font matching algorithm (`match_face`): what fonts.py applies to KaTeX's HTML to
tell which font files a page's formulas make the browser download."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .css import css_blocks

# ------------------------------------------------------------------------------------------ the stylesheet


class FontRulesError(ValueError):
    """katex.css has a font rule this module cannot evaluate exactly (e.g. after a KaTeX upgrade)."""


@dataclass(frozen=True)
class FontFace:
    family: str
    weight: int
    style: str  # "normal" | "italic" | "oblique"
    url: str  # as written in the stylesheet, e.g. "fonts/KaTeX_Main-Regular.woff2"

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[-1].split("?", 1)[0]


# A compound selector: (tag or None, required classes). A selector: compounds left to right, each with the
# combinator that joins it to the previous one (" " or ">"; None for the first).
Compound = tuple[str | None, frozenset[str]]
Selector = tuple[tuple[str | None, Compound], ...]


@dataclass(frozen=True)
class FontRule:
    selector: Selector
    specificity: tuple[int, int]  # (classes, tags)
    order: int
    family: str | None  # the first family of the list; None: not set by this rule
    weight: int | None
    style: str | None


@dataclass(frozen=True)
class FontRules:
    faces: tuple[FontFace, ...]
    rules: tuple[FontRule, ...]


_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)
_FONT_PROPERTIES = ("font", "font-family", "font-weight", "font-style")
_WEIGHT_KEYWORDS = {"normal": 400, "bold": 700}
_COMPOUND_RE = re.compile(r"^(\*|[a-zA-Z][\w-]*)?((?:\.-?[_a-zA-Z][\w-]*)*)$")
_SIZE_RE = re.compile(
    r"^(?:[\d.]+(?:[a-z]+|%)?|xx-small|x-small|small|medium|large|x-large|xx-large|xxx-large"
    r"|smaller|larger)(?:/.*)?$"
)


def _blocks(css: str) -> list[tuple[str, str]]:
    """Top-level (prelude, body) pairs; nested at-rules (@media …) are returned whole as their body;
    statements (@charset / @import) are dropped: they hold no font rules."""
    return [(prelude.strip(), body) for prelude, body in css_blocks(_COMMENT_RE.sub("", css)) if body]


def _declarations(body: str) -> dict[str, str]:
    decls = {}
    for part in body.split(";"):
        name, sep, value = part.partition(":")
        if sep:
            decls[name.strip().lower()] = value.strip()
    return decls


def _first_family(value: str) -> str:
    return value.split(",")[0].strip().strip("\"'")


def _weight(value: str) -> int:
    value = value.strip().lower()
    if value in _WEIGHT_KEYWORDS:
        return _WEIGHT_KEYWORDS[value]
    if value.isdigit():
        return int(value)
    raise FontRulesError(f"font-weight {value!r} is not supported")


def _style(value: str) -> str:
    value = value.strip().lower().split()[0]
    if value not in ("normal", "italic", "oblique"):
        raise FontRulesError(f"font-style {value!r} is not supported")
    return value


def _font_shorthand(value: str) -> tuple[str, int, str]:
    """(family, weight, style) of a `font` shorthand: [style || variant || weight] size[/line-height] family."""
    tokens = value.split()
    weight, style = 400, "normal"  # the shorthand resets what it does not name
    for i, token in enumerate(tokens):
        low = token.lower()
        if _SIZE_RE.match(low) and not (low.isdigit() and i + 1 < len(tokens) and _SIZE_RE.match(tokens[i + 1])):
            return _first_family(" ".join(tokens[i + 1 :])), weight, style
        if low in ("italic", "oblique"):
            style = low
        elif low in _WEIGHT_KEYWORDS or low.isdigit():
            weight = _weight(low)
        elif low not in ("normal", "small-caps"):
            raise FontRulesError(f"font shorthand {value!r} is not supported")
    raise FontRulesError(f"font shorthand {value!r} has no size")


def _parse_selector(text: str) -> Selector:
    parts: list[tuple[str | None, Compound]] = []
    combinator = None
    # re.split with a group alternates compound, combinator, compound, …
    for i, token in enumerate(re.split(r"(\s*>\s*|\s+)", text.strip())):
        if i % 2:
            combinator = ">" if ">" in token else " "
            continue
        match = _COMPOUND_RE.match(token)
        if not token or not match:
            raise FontRulesError(f"selector {text!r} is not supported (only tags, classes, ' ' and '>')")
        tag = match.group(1)
        parts.append(
            (combinator, (None if tag in (None, "*") else tag.lower(), frozenset(match.group(2).split(".")[1:])))
        )
    return tuple(parts)


def parse_font_rules(css: str) -> FontRules:
    """The @font-face rules (woff2 sources) and every rule setting a font property, in source order."""
    faces: list[FontFace] = []
    rules: list[FontRule] = []
    for order, (prelude, body) in enumerate(_blocks(css)):
        head = prelude.lower()
        if head.startswith("@font-face"):
            d = _declarations(body)
            urls = re.findall(r"url\(\s*[\"']?([^\"')]+\.woff2(?:\?[^\"')]*)?)[\"']?\s*\)", d.get("src", ""))
            if not urls or "unicode-range" in d:
                raise FontRulesError(f"@font-face {body.strip()[:80]!r}: no woff2 source, or a unicode-range")
            faces.append(
                FontFace(
                    _first_family(d["font-family"]),
                    _weight(d.get("font-weight", "normal")),
                    _style(d.get("font-style", "normal")),
                    urls[0],
                )
            )
            continue
        if head.startswith("@"):
            if any(re.search(rf"(?<![\w-]){p}\s*:", body) for p in _FONT_PROPERTIES):
                raise FontRulesError(f"font properties inside {prelude!r} are not supported")
            continue
        d = _declarations(body)
        if not any(p in d for p in _FONT_PROPERTIES):
            continue
        family = weight = style = None
        if "font" in d:
            family, weight, style = _font_shorthand(d["font"])
        if "font-family" in d:
            family = _first_family(d["font-family"])
        if "font-weight" in d:
            weight = _weight(d["font-weight"])
        if "font-style" in d:
            style = _style(d["font-style"])
        for text in prelude.split(","):
            selector = _parse_selector(text)
            classes = sum(len(c[1]) for _, c in selector)
            tags = sum(c[0] is not None for _, c in selector)
            rules.append(FontRule(selector, (classes, tags), order, family, weight, style))
    return FontRules(tuple(faces), tuple(rules))


# ------------------------------------------------------------------------------------------ font matching


def match_face(faces: list[FontFace], weight: int, style: str) -> FontFace | None:
    """The face the CSS font matching algorithm (CSS Fonts 4 §5.2) picks: style first, then weight."""
    if not faces:
        return None
    style_order = {
        "italic": ("italic", "oblique", "normal"),
        "oblique": ("oblique", "italic", "normal"),
        "normal": ("normal", "oblique", "italic"),
    }[style]
    for wanted in style_order:
        candidates = [f for f in faces if f.style == wanted]
        if candidates:
            break
    weights = sorted({f.weight for f in candidates})
    if weight in weights:
        chosen = weight
    elif 400 <= weight <= 500:
        between = [w for w in weights if weight < w <= 500]
        below = [w for w in weights if w < weight]
        chosen = between[0] if between else below[-1] if below else [w for w in weights if w > 500][0]
    elif weight < 400:
        below = [w for w in weights if w < weight]
        chosen = below[-1] if below else weights[0]
    else:
        above = [w for w in weights if w > weight]
        chosen = above[0] if above else [w for w in weights if w < weight][-1]
    return next(f for f in candidates if f.weight == chosen)
