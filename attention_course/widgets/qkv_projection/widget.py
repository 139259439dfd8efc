"""The `qkv-projection` widget: three designed words as 2-D vectors; the reader turns and stretches W_Q and W_K
(sliders) and watches the query and key arrows move and the score matrix QKᵀ/√d_k and a query's softmax row
change (widget.js computes them live with the same formulas).

The build computes the initial state with attention_core (`attention_core.qkv.projection_state`): the static
fallback shows it, the live view starts from it, and the e2e tests compare the live numbers with attention_core
at other slider positions too. Quotable: ``{data}`qkv-projection 分数 猫→老鼠` `` (a score, two decimals).
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from attention_core.qkv import PLANE_TOKENS, PLANE_X, projection_state
from builder.widgets.fallback import as_list, bars_list, fmt, matrix_table, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, num_text

ANGLE_STEP = 5  # degrees per slider step
SCALE_STEP = 0.05  # scale per slider step
SCALE_RANGE = (0.25, 2.0)
NOTE = "设计出来的例子：三个词的二维向量是为了看清几何关系而挑的，不来自真实模型；d_k = 2，所以分数除以 √2。"


def _on_grid(value: float, start: float, step: float) -> bool:
    k = (value - start) / step
    return abs(k - round(k)) < 1e-9


def check(o: dict) -> list[tuple[str, str]]:
    problems = []
    for name in ("angle_q", "angle_k"):
        if not _on_grid(o[name], -180, ANGLE_STEP):
            problems.append((name, f"option '{name}' ({num_text(o[name])}) must be a multiple of {ANGLE_STEP} degrees"))
    for name in ("scale_q", "scale_k"):
        if not _on_grid(o[name], SCALE_RANGE[0], SCALE_STEP):
            problems.append(
                (
                    name,
                    f"option '{name}' ({num_text(o[name])}) must lie on the slider's grid "
                    f"({num_text(SCALE_RANGE[0])} + k × {num_text(SCALE_STEP)})",
                )
            )
    if o["query"] is not None and o["query"] not in PLANE_TOKENS:
        problems.append(
            ("query", f"option 'query': {o['query']!r} is not a word of the widget ({' '.join(PLANE_TOKENS)})")
        )
    return problems


def compute(o: dict) -> dict:
    state = projection_state(PLANE_X, o["angle_q"], o["scale_q"], o["angle_k"], o["scale_k"])
    tokens = list(PLANE_TOKENS)
    quotes = {}
    for i, a in enumerate(tokens):
        for j, b in enumerate(tokens):
            quotes[f"分数 {a}→{b}"] = fmt(float(state.scores[i, j]))
    return {
        "tokens": tokens,
        "X": as_list(PLANE_X),
        "note": NOTE,
        "angle_q": o["angle_q"],
        "scale_q": o["scale_q"],
        "angle_k": o["angle_k"],
        "scale_k": o["scale_k"],
        "angle_step": ANGLE_STEP,
        "scale_step": SCALE_STEP,
        "scale_min": SCALE_RANGE[0],
        "scale_max": SCALE_RANGE[1],
        "query": tokens.index(o["query"]) if o["query"] is not None else 0,
        # the initial state as attention_core computes it (the fallback shows it; the e2e tests compare)
        "reference": {
            "W_Q": as_list(state.W_Q),
            "W_K": as_list(state.W_K),
            "Q": as_list(state.Q),
            "K": as_list(state.K),
            "scores": as_list(state.scores),
            "weights": as_list(state.weights),
        },
        "quotes": quotes,
    }


def fallback(d: dict) -> str:
    ref, tokens, q = d["reference"], d["tokens"], d["query"]
    vectors = matrix_table(
        tokens,
        ["x₁", "x₂", "q₁", "q₂", "k₁", "k₂"],
        [x + qv + kv for x, qv, kv in zip(d["X"], ref["Q"], ref["K"])],
        f"每个词的 x、q = x·W_Q、k = x·W_K（W_Q：转 {num_text(d['angle_q'])}°、放大 {num_text(d['scale_q'])} 倍；"
        f"W_K：转 {num_text(d['angle_k'])}°、放大 {num_text(d['scale_k'])} 倍）",
    )
    scores = matrix_table(
        [f"q·{t}" for t in tokens],
        [f"k·{t}" for t in tokens],
        ref["scores"],
        "分数矩阵 QKᵀ/√2：第 i 行第 j 列 = 词 i 的 Query 对词 j 的 Key 的打分",
    )
    return (
        vectors
        + scores
        + f'<p class="widget-caption">“{escapeHtml(tokens[q])}”作为 Query 时，softmax 之后的注意力权重</p>'
        + bars_list(tokens, ref["weights"][q], f"“{tokens[q]}”的注意力权重")
        + note_html(d["note"])
    )


WIDGET = Widget(
    "qkv-projection",
    "转一转 W_Q 和 W_K：Query 与 Key 从哪来",
    {
        "angle_q": Option("number", 20, "initial turn of W_Q in degrees", minimum=-180, maximum=180),
        "scale_q": Option("number", 1.5, "initial stretch of W_Q", minimum=SCALE_RANGE[0], maximum=SCALE_RANGE[1]),
        "angle_k": Option("number", -40, "initial turn of W_K in degrees", minimum=-180, maximum=180),
        "scale_k": Option("number", 1, "initial stretch of W_K", minimum=SCALE_RANGE[0], maximum=SCALE_RANGE[1]),
        "query": Option("text", None, "initially selected word (default the first)"),
    },
    compute,
    fallback,
    check,
    quote=quote_named,
)
