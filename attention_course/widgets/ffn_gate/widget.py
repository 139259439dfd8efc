"""The `ffn-gate` widget: the SwiGLU gates of the real SmolLM2-135M for one sentence (attention_course/smollm2/inside.py
`ffn_gate_stats`, computed at build time and cached): per layer, a histogram of the gate values g that enter SiLU,
the share that are negative (ReLU would turn every one of them into exactly 0) and the share whose SiLU(g) is all
but 0 (widget.js). The model's sizes come from its GGUF metadata."""

from __future__ import annotations

from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_core.activations import silu_minimum
from attention_core.models.sentences import SENTENCES, get_sentence
from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.widgets.fallback import fmt, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, WidgetDataError


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%"


def _facts(stats: real_model.GateStats, layer: int) -> dict[str, str]:
    d, f = stats.d_model, stats.d_ffn
    return {
        "d_model": str(d),
        "d_ffn": str(f),
        "层数": str(stats.n_layers),
        "token数": str(len(stats.tokens)),
        "宽度倍数": fmt(f / d, 2),
        "4d": str(4 * d),
        "8/3 d": fmt(8 * d / 3, 0),
        "FFN参数": f"{3 * d * f:,}",
        "门控单元总数": f"{stats.n_layers * f:,}",
        "负数占比": _pct(stats.negative[layer]),
        "近零占比": _pct(stats.near_zero[layer]),
        "负数最少": _pct(min(stats.negative)),
        "负数最多": _pct(max(stats.negative)),
        "负数最多层": str(stats.negative.index(max(stats.negative))),
        "近零阈值": fmt(stats.near_zero_limit, 2),
        "层": str(layer),
        "silu最小值": fmt(silu_minimum()[1], 2),
    }


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    spec = get_sentence(o["sentence"])
    try:
        stats = real_model.ffn_gate_stats(build, spec.text)
    except real_model.ModelInputError as exc:
        raise WidgetDataError(f"sentence '{spec.id}': {exc}", "sentence") from exc
    except ModelWeightsError as exc:
        raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
    if not 0 <= o["layer"] < stats.n_layers:
        raise WidgetDataError(
            f"option 'layer' must be between 0 and {stats.n_layers - 1} (SmolLM2-135M has "
            f"{stats.n_layers} layers), got {o['layer']}",
            "layer",
        )
    facts = _facts(stats, o["layer"])
    return {
        "text": spec.text,
        "title": spec.title,
        "tokens": stats.tokens,
        "layer": o["layer"],
        "n_layers": stats.n_layers,
        "d_model": stats.d_model,
        "d_ffn": stats.d_ffn,
        "negative": stats.negative,
        "near_zero": stats.near_zero,
        "histogram": stats.histogram,
        "bins": list(stats.bins),
        "near_zero_limit": stats.near_zero_limit,
        "quotes": facts,
    }, {}


def fallback(d: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{layer}</th><td>{_pct(n)}</td><td>{_pct(z)}</td></tr>'
        for layer, (n, z) in enumerate(zip(d["negative"], d["near_zero"]))
    )
    return (
        f'<p class="widget-caption">句子：{escapeHtml(d["text"])}（{len(d["tokens"])} 个 token）。每层 FFN 有 '
        f"{d['d_ffn']} 个门控单元，输入维度 {d['d_model']}。</p>"
        '<details class="widget-more" open><summary>每一层的门控值统计</summary><div class="heat-scroll">'
        '<table class="num-table"><caption>SmolLM2-135M-Instruct 每层 SwiGLU 门控值 g：'
        "负数占比与 |SiLU(g)| 近乎为 0 的占比</caption>"
        '<thead><tr><th scope="col">层</th><th scope="col">g &lt; 0</th>'
        f'<th scope="col">|SiLU(g)| &lt; {fmt(d["near_zero_limit"], 2)}</th></tr></thead><tbody>{rows}</tbody></table>'
        "</div></details>"
        + note_html(
            "真实模型的数字：SmolLM2-135M-Instruct 网页生成时用 NumPy 预先跑过这句话，记录每层进入 SiLU 之前的门控值。"
        )
    )


WIDGET = Widget(
    "ffn-gate",
    "真实模型的门控：SmolLM2-135M-Instruct 的 SwiGLU",
    {
        "sentence": Option(
            "choice", "animal-tired", "sentence id (attention_core/models/sentences.py)", choices=tuple(SENTENCES)
        ),
        "layer": Option("integer", 12, "initial layer (0-based)", minimum=0),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote_named,
    styles=("activation-plot", "linear-collapse"),
)
