"""The `kv-cache` widget: how many bytes generation keeps per token — layers × 2 (K and V) × KV heads × head_dim ×
bytes per number (`attention_core.qkv.kv_cache_bytes_per_token`) — for SmolLM2-135M (its sizes read from the GGUF
file the build runs, attention_course/smollm2/inside.py `model_config`) and published models
(`attention_core.qkv.PUBLISHED_CONFIGS`), or sizes the reader types in (widget.js computes the
same product).
Quotable: ``{data}`kv-cache SmolLM2-135M 每token` `` (bytes), ``… 每token·KiB`` (bytes per token at the default
precision), ``… 上下文`` (the whole context), ``… 无GQA`` (per token if every query head had its own K/V),
``… 层数`` / ``KV头`` / ``查询头`` / ``头维度``.
"""

from __future__ import annotations

from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_core.qkv import BYTES_PER_VALUE, PUBLISHED_CONFIGS, ModelShape
from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.widgets.fallback import note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, WidgetDataError

SMOLLM2 = "SmolLM2-135M"  # the preset's id: the `model` option and the quotes' names (kv-cache SmolLM2-135M 每token)
LABELS = {SMOLLM2: "SmolLM2-135M-Instruct"}  # what the reader sees: the model the course runs, named truly
DTYPES = tuple(BYTES_PER_VALUE)


def group_digits(n: float) -> str:
    """12345678 → 12,345,678 (whole numbers; the JS writes the same)."""
    return f"{round(n):,}"


def binary_size(n: float) -> str:
    """Bytes in KiB / MiB / GiB with one decimal (1 KiB = 1024 B), as the live view writes them."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{round(n)} B"


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    try:
        cfg = real_model.model_config(build)
    except ModelWeightsError as exc:
        raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
    smollm2 = ModelShape(
        SMOLLM2,
        cfg.n_layers,
        cfg.n_heads,
        cfg.n_kv_heads,
        cfg.head_dim,
        "SmolLM2-135M-Instruct.Q4_1.gguf 的元数据（llama.block_count、llama.attention.head_count、"
        "llama.attention.head_count_kv、llama.embedding_length ÷ head_count）",
    )
    shapes = [smollm2, *PUBLISHED_CONFIGS]
    names = [s.name for s in shapes]
    if o["model"] not in names:
        raise WidgetDataError(f"option 'model' must be one of {', '.join(names)}, got {o['model']!r}", "model")
    context = o["context"] if o["context"] is not None else cfg.context_length
    bytes_per_value = BYTES_PER_VALUE[o["dtype"]]
    presets, quotes = [], {}
    for s in shapes:
        per_token = s.bytes_per_token(bytes_per_value)
        without_gqa = ModelShape(s.name, s.n_layers, s.n_heads, s.n_heads, s.head_dim, s.source).bytes_per_token(
            bytes_per_value
        )
        presets.append(
            {
                "name": s.name,
                "label": LABELS.get(s.name, s.name),
                "layers": s.n_layers,
                "heads": s.n_heads,
                "kv_heads": s.n_kv_heads,
                "head_dim": s.head_dim,
                "source": s.source,
                "bytes_per_token": per_token,
            }
        )
        quotes.update(
            {
                f"{s.name} 每token": f"{group_digits(per_token)} 字节",
                f"{s.name} 每token·KiB": binary_size(per_token),
                f"{s.name} 上下文": binary_size(per_token * context),
                f"{s.name} 无GQA": f"{group_digits(without_gqa)} 字节",
                f"{s.name} 层数": str(s.n_layers),
                f"{s.name} KV头": str(s.n_kv_heads),
                f"{s.name} 查询头": str(s.n_heads),
                f"{s.name} 头维度": str(s.head_dim),
            }
        )
    quotes["上下文长度"] = group_digits(context)
    quotes.update(
        {
            f"{SMOLLM2} 模型宽度": str(cfg.d_model),
            f"{SMOLLM2} Q宽度": str(cfg.n_heads * cfg.head_dim),
            f"{SMOLLM2} K宽度": str(cfg.n_kv_heads * cfg.head_dim),
            f"{SMOLLM2} 组大小": str(cfg.group_size),
            f"{SMOLLM2} 上下文长度": group_digits(cfg.context_length),
        }
    )
    data = {
        "presets": presets,
        "model": names.index(o["model"]),
        "context": context,
        "dtypes": [{"name": k, "bytes": v} for k, v in BYTES_PER_VALUE.items()],
        "dtype": DTYPES.index(o["dtype"]),
        "quotes": quotes,
    }
    return data, {}


def fallback(d: dict) -> str:
    dtype = d["dtypes"][d["dtype"]]
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(p["label"])}</th><td>{p["layers"]}</td><td>{p["kv_heads"]}'
        f"（查询头 {p['heads']}）</td><td>{p['head_dim']}</td><td>{group_digits(p['bytes_per_token'])} 字节"
        f"（{binary_size(p['bytes_per_token'])}）</td><td>{binary_size(p['bytes_per_token'] * d['context'])}</td></tr>"
        for p in d["presets"]
    )
    return (
        '<div class="heat-scroll"><table class="num-table kv-table"><caption>KV 缓存 = 层数 × 2 × KV 头数 × 头维度 × '
        f"{dtype['bytes']} 字节（{escapeHtml(dtype['name'])}）；上下文 {group_digits(d['context'])} 个 token</caption>"
        '<thead><tr><th scope="col">模型</th><th scope="col">层数</th><th scope="col">KV 头数</th>'
        '<th scope="col">头维度</th><th scope="col">每个 token</th><th scope="col">整个上下文</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        + note_html(
            "SmolLM2-135M-Instruct 的尺寸在网页生成时从它的 GGUF 文件读出；其他模型的尺寸来自它们公开的 config.json。"
        )
    )


WIDGET = Widget(
    "kv-cache",
    "KV 缓存计算器：每个 token 要存多少字节",
    {
        "model": Option("text", SMOLLM2, "initially selected model"),
        "dtype": Option("choice", "float16", "number format (float16 also stands for bfloat16)", choices=DTYPES),
        "context": Option("integer", None, "context length in tokens (default SmolLM2's trained context)", minimum=1),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote_named,
)
