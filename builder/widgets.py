"""Interactive widgets: ```{widget} name``` blocks whose numbers are all computed at build time.

A widget block names a widget and gives YAML options:

    ```{widget} heatmap
    examples: [cat-fast, animal-tired]
    mask: causal
    ```

The registry below maps each widget name to its declared option schema, a `compute(options)` that
runs `attention_core` (NumPy) and returns plain data, and a `fallback(data)` that renders the same
numbers as static HTML tables. The page embeds the data as `<script type="application/json">`, so the
browser only displays it (theme/js/widgets/*.js): widgets are ready instantly, over http and file://,
without downloading Python. Without JavaScript the fallback tables are the content.

Validation happens at parse time (a core rule), so every bad option is reported with the line of the
offending option inside the block, and the widget's id is known to the link checker.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import yaml
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from attention_core import EXAMPLES, Example, get_example

from .errors import Code
from .plugins.directive import register_directive, report

SIGNIFICANT_DIGITS = 6
MAX_TEMPERATURE_STEPS = 200  # the temperature grid is embedded in the page; keep it small
HIGH_WEIGHT = 0.52  # cells at or above this weight switch text colour (same as HIGH in theme/js/widgets/common.js)

# --------------------------------------------------------------------------- option schema


class OptionError(ValueError):
    """A bad option value; `item` is the index of the offending list item, if any."""

    def __init__(self, message: str, item: int | None = None):
        super().__init__(message)
        self.item = item


@dataclass(frozen=True)
class Option:
    """One declared option: its kind decides how a YAML value is checked.

    kinds: `example` (an example id), `examples` (a non-empty list of example ids), `choice` (one of
    `choices`), `number` (int or float within [minimum, maximum]), `integer` (int ≥ minimum),
    `token` (a string; cross-checked against the example's tokens by the widget).
    """

    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def check(self, name: str, value: Any) -> Any:
        if self.kind == "example":
            return _example_id(name, value)
        if self.kind == "examples":
            if not isinstance(value, list) or not value:
                raise OptionError(f"option '{name}' must be a non-empty list of example ids, e.g. [cat-fast, animal-tired]")
            seen: set[str] = set()
            for i, item in enumerate(value):
                try:
                    ident = _example_id(name, item)
                except OptionError as exc:
                    raise OptionError(str(exc), item=i) from None
                if ident in seen:
                    raise OptionError(f"option '{name}' lists example '{ident}' twice", item=i)
                seen.add(ident)
            return list(value)
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise OptionError(f"option '{name}' must be one of {', '.join(self.choices)}; got {_show(value)}")
            return value
        if self.kind in ("number", "integer"):
            ok_type = isinstance(value, int) if self.kind == "integer" else isinstance(value, (int, float))
            if isinstance(value, bool) or not ok_type or (isinstance(value, float) and not math.isfinite(value)):
                what = "an integer" if self.kind == "integer" else "a number"
                raise OptionError(f"option '{name}' must be {what}, got {_show(value)}")
            if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
                raise OptionError(f"option '{name}' must be between {_num(self.minimum)} and {_num(self.maximum)}, "
                                  f"got {_num(value)}")
            return value
        if self.kind == "token":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise OptionError(f"option '{name}' must be a token (a word of the example), got {_show(value)}")
            return str(value)
        raise AssertionError(f"unknown option kind {self.kind}")


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else (json.dumps(value, ensure_ascii=False) if value is not None else "nothing")


def _num(value: Any) -> str:
    return "∞" if value is None else f"{value:g}"


def _example_id(name: str, value: Any) -> str:
    if not isinstance(value, str) or value not in EXAMPLES:
        raise OptionError(f"option '{name}': unknown example id {_show(value)} (valid ids: {', '.join(EXAMPLES)})")
    return value


# --------------------------------------------------------------------------- helpers


def _list(a: Any) -> Any:
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


def _tokens(ex: Example) -> list[str]:
    return list(ex.tokens)


def _needs_single_head(ex: Example) -> str | None:
    if ex.X is None:
        return "it has no embeddings (a score-only example)"
    if ex.num_heads != 1:
        return f"it has {ex.num_heads} heads (use the multi-head widget)"
    return None


# --------------------------------------------------------------------------- fallback HTML


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


# --------------------------------------------------------------------------- the five widgets


def heatmap_compute(o: dict) -> dict:
    examples = []
    for ident in o["examples"]:
        ex = get_example(ident)
        causal = ex.trace(causal=True).weights
        full = ex.trace(causal=False).weights
        examples.append({
            "id": ex.id, "title": ex.title, "tokens": _tokens(ex), "note": ex.note,
            "weights": {"causal": _list(causal), "none": _list(full)},
            "row_sums": {"causal": _list(causal.sum(axis=1)), "none": _list(full.sum(axis=1))},
        })
    return {"mask": o["mask"], "examples": examples}


def heatmap_fallback(d: dict) -> str:
    mode = d["mask"]
    parts = []
    for n, ex in enumerate(d["examples"]):
        L = len(ex["tokens"])
        mask = [[j <= i for j in range(L)] for i in range(L)] if mode == "causal" else None
        caption = f"{ex['title']}：注意力权重（%，{'因果掩码' if mode == 'causal' else '无掩码'}，示意）"
        table = weights_table(ex["tokens"], ex["weights"][mode], caption, mask, ex["row_sums"][mode])
        if n == 0:
            parts.append(table + note_html(ex["note"]))
        else:
            parts.append(f'<details class="widget-more"><summary>{escapeHtml(ex["title"])}</summary>{table}'
                         f'{note_html(ex["note"])}</details>')
    return "".join(parts)


def query_focus_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if o["query"] is not None and o["query"] not in ex.tokens:
        return [("query", f"option 'query': {o['query']!r} is not a token of example '{ex.id}' "
                          f"({' '.join(ex.tokens)})")]
    return []


def query_focus_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    query = o["query"] if o["query"] is not None else (ex.query if ex.query in ex.tokens else ex.tokens[0])
    return {"title": ex.title, "tokens": _tokens(ex), "note": ex.note, "query": ex.index(query),
            "weights": _list(ex.trace().weights)}


def query_focus_fallback(d: dict) -> str:
    q = d["query"]
    tok = d["tokens"][q]
    sentence = "".join(f'<span class="qf-token{" is-query" if i == q else ""}" style="--w:{css_number(w)}">{escapeHtml(t)}</span>'
                       for i, (t, w) in enumerate(zip(d["tokens"], d["weights"][q])))
    return (f'<p class="qf-sentence">{sentence}</p>'
            f'<p class="widget-caption">Query：“{escapeHtml(tok)}”分给每个词的注意力权重</p>'
            + bars_list(d["tokens"], d["weights"][q], f"“{tok}”的注意力权重")
            + '<details class="widget-more"><summary>每个词作为 Query 时的权重表</summary>'
            + weights_table(d["tokens"], d["weights"], "全部词的注意力权重（%，每行是一个 Query，示意）")
            + "</details>" + note_html(d["note"]))


def step_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if not 0 <= o["query"] < ex.length:
        return [("query", f"option 'query' must be a word index between 0 and {ex.length - 1} "
                          f"({' '.join(f'{i}={t}' for i, t in enumerate(ex.tokens))}), got {o['query']}")]
    return []


def step_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    tr = ex.trace()
    with np.errstate(under="ignore"):
        exp = np.exp(tr.masked)  # e^(score/√d_k); masked (−∞) keys give exactly 0
    contributions = tr.weights[:, :, None] * tr.V[None, :, :]  # [i, j] = w_ij · v_j
    return {
        "title": ex.title, "tokens": _tokens(ex), "note": ex.note, "query": o["query"], "d_k": tr.d_k,
        "sqrt_dk": math.sqrt(tr.d_k), "Q": _list(tr.Q), "K": _list(tr.K), "V": _list(tr.V),
        "scores": _list(tr.scores), "scaled": _list(tr.scaled), "exp": _list(exp),
        "exp_sum": _list(exp.sum(axis=1)), "weights": _list(tr.weights),
        "contributions": _list(contributions), "output": _list(tr.output),
        "mask": None if tr.mask is None else tr.mask.tolist(),
    }


def _vec(v: list[float]) -> str:
    return "[" + ", ".join(fmt(x) for x in v) + "]"


def step_fallback(d: dict) -> str:
    i = d["query"]
    toks = d["tokens"]
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(t)}</th><td>{_vec(d["K"][j])}</td><td>{fmt(d["scores"][i][j])}</td>'
        f'<td>{fmt(d["scaled"][i][j])}</td><td>{percent(d["weights"][i][j])}%</td><td>{_vec(d["V"][j])}</td></tr>'
        for j, t in enumerate(toks))
    return (f'<p class="widget-caption">Query：“{escapeHtml(toks[i])}”，q = {_vec(d["Q"][i])}，'
            f'd<sub>k</sub> = {d["d_k"]}，√d<sub>k</sub> ≈ {fmt(d["sqrt_dk"], 3)}</p>'
            f'<div class="heat-scroll"><table class="num-table"><caption>“{escapeHtml(toks[i])}”的四步计算（示意）</caption>'
            '<thead><tr><th scope="col">Key 词</th><th scope="col">k</th><th scope="col">① q·k</th>'
            '<th scope="col">② ÷√d<sub>k</sub></th><th scope="col">③ softmax</th><th scope="col">v</th></tr></thead>'
            f'<tbody>{rows}</tbody></table></div>'
            f'<p class="widget-caption">④ 加权求和得到新向量：{_vec(d["output"][i])}</p>' + note_html(d["note"]))


def temperature_check(o: dict) -> list[tuple[str, str]]:
    problems = []
    if o["min"] >= o["max"]:
        problems.append(("min", f"option 'min' ({_num(o['min'])}) must be smaller than 'max' ({_num(o['max'])})"))
        return problems
    steps = (o["max"] - o["min"]) / o["step"]
    if abs(steps - round(steps)) > 1e-6:
        problems.append(("step", f"option 'step' ({_num(o['step'])}) must divide max − min "
                                 f"({_num(o['max'] - o['min'])}) into whole steps"))
    elif round(steps) > MAX_TEMPERATURE_STEPS:
        problems.append(("step", f"option 'step' gives {round(steps) + 1} temperatures; at most "
                                 f"{MAX_TEMPERATURE_STEPS + 1} are allowed"))
    if not o["min"] <= o["value"] <= o["max"]:
        problems.append(("value", f"option 'value' ({_num(o['value'])}) must be between min ({_num(o['min'])}) "
                                  f"and max ({_num(o['max'])})"))
    elif not problems and abs((o["value"] - o["min"]) / o["step"] - round((o["value"] - o["min"]) / o["step"])) > 1e-6:
        problems.append(("value", f"option 'value' ({_num(o['value'])}) must lie on the slider's grid "
                                  f"(min + k × step)"))
    return problems


def temperature_grid(o: dict) -> list[float]:
    n = round((o["max"] - o["min"]) / o["step"])
    return [round(o["min"] + k * o["step"], 10) for k in range(n + 1)]


def temperature_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    temps = temperature_grid(o)
    weights = np.array([ex.weights(temperature=t) for t in temps])
    return {
        "title": ex.title, "tokens": _tokens(ex), "note": ex.note, "query": ex.query,
        "scores": _list(ex.scores), "temperatures": temps, "weights": _list(weights),
        "max_weight": _list(weights.max(axis=1)),
        "entropy_bits": [entropy_bits(w) for w in weights],
        "max_entropy_bits": math.log2(ex.length),
        "value_index": round((o["value"] - o["min"]) / o["step"]),
    }


def temperature_fallback(d: dict) -> str:
    k = d["value_index"]
    t = d["temperatures"][k]
    rows = "".join(
        f'<tr><th scope="row">{fmt(temp, 1)}</th>' + "".join(f"<td>{percent(w)}</td>" for w in ws)
        + f'<td>{fmt(h, 2)}</td></tr>'
        for temp, ws, h in zip(d["temperatures"], d["weights"], d["entropy_bits"])
        if abs(temp * 10 - round(temp * 10)) < 1e-9 and round(temp * 10) % 5 == 0 or temp in (d["temperatures"][0], t))
    head = "".join(f'<th scope="col">{escapeHtml(tok)}</th>' for tok in d["tokens"])
    query = f"“{escapeHtml(d['query'])}”" if d.get("query") else "Query"
    return (f'<p class="widget-caption">{query} 的原始分数：'
            + "，".join(f"{escapeHtml(tok)} {fmt(s, 1)}" for tok, s in zip(d["tokens"], d["scores"])) + "</p>"
            + bars_list(d["tokens"], d["weights"][k], f"T = {fmt(t, 1)} 时的注意力权重")
            + '<details class="widget-more"><summary>不同温度下的权重表</summary>'
            f'<div class="heat-scroll"><table class="num-table"><caption>不同温度 T 下的 softmax 权重（%）与熵（比特）</caption>'
            f'<thead><tr><th scope="col">T</th>{head}<th scope="col">熵</th></tr></thead><tbody>{rows}</tbody></table></div>'
            "</details>" + note_html(d["note"]))


def multi_head_check(o: dict) -> list[tuple[str, str]]:
    ex = get_example(o["example"])
    if ex.X is None:
        return [("example", f"example '{ex.id}' cannot be used by the multi-head widget: it has no embeddings")]
    return []


def multi_head_compute(o: dict) -> dict:
    ex = get_example(o["example"])
    tr = ex.multi_head_trace()
    h = tr.num_heads
    d_out = tr.output.shape[-1]
    labels = list(ex.feature_labels) if len(ex.feature_labels) == d_out and ex.W_O is not None else \
        [f"维度 {k}" for k in range(d_out)]
    return {
        "title": ex.title, "tokens": _tokens(ex), "note": ex.note, "num_heads": h, "d_v": tr.d_v,
        "head_labels": list(ex.head_labels) or [f"头 {k}" for k in range(h)], "causal": ex.causal,
        "query": ex.index(ex.query) if ex.query in ex.tokens else 0,
        "weights": _list(tr.weights), "concat": _list(tr.concat), "output": _list(tr.output),
        "output_labels": labels, "has_wo": ex.W_O is not None,
    }


def concat_labels(d: dict) -> list[str]:
    return [f"头{k // d['d_v']}·{k % d['d_v']}" for k in range(d["num_heads"] * d["d_v"])]


def multi_head_fallback(d: dict) -> str:
    L = len(d["tokens"])
    mask = [[j <= i for j in range(L)] for i in range(L)] if d["causal"] else None
    heads = "".join(
        f'<div class="mh-head">{weights_table(d["tokens"], w, f"头 {k}：{label}（%）", mask)}</div>'
        for k, (w, label) in enumerate(zip(d["weights"], d["head_labels"])))
    block = lambda j: f"mh-block-{(j // d['d_v']) % 3}"  # noqa: E731
    return (f'<div class="mh-heads">{heads}</div>'
            + matrix_table(d["tokens"], concat_labels(d), d["concat"], "拼接（concat）：各头输出并排", block)
            + matrix_table(d["tokens"], d["output_labels"], d["output"], "经 W_O 融合后的输出")
            + note_html(d["note"]))


@dataclass(frozen=True)
class Widget:
    name: str
    title: str  # Chinese heading shown above the widget
    options: dict[str, Option]
    compute: Callable[[dict], dict]
    fallback: Callable[[dict], str]
    check: Callable[[dict], list[tuple[str, str]]] = field(default=lambda o: [])
    accepts: Callable[[Example], str | None] = field(default=_needs_single_head)

    def defaults(self) -> dict[str, Any]:
        return {k: opt.default for k, opt in self.options.items()}


def _needs_scores(ex: Example) -> str | None:
    return None if ex.scores is not None else "it has no raw scores"


def _needs_embeddings(ex: Example) -> str | None:
    return None if ex.X is not None else "it has no embeddings (a score-only example)"


WIDGETS: dict[str, Widget] = {w.name: w for w in (
    Widget("heatmap", "注意力热力图", {
        "examples": Option("examples", ["cat-fast", "animal-tired", "animal-wide"], "example ids, first shown first"),
        "mask": Option("choice", "causal", "initial state of the causal-mask toggle", choices=("causal", "none")),
    }, heatmap_compute, heatmap_fallback),
    Widget("query-focus", "点一个词，看它在关注谁", {
        "example": Option("example", "xiaoming", "example id"),
        "query": Option("token", None, "initially selected token (default: the example's query, e.g. 他)"),
    }, query_focus_compute, query_focus_fallback, query_focus_check),
    Widget("step-calculator", "分步计算器：一步一步算注意力", {
        "example": Option("example", "four-words", "example id"),
        "query": Option("integer", 0, "index of the initial query word", minimum=0),
    }, step_compute, step_fallback, step_check),
    Widget("temperature", "Softmax 温度", {
        "example": Option("example", "temperature-scores", "example id (must have raw scores)"),
        "min": Option("number", 0.2, "lowest temperature", minimum=0.05, maximum=100),
        "max": Option("number", 4, "highest temperature", minimum=0.05, maximum=100),
        "step": Option("number", 0.1, "slider step", minimum=0.01, maximum=100),
        "value": Option("number", 1, "initial temperature", minimum=0.05, maximum=100),
    }, temperature_compute, temperature_fallback, temperature_check, _needs_scores),
    Widget("multi-head", "多头注意力：几个头各看各的", {
        "example": Option("example", "multi-head", "example id"),
    }, multi_head_compute, multi_head_fallback, multi_head_check, _needs_embeddings),
)}


# --------------------------------------------------------------------------- parsing and validation


@dataclass
class WidgetBlock:
    widget: Widget
    options: dict[str, Any]
    data: dict[str, Any]
    ident: str


def _option_lines(content: str) -> dict[str, tuple[int, int, list[int]]]:
    """key -> (0-based line of the key, line of the value, lines of list items) from the YAML body."""
    lines: dict[str, tuple[int, int, list[int]]] = {}
    root = yaml.compose(content, Loader=yaml.SafeLoader)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            items = [n.start_mark.line for n in value.value] if isinstance(value, yaml.SequenceNode) else []
            lines[str(key.value)] = (key.start_mark.line, value.start_mark.line, items)
    return lines


def parse_block(token: Token, env: dict) -> WidgetBlock | None:
    """Validate one ```{widget} block; report every problem (with its line) and return None if any."""
    problems_before = len(env["problems"])

    def error(message: str, line: int | None = None) -> None:  # line: 0-based inside the body
        report(env, Code.WIDGET, token, message, offset=0 if line is None else 1 + line)

    name = token.info.strip()
    widget = WIDGETS.get(name)
    if widget is None:
        known = ", ".join(sorted(WIDGETS))
        error(f"unknown widget '{name}' (known: {known})" if name else f"missing widget name after {{widget}} (known: {known})")
        return None
    body = token.content
    try:
        raw = yaml.safe_load(body) if body.strip() else {}
        lines = _option_lines(body) if body.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        last_line = max(0, len(body.rstrip("\n").split("\n")) - 1)  # EOF errors point at the last option line
        error(f"widget options are not valid YAML: {getattr(exc, 'problem', None) or exc}",
              min(mark.line, last_line) if mark is not None else 0)
        return None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        error("widget options must be `key: value` lines", 0)
        return None

    options = widget.defaults()
    for key, value in raw.items():
        key_line, value_line, item_lines = lines.get(str(key), (0, 0, []))
        spec = widget.options.get(str(key))
        if spec is None:
            error(f"unknown option '{key}' for widget '{name}' (allowed: {', '.join(widget.options)})", key_line)
            continue
        try:
            options[str(key)] = spec.check(str(key), value)
        except OptionError as exc:
            line = item_lines[exc.item] if exc.item is not None and exc.item < len(item_lines) else value_line
            error(str(exc), line)
            continue
        if spec.kind in ("example", "examples"):
            for i, ident in enumerate(value if isinstance(value, list) else [value]):
                reason = widget.accepts(get_example(ident))
                if reason:
                    line = item_lines[i] if spec.kind == "examples" and i < len(item_lines) else value_line
                    error(f"example '{ident}' cannot be used by the {name} widget: {reason}", line)
    if len(env["problems"]) > problems_before:
        return None
    for key, message in widget.check(options):
        error(message, lines[key][1] if key in lines else None)
    if len(env["problems"]) > problems_before:
        return None

    counter = env.setdefault("widget_count", 0) + 1
    env["widget_count"] = counter
    ident = f"widget-{counter}"
    return WidgetBlock(widget, options, widget.compute(options), ident)


def render_block(block: WidgetBlock) -> str:
    w, ident = block.widget, block.ident
    return (f'<div class="widget widget-{w.name}" data-widget="{w.name}" id="{ident}" role="group" '
            f'aria-labelledby="{ident}-title">'
            f'<p class="widget-title" id="{ident}-title"><span class="widget-kicker">交互演示</span>{escapeHtml(w.title)}</p>'
            f'<div class="widget-body">{w.fallback(block.data)}</div>'
            f'<script type="application/json" class="widget-data">{embed_json(block.data)}</script>'
            "</div>\n")


def widget_plugin(md: MarkdownIt, *, render: Callable[[WidgetBlock], str] = render_block) -> None:
    """Register ```{widget} name: options are checked and data computed at parse time (errors carry
    lines, ids reach the link checker); the render rule only writes HTML."""

    def prepare(state: Any) -> None:
        for token in state.tokens:
            if token.type == "widget":
                block = parse_block(token, state.env)
                token.meta["widget"] = block
                if block is not None:
                    state.env.setdefault("features", set()).update(("widgets", f"widget-{block.widget.name}"))
                    state.env.setdefault("extra_ids", set()).add(block.ident)

    def render_token(token: Token, env: dict) -> str:
        block = token.meta.get("widget")
        return render(block) if block is not None else ""

    register_directive(md, "widget", render_token)  # adds the core rule that makes "widget" tokens
    md.core.ruler.after("directive_widget", "widget_prepare", prepare)


def markdown_plugin(md: MarkdownIt) -> None:
    """Entry point used by builder.site: the {widget} directive with the standard renderer."""
    widget_plugin(md, render=render_block)
