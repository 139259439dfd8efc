"""What every widget's static HTML and embedded data share: number formatting and rounding (the JS in
theme/js/widgets/common.js follows the same rules), the compact JSON embedding, and the fallback tables and
bars that are the content without JavaScript."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from markdown_it.common.utils import escapeHtml

from ..markup_policy import in_script

SIGNIFICANT_DIGITS = 6


def as_list(a: Any) -> Any:
    return np.asarray(a, dtype=np.float64).tolist()


def round_significant(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """Round every float in nested lists/dicts to `digits` significant digits, but never coarser than
    `digits` decimals, so every embedded number is within 1e-6 of the computed one (page size, not precision)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        rounded = float(f"{value:.{digits}g}") if abs(value) < 1 else round(value, digits)
        return int(rounded) if rounded.is_integer() else rounded  # 0 and 1, not 0.0 and 1.0: same number in JS
    if isinstance(value, dict):
        return {k: round_significant(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_significant(v, digits) for v in value]
    return value


def embed_json(data: Any) -> str:
    """JSON for a `<script type="application/json">`: compact, rounded, `<` escaped so no `</script>`
    or `<!--` inside the data can end or confuse the script element."""
    text = json.dumps(round_significant(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return in_script(text)


def percent(weight: float) -> int:
    """Whole percent, rounding halves up (the same rule as JavaScript's Math.round), for a lone number."""
    return int(math.floor(weight * 100 + 0.5))


def percent_row(weights: list[float]) -> list[int]:
    """Whole percents of a row of weights that sum to its rounded total (100 for a softmax row): the
    largest-remainder method — floor every share, then give the missing points to the largest remainders,
    ties to the leftmost. theme/js/widgets/common.js `pctRow` is the same rule, step for step."""
    scaled = [w * 100 for w in weights]
    floors = [math.floor(x) for x in scaled]
    total = 0.0
    for x in scaled:  # left to right like JS's reduce (Python's sum() compensates; JS does not)
        total += x
    target = math.floor(total + 0.5)
    order = sorted(range(len(scaled)), key=lambda j: (-(scaled[j] - floors[j]), j))
    for j in order[: max(0, target - sum(floors))]:
        floors[j] += 1
    return [int(x) for x in floors]


EQUAL_WEIGHTS = 1e-9  # two weights closer than this are the same number (equal scores through one softmax)


def percent_row_even(weights: list[float], decimals: int = 1) -> list[str]:
    """A row of weights as percents with `decimals` decimals (`"34.5"`), where equal weights always show the same
    figure, and the row adds up to its rounded total (100.0 for a softmax row) unless equal weights cannot share
    the last steps.

    Largest remainder in steps of 0.1 % (for one decimal), handed to whole sets of equal weights: from the largest
    remainder down, a set takes one step each if it fits in what is missing, else it is passed over (a weight with
    nothing after its last decimal takes none). If steps are still missing at the end, the first passed-over set
    whose rounding up brings the total nearer takes them (14.2857 % × 7 → 14.3 % each, 100.1 %); otherwise the row
    stays short (1/3 × 3 → 33.3 % each, 99.9 %). So every figure is within one step of its weight, and a row is off
    by at most half a set of equal weights. theme/js/widgets/common.js `pctRowEven` is the same rule, step for step."""
    scale = 10 ** (2 + decimals)
    same: list[int] = []  # the first index of each weight's set of equal weights
    for j, w in enumerate(weights):
        same.append(next((k for k in range(j) if same[k] == k and abs(weights[k] - w) <= EQUAL_WEIGHTS), j))
    scaled = [weights[same[j]] * scale for j in range(len(weights))]
    floors = [math.floor(x) for x in scaled]
    total = 0.0
    for w in weights:  # left to right like JS's reduce
        total += w * scale
    missing = math.floor(total + 0.5) - sum(floors)
    leaders = sorted((k for k in set(same) if scaled[k] > floors[k]), key=lambda k: (-(scaled[k] - floors[k]), k))
    sets = {k: [j for j in range(len(weights)) if same[j] == k] for k in leaders}
    passed = []
    for k in leaders:
        if len(sets[k]) <= missing:
            for j in sets[k]:
                floors[j] += 1
            missing -= len(sets[k])
        else:
            passed.append(k)
    for k in passed:
        if missing > 0 and len(sets[k]) - missing < missing:  # rounding the set up overshoots less than it lacks
            for j in sets[k]:
                floors[j] += 1
            break
    return [_steps_text(x, decimals) for x in floors]


def _steps_text(steps: int, decimals: int) -> str:
    whole, part = divmod(steps, 10**decimals)
    return f"{whole}.{part:0{decimals}d}" if decimals else str(whole)


def fmt(x: float, decimals: int = 2) -> str:
    text = f"{x:.{decimals}f}"
    return "0." + "0" * decimals if text in ("-0." + "0" * decimals,) else text.replace("-", "−")


def entropy_bits(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


SHADE_DECIMALS = 2  # --w of a heat cell: 1% steps of the colour ramp (theme/js/widgets/common.js writes the same)


def css_number(x: float, decimals: int = SHADE_DECIMALS) -> str:
    """`x` to `decimals` decimals written as briefly as CSS allows: 0.1200 → .12, 1.0000 → 1, 0.0000 → 0."""
    text = f"{x:.{decimals}f}".rstrip("0").rstrip(".")
    text = "0" if text in ("", "-0") else text
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


# ------------------------------------------------------------------ the text colour of a heat cell
# A cell's background is color-mix(in oklab, --heat-hi w, --heat-lo) (theme/css/widgets.css, light and dark).
# Its text takes whichever of the scheme's two text colours has the higher WCAG contrast on that background:
# the class `is-high` picks --heat-text-high in the light scheme, `is-high-dark` in the dark one. The same
# rule, number for number, is `inkClasses` in theme/js/widgets/common.js. With black and white as the text
# colours the better of the two is at least 4.58:1 on any background.
HEAT_COLOURS = {
    "light": {"lo": "#f8fbfe", "hi": "#061c42", "text": "#000000", "text-high": "#ffffff"},
    "dark": {"lo": "#191e26", "hi": "#b4d7ff", "text": "#ffffff", "text-high": "#000000"},
}


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _hex_rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[k : k + 2], 16) / 255 for k in (1, 3, 5))  # type: ignore[return-value]


def _oklab(colour: str) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in _hex_rgb(colour))
    l_ = (0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b) ** (1 / 3)
    m_ = (0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b) ** (1 / 3)
    s_ = (0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b) ** (1 / 3)
    return (
        0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_,
        1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_,
        0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_,
    )


def heat_background(w: float, scheme: str) -> tuple[int, int, int]:
    """The 8-bit sRGB colour CSS draws for weight `w` (to SHADE_DECIMALS, as --w is written)."""
    t = round(w, SHADE_DECIMALS)
    lo, hi = _oklab(HEAT_COLOURS[scheme]["lo"]), _oklab(HEAT_COLOURS[scheme]["hi"])
    L, a, b = (h * t + o * (1 - t) for h, o in zip(hi, lo))
    cl, cm, cs = (
        (L + 0.3963377774 * a + 0.2158037573 * b) ** 3,
        (L - 0.1055613458 * a - 0.0638541728 * b) ** 3,
        (L - 0.0894841775 * a - 1.2914855480 * b) ** 3,
    )  # the LMS cone responses
    rgb = (
        4.0767416621 * cl - 3.3077115913 * cm + 0.2309699292 * cs,
        -1.2684380046 * cl + 2.6097574011 * cm - 0.3413193965 * cs,
        -0.0041960863 * cl - 0.7034186147 * cm + 1.7076147010 * cs,
    )
    gamma = (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055 for c in rgb)
    return tuple(round(min(1.0, max(0.0, c)) * 255) for c in gamma)  # type: ignore[return-value]


def luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG relative luminance of 8-bit sRGB."""
    r, g, b = (_linear(c / 255) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def high_ink(w: float, scheme: str) -> bool:
    """True when --heat-text-high reads better than --heat-text on this weight's background."""
    bg, colours = heat_background(w, scheme), HEAT_COLOURS[scheme]
    rgb = {k: tuple(round(c * 255) for c in _hex_rgb(colours[k])) for k in ("text", "text-high")}
    return contrast(bg, rgb["text-high"]) > contrast(bg, rgb["text"])


def ink_classes(w: float) -> list[str]:
    return [name for name, scheme in (("is-high", "light"), ("is-high-dark", "dark")) if high_ink(w, scheme)]


def _weight_cell(w: float, shown: int, masked: bool = False) -> str:
    """A cell of a static heat table (`.heat-static`: its <td>s are heat cells without saying so each time, and
    a masked one is the cell without a weight — theme/css/widgets.css; long causal tables are half masked)."""
    if masked:
        return "<td>—</td>"
    ink = " ".join(ink_classes(w))
    high = f' class="{ink}"' if ink else ""
    return f'<td{high} style="--w:{css_number(w)}">{shown}</td>'


def weights_table(
    tokens: list[str],
    weights: list[list[float]],
    caption: str,
    mask: list[list[bool]] | None = None,
    row_sums: list[float] | None = None,
) -> str:
    """A token×token table of whole percentages (each row sums to 100, `percent_row`), shaded like the live heatmap."""
    long = " heat-long" if any(len(t) > 2 for t in tokens) else ""
    # A long token's header stands on end (widgets.css .heat-col): in a span, as WebKit ignores writing-mode on a cell.
    col = (lambda t: f'<span class="heat-col">{escapeHtml(t)}</span>') if long else escapeHtml
    head = "".join(f'<th scope="col">{col(t)}</th>' for t in tokens)
    sum_head = '<th scope="col" class="heat-sum">合计</th>' if row_sums is not None else ""
    rows = []
    for i, (tok, row) in enumerate(zip(tokens, weights)):
        shown = percent_row(row)
        cells = "".join(_weight_cell(w, shown[j], bool(mask and not mask[i][j])) for j, w in enumerate(row))
        total = f'<td class="heat-sum">{percent(row_sums[i])}%</td>' if row_sums is not None else ""
        rows.append(f'<tr><th scope="row">{escapeHtml(tok)}</th>{cells}{total}</tr>')
    return (
        f'<div class="heat-scroll"><table class="heat-table heat-static{long}"><caption>{escapeHtml(caption)}</caption>'
        '<thead><tr><th scope="col"><span class="visually-hidden">Query ＼ Key</span></th>'
        f"{head}{sum_head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def matrix_table(
    row_labels: list[str],
    col_labels: list[str],
    values: list[list[float]],
    caption: str,
    col_class: Callable[[int], str] | None = None,
) -> str:
    head = "".join(f'<th scope="col"{_cls(col_class, j)}>{escapeHtml(c)}</th>' for j, c in enumerate(col_labels))
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(r)}</th>'
        + "".join(f"<td{_cls(col_class, j)}>{fmt(v)}</td>" for j, v in enumerate(row))
        + "</tr>"
        for r, row in zip(row_labels, values)
    )
    return (
        f'<div class="heat-scroll"><table class="num-table"><caption>{escapeHtml(caption)}</caption>'
        f'<thead><tr><th scope="col"><span class="visually-hidden">词</span></th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def _cls(col_class: Callable[[int], str] | None, j: int) -> str:
    return f' class="{col_class(j)}"' if col_class else ""


def bars_list(tokens: list[str], weights: list[float], label: str) -> str:
    items = "".join(
        f'<li><span class="bar-label">{escapeHtml(t)}</span><span class="bar-track"><span class="bar-fill" '
        f'style="width:{css_number(w * 100, 2)}%"></span></span><span class="bar-value">{p}%</span></li>'
        for t, w, p in zip(tokens, weights, percent_row(weights))
    )
    return f'<ol class="bars" aria-label="{escapeHtml(label)}">{items}</ol>'


def note_html(note: str) -> str:
    return f'<p class="widget-note">{escapeHtml(note)}</p>'
