"""The `qk-vectors` widget — what bertviz calls the neuron view, precomputed: the real queries and keys of one
sentence at one layer of SmolLM2-135M (after RoPE), drawn in 2-D, with the scores they give.

SmolLM2 uses grouped-query attention: a layer's 9 query heads share 3 key/value heads, query head h using key
head h // 3. The widget shows one key head and the three query heads that use it, all projected onto one plane
(`attention_core.qkv.pca_plane` over those queries and keys together), so switching heads moves the queries and
leaves the keys where they are — they are the same keys. The plane is only for drawing: scores and weights are
computed from the full 64-dimensional vectors, and the share of squared length the plane keeps is shown.
Quotable: ``{data}`qk-vectors 头2 it→animal` `` (the weight, %), ``{data}`qk-vectors 平面保留` `` (the share),
``{data}`qk-vectors 头0 首词最大` `` (of the ``首词之后的词数`` tokens after the first, how many give it their
largest weight).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core.core import causal_mask, softmax
from attention_core.models.sentences import SENTENCES, get_sentence
from attention_core.qkv import pca_plane
from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.widgets.fallback import fmt, note_html, percent_row
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError


class SentenceOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if isinstance(value, str) and value in SENTENCES:
            return value
        raise OptionError(f"option '{name}': unknown sentence id {value!r} (known: {', '.join(SENTENCES)})")


def _word(token: str) -> str:
    return token.strip() or token


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    spec = get_sentence(o["sentence"])
    try:
        cfg = real_model.model_config(build)
        if not 0 <= o["layer"] < cfg.n_layers:
            raise WidgetDataError(
                f"option 'layer' must be between 0 and {cfg.n_layers - 1} (SmolLM2-135M has "
                f"{cfg.n_layers} layers), got {o['layer']}",
                "layer",
            )
        if not 0 <= o["kv_head"] < cfg.n_kv_heads:
            raise WidgetDataError(
                f"option 'kv_head' must be between 0 and {cfg.n_kv_heads - 1} (each layer has "
                f"{cfg.n_kv_heads} key/value heads), got {o['kv_head']}",
                "kv_head",
            )
        run = real_model.query_key_run(build, spec.text, o["layer"])
    except real_model.ModelInputError as exc:
        raise WidgetDataError(f"sentence '{spec.id}': {exc}", "sentence") from exc
    except ModelWeightsError as exc:
        raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
    g = run.group_size
    heads = list(range(o["kv_head"] * g, (o["kv_head"] + 1) * g))
    head = o["head"] if o["head"] is not None else heads[-1]
    if head not in heads:
        raise WidgetDataError(
            f"option 'head' must be one of the query heads that use key head {o['kv_head']} "
            f"({', '.join(map(str, heads))}), got {head}",
            "head",
        )
    words = [_word(t) for t in run.tokens]
    query = o["query"] if o["query"] is not None else words[-1]
    if query not in words:
        raise WidgetDataError(
            f"option 'query': {query!r} is not a token of sentence '{spec.id}' ({' '.join(words)})", "query"
        )
    keys = run.keys[o["kv_head"]].astype(np.float64)  # (T, 64)
    queries = run.queries[heads].astype(np.float64)  # (g, T, 64)
    t, d = keys.shape
    plane = pca_plane(np.vstack([*queries, keys]))
    coords = plane.coords
    mask = causal_mask(t)
    per_head = []
    for n, h in enumerate(heads):
        scores = queries[n] @ keys.T / np.sqrt(d)  # the full-dimensional scores the model uses
        weights = softmax(np.where(mask, scores, -np.inf), axis=-1)
        per_head.append(
            {
                "head": h,
                "q": np.round(coords[n * t : (n + 1) * t], 3).tolist(),
                "scores": [np.round(scores[i, : i + 1], 2).tolist() for i in range(t)],
                "percents": [percent_row(weights[i, : i + 1].tolist()) for i in range(t)],
            }
        )
    quotes = {"平面保留": f"{round(plane.kept * 100)}%", "首词之后的词数": str(t - 1)}
    for ph in per_head:
        # how many rows after the first give the first token their largest weight (the attention sink)
        quotes[f"头{ph['head']} 首词最大"] = str(sum(1 for row in ph["percents"][1:] if max(row) == row[0]))
        for i, a in enumerate(words):
            for j in range(i + 1):
                quotes.setdefault(f"头{ph['head']} {a}→{words[j]}", f"{ph['percents'][i][j]}%")
    data = {
        "sentence": spec.id,
        "text": spec.text,
        "tokens": run.tokens,
        "words": words,
        "layer": o["layer"],
        "kv_head": o["kv_head"],
        "heads": per_head,
        "head": head,
        "query": words.index(query),
        "k": np.round(coords[g * t :], 3).tolist(),
        "kept": round(plane.kept, 4),
        "n_heads": cfg.n_heads,
        "n_kv_heads": cfg.n_kv_heads,
        "head_dim": cfg.head_dim,
        "group": g,
        "quotes": quotes,
        "note": "真实模型：SmolLM2-135M-Instruct 网页生成时用 NumPy 预先算好（旋转位置编码之后的向量）。"
        f"二维画面只用于作图；分数和权重按完整的 {cfg.head_dim} 维向量计算，权重已四舍五入且每行合计 100%。",
    }
    return data, {}


def fallback(d: dict) -> str:
    ph = next(p for p in d["heads"] if p["head"] == d["head"])
    i = d["query"]
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(d["words"][j])}</th><td>{fmt(s)}</td><td>{p}%</td></tr>'
        for j, (s, p) in enumerate(zip(ph["scores"][i], ph["percents"][i]))
    )
    return (
        f'<p class="widget-caption">“{escapeHtml(d["text"])}”第 {d["layer"]} 层 · 查询头 {d["head"]}'
        f"（使用第 {d['kv_head']} 组 K/V）：“{escapeHtml(d['words'][i])}”的 Query 给每个 Key 的分数和权重</p>"
        '<div class="heat-scroll"><table class="num-table"><caption>分数 q·k/√64 与 softmax 权重（真实模型）</caption>'
        '<thead><tr><th scope="col">Key</th><th scope="col">分数</th><th scope="col">权重</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>" + note_html(d["note"])
    )


WIDGET = Widget(
    "qk-vectors",
    "真实模型的 Query 与 Key：SmolLM2-135M-Instruct",
    {
        "sentence": SentenceOption("sentence", "animal-tired", "sentence id (attention_core/models/sentences.py)"),
        "layer": Option("integer", 4, "layer (0-based)", minimum=0),
        "kv_head": Option("integer", 0, "key/value head (0-based): its query heads are shown", minimum=0),
        "head": Option("integer", None, "initial query head (default the group's last)", minimum=0),
        "query": Option("text", None, "initial query token (default the last)"),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote_named,
    styles=("qkv-projection",),
)
