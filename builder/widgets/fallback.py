"""What every widget's static HTML and embedded data share: number formatting and rounding (the JS in
theme/js/widgets/common.js follows the same rules), the compact JSON embedding, and the fallback tables and
bars that are the content without JavaScript."""
from __future__ import annotations

import json
import math
from typing import Any, Callable

import numpy as np
from markdown_it.common.utils import escapeHtml

SIGNIFICANT_DIGITS = 6
HIGH_WEIGHT = 0.52  # cells at or above this weight switch text colour (same as HIGH in theme/js/widgets/common.js)


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
    return text.replace("<", "\\u003c")


def percent(weight: float) -> int:
    """Whole percent, rounding halves up (the same rule as JavaScript's Math.round)."""
    return int(math.floor(weight * 100 + 0.5))


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


def _weight_cell(w: float, masked: bool = False) -> str:
    """A cell of a static heat table (`.heat-static`: its <td>s are heat cells without saying so each time, and
    a masked one is the cell without a weight — theme/css/widgets.css; long causal tables are half masked)."""
    if masked:
        return "<td>—</td>"
    high = ' class="is-high"' if w >= HIGH_WEIGHT else ""
    return f'<td{high} style="--w:{css_number(w)}">{percent(w)}</td>'


def weights_table(tokens: list[str], weights: list[list[float]], caption: str, mask: list[list[bool]] | None = None,
                  row_sums: list[float] | None = None) -> str:
    """A token×token table of whole percentages, shaded like the live heatmap."""
    head = "".join(f'<th scope="col">{escapeHtml(t)}</th>' for t in tokens)
    sum_head = '<th scope="col" class="heat-sum">合计</th>' if row_sums is not None else ""
    rows = []
    for i, (tok, row) in enumerate(zip(tokens, weights)):
        cells = "".join(_weight_cell(w, bool(mask and not mask[i][j])) for j, w in enumerate(row))
        total = f'<td class="heat-sum">{percent(row_sums[i])}%</td>' if row_sums is not None else ""
        rows.append(f'<tr><th scope="row">{escapeHtml(tok)}</th>{cells}{total}</tr>')
    long = " heat-long" if any(len(t) > 2 for t in tokens) else ""
    return (f'<div class="heat-scroll"><table class="heat-table heat-static{long}"><caption>{escapeHtml(caption)}</caption>'
            f'<thead><tr><th scope="col"><span class="visually-hidden">Query ＼ Key</span></th>{head}{sum_head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def matrix_table(row_labels: list[str], col_labels: list[str], values: list[list[float]], caption: str,
                 col_class: Callable[[int], str] | None = None) -> str:
    head = "".join(f'<th scope="col"{_cls(col_class, j)}>{escapeHtml(c)}</th>' for j, c in enumerate(col_labels))
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(r)}</th>'
        + "".join(f'<td{_cls(col_class, j)}>{fmt(v)}</td>' for j, v in enumerate(row)) + "</tr>"
        for r, row in zip(row_labels, values))
    return (f'<div class="heat-scroll"><table class="num-table"><caption>{escapeHtml(caption)}</caption>'
            f'<thead><tr><th scope="col"><span class="visually-hidden">词</span></th>{head}</tr></thead>'
            f'<tbody>{rows}</tbody></table></div>')


def _cls(col_class: Callable[[int], str] | None, j: int) -> str:
    return f' class="{col_class(j)}"' if col_class else ""


def bars_list(tokens: list[str], weights: list[float], label: str) -> str:
    items = "".join(
        f'<li><span class="bar-label">{escapeHtml(t)}</span><span class="bar-track"><span class="bar-fill" '
        f'style="width:{css_number(w * 100, 2)}%"></span></span><span class="bar-value">{percent(w)}%</span></li>'
        for t, w in zip(tokens, weights))
    return f'<ol class="bars" aria-label="{escapeHtml(label)}">{items}</ol>'


def note_html(note: str) -> str:
    return f'<p class="widget-note">{escapeHtml(note)}</p>'
