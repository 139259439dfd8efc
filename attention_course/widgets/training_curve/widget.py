"""The `training-curve` widget: a loss curve (1–4 series over training steps, dashed reference lines, vertical
markers, a status line), drawn live by widget.js while a learner's training loop runs in the browser's Python (the
loop sends the same JSON again every ≥ 0.25 s with more points, and the page calls `mount` again on the same root:
widget.js updates the chart in place), and in a page from a reference run made when the site is built
(```{widget} training-curve``` with `run: <name>`: attention_course.hands_on.reference_runs `reference_curve`).

The data (the same shape from a cell and from the build; `check_curve` is its schema):

    {"title": "…", "x_label": "训练步数", "y_label": "损失（nats）",
     "x_max": 400,                      # optional: the planned steps fix the x axis; else the last x
     "y_min": 0, "y_max": 3.0,          # optional: else 0 (or the data's minimum, if lower) and a rounded maximum
     "series": [{"name": "…", "points": [[x, y], …]}, …],       # 1–4 series, ≤ MAX_POINTS points, x not decreasing
     "references": [{"name": "…", "value": 2.48}],              # 0–4 dashed horizontal lines, labelled
     "markers": [{"x": 150, "label": "…"}],                     # 0–3 vertical markers
     "status": "第 120 步 · 损失 0.84 · 用时 9.8 秒",             # one line under the chart
     "done": false,                     # true once the run ended (finished or stopped)
     "quotes": {"name": "text", …}}     # optional: numbers prose may quote

`curve_svg(data)` draws the chart as static SVG (the fallback: the content without JavaScript, with a compact table
of every k-th point); widget.js draws the same chart with the same rules (`nice_step`, `axes`, `thin`,
`table_rows`, `summary`: tests/course/test_training_curve.py compares the two).

Quotable (``{data}`training-curve <what>` ``): `last:<series>` and `first:<series>` (2 decimals), `min:<series>`,
`ref:<reference>`, `steps` (the last x), and any name of the data's `quotes`.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from markdown_it.common.utils import escapeHtml

from builder.widgets.schema import Option, Widget, WidgetDataError

MAX_SERIES = 4
MAX_POINTS = 5000  # per series: a loop that records each of 3,000 steps sends 3,001
MAX_REFERENCES = 4
MAX_MARKERS = 3
MAX_TEXT = 200  # title, axis labels, status
MAX_NAME = 60  # a series', reference's or marker's name
DRAW_POINTS = 200  # a drawn series keeps every k-th point and the last: at most this many (widget.js the same)
TABLE_ROWS = 8  # the data table: every k-th x and the last (widget.js the same)
KEYS = {
    "title",
    "x_label",
    "y_label",
    "x_max",
    "y_min",
    "y_max",
    "series",
    "references",
    "markers",
    "status",
    "done",
    "quotes",
}
DEFAULT_TITLE = "训练曲线"


# ------------------------------------------------------------------------------------------------ the schema


def fmt(x: float, decimals: int = 2) -> str:
    """`x` with `decimals` decimals as widget.js writes it (common.js `num`: JavaScript's toFixed, a tie rounded away
    from 0 — 0.125 → 0.13, where Python's format gives 0.12), a real minus sign, never −0.00."""
    text = f"{Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP):f}"
    return text.lstrip("-") if float(text) == 0 else text.replace("-", "−")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _text(d: dict, key: str, where: str, limit: int = MAX_TEXT, required: bool = False) -> None:
    if key not in d or d[key] is None:
        if required:
            raise ValueError(f"{where}: '{key}' is missing")
        return
    v = d[key]
    if not isinstance(v, str):
        raise ValueError(f"{where}: '{key}' must be a string, got {type(v).__name__}")
    if required and not v.strip():
        raise ValueError(f"{where}: '{key}' is empty")
    if len(v) > limit:
        raise ValueError(f"{where}: '{key}' has {len(v)} characters (at most {limit})")


def _number(d: dict, key: str, where: str, required: bool = False) -> None:
    if key not in d or d[key] is None:
        if required:
            raise ValueError(f"{where}: '{key}' is missing")
        return
    if not _is_number(d[key]):
        raise ValueError(f"{where}: '{key}' must be a finite number, got {d[key]!r}")


def _list(d: dict, key: str, limit: int, least: int = 0) -> list:
    v = d.get(key)
    if v is None:
        if least:
            raise ValueError(f"'{key}' is missing")
        return []
    if not isinstance(v, list):
        raise ValueError(f"'{key}' must be a list, got {type(v).__name__}")
    if not least <= len(v) <= limit:
        raise ValueError(f"'{key}' has {len(v)} entries (between {least} and {limit})")
    for i, item in enumerate(v):
        if not isinstance(item, dict):
            raise ValueError(f"{key}[{i}] must be an object ({{…}}), got {type(item).__name__}")
    return v


def check_curve(data: Any) -> None:
    """Raise ValueError naming the first problem of a curve's data (types, finite numbers, sizes); None if good.
    widget.js checks the same (`problemOf`), but lets unknown keys pass."""
    if not isinstance(data, dict):
        raise ValueError(f"the curve's data must be a dict, got {type(data).__name__}")
    unknown = sorted(set(map(str, data)) - KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    for key in ("title", "x_label", "y_label", "status"):
        _text(data, key, "data")
    for key in ("x_max", "y_min", "y_max"):
        _number(data, key, "data")
    if data.get("x_max") is not None and data["x_max"] <= 0:
        raise ValueError(f"'x_max' must be above 0, got {data['x_max']!r}")
    if data.get("y_min") is not None and data.get("y_max") is not None and data["y_max"] <= data["y_min"]:
        raise ValueError(f"'y_max' ({data['y_max']!r}) must be above 'y_min' ({data['y_min']!r})")
    if "done" in data and data["done"] is not None and not isinstance(data["done"], bool):
        raise ValueError(f"'done' must be true or false, got {data['done']!r}")
    names = set()
    for i, s in enumerate(_list(data, "series", MAX_SERIES, least=1)):
        where = f"series[{i}]"
        _text(s, "name", where, MAX_NAME, required=True)
        if s["name"] in names:
            raise ValueError(f"{where}: the name {s['name']!r} is used twice")
        names.add(s["name"])
        points = s.get("points")
        if not isinstance(points, list):
            raise ValueError(f"{where}: 'points' must be a list of [x, y], got {type(points).__name__}")
        if len(points) > MAX_POINTS:
            raise ValueError(f"{where}: {len(points)} points (at most {MAX_POINTS}: keep every k-th)")
        last = -math.inf
        for k, p in enumerate(points):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise ValueError(f"{where}.points[{k}] must be [x, y], got {p!r}")
            if not (_is_number(p[0]) and _is_number(p[1])):
                raise ValueError(f"{where}.points[{k}] must be two finite numbers, got {p!r}")
            if p[0] < last:
                raise ValueError(f"{where}.points[{k}]: x goes back ({p[0]!r} after {last!r})")
            last = p[0]
    for i, r in enumerate(_list(data, "references", MAX_REFERENCES)):
        _text(r, "name", f"references[{i}]", MAX_NAME, required=True)
        _number(r, "value", f"references[{i}]", required=True)
    for i, m in enumerate(_list(data, "markers", MAX_MARKERS)):
        _number(m, "x", f"markers[{i}]", required=True)
        _text(m, "label", f"markers[{i}]", MAX_NAME, required=True)
    quotes = data.get("quotes")
    if quotes is not None and (
        not isinstance(quotes, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in quotes.items())
    ):
        raise ValueError("'quotes' must map names to texts (strings)")


# ------------------------------------------------------------------------------------------------ shared rules
# widget.js has each of these, step for step.


def nice_step(span: float, count: int) -> float:
    """A round tick step (1, 2, 2.5 or 5 × 10^k) giving about `count` steps over `span`."""
    raw = span / max(1, count)
    if not raw > 0:
        return 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5):
        if raw <= m * mag * (1 + 1e-9):
            return m * mag
    return 10 * mag


def clean(v: float) -> float:
    """`v` without the float noise of k × step (0.30000000000000004 → 0.3)."""
    return float(f"{v:.12g}")


def ticks(lo: float, hi: float, step: float) -> list[float]:
    start = math.ceil(lo / step - 1e-9)
    out = []
    k = start
    while k * step <= hi + step * 1e-9:
        out.append(clean(k * step))
        k += 1
    return out


def decimals(step: float) -> int:
    """How many decimals a tick needs at `step` (0.25 → 2, 0.5 → 1, 100 → 0)."""
    d = 0
    while d < 6 and abs(step * 10**d - round(step * 10**d)) > 1e-9:
        d += 1
    return d


def x_text(x: float) -> str:
    """A step as text: whole numbers without decimals, others with up to 2."""
    if float(x).is_integer():
        return str(int(x))
    return fmt(x, 2).rstrip("0").rstrip(".")


def axes(d: dict) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1): the plotted ranges (the module docstring says how they are chosen)."""
    xs = [p[0] for s in d["series"] for p in s["points"]]
    ys = [p[1] for s in d["series"] for p in s["points"]] + [r["value"] for r in d.get("references") or []]
    x0 = min([0.0, *xs])
    x1 = max([*xs, *([d["x_max"]] if d.get("x_max") is not None else [])], default=x0)
    if x1 <= x0:
        x1 = x0 + 1
    low = min([0.0, *ys])
    y0 = d["y_min"] if d.get("y_min") is not None else low
    if d.get("y_max") is not None:
        y1 = d["y_max"]
    elif max(ys, default=y0) <= y0:  # no values above the bottom (none yet, or a flat line on it): a unit box
        y1 = y0 + 1
    else:
        top = max(ys)
        step = nice_step(top - y0, 5)
        if d.get("y_min") is None:
            y0 = clean(math.floor(y0 / step + 1e-9) * step)
        y1 = clean(y0 + math.ceil((top - y0) / step - 1e-9) * step)
    return float(x0), float(x1), float(y0), float(y1)


def round_k(least: int) -> int:
    """The smallest round whole number (1, 2, 2.5 or 5 × 10^n) at least `least`: every 20th step rather than 19th."""
    mag = 1
    while True:
        for m in (1, 2, 2.5, 5):
            if m * mag >= least and float(m * mag).is_integer():
                return int(m * mag)
        mag *= 10


def thin(points: list, limit: int) -> list:
    """Every k-th point and the last, at most `limit` of them (k the smallest round number that allows it)."""
    n = len(points)
    if n <= limit:
        return list(points)
    k = round_k(math.ceil((n - 1) / (limit - 1)))
    return [points[i] for i in range(0, n - 1, k)] + [points[-1]]


def table_rows(d: dict) -> list[tuple[float, list[float | None]]]:
    """The data table: every k-th x of all series (and the last), ≤ TABLE_ROWS rows, each series' value there."""
    xs = sorted({p[0] for s in d["series"] for p in s["points"]})
    chosen = thin(xs, TABLE_ROWS)
    at = [{p[0]: p[1] for p in s["points"]} for s in d["series"]]  # a repeated x: its last value
    return [(x, [a.get(x) for a in at]) for x in chosen]


def summary(d: dict) -> str:
    """One sentence: each series' first and last value and its minimum, over which steps, and the references."""
    title = d.get("title") or DEFAULT_TITLE
    xs = [p[0] for s in d["series"] for p in s["points"]]
    parts = []
    for s in d["series"]:
        pts = s["points"]
        if not pts:
            parts.append(f"{s['name']}还没有数据")
            continue
        first, last, low = pts[0][1], pts[-1][1], min(p[1] for p in pts)
        if len(pts) == 1:
            parts.append(f"{s['name']}为 {fmt(first)}")
            continue
        if fmt(first) == fmt(last):
            parts.append(f"{s['name']}始终约为 {fmt(first)}，最低 {fmt(low)}")
        else:
            verb = "降到" if last < first else "升到"
            parts.append(f"{s['name']}从 {fmt(first)} {verb} {fmt(last)}，最低 {fmt(low)}")
    span = f"（{d.get('x_label') or '横轴'} {x_text(min(xs))} 到 {x_text(max(xs))}）" if xs else ""
    refs = "、".join(f"{r['name']} 为 {fmt(r['value'])}" for r in d.get("references") or [])
    return f"{title}{span}：{'；'.join(parts)}{f'；参考线：{refs}' if refs else ''}。"


# ------------------------------------------------------------------------------------------------ static SVG

W, H = 640, 330  # the static chart's viewBox: never narrower than 32rem (style.css), so its text stays ≥ 12px
FONT = 15
DASHES = ("", "8 4", "1 4", "10 3 2 3")  # with the colours, so no series relies on colour alone (widget.js the same)
SHAPES = ("circle", "square", "triangle", "diamond")  # each series' last point (and its legend swatch)


def shape_path(kind: str, x: float, y: float, r: float = 4.5) -> str:
    """A small marker shape centred on (x, y) as path data."""
    if kind == "square":
        a = r * 0.85
        return f"M{x - a:.1f},{y - a:.1f}h{2 * a:.1f}v{2 * a:.1f}h{-2 * a:.1f}Z"
    if kind == "triangle":
        return f"M{x:.1f},{y - r * 1.15:.1f}L{x + r * 1.1:.1f},{y + r * 0.8:.1f}L{x - r * 1.1:.1f},{y + r * 0.8:.1f}Z"
    if kind == "diamond":
        a = r * 1.2
        return f"M{x:.1f},{y - a:.1f}L{x + a:.1f},{y:.1f}L{x:.1f},{y + a:.1f}L{x - a:.1f},{y:.1f}Z"
    return f"M{x - r:.1f},{y:.1f}a{r:.1f},{r:.1f} 0 1,0 {2 * r:.1f},0a{r:.1f},{r:.1f} 0 1,0 {-2 * r:.1f},0"


def text_width(text: str, size: float) -> float:
    """A rough width: a CJK or full-width character is one em, anything else 0.6 em."""
    return sum(size if ord(c) > 0x2E7F else 0.6 * size for c in text)


def label_positions(wanted: list[float], top: float, bottom: float, gap: float) -> list[float]:
    """Baselines for labels that want to be at `wanted`: in order, at least `gap` apart and inside [top, bottom]
    (a stack pushed past the bottom moves up as a whole)."""
    order = sorted(range(len(wanted)), key=lambda i: wanted[i])
    placed = [0.0] * len(wanted)
    last = -math.inf
    for i in order:
        y = max(wanted[i], last + gap, top)
        placed[i] = y
        last = y
    over = (last - bottom) if order else 0
    if over > 0:  # pushed past the bottom: shift the whole stack up
        placed = [y - over for y in placed]
    return placed


def marker_rows(xs: list[float], labels: list[str], right_edge: float, size: float) -> list[tuple[float, bool, int]]:
    """Where each marker's label goes in the rows above the plot: (its x, anchored at its end, its row). A label
    starts just right of its line, or ends just left of it where it would run past `right_edge`; a label that would
    touch an earlier one in a row goes to the next row."""
    placed: list[tuple[float, bool, int]] = []
    taken: list[list[tuple[float, float]]] = []
    for x, label in zip(xs, labels):
        w = text_width(label, size)
        end = x + 5 + w > right_edge
        a, b = (x - 5 - w, x - 5) if end else (x + 5, x + 5 + w)
        row = next((r for r, spans in enumerate(taken) if all(b + 8 <= c or a >= e + 8 for c, e in spans)), len(taken))
        if row == len(taken):
            taken.append([])
        taken[row].append((a, b))
        placed.append((x - 5 if end else x + 5, end, row))
    return placed


def last_value(s: dict) -> str:
    return fmt(s["points"][-1][1]) if s["points"] else "—"


def curve_svg(d: dict) -> str:
    """The chart as static SVG: a legend with each series' latest value, axes with round ticks, the series (every
    k-th point; values outside the y range drawn at its edge), the references as labelled dashed lines, the markers;
    its `<title>` and `<desc>` (its accessible name and description) say it in one sentence. No element ids, so a page
    may show several."""
    x0, x1, y0, y1 = axes(d)
    series = d["series"]
    # the legend: rows of [swatch, name, value], wrapped at the chart's width
    items, row, at = [], 0, 0.0
    for i, s in enumerate(series):
        label = f"{s['name']} {last_value(s)}"
        width = 30 + text_width(label, FONT)
        if at and at + width > W:
            row, at = row + 1, 0.0
        items.append((i, at, row, s["name"], last_value(s)))
        at += width + 22
    legend_h = (row + 1) * 24
    y_step = nice_step(y1 - y0, 5)
    y_ticks = [v for v in ticks(y0, y1, y_step) if y0 - 1e-9 <= v <= y1 + 1e-9]
    y_dec = decimals(y_step)
    left = max(text_width(fmt(v, y_dec), FONT) for v in y_ticks) + 14 if y_ticks else 40
    right, bottom = 16, H - 50
    pw = W - left - right
    x_step = nice_step(x1 - x0, max(2, int(pw // 70)))
    x_ticks = ticks(x0, x1, x_step)
    x_dec = decimals(x_step)

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    marks = [m for m in d.get("markers") or [] if x0 <= m["x"] <= x1]
    mark_at = marker_rows([sx(m["x"]) for m in marks], [m["label"] for m in marks], W - right, FONT)
    rows_top = legend_h + 22  # the y label's row above it
    top = rows_top + (max((r for *_, r in mark_at), default=-1) + 1) * (FONT + 4) + 12

    def sy(v: float) -> float:
        return top + (y1 - min(max(v, y0), y1)) / (y1 - y0) * (bottom - top)

    out = [
        f'<svg class="tc-chart tc-static" viewBox="0 0 {W} {H}" role="img">'
        f"<title>{escapeHtml(d.get('title') or DEFAULT_TITLE)}</title><desc>{escapeHtml(summary(d))}</desc>"
    ]
    for i, ax, r, name, value in items:
        y = 16 + r * 24
        out.append(
            f'<g class="tc-s{i}"><path class="tc-line" d="M{ax + 1:.1f},{y - 5}h26" stroke-dasharray="{DASHES[i]}"/>'
            f'<path class="tc-end" d="{shape_path(SHAPES[i], ax + 14, y - 5, 4)}"/>'
            f'<text x="{ax + 34:.1f}" y="{y}">{escapeHtml(name)} <tspan class="tc-value">{value}</tspan></text></g>'
        )
    if d.get("y_label"):
        out.append(f'<text class="tc-axis-label" x="0" y="{legend_h + 16}">{escapeHtml(d["y_label"])}</text>')
    for v in y_ticks:
        out.append(
            f'<line class="tc-grid" x1="{left}" x2="{W - right}" y1="{sy(v):.1f}" y2="{sy(v):.1f}"/>'
            f'<text class="tc-tick" x="{left - 8}" y="{sy(v) + 5:.1f}" text-anchor="end">{fmt(v, y_dec)}</text>'
        )
    for v in x_ticks:
        out.append(
            f'<line class="tc-axis" x1="{sx(v):.1f}" x2="{sx(v):.1f}" y1="{bottom}" y2="{bottom + 5}"/>'
            f'<text class="tc-tick" x="{sx(v):.1f}" y="{bottom + 21}" text-anchor="middle">{fmt(v, x_dec)}</text>'
        )
    out.append(f'<path class="tc-axis" d="M{left},{top - 6}V{bottom}H{W - right}"/>')
    if d.get("x_label"):
        out.append(
            f'<text class="tc-axis-label" x="{left + pw / 2:.1f}" y="{H - 6}" text-anchor="middle">'
            f"{escapeHtml(d['x_label'])}</text>"
        )
    refs = d.get("references") or []
    ref_ys = [sy(r["value"]) for r in refs]
    for y in ref_ys:
        out.append(f'<line class="tc-ref" x1="{left}" x2="{W - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
    for m, (_, _, r) in zip(marks, mark_at):
        x = sx(m["x"])
        out.append(
            f'<line class="tc-marker" x1="{x:.1f}" x2="{x:.1f}" y1="{rows_top + r * (FONT + 4) + 4}" y2="{bottom}"/>'
        )
    out.append('<g class="tc-series">')
    for i, s in enumerate(series):
        pts = thin(s["points"], DRAW_POINTS)
        if not pts:
            continue
        path = "M" + "L".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        lx, ly = pts[-1]
        out.append(
            f'<g class="tc-s{i}"><path class="tc-line" d="{path}" stroke-dasharray="{DASHES[i]}"/>'
            f'<path class="tc-end" d="{shape_path(SHAPES[i], sx(lx), sy(ly))}"/></g>'
        )
    out.append("</g>")
    label_ys = label_positions([y - 6 for y in ref_ys], top + FONT, bottom - 4, FONT + 3)
    for r, y in zip(refs, label_ys):
        out.append(
            f'<text class="tc-ref-label" x="{W - right - 4}" y="{y:.1f}" text-anchor="end">'
            f"{escapeHtml(r['name'])} = {fmt(r['value'])}</text>"
        )
    for m, (x, end, r) in zip(marks, mark_at):
        anchor = ' text-anchor="end"' if end else ""
        out.append(
            f'<text class="tc-marker-label" x="{x:.1f}" y="{rows_top + FONT + r * (FONT + 4)}"{anchor}>'
            f"{escapeHtml(m['label'])}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def table_html(d: dict, caption: str) -> str:
    """The data table (every k-th x) and the references, as the fallback and widget.js's 数据表 show them."""
    rows = table_rows(d)
    head = "".join(f'<th scope="col">{escapeHtml(s["name"])}</th>' for s in d["series"])
    body = "".join(
        f'<tr><th scope="row">{x_text(x)}</th>'
        + "".join(f"<td>{'—' if v is None else fmt(v)}</td>" for v in values)
        + "</tr>"
        for x, values in rows
    )
    return (
        f'<div class="heat-scroll"><table class="num-table tc-table"><caption>{escapeHtml(caption)}</caption>'
        f'<thead><tr><th scope="col">{escapeHtml(d.get("x_label") or "横轴")}</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def notes_text(d: dict) -> str:
    """The references and markers in words (under the table)."""
    parts = []
    if d.get("references"):
        parts.append("参考线：" + "；".join(f"{r['name']} = {fmt(r['value'])}" for r in d["references"]))
    if d.get("markers"):
        parts.append("标记：" + "；".join(f"{x_text(m['x'])} 处 {m['label']}" for m in d["markers"]))
    return "。".join(parts) + ("。" if parts else "")


def table_caption(d: dict) -> str:
    n = len({p[0] for s in d["series"] for p in s["points"]})
    return f"每隔几个点取一行（共 {n} 个点）" if n > TABLE_ROWS else "全部的点"


def fallback(d: dict) -> str:
    """The content without JavaScript (and until the chart is drawn): a compact table of the curve, like the other
    widgets' tables; `curve_svg` draws the chart itself for print and other uses (a chart in
    every page's HTML would weigh on the page's first view)."""
    notes = notes_text(d)
    status = d.get("status")
    return (
        f'<p class="tc-title">{escapeHtml(d.get("title") or DEFAULT_TITLE)}</p>'
        + (f'<p class="tc-status">{escapeHtml(status)}</p>' if status else "")
        + table_html(d, f"数据表：{table_caption(d)}")
        + (f'<p class="widget-caption tc-notes">{escapeHtml(notes)}</p>' if notes else "")
    )


# ------------------------------------------------------------------------------------------------ quotes


def quote(data: dict, selectors: list[str], target: str) -> str:
    """``{data}`training-curve last:<series>` ``, `first:`, `min:`, `ref:<reference>`, `steps`, or a `quotes` name
    (the words after the kind joined by spaces: a name may have spaces)."""
    name = " ".join([*selectors, target])
    quotes = data.get("quotes") or {}
    if name in quotes:
        return quotes[name]
    if name == "steps":
        xs = [p[0] for s in data["series"] for p in s["points"]]
        if not xs:
            raise ValueError("the curve has no points yet")
        return x_text(max(xs))
    what, colon, rest = name.partition(":")
    if colon and what in ("last", "first", "min"):
        s = next((s for s in data["series"] if s["name"] == rest), None)
        if s is None:
            raise ValueError(f"no series called '{rest}' (series: {'、'.join(x['name'] for x in data['series'])})")
        if not s["points"]:
            raise ValueError(f"the series '{rest}' has no points")
        ys = [p[1] for p in s["points"]]
        return fmt({"last": ys[-1], "first": ys[0], "min": min(ys)}[what])
    if colon and what == "ref":
        r = next((r for r in data.get("references") or [] if r["name"] == rest), None)
        if r is None:
            names = "、".join(x["name"] for x in data.get("references") or []) or "none"
            raise ValueError(f"no reference called '{rest}' (references: {names})")
        return fmt(r["value"])
    known = ["steps", *(f"last:{s['name']}" for s in data["series"]), *quotes]
    raise ValueError(f"no number called '{name}' (e.g. {'、'.join(known[:8])} …)")


# ------------------------------------------------------------------------------------------------ the build


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    """The reference run `o["run"]` (attention_course.hands_on.reference_runs, imported here: it trains or reads a
    cached run), checked like a cell's data; `title` replaces its title."""
    try:
        from attention_course.hands_on.reference_runs import reference_curve
    except ImportError as exc:
        raise WidgetDataError(f"the reference runs are not available: {exc}") from exc
    try:
        data = reference_curve(o["run"], build)
    except (LookupError, ValueError) as exc:
        reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # a KeyError's str() is its repr
        raise WidgetDataError(f"run '{o['run']}': {reason}", "run") from exc
    if o.get("title"):
        data = {**data, "title": o["title"]}
    try:
        check_curve(data)
    except ValueError as exc:
        raise WidgetDataError(f"run '{o['run']}' gives a bad curve: {exc}", "run") from exc
    return data, {}


WIDGET = Widget(
    "training-curve",
    DEFAULT_TITLE,
    {
        "run": Option("text", "induction", "the reference run shown (attention_course.hands_on.reference_runs)"),
        "title": Option("text", None, "the title above the chart (default: the run's own)"),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote,
)
