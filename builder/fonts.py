"""Which of KaTeX's font files a page's formulas make the browser download — worked out from KaTeX's own
stylesheet, so that each page can preload exactly those fonts (theme/templates/base.html).

Why: a browser requests a web font only when layout meets text that uses it, so without a preload a formula
is first laid out with a fallback font and re-flows (a layout shift) when its KaTeX font arrives. A font
preload starts the download with the stylesheets, and Chromium holds the first paint while font preloads are
in flight (until they finish, at most 100 ms after the stylesheets are in, at most 1.5 s after navigation
start: the RenderBlockingFonts feature). What it waits for is the download, not the font being ready to use:
when a long main-thread task (page scripts) sits between the two, the first paint can still come first —
rare, and measured by bench/site_bench.py.

How: the browser's own rules, applied to KaTeX's HTML. Every text node of a formula's visual part
(`.katex-html`) is drawn with the face its element's computed `font-family` / `font-weight` / `font-style`
select: those come from the rules of katex.css (cascade by specificity, then order; inherited otherwise), and
the face is the one the CSS font matching algorithm picks among the family's @font-face rules. The browser
fetches that face's file even for a character the font lacks (no unicode-range) or draws as nothing (the
zero-width space in KaTeX's vertical lists). The MathML copy (`.katex-mathml`) is drawn with the browser's
math font, never a KaTeX one. tests/e2e/test_layout_shift.py checks the result against Chromium's requests.

Also here: cutting KaTeX's fonts down to the characters the site draws (subset_font, subset_fonts_cached),
called by builder/math.py when it prepares the site's KaTeX files.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable
from urllib.parse import urlsplit

from builder.math import css_blocks

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
_SIZE_RE = re.compile(r"^(?:[\d.]+(?:[a-z]+|%)?|xx-small|x-small|small|medium|large|x-large|xx-large|xxx-large"
                      r"|smaller|larger)(?:/.*)?$")


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
            return _first_family(" ".join(tokens[i + 1:])), weight, style
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
        parts.append((combinator, (None if tag in (None, "*") else tag.lower(),
                                   frozenset(match.group(2).split(".")[1:]))))
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
            faces.append(FontFace(_first_family(d["font-family"]), _weight(d.get("font-weight", "normal")),
                                  _style(d.get("font-style", "normal")), urls[0]))
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
    style_order = {"italic": ("italic", "oblique", "normal"), "oblique": ("oblique", "italic", "normal"),
                   "normal": ("normal", "oblique", "italic")}[style]
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


# ------------------------------------------------------------------------------------------ the HTML

# KaTeX's HTML has no comments, no CDATA and no ">" inside attribute values, so a tag is "<" … ">"
_TAG_RE = re.compile(r'<(/?)([a-zA-Z][\w-]*)(?:\s+class="([^"]*)")?([^>]*)>([^<]?)')
_CLASS_RE = re.compile(r'\sclass\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|([^\s>]+))')
_VOID_ELEMENTS = frozenset("area base br col embed hr img input link meta source track wbr".split())
_KATEX_HTML_RE = re.compile(r'<span class="katex-html"')
_UNUSUAL_CLASS_RE = re.compile(r"class\s+=|class=\s*(?!\")")  # a class attribute not written class="…"
_TAG_BEFORE_TEXT_RE = re.compile(r"(<[^<>]*)>[^<]")
# the class attribute of an element with a child element (or of a `data-class="…"`: then walking is merely slower)
_PARENT_CLASS_RE = re.compile(r'class="([^"]*)"[^>]*>(?=[^<]*<[a-zA-Z])')
_TAG_NAME_RE = re.compile(r"<([a-zA-Z][\w-]*)")

Element = tuple[str, frozenset[str]]  # (tag, classes)


def _compound_matches(compound: Compound, element: Element) -> bool:
    tag, classes = compound
    return (tag is None or tag == element[0]) and classes <= element[1]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: equal styles are one interned object
class _Style:
    """What an element passes on to its children: its font, and which selector parts it and its ancestors
    matched (so a child is matched against `A B` / `A > B` without walking back up the tree)."""

    family: str | None
    weight: int
    style: str
    face: FontFace | None  # the face its text is drawn with (None: not a KaTeX font)
    for_descendants: frozenset[tuple[int, int]]  # (rule, part) matched by this element or an ancestor
    for_children: frozenset[tuple[int, int]]  # (rule, part) matched by this element


class FontUsage:
    """Fonts used by KaTeX HTML under one stylesheet's rules. An element's computed style depends only on
    its parent's `_Style`, its tag and its classes, so it is remembered under exactly that key: walking a
    formula is then about one dictionary lookup per element."""

    def __init__(self, rules: FontRules):
        self.rules = rules
        self._faces_by_family: dict[str, list[FontFace]] = {}
        for face in rules.faces:
            self._faces_by_family.setdefault(face.family, []).append(face)
        # the cascade: least specific first, then in stylesheet order; a later match overrides an earlier one
        self._cascade = sorted(range(len(rules.rules)),
                               key=lambda i: (rules.rules[i].specificity, rules.rules[i].order))
        self._children: dict[tuple[_Style, str, str], _Style] = {}
        self._interned: dict[tuple, _Style] = {}
        self._formulas: dict[str, frozenset[FontFace]] = {}
        self.root = _Style(None, 400, "normal", None, frozenset(), frozenset())
        self.katex = self.child_style(self.root, "span", "katex")
        self._leaf_shortcut = self._leaf_shortcut_applies(rules)
        self._tags: dict[str, tuple[str, str]] = {}  # an opening tag's text → (tag name, class attribute)

    @staticmethod
    def _leaf_shortcut_applies(rules: FontRules) -> bool:
        """Whether _faces_from_leaves may be used: the stylesheet is shaped like KaTeX's (every selector is
        `.katex` or `.katex .A…`, with no tag in those two compounds), so an element starts a selector match
        below `.katex` only by its own classes."""
        root = (None, frozenset({"katex"}))
        if not all(rule.selector[0] == (None, root) for rule in rules.rules):
            return False
        starts = [rule.selector[min(1, len(rule.selector) - 1)] for rule in rules.rules]
        return all(combinator in (None, " ") and tag is None and classes for combinator, (tag, classes) in starts)

    def child_style(self, parent: _Style, tag: str, class_attr: str) -> _Style:
        key = (parent, tag, class_attr)
        found = self._children.get(key)
        if found is not None:
            return found
        element: Element = (tag, frozenset(class_attr.split()))
        matched: set[tuple[int, int]] = set()
        for r, rule in enumerate(self.rules.rules):
            for k, (combinator, compound) in enumerate(rule.selector):
                if _compound_matches(compound, element) and (
                        k == 0 or (combinator == " " and (r, k - 1) in parent.for_descendants)
                        or (combinator == ">" and (r, k - 1) in parent.for_children)):
                    matched.add((r, k))
        family, weight, style = parent.family, parent.weight, parent.style
        for r in self._cascade:
            rule = self.rules.rules[r]
            if (r, len(rule.selector) - 1) in matched:
                family = rule.family if rule.family is not None else family
                weight = rule.weight if rule.weight is not None else weight
                style = rule.style if rule.style is not None else style
        face = match_face(self._faces_by_family.get(family or "", []), weight, style)
        fields = (family, weight, style, face, parent.for_descendants | matched, frozenset(matched))
        result = self._children[key] = self._interned.setdefault(fields, _Style(*fields))
        return result

    def formula_faces(self, formula_html: str) -> frozenset[FontFace]:
        """The faces whose files the browser downloads to draw one `<span class="katex">…</span>`: those of
        the text in its visual part, `.katex-html` (the MathML copy is drawn with the browser's math font)."""
        found = self._formulas.get(formula_html)
        if found is None:
            visual = _KATEX_HTML_RE.search(formula_html)
            if visual is None:
                found = frozenset()
            else:
                found = self._faces_from_leaves(formula_html, visual.start())
                if found is None:
                    found = self._faces_by_walking(formula_html, visual.start())
            self._formulas[formula_html] = found
        return found

    def _faces_by_walking(self, html: str, start: int) -> frozenset[FontFace]:
        """Every element from `start` (the .katex-html span) to its end, each styled as its parent's child."""
        used: set[FontFace] = set()
        child_style, void = self.child_style, _VOID_ELEMENTS
        stack = [self.katex]
        # one tuple per tag: (closing "/", tag, its class when that is its first attribute, the other
        # attributes, the first character of the text that follows the tag, if any)
        for closing, tag, first_class, attrs, text in _TAG_RE.findall(html, start):
            if closing:
                stack.pop()
                if len(stack) == 1:  # the end of .katex-html
                    break
            elif not attrs.endswith("/") and tag.lower() not in void:
                if not first_class and "class" in attrs:
                    cls = _CLASS_RE.search(attrs)
                    first_class = next(g for g in cls.groups() if g is not None) if cls else ""
                stack.append(child_style(stack[-1], tag.lower(), first_class))
            if text and stack[-1].face is not None:
                used.add(stack[-1].face)
        return frozenset(used)

    def _faces_from_leaves(self, html: str, start: int) -> frozenset[FontFace] | None:
        """The same result as _faces_by_walking, several times faster, when no element that has a child element
        matches the start of a selector below `.katex` (KaTeX puts its font classes on the elements holding the
        text): then nothing changes the style on the way down from `.katex-html`, so each element holding text
        is styled as a child of `.katex-html`. None when that does not hold, or the markup is not plain enough
        to tell (text after an end tag, a class attribute not written class="…"): walk the formula instead."""
        if not self._leaf_shortcut:
            return None
        visual = html[start:]
        if _UNUSUAL_CLASS_RE.search(visual):
            return None
        # the tags followed by text: '<span class="mord mathnormal" style="…"' (an end tag: text after an end tag)
        holders = set(_TAG_BEFORE_TEXT_RE.findall(visual))
        if any(tag.startswith("</") for tag in holders):
            return None
        inherited = self.child_style(self.katex, "span", "katex-html")
        for class_attr in set(_PARENT_CLASS_RE.findall(visual)):  # the tag does not matter: no compound names one
            if self.child_style(inherited, "span", class_attr).for_children:  # a selector match starts here
                return None
        used = set()
        for opening_tag in holders:
            tag = self._tags.get(opening_tag)
            if tag is None:
                name = _TAG_NAME_RE.match(opening_tag)
                cls = _CLASS_RE.search(opening_tag)
                tag = self._tags[opening_tag] = (name.group(1).lower() if name else "",
                                                 next(g for g in cls.groups() if g is not None) if cls else "")
            face = self.child_style(inherited, *tag).face
            if face is not None:
                used.add(face)
        return frozenset(used)


@lru_cache(maxsize=4)
def font_usage(css: str) -> FontUsage:
    """One FontUsage per stylesheet text, kept for the process (rules parsed once, formulas memoised)."""
    return FontUsage(parse_font_rules(css))


# ------------------------------------------------------------------------------------------ a page

_DETAILS_RE = re.compile(r"<details\b([^>]*)>", re.I)
_SUMMARY_RE = re.compile(r"<summary\b", re.I)
_OPEN_ATTR_RE = re.compile(r"(?:^|\s)open(?:[\s=/]|$)", re.I)
_ATTRIBUTE_END = frozenset(" \t\n\r\f=/>")


def _element_end(html: str, tag: str, start: int) -> int:
    """Offset just past the end tag matching the `<tag …>` at `start` (same-name nesting counted)."""
    depth = 0
    for m in re.compile(rf"<(/?){re.escape(tag)}\b[^>]*>", re.I).finditer(html, start):
        depth += -1 if m.group(1) else 1
        if depth == 0:
            return m.end()
    return len(html)


def hidden_ranges(html: str) -> list[tuple[int, int]]:
    """Offsets of what is not rendered when the page loads: elements with the `hidden` attribute, and the
    content of a closed `<details>` but its `<summary>` (formulas there fetch their fonts when shown)."""
    ranges: list[tuple[int, int]] = []
    for m in _DETAILS_RE.finditer(html):
        if _OPEN_ATTR_RE.search(m.group(1)):
            continue
        end = _element_end(html, "details", m.start())
        summary = _SUMMARY_RE.search(html, m.end(), end)
        if summary and not html[m.end():summary.start()].strip():
            ranges.append((_element_end(html, "summary", summary.start()), end))
        else:
            ranges.append((m.end(), end))
    at = html.find("hidden")
    while at >= 0:  # str.find, not a regex: a page body is long and has few "hidden"
        if html[at - 1:at].isspace() and html[at + 6:at + 7] in _ATTRIBUTE_END:
            tag_start = html.rfind("<", 0, at)
            # inside a tag, not inside a quoted attribute value
            if tag_start > html.rfind(">", 0, at) and not html.count('"', tag_start, at) % 2:
                name = _TAG_NAME_RE.match(html, tag_start)
                if name:
                    ranges.append((tag_start, _element_end(html, name.group(1), tag_start)))
        at = html.find("hidden", at + 6)
    return ranges


def page_faces(body_html: str, formulas_html: Iterable[str], katex_css: str) -> set[FontFace]:
    """The KaTeX faces a page needs when it is first shown: those of its formulas (`formulas_html`: each
    formula's HTML as typeset, `<span class="katex">…</span>`) that the body shows — a formula the body does
    not contain as is, or only inside hidden_ranges(), is not drawn."""
    usage = font_usage(katex_css)
    hidden = hidden_ranges(body_html) if "<details" in body_html or "hidden" in body_html else []
    faces: set[FontFace] = set()
    for formula in dict.fromkeys(formulas_html):
        at = body_html.find(formula)
        while at >= 0 and any(start <= at < end for start, end in hidden):
            at = body_html.find(formula, at + 1)
        if at >= 0:
            faces |= usage.formula_faces(formula)
    return faces


def page_font_urls(body_html: str, formulas_html: Iterable[str], katex_css: str, stylesheet_url: str) -> list[str]:
    """URLs of the font files page_faces() names, as the page must write them to preload them: each
    @font-face URL resolved against the stylesheet's own URL (as the browser resolves it), so that the
    preload and the stylesheet's request are one and the same request. Sorted."""
    faces = page_faces(body_html, formulas_html, katex_css)
    return sorted({resolve_relative(stylesheet_url, face.url) for face in faces})


def resolve_relative(base: str, ref: str) -> str:
    """`ref` as seen from the document that links `base`, both relative URLs ("../assets/katex/x.css?v=1",
    "fonts/a.woff2" → "../assets/katex/fonts/a.woff2"). urllib's urljoin would drop a leading "../"."""
    if urlsplit(ref).scheme or ref.startswith("/"):
        return ref
    path = urlsplit(base).path
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), ref))


# ------------------------------------------------------------------------------------------ subsetting

# The fonts: KaTeX's woff2 files hold every glyph KaTeX can draw (Main-Regular alone is 26 KB); a course draws a
# few dozen characters. Each font the pruned stylesheet names is cut down to the characters the site's formulas
# contain and AUTOHINTER_REFERENCE (with everything else of the font kept: outlines, metrics, hinting, kerning,
# OpenType layout, names), so every formula looks exactly as with the full font. Needs fontTools (with brotli
# for woff2); without it the fonts ship whole.

KATEX_FONTS_DIR = "assets/katex/fonts/"
FONT_SUBSET_VERSION = "2"  # part of the subset cache key: change it whenever what is subset, or how, changes
# Kept in each subset: Chromium on Linux draws with FreeType's auto-hinter (or skrifa's copy of it), which sizes
# a script's blue zones and stem widths from fixed reference letters of that script ("blue strings" and standard
# characters, FreeType's src/autofit/afblue.dat); a subset without them would draw the very same glyphs a little
# differently. Latin's are always kept (digits, symbols and Latin letters use them); another script's when the
# site draws one of its letters.
AUTOHINTER_REFERENCE = {
    "latin": ("THEZOCQS" "HEZLOCUS" "fijkdbh" "uvxzoesc" "nrxzoesc" "pqgjy" "oO0", None),
    "greek": ("ΓΒΕΖΘΟΩ" "ΒΔΖΞΘΟ" "βθδζλξ" "αειοπστω" "βγημρφχψ" "οΟ", re.compile("[\u0370-\u03ff\u1f00-\u1fff]")),
    "cyrillic": ("БВЕПЗОСЭ" "БВЕШЗОСЭ" "хпншезос" "руф" "оО", re.compile("[\u0400-\u052f]")),
}


def autohinter_reference(characters: set[str]) -> set[str]:
    """The reference letters of every script `characters` has letters of (Latin always)."""
    text = "".join(characters)
    return {c for chars, script in AUTOHINTER_REFERENCE.values() if script is None or script.search(text) for c in chars}


def subset_font(woff2: bytes, characters: str) -> bytes:
    """`woff2` with only the glyphs of `characters` (and what the font's layout tables reach from them);
    tables, names, hinting and metrics are kept, the timestamp is not touched (same bytes for the same input)."""
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.name_legacy = True
    options.notdef_glyph = True
    options.notdef_outline = True
    options.glyph_names = True
    options.hinting = True
    options.legacy_kern = True
    options.drop_tables = []
    options.recalc_bounds = False
    options.recalc_timestamp = False
    options.prune_unicode_ranges = False
    font = TTFont(io.BytesIO(woff2), recalcBBoxes=False, recalcTimestamp=False)  # glyph boxes as drawn by KaTeX
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters)
    subsetter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)  # tables in tag order: the same bytes whatever the hash seed
    return out.getvalue()


def subset_fonts_cached(fonts: dict[str, bytes], characters: str, css: str, formulas_html: Iterable[str],
                         cache_dir: Path | None) -> dict[str, bytes] | None:
    """The fonts the formulas draw with, each subset to `characters` (the others are never requested: left as
    they are), cached by (characters, fonts): a page edit seldom adds a character. None without fontTools."""
    try:
        import brotli  # noqa: F401  (woff2)
        import fontTools
    except ImportError:
        return None
    from builder import cache as cachestore

    key = cachestore.digest("katex-font-subset", FONT_SUBSET_VERSION, fontTools.version, characters,
                            *(name.encode() + b"\0" + data for name, data in sorted(fonts.items())))
    with cachestore.open_cache(cache_dir) as store:
        found = store.get(key)
        if found is None:  # which fonts are drawn is worked out only here: it costs more than the cache look-up
            drawn = _faces_drawn(css, formulas_html)
            found = {name: subset_font(data, characters) for name, data in fonts.items()
                     if drawn is None or name[len(KATEX_FONTS_DIR):] in drawn}
            store.put(key, found)
    return found


def _faces_drawn(css: str, formulas_html: Iterable[str]) -> set[str] | None:
    """File names of the fonts the formulas draw with (font_usage), or None if that cannot be told."""
    try:
        usage = font_usage(css)
        return {face.file_name for formula_html in formulas_html for face in usage.formula_faces(formula_html)}
    except FontRulesError:
        return None
