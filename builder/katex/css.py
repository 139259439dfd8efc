"""KaTeX's stylesheet read as CSS: the one tokenizer (`css_blocks`) that both the pruning here and the font
rules (fonts.py) use, the class names of KaTeX HTML (`classes_in`), and the stylesheet pruned to the rules the
site's formulas can match (`prune_katex_css`)."""

from __future__ import annotations

import re

# KaTeX's stylesheet has a rule for every size pair, font and construct KaTeX knows (21 KB); a course uses a
# small part of it. A selector that requires a class no formula of the site has can match nothing: it goes,
# and so does a rule left without selectors, and an @font-face whose family no remaining rule names.

_CLASS_ATTR_RE = re.compile(r'\sclass="([^"]*)"')
_CLASS_SELECTOR_RE = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_FUNCTIONAL_PSEUDO_RE = re.compile(r":[\w-]+\((?:[^()]|\([^()]*\))*\)")  # :not(.x) requires no class
_ATTRIBUTE_SELECTOR_RE = re.compile(r"\[[^\]]*\]")


def classes_in(html: str) -> set[str]:
    """Every class name used in `html`'s class attributes."""
    return set(" ".join(_CLASS_ATTR_RE.findall(html)).split())


def css_blocks(css: str) -> list[tuple[str, str]]:
    """Top-level (prelude, body) pairs of a stylesheet; body is None-free: '' for `@import …;`-like statements.
    Strings and comments are skipped over, so braces inside them do not count."""
    blocks: list[tuple[str, str]] = []
    i, n, start = 0, len(css), 0
    depth, open_at = 0, -1
    while i < n:
        c = css[i]
        if c in "\"'":
            j = i + 1
            while j < n and css[j] != c:
                j += 2 if css[j] == "\\" else 1
            i = j + 1
            continue
        if css.startswith("/*", i):
            end = css.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                blocks.append((css[start:open_at], css[open_at + 1 : i]))
                start = i + 1
            elif depth < 0:
                raise ValueError("unbalanced '}' in stylesheet")
        elif c == ";" and depth == 0:
            blocks.append((css[start : i + 1], ""))
            start = i + 1
        i += 1
    if depth != 0:
        raise ValueError("unbalanced '{' in stylesheet")
    if css[start:].strip():
        blocks.append((css[start:], ""))
    return blocks


def _split_selectors(prelude: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(prelude):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(prelude[start:i])
            start = i + 1
    parts.append(prelude[start:])
    return parts


def _selector_can_match(selector: str, used: set[str]) -> bool:
    if "\\" in selector:  # escaped characters: not worth reasoning about, keep the selector
        return True
    bare = _ATTRIBUTE_SELECTOR_RE.sub("", _FUNCTIONAL_PSEUDO_RE.sub("", selector))
    return all(name in used for name in _CLASS_SELECTOR_RE.findall(bare))


def _prune_rules(css: str, used: set[str]) -> list[tuple[str, str | None]]:
    """The rules of a stylesheet in order, as (text, font family): selectors pruned to those that can match,
    rules left with none dropped; the family is set for top-level @font-face rules (decided later)."""
    kept: list[tuple[str, str | None]] = []
    for prelude, body in css_blocks(css):
        head = prelude.strip().lower()
        if head.startswith("@font-face"):
            family = re.search(r"font-family\s*:\s*([^;]+)", body)
            kept.append((f"{prelude}{{{body}}}", family.group(1).strip().strip("\"'") if family else ""))
        elif head.startswith(("@media", "@supports", "@layer", "@container")) and "{" in body:
            inner = "".join(text for text, _ in _prune_rules(body, used))
            if inner:
                kept.append((f"{prelude}{{{inner}}}", None))
        elif head.startswith("@"):  # @charset, @import, @keyframes, …: kept as they are
            kept.append((f"{prelude}{{{body}}}" if body or not head.endswith(";") else prelude, None))
        else:
            selectors = [s for s in _split_selectors(prelude) if _selector_can_match(s, used)]
            if selectors:
                kept.append((f"{','.join(selectors)}{{{body}}}", None))
    return kept


def prune_katex_css(css: str, used_classes: set[str]) -> str:
    """KaTeX's stylesheet without what cannot apply to formulas whose HTML uses only `used_classes`:
    selectors requiring another class (a rule keeps its other selectors), rules left with none, and
    @font-face rules of families that no kept rule names. Order and text of everything kept are unchanged."""
    rules = _prune_rules(css, used_classes)
    named = "".join(text for text, family in rules if family is None)
    return "".join(
        text
        for text, family in rules
        if family is None or not family or re.search(rf"(?<![\w-]){re.escape(family)}(?![\w-])", named)
    )
