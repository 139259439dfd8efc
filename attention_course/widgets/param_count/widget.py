"""The `param-count` widget: where a decoder-only Transformer's parameters are — embeddings, attention, MLP,
norms (and an untied LM head) — for GPT-2 small, GPT-3 175B and SmolLM2-135M, or numbers the reader types
(attention_core/param_count.py; widget.js repeats the arithmetic for edited numbers, and
tests/course/test_module06.py checks that both agree)."""

from __future__ import annotations

from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_core.param_count import PRESETS, config_dict, count_parameters
from builder.widgets.fallback import fmt
from builder.widgets.schema import Option, Widget

PARTS = (  # (key, label): the breakdown rows, in the order of the data flow
    ("embeddings", "嵌入（token + 位置）"),
    ("attention", "注意力（全部层）"),
    ("mlp", "前馈网络 FFN（全部层）"),
    ("norms", "归一化层"),
    ("lm_head", "输出层（未共享时）"),
)
FIELDS = (  # (config key, label) of the number inputs
    ("n_layers", "层数 N"),
    ("d_model", "d_model"),
    ("n_heads", "注意力头"),
    ("n_kv_heads", "K/V 头"),
    ("d_ffn", "FFN 宽度"),
    ("vocab_size", "词表大小"),
    ("context_length", "上下文长度"),
)
CHOICES = {  # select fields: key → ((value, label), …)
    "positions": (("learned", "可学习的位置嵌入"), ("sinusoidal", "正弦编码（无参数）"), ("rope", "RoPE（无参数）")),
    "ffn": (("gelu", "GELU MLP（2 个矩阵）"), ("swiglu", "SwiGLU（3 个矩阵）")),
    "norm": (("layernorm", "LayerNorm"), ("rmsnorm", "RMSNorm")),
    "bias": ((True, "有偏置"), (False, "无偏置")),
    "tied_embeddings": ((True, "与嵌入共享"), (False, "独立矩阵")),
}
CHOICE_LABELS = {
    "positions": "位置信息",
    "ffn": "前馈网络",
    "norm": "归一化",
    "bias": "线性层偏置",
    "tied_embeddings": "输出层",
}


def short_count(n: float) -> str:
    """124.4M / 174.6B / 9.4K, one decimal, a trailing .0 dropped (135M) — the scale the papers use
    (widget.js `shortCount`: same)."""
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return str(int(n))


def compute(o: dict) -> dict:
    presets = []
    for key, cfg in PRESETS.items():
        presets.append({"id": key, "config": config_dict(cfg), "counts": count_parameters(cfg)})
    return {
        "presets": presets,
        "preset": [p["id"] for p in presets].index(o["preset"]),
        "parts": [list(p) for p in PARTS],
        "fields": [list(f) for f in FIELDS],
        "choices": {k: [list(c) for c in v] for k, v in CHOICES.items()},
        "choice_labels": CHOICE_LABELS,
    }


def form_placeholder(d: dict, cfg: dict) -> str:
    """The controls as the live view draws them, disabled (the static view keeps the live one's height)."""
    presets = "".join(
        f'<button type="button" class="seg-btn" disabled aria-pressed="{str(i == d["preset"]).lower()}">'
        f"{escapeHtml(p['config']['name'])}</button>"
        for i, p in enumerate(d["presets"])
    )
    inputs = "".join(
        f'<label class="pc-field"><span>{escapeHtml(label)}</span><input type="number" disabled '
        f'value="{cfg[key]}"></label>'
        for key, label in d["fields"]
    )
    selects = "".join(
        f'<label class="pc-field"><span>{escapeHtml(d["choice_labels"][key])}</span><select disabled>'
        + "".join(
            f"<option{' selected' if value == cfg[key] else ''}>{escapeHtml(text)}</option>" for value, text in options
        )
        + "</select></label>"
        for key, options in d["choices"].items()
    )
    return (
        f'<div class="widget-controls pc-controls" aria-hidden="true"><div class="seg pc-presets">{presets}'
        f'<button type="button" class="seg-btn" disabled aria-pressed="false">自定义</button></div>'
        f'<div class="pc-grid">{inputs}{selects}</div></div>'
    )


def breakdown_table(d: dict, cfg: dict, counts: dict) -> str:
    total = counts["total"]
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(label)}</th><td class="pc-num">{counts[key]:,}</td>'
        '<td class="pc-bar"><span class="bar-track">'
        f'<span class="bar-fill" style="width:{counts[key] / total * 100:.1f}%">'
        f'</span></span></td><td class="pc-share">{fmt(counts[key] / total * 100, 1)}%</td></tr>'
        for key, label in d["parts"]
    )
    published = (
        f"；公开数字 {short_count(cfg['published'])}（{escapeHtml(cfg['source'])}）" if cfg.get("published") else ""
    )
    return (
        f'<p class="widget-caption pc-total">{escapeHtml(cfg["name"])}：合计 <strong>{total:,}</strong> 个参数'
        f"（{short_count(total)}）{published}</p>"
        '<div class="heat-scroll"><table class="num-table pc-table"><caption>参数分布（每层：注意力 '
        f"{counts['attention_per_layer']:,}，FFN {counts['mlp_per_layer']:,}）</caption><thead><tr>"
        '<th scope="col">部分</th><th scope="col">参数</th>'
        '<th scope="col"><span class="visually-hidden">条形</span></th>'
        f'<th scope="col">占比</th></tr></thead><tbody>{rows}</tbody></table></div>'
    )


def fallback(d: dict) -> str:
    p = d["presets"][d["preset"]]
    return form_placeholder(d, p["config"]) + breakdown_table(d, p["config"], p["counts"])


WIDGET = Widget(
    "param-count",
    "参数都花在哪儿了？",
    {
        "preset": Option("choice", "gpt2-small", " | ".join(PRESETS), choices=tuple(PRESETS)),
    },
    compute,
    fallback,
)


def preset_counts() -> dict[str, dict[str, Any]]:
    """Each preset's counts (for tests and prose)."""
    return {key: count_parameters(cfg) for key, cfg in PRESETS.items()}
