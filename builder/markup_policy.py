"""The one rule for markup, URLs and CSS that reach a page from the author: raw HTML (raw_html.py), inlined SVG
figures (figure.py), Markdown images (images.py: an SVG image is a document of the site's origin too), links
(links.py), and, through the inline parser, callout titles and captions.

* URLs are read as a browser's URL parser reads them (tabs and newlines dropped, leading spaces and controls
  skipped), so `java&#9;script:` is `javascript:`.
* CSS is tokenized by tinycss2 (escapes decoded: `u\\72l(` is `url(`) and judged by an allow-list: every `url()`
  must stay in the site (figures: only `#id` fragments of the drawing itself), and a function outside `CSS_FUNCTIONS`
  (`image-set()`, `image()`, `cross-fade()`, `element()`, `expression()`, …) or an at-rule outside `CSS_AT_RULES`
  (`@import`, `@font-face`, …) is refused, since it may load something or run something.
* SVG is parsed as XML (defusedxml: no DTD, no entities), and every element and attribute must be on the
  allow-list below: no script, no animation (`<set>`/`<animate>` can write a `javascript:` link), no foreign
  content, no event handlers, no link but to a `#id` of the drawing; presentation attributes and `style` are
  CSS-checked, `<style>` too. The page then inlines the checked tree as serialized (what was checked is what is
  published: no parser differential between the check and the browser).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import tinycss2
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _defused_fromstring

# ------------------------------------------------------------------------------------------ URLs

SCHEME_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
LINK_SCHEMES = {"http", "https", "mailto"}


def as_browser_reads(url: str) -> str:
    """The URL the browser's parser sees: ASCII tab and newlines removed anywhere, C0 controls and spaces trimmed."""
    return re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(0x21))))


def url_scheme(url: str) -> str | None:
    m = SCHEME_RE.match(as_browser_reads(url))
    return m.group(1).lower() if m else None


def is_outside(url: str) -> bool:
    """True for a URL that leaves the site: one with a scheme (https:, data:, javascript:, …) or `//host/…`."""
    read = as_browser_reads(url)
    return url_scheme(read) is not None or read.startswith(("//", "\\\\", "/\\", "\\/"))


def resource_problem(url: str, *, local_only: bool) -> str | None:
    """Why a resource URL (CSS `url()`, an SVG `href`, an `<img src>`) may not be loaded, or None."""
    read = as_browser_reads(url)
    if local_only:
        if read.startswith("#") and len(read) > 1:
            return None
        return f"loads '{url}', which is not a part of the drawing (only #id references are allowed)"
    if is_outside(url):
        return f"loads '{url}' from outside the site"
    return None


# ------------------------------------------------------------------------------------------ JSON in a <script>


def in_script(json_text: str) -> str:
    """JSON text made safe inside a `<script>` element of an HTML page: every `<` as `\\u003c`, so neither `</script>`
    nor `<!--` … `<script` (which keeps the element open past its end tag) can come from the data — a title, a
    token, a label. Still the same JSON."""
    return json_text.replace("<", "\\u003c")


# ------------------------------------------------------------------------------------------ CSS

CSS_FUNCTIONS = frozenset(
    {
        "var", "calc", "min", "max", "clamp", "env",
        "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color", "color-mix", "light-dark",
        "linear-gradient", "radial-gradient", "conic-gradient",
        "repeating-linear-gradient", "repeating-radial-gradient", "repeating-conic-gradient",
        "translate", "translatex", "translatey", "translate3d", "rotate", "scale", "scalex", "scaley", "skew",
        "skewx", "skewy", "matrix", "perspective",
        "cubic-bezier", "steps", "counter", "counters", "format", "local",
        "blur", "brightness", "contrast", "drop-shadow", "grayscale", "hue-rotate", "invert", "opacity",
        "saturate", "sepia",
        "minmax", "repeat", "fit-content", "rect", "inset", "circle", "ellipse", "polygon",
    }
)  # fmt: skip
"""CSS functions that compute a value and load nothing. `url()` is judged by its argument; any other function
(`image-set()`, `-webkit-image-set()`, `image()`, `cross-fade()`, `element()`, `paint()`, `expression()`, …) is
refused: some load a resource, and what is not known cannot be judged."""
CSS_AT_RULES = frozenset({"media", "supports", "keyframes"})


def _walk(tokens, problems: list[str], local_only: bool) -> None:
    for token in tokens:
        kind = token.type
        if kind == "url":
            reason = resource_problem(token.value, local_only=local_only)
            if reason:
                problems.append(reason)
        elif kind == "function":
            name = token.lower_name
            if name == "url":
                strings = [t.value for t in token.arguments if t.type == "string"]
                reason = resource_problem(strings[0] if strings else "", local_only=local_only)
                if reason:
                    problems.append(reason)
            elif name not in CSS_FUNCTIONS:
                problems.append(
                    f"uses the CSS function {token.name}(), which is not allowed (it may load or run something)"
                )
            else:
                _walk(token.arguments, problems, local_only)
        elif kind in ("() block", "[] block", "{} block"):
            _walk(token.content, problems, local_only)
        elif kind == "at-keyword":
            problems.append(f"uses CSS @{token.value}, which is not allowed here")
        elif kind == "error":
            problems.append(f"has CSS that does not parse ({token.message})")


def css_problems(css: str, *, stylesheet: bool = False, local_only: bool = False) -> list[str]:
    """Why this CSS may not reach a page (empty: it may). `stylesheet`: a `<style>` element's rules; otherwise
    a `style` attribute's declarations (or a single property value, e.g. an SVG `fill`)."""
    problems: list[str] = []
    if stylesheet:
        for rule in tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True):
            if rule.type == "at-rule":
                if rule.lower_at_keyword not in CSS_AT_RULES:
                    problems.append(f"uses CSS @{rule.at_keyword}, which is not allowed")
                    continue
                _walk(rule.prelude, problems, local_only)
                if rule.content is not None:
                    problems.extend(
                        css_problems(tinycss2.serialize(rule.content), stylesheet=True, local_only=local_only)
                    )
            elif rule.type == "qualified-rule":
                _walk(rule.prelude, problems, local_only)
                _walk(rule.content, problems, local_only)
            elif rule.type == "error":
                problems.append(f"has CSS that does not parse ({rule.message})")
    else:
        _walk(tinycss2.parse_component_value_list(css, skip_comments=True), problems, local_only)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------------------------------ SVG

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"

SVG_ELEMENTS = frozenset(
    {
        "svg", "g", "defs", "title", "desc", "symbol", "use", "style",
        "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
        "text", "tspan", "textPath",
        "marker", "linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask",
        "filter", "feGaussianBlur", "feOffset", "feBlend", "feFlood", "feComposite", "feMerge", "feMergeNode",
        "feColorMatrix", "feDropShadow", "feMorphology",
    }
)  # fmt: skip
"""A static drawing's elements. Not: `script`, `foreignObject`, `a`, `image`, `feImage`, `iframe`, and no
animation (`set`, `animate`, `animateMotion`, `animateTransform`: they can change any attribute, an `href` to
`javascript:` included)."""

PRESENTATION = frozenset(
    {
        "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
        "stroke-dashoffset", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "opacity", "color",
        "display", "visibility", "clip-path", "clip-rule", "mask", "filter", "marker-start", "marker-mid",
        "marker-end", "font-family", "font-size", "font-weight", "font-style", "font-variant", "text-anchor",
        "dominant-baseline", "alignment-baseline", "baseline-shift", "letter-spacing", "word-spacing",
        "text-decoration", "writing-mode", "stop-color", "stop-opacity", "paint-order", "vector-effect",
        "shape-rendering", "text-rendering", "overflow", "transform-origin", "direction", "unicode-bidi",
        "color-interpolation-filters", "flood-color", "flood-opacity", "lighting-color", "mix-blend-mode",
        "isolation", "transform",
    }
)  # fmt: skip
"""Attributes whose value is CSS (checked as such: `fill="url(http://…)"` is refused)."""

SVG_ATTRIBUTES = PRESENTATION | frozenset(
    {
        "id", "class", "style", "lang", "role", "tabindex", "focusable", "version",
        "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "fr", "dx", "dy",
        "width", "height", "d", "points", "pathLength", "viewBox", "preserveAspectRatio",
        "rotate", "textLength", "lengthAdjust", "startOffset", "method", "spacing", "side",
        "refX", "refY", "markerWidth", "markerHeight", "markerUnits", "orient",
        "gradientUnits", "gradientTransform", "spreadMethod", "offset",
        "patternUnits", "patternContentUnits", "patternTransform",
        "clipPathUnits", "maskUnits", "maskContentUnits",
        "filterUnits", "primitiveUnits", "in", "in2", "result", "stdDeviation", "mode", "operator",
        "k1", "k2", "k3", "k4", "values", "type", "radius", "media",
        "href",
    }
)  # fmt: skip
PLAIN_TEXT_ATTRIBUTES = frozenset({"id", "class", "lang", "role", "tabindex", "focusable", "version", "media"})


def _local(name: str) -> tuple[str, str]:
    """(namespace, local name) of an ElementTree tag or attribute name."""
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        return ns, local
    return "", name


def parse_svg(text: str) -> ET.Element:
    """The SVG's tree; raises ValueError (not XML, a DTD or entity)."""
    try:
        return _defused_fromstring(text, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise ValueError(f"a DTD or entity declaration is not allowed ({type(exc).__name__})") from None
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from None


def svg_problems(root: ET.Element) -> list[str]:
    """Why this SVG tree may not be published (empty: it may), by the allow-list above."""
    problems: list[str] = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        ns, tag = _local(el.tag)
        if ns != SVG_NS or tag not in SVG_ELEMENTS:
            external = [
                v for n, v in el.attrib.items() if _local(n)[1] == "href" and resource_problem(v, local_only=True)
            ]
            where = f"{{{ns}}}{tag}" if ns and ns != SVG_NS else tag
            problems.append(
                f"external reference '{external[0]}' is not allowed (only #ids)"
                if external
                else f"<{where}> is not allowed"
            )
            continue
        if tag == "style":
            problems.extend(f"<style> {p}" for p in css_problems(el.text or "", stylesheet=True, local_only=True))
        for name, value in el.attrib.items():
            ans, local = _local(name)
            if local.lower().startswith("on"):
                problems.append(f"event handler attribute '{local}' is not allowed")
                continue
            if ans == XML_NS and local in ("space", "lang"):
                continue
            if ans == XLINK_NS and local == "href" or (ans == "" and local == "href"):
                if resource_problem(value, local_only=True):
                    problems.append(f"external reference '{value}' is not allowed (only #ids)")
                continue
            if ans or (local not in SVG_ATTRIBUTES and not local.startswith(("aria-", "data-"))):
                problems.append(f"attribute '{local}' is not allowed on <{tag}>")
                continue
            if local in PLAIN_TEXT_ATTRIBUTES or local.startswith(("aria-", "data-")):
                continue
            if local == "style" or local in PRESENTATION or "(" in value or "\\" in value:
                # CSS, or geometry (numbers and words, never a function): one check for both
                problems.extend(f"<{tag} {local}> {p}" for p in css_problems(value, local_only=True))
    return list(dict.fromkeys(problems))


def serialize_svg(root: ET.Element) -> str:
    """The checked tree as SVG markup for inlining into HTML (SVG the default namespace, xlink as `xlink:`)."""
    ET.register_namespace("", SVG_NS)
    ET.register_namespace("xlink", XLINK_NS)
    return ET.tostring(root, encoding="unicode", short_empty_elements=True)


__all__ = [
    "CSS_FUNCTIONS",
    "LINK_SCHEMES",
    "as_browser_reads",
    "css_problems",
    "in_script",
    "is_outside",
    "parse_svg",
    "resource_problem",
    "serialize_svg",
    "svg_problems",
    "url_scheme",
]
