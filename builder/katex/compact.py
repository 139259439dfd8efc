"""KaTeX's output made smaller (`compact_katex_html`): what is cached and put into pages — the same elements,
classes and lengths, without the bytes no browser or screen reader uses."""

from __future__ import annotations

import re

_MATH_XMLNS = '<math xmlns="http://www.w3.org/1998/Math/MathML"'
_SVG_XMLNS = '<svg xmlns="http://www.w3.org/2000/svg"'
_TEX_ANNOTATION_RE = re.compile(
    r'<semantics>(.*?)<annotation encoding="application/x-tex">[^<]*</annotation></semantics>', re.S
)
_STYLE_RE = re.compile(r' style="([^"]*)"')
_LEADING_ZERO_RE = re.compile(r"(?<![\w.])0\.(?=\d)")


def _compact_style(match: re.Match[str]) -> str:
    value = _LEADING_ZERO_RE.sub(".", match.group(1))
    declarations = [d for d in value.split(";") if d and not _NEGATIVE_HEIGHT_RE.fullmatch(d)]
    return f' style="{";".join(declarations)}"' if declarations else ""


# KaTeX gives a vlist the height of its highest child, which is negative when every child sits below the baseline
# (a sub/superscript after a tall delimiter: `\left(…\right)_b`), on purpose (KaTeX PR #768), and no option of its
# changes that. A negative height is invalid CSS, which every browser drops as it parses the declaration, so it
# renders as no height at all: dropping it here changes nothing on screen and makes the page valid HTML (the Nu
# Html Checker reports it as an error).
_NEGATIVE_HEIGHT_RE = re.compile(r"\s*height\s*:\s*-.*", re.S)


# KaTeX's most frequent inline styles in the course's formulas (counted over all pages, 2026-12: the thick,
# medium and thin spaces, strut and pstrut heights, a subscript's shift, an italic correction…) become one shared
# class each, `k<i>` (the index here: append, never reorder), instead of a style attribute per element — ~7 % of a
# formula-heavy page. The stylesheet gets one rule per class (`style_class_rules`, !important so that it wins
# exactly where the inline style did: over every rule of KaTeX's own).
STYLE_CLASSES = (
    "height:2.7em",
    "margin-right:.2778em",
    "margin-right:.2222em",
    "margin-right:.13889em",
    "height:.15em",
    "margin-right:.1667em",
    "height:3em",
    "height:1em;vertical-align:-.25em",
    "top:-2.55em;margin-left:0em;margin-right:.05em",
    "margin-right:.03148em",
    "top:-2.55em;margin-left:-.1389em;margin-right:.05em",
    "height:.6833em",
    "height:.3361em",
    "margin-right:.03588em",
    "height:.6944em",
    "height:.2861em",
    "top:-3.063em;margin-right:.05em",
    "height:.3117em",
    "height:.3011em",
    "margin-right:.07153em",
    "height:.3283em",
    "height:.4306em",
    "margin-right:.22222em",
    "margin-right:.05724em",
    "top:-3em",
    "margin-right:.07847em",
    "height:.6444em",
    "height:.8141em",
)
_STYLE_CLASS = {style: f"k{i}" for i, style in enumerate(STYLE_CLASSES)}
# KaTeX's atom classes (ordinary, binary, relation, open, close, punctuation, inner, operator) and `mtight` (a
# script's tight spacing): KaTeX uses them while it lays a formula out — its spacing is already in the output — and
# no rule of katex.css, nor of the theme, selects them (a build test checks both), so in a page they are bytes
# only: ~3 % of module 06.
SEMANTIC_CLASSES = frozenset({"mord", "mbin", "mrel", "mopen", "mclose", "mpunct", "minner", "mop", "mtight"})
_START_TAG_RE = re.compile(r"<([a-z]+)((?:\s[\w:-]+=\"[^\"]*\")*)(\s?/?)>")
_ATTR_RE = re.compile(r'\s([\w:-]+)="([^"]*)"')


def style_class_rules() -> str:
    """The stylesheet rules of STYLE_CLASSES (appended to KaTeX's; pruning keeps those the site's formulas use)."""
    return "".join(
        f".katex .{_STYLE_CLASS[style]}{{{';'.join(d + '!important' for d in style.split(';'))}}}"
        for style in STYLE_CLASSES
    )


def _compact_tag(match: re.Match[str]) -> str:
    """One start tag: a style of STYLE_CLASSES as its class, and SEMANTIC_CLASSES dropped."""
    attrs = _ATTR_RE.findall(match.group(2))
    style = next((v for k, v in attrs if k == "style"), None)
    shared = _STYLE_CLASS.get(style)
    if shared is None and not any(k == "class" and SEMANTIC_CLASSES.intersection(v.split()) for k, v in attrs):
        return match.group(0)
    classes = [c for k, v in attrs if k == "class" for c in v.split() if c not in SEMANTIC_CLASSES]
    if shared is not None:
        classes.append(shared)
    out = []
    for k, v in attrs:
        if k == "class" or (k == "style" and shared is not None):
            if classes:
                out.append(f' class="{" ".join(classes)}"')
                classes = []
        else:
            out.append(f' {k}="{v}"')
    return f"<{match.group(1)}{''.join(out)}{match.group(3)}>"


def compact_katex_html(html: str) -> str:
    """KaTeX's HTML+MathML with bytes no browser or screen reader uses taken out (≈ 15 % of a formula):

    * `xmlns` on `<math>` and `<svg>`: in an HTML document the parser puts both in their namespace anyway;
    * the TeX source (`<annotation encoding="application/x-tex">`, and the `<semantics>` around it): MathML
      renders and exposes only the first child of `<semantics>`; nothing on the site reads the TeX (the
      search index skips it);
    * in `style` attributes, a leading zero (`0.25em` → `.25em`, `-0.25em` → `-.25em`) and the final `;`;
    * a negative `height` (`_NEGATIVE_HEIGHT_RE`: invalid CSS, which browsers drop), and a style left empty;
    * a style of STYLE_CLASSES: its shared class instead (`class="mspace k1"` for `style="margin-right:.2778em"`);
    * the classes of SEMANTIC_CLASSES, which no stylesheet selects (`<span class="mord">` → `<span>`).

    Everything else (elements, the other classes, attributes, lengths) is KaTeX's byte for byte."""
    html = html.replace(_MATH_XMLNS, "<math").replace(_SVG_XMLNS, "<svg")
    html = _TEX_ANNOTATION_RE.sub(r"\1", html)
    html = _STYLE_RE.sub(_compact_style, html)
    return _START_TAG_RE.sub(_compact_tag, html)
