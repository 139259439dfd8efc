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

The same rules tell which font files the site draws at all (font_files_drawn): subset.py subsets only those.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from .font_rules import Compound, FontFace, FontRules, FontRulesError, match_face, parse_font_rules
from .shared_paths import unshare_svg_paths

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
        self._cascade = sorted(
            range(len(rules.rules)), key=lambda i: (rules.rules[i].specificity, rules.rules[i].order)
        )
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
                    k == 0
                    or (combinator == " " and (r, k - 1) in parent.for_descendants)
                    or (combinator == ">" and (r, k - 1) in parent.for_children)
                ):
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
                tag = self._tags[opening_tag] = (
                    name.group(1).lower() if name else "",
                    next(g for g in cls.groups() if g is not None) if cls else "",
                )
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
        if summary and not html[m.end() : summary.start()].strip():
            ranges.append((_element_end(html, "summary", summary.start()), end))
        else:
            ranges.append((m.end(), end))
    at = html.find("hidden")
    while at >= 0:  # str.find, not a regex: a page body is long and has few "hidden"
        if html[at - 1 : at].isspace() and html[at + 6 : at + 7] in _ATTRIBUTE_END:
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
    body_html = unshare_svg_paths(body_html)  # the formulas as typeset (the page writes repeated SVG paths once)
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


def font_files_drawn(css: str, formulas_html: Iterable[str]) -> set[str] | None:
    """File names of the fonts the formulas draw with (font_usage), or None if that cannot be told."""
    try:
        usage = font_usage(css)
        return {face.file_name for formula_html in formulas_html for face in usage.formula_faces(formula_html)}
    except FontRulesError:
        return None
