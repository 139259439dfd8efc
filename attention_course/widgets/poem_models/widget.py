"""The `poem-models` widget: the three language models of the Tang poems side by side (attention_course/poems/
lm_table.py) and what the Transformer's heads do, measured (head_scores.py) — three parts, all drawn at build time
as tables and inline SVG (the numbers are the data; widget.js adds nothing):

* `table`: one table, three models — how much context each sees, parameters, held-out perplexity on the same
  targets, the CPU time its numbers cost, and the first poem each writes at T = 1 with the same seed;
* `heads`: the head gallery — per pattern (previous character, start of the line, …), every head's score (mean
  attention weight on the pattern's target over the held-out poems) and its lift over even spreading, the heads
  that clear both thresholds marked;
* `curve`: the Transformer's training and held-out loss every 100 steps, with the bigram's and the MLP's
  held-out loss as reference lines.

Quotable (``{data}`poem-models <name>` ``): lm_table's facts (`transformer_held_ppl`, `mlp_params`, …), per head
pattern `<pattern>_best` (第 L 层 · 头 H), `_score` (%), `_lift`, `_baseline` (%), `_pairs`, `_poems`, `_lift2`,
`_lift3`, `_shows` (how many heads clear both thresholds), and the training's `transformer_steps`, `_batch`,
`_cpu_seconds`, … (see `training_quotes`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_course.poems import lm_table, ngram_lm, transformer_lm
from attention_course.poems.artifacts import StaleWeights
from attention_course.poems.corpus import CorpusError
from attention_course.poems.dataset import CONVERTER_CONFIG, CONVERTER_VERSION, SOURCE
from attention_course.widgets.bigram_mlp.widget import MAX_LEN, sample_lines
from builder.widgets.fallback import css_number, ink_classes, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

PARTS = ("table", "heads", "curve")
# pattern → (its name, what the score measures): head_scores.py says exactly which pairs
PATTERNS = {
    "previous": ("前一个字", "每个字的查询落在紧挨着的前一个字上的权重"),
    "line_break": ("上一句末的标点", "第二句起，每个字落在上一句句末那个“，”或“。”上的权重"),
    "line_start": ("本句第一个字", "每个字（从本句第三个字起）落在本句第一个字上的权重"),
    "line_end": ("上一句最后一个字", "第二句起，每个字落在上一句最后一个字上的权重"),
    "same_position": ("上一句同一位置（对仗）", "整齐的律诗、绝句里，每个字落在上一句同一位置那个字上的权重"),
    "rhyme": ("上一个韵脚", "偶数句倒数第二个字（它要预测韵脚）落在两句之前那个韵脚上的权重"),
    "opening": ("开头的 ◆（参照）", "每个字落在全诗开头 ◆ 上的权重；不是诗的规律，很多头把用不上的注意力停在这里"),
}
NOTE = (
    f"数据：npm 包 {SOURCE['package']} 的《全唐诗》（合集以 MIT 许可发布；原书是繁体字，用 OpenCC "
    f"{CONVERTER_VERSION}（{CONVERTER_CONFIG}）转成简体字）。三个模型用同一份训练集、同一个词表，在同一份验证集的"
    "同一批字上打分；Transformer 和 MLP 的权重是事先训练好的，网页生成时核对来历后，用 NumPy 算出这里的每个数。"
)


class PartsOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise OptionError(f"option '{name}' must be a non-empty list of {', '.join(PARTS)}")
        for i, item in enumerate(value):
            if item not in PARTS:
                raise OptionError(f"option '{name}': unknown part {item!r} (known: {', '.join(PARTS)})", item=i)
        if len(set(value)) != len(value):
            raise OptionError(f"option '{name}' lists a part twice")
        return list(value)


def load(build: Any) -> tuple[dict, dict, dict]:
    """(the three-model table, the Transformer's results, module 04's results); a missing corpus or stale
    committed weights is a widget error at the fence."""
    try:
        return lm_table.results(build), transformer_lm.results(build), ngram_lm.results(build)
    except CorpusError as exc:
        raise WidgetDataError(f"the Tang poems corpus is not available: {exc}") from exc
    except StaleWeights as exc:
        raise WidgetDataError(f"the committed weights do not match this checkout: {exc}") from exc


def head_label(layer: int, head: int) -> str:
    return f"第 {layer} 层 · 头 {head}"


def head_quotes(heads: dict) -> dict[str, str]:
    """Per pattern: the best head, its score and lift, the baseline, how many pairs and poems were measured, how
    many heads reach a lift of 2 and 3 and how many clear both thresholds."""
    out = {
        "head_poems": f"{heads['poems']:,}",
        "shows_score": f"{heads['shows_score'] * 100:.0f}%",
        "shows_lift": f"{heads['shows_lift']:g}",
    }
    for name, p in heads["patterns"].items():
        best = p["best"]
        layer, head = best["layer"], best["head"]
        out[f"{name}_best"] = head_label(layer, head)
        out[f"{name}_score"] = f"{best['score'] * 100:.0f}%"
        out[f"{name}_lift"] = f"{p['lift'][layer][head]:.1f}"
        out[f"{name}_baseline"] = f"{p['baseline'] * 100:.1f}%"
        out[f"{name}_pairs"] = f"{p['pairs']:,}"
        out[f"{name}_poems"] = f"{p['poems']:,}"
        out[f"{name}_lift2"] = f"{p['lift_2']}"
        out[f"{name}_lift3"] = f"{p['lift_3']}"
        out[f"{name}_shows"] = f"{len(p['shows'])}"
    n_heads = len(heads["patterns"]["previous"]["score"]) * len(heads["patterns"]["previous"]["score"][0])
    out["heads_total"] = f"{n_heads}"
    return out


def first_below(curve: dict, ref: float) -> int:
    """The first step at which the held-out curve is below `ref` (0 if never)."""
    return next((step for step, v in zip(curve["steps"], curve["held"]) if v < ref), 0)


def training_quotes(tf: dict, ng: dict) -> dict[str, str]:
    s, t, curve = tf["settings"], tf["training"], tf["curve"]
    by = tf["held_out_by_encoding"]
    f32, shipped = by["float32"]["ppl"], by[s["matrices"]]["ppl"]
    return {
        "transformer_steps": f"{s['steps']:,}",
        "transformer_batch": f"{s['batch']}",
        "transformer_window": f"{tf['config']['context']}",
        "transformer_lr": f"{s['lr']:g}",
        "transformer_warmup": f"{s['warmup']}",
        "transformer_tokens_seen": f"{t['tokens_seen']:,}",
        "transformer_cpu_seconds": f"{t['cpu_seconds']:.0f}",
        "transformer_cpu_minutes": f"{t['cpu_seconds'] / 60:.0f}",
        "transformer_wall_minutes": f"{t['wall_seconds'] / 60:.0f}",
        "transformer_start_loss": f"{curve['train'][0]:.2f}",
        "transformer_final_train_loss": f"{curve['train'][-1]:.2f}",
        "transformer_final_held_loss": f"{curve['held'][-1]:.2f}",
        "transformer_eval_windows": f"{s['eval_windows']}",
        "transformer_float32_ppl": f"{f32:.2f}",
        "transformer_shipped_ppl": f"{shipped:.2f}",
        "transformer_quant_cost": f"{(shipped / f32 - 1) * 100:.2f}%",
        "transformer_float32_kb": f"{by['float32']['bytes'] / 1024:,.0f}",
        "mlp_cpu_seconds": ng["facts"]["mlp_seconds"],
        "mlp_context": ng["facts"]["mlp_context"],
        **{
            f"transformer_beats_{k}_at_step": f"{first_below(curve, ref):,}"
            for k, ref in (("bigram", ng["bigram_held_nll"]), ("mlp", ng["mlp_held_nll"]))
        },
        "ppl_ratio_mlp_transformer": f"{math.exp(ng['mlp_held_nll'] - tf['held_out']['nll']):.1f}",
        "ppl_ratio_bigram_transformer": f"{math.exp(ng['bigram_held_nll'] - tf['held_out']['nll']):.1f}",
    }


def sample_quotes(models: list[dict]) -> dict[str, str]:
    """Per model, its sample poem: characters, lines closed by a mark, how many of those have 5 or 7 characters,
    and whether it ended by itself (drew ◆ before the sampler's cap)."""
    out = {}
    for row in models:
        lines, regular = sample_lines([row["sample"]])
        k = row["key"]
        out[f"{k}_sample_chars"] = f"{len(row['sample'])}"
        out[f"{k}_sample_lines"] = f"{lines}"
        out[f"{k}_sample_regular"] = f"{regular}"
        out[f"{k}_sample_ended"] = "是" if len(row["sample"]) < MAX_LEN else "否"
    out["sample_cap"] = f"{MAX_LEN}"
    return out


def end_quotes(sample: str) -> dict[str, str]:
    """How sure the Transformer is that its sample poem is over: P(◆) after its last mark, and after the mark that
    closes half of its lines (e.g. the 4th of 8) — attention_core's forward pass on the committed weights."""
    from attention_core import tiny_gpt

    params, cfg, meta, _ = transformer_lm.load()
    index = {ch: i for i, ch in enumerate(meta["vocab"])}
    ids = [0] + [index.get(ch, 1) for ch in sample]
    marks = [k for k, ch in enumerate(sample) if ch in "，。"]
    if not marks or marks[-1] != len(sample) - 1 or len(marks) % 2:
        return {}
    p = tiny_gpt.softmax(tiny_gpt.forward(params, cfg, ids[: cfg.context]).logits.astype(np.float64))
    half = marks[len(marks) // 2 - 1]
    return {
        "transformer_sample_end_prob": f"{p[len(sample), 0] * 100:.1f}%",
        "transformer_sample_half_end_prob": f"{p[half + 1, 0] * 100:.1f}%",
        "transformer_sample_half_lines": f"{len(marks) // 2}",
    }


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    table, tf, ng = load(build)
    # The bigram is counted at build time, not trained: its time is the machine's, not the model's, and would make
    # the page's bytes depend on the machine (the others' are their training runs', recorded with their weights).
    seconds = {
        "bigram": None,
        "mlp": float(ng["facts"]["mlp_seconds"]),
        "transformer": float(tf["training"]["cpu_seconds"]),
    }
    models = [
        {k: row[k] for k in ("key", "name", "context", "params", "held_nll", "held_ppl", "sample")}
        | {"cpu_seconds": seconds[row["key"]]}
        for row in table["models"]
    ]
    return {
        "parts": o["parts"],
        "models": models,
        "temperature": table["temperature"],
        "seed": table["seed"],
        "heads": tf["heads"],
        "curve": tf["curve"],
        "references": {"bigram": ng["bigram_held_nll"], "mlp": ng["mlp_held_nll"]},
        "quotes": {
            **table["facts"],
            **head_quotes(tf["heads"]),
            **training_quotes(tf, ng),
            **sample_quotes(table["models"]),
            **end_quotes(table["models"][-1]["sample"]),
        },
        "note": NOTE,
    }, {}


# ------------------------------------------------------------------------------------------ the parts


def context_text(row: dict) -> str:
    if row["key"] == "transformer":
        return f"整首诗（最多 {row['context'] - 1} 字）"
    return f"前 {row['context']} 个字"


def cpu_text(seconds: float | None) -> str:
    """A model's training cost as the table shows it; None: not trained, only counted (the bigram)."""
    return "无需训练，数一遍" if seconds is None else f"{seconds:,.{1 if seconds < 10 else 0}f} 秒"


def _table_html(d: dict) -> str:
    best = min(r["held_ppl"] for r in d["models"])
    worst = max(r["held_ppl"] for r in d["models"])
    rows = "".join(
        f'<tr data-model="{r["key"]}"><th scope="row">{escapeHtml(r["name"])}</th>'
        f'<td class="pm-ppl"><span class="pm-ppl-value">{r["held_ppl"]:.0f}</span>'
        f'<span class="bar-track" aria-hidden="true"><span class="bar-fill" style="width:'
        f'{css_number(r["held_ppl"] / worst * 100, 1)}%"></span></span></td>'
        f'<td>{escapeHtml(context_text(r))}</td><td class="pm-num">{r["params"]:,}</td>'
        f'<td class="pm-num">{cpu_text(r["cpu_seconds"])}</td></tr>'
        for r in d["models"]
    )
    samples = "".join(
        f'<li><span class="pm-sample-name">{escapeHtml(r["name"])}</span><span class="pm-sample" lang="zh-Hans">'
        f"{escapeHtml(r['sample']) or '（空）'}</span></li>"
        for r in d["models"]
    )
    t = f"{d['temperature']:g}"
    caption = "同一份唐诗、同一个验证集上的三个模型（困惑度越小越好）"
    return (
        f'<p class="widget-caption pm-caption" aria-hidden="true">{caption}</p>'
        '<div class="heat-scroll" tabindex="0" role="region" aria-label="三个模型的表（可左右滑动）">'
        f'<table class="num-table pm-table"><caption class="visually-hidden">{caption}</caption><thead><tr>'
        '<th scope="col">模型</th><th scope="col">验证集困惑度</th><th scope="col">看多少前文</th>'
        '<th scope="col">参数</th><th scope="col">训练花费（CPU）</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        f'<p class="widget-caption">困惑度最低的是 {best:.0f}。训练花费是在生成这个页面的 2 核机器上量的 CPU 时间：'
        "二元模型只需把训练集数一遍。</p>"
        f'<h3 class="widget-subtitle">温度 T = {t}、随机种子 {d["seed"]}，各写的第一首</h3>'
        f'<ol class="pm-samples">{samples}</ol>'
        f'<p class="widget-caption">三个模型从 ◆ 出发逐字抽样，写到 ◆ 或满 {MAX_LEN} 字为止；□ 是词表之外的字。</p>'
    )


def _cell(score: float, lift: float, shows: bool, label: str) -> str:
    ink = " ".join(ink_classes(score))
    classes = " ".join(c for c in (ink, "pm-shows" if shows else "") if c)
    mark = '<span class="pm-star" aria-hidden="true">★</span>' if shows else ""
    return (
        f'<td{f" class={chr(34)}{classes}{chr(34)}" if classes else ""} style="--w:{css_number(score)}" '
        f'title="{escapeHtml(label)}">{mark}{score * 100:.0f}<span class="pm-lift">×{lift:.1f}</span></td>'
    )


def _heads_html(d: dict) -> str:
    heads = d["heads"]
    cards = []
    for name, (title, what) in PATTERNS.items():
        p = heads["patterns"][name]
        shows = {tuple(x) for x in p["shows"]}
        n_layers, n_heads = len(p["score"]), len(p["score"][0])
        head_cols = "".join(f'<th scope="col">头 {h}</th>' for h in range(n_heads))
        body = "".join(
            f'<tr><th scope="row">第 {layer} 层</th>'
            + "".join(
                _cell(
                    p["score"][layer][h],
                    p["lift"][layer][h],
                    (layer, h) in shows,
                    f"{head_label(layer, h)}：{p['score'][layer][h] * 100:.1f}%，"
                    f"平均分配的 {p['lift'][layer][h]:.2f} 倍",
                )
                for h in range(n_heads)
            )
            + "</tr>"
            for layer in range(n_layers)
        )
        best = p["best"]
        if shows:
            verdict = f"{len(shows)} 个头过线（★）"
        elif p["lift_3"]:
            verdict = f"没有头过线；提升到 3 倍以上的头有 {p['lift_3']} 个"
        else:
            verdict = "没有头过线，也没有头提升到 3 倍"
        cards.append(
            f'<figure class="pm-card" data-pattern="{name}"><figcaption><strong>{escapeHtml(title)}</strong>'
            f'<span class="pm-what">{escapeHtml(what)}</span></figcaption>'
            '<table class="heat-table heat-static heat-scores pm-grid">'
            f'<caption class="visually-hidden">{escapeHtml(title)}：每个头的'
            '得分（%）和它是平均分配的几倍</caption><thead><tr><th scope="col"><span class="visually-hidden">层＼头'
            f"</span></th>{head_cols}</tr></thead><tbody>{body}</tbody>"
            f'</table><p class="widget-caption">{p["pairs"]:,} 个配对（{p["poems"]:,} 首诗），平均分配时约 '
            f"{p['baseline'] * 100:.1f}%。最高：{head_label(best['layer'], best['head'])}，{best['score'] * 100:.0f}%；"
            f"{verdict}。</p></figure>"
        )
    n = len(heads["patterns"]["previous"]["score"]) * len(heads["patterns"]["previous"]["score"][0])
    return (
        f'<p class="widget-caption">验证集 {heads["poems"]:,} 首诗上，{n} 个头各自的得分：查询落在这种位置上的注意力'
        f"权重的平均值（格子里的数，%）；小字“×n”：这相当于把注意力平均分给看得见的所有位置时的几倍。得分至少 "
        f"{heads['shows_score'] * 100:.0f}% 且至少 {heads['shows_lift']:g} 倍，才算这个头“做这件事”（★）。</p>"
        f'<div class="pm-cards">{"".join(cards)}</div>'
    )


def _curve_svg(d: dict) -> str:
    c, refs = d["curve"], d["references"]
    w, h, left, right, top, bottom = 640, 300, 56, 170, 16, 44
    steps = c["steps"]
    values = c["train"] + c["held"] + list(refs.values())
    lo, hi = math.floor(min(values) * 2) / 2, math.ceil(max(values) * 2) / 2
    x = lambda s: left + (s / steps[-1]) * (w - left - right)  # noqa: E731
    y = lambda v: top + (hi - v) / (hi - lo) * (h - top - bottom)  # noqa: E731

    def path(vals: list[float]) -> str:
        return "M" + " L".join(f"{x(s):.1f},{y(v):.1f}" for s, v in zip(steps, vals))

    ticks = []
    v = lo
    while v <= hi + 1e-9:
        ticks.append(
            f'<line class="axis" x1="{left - 4}" x2="{left}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
            f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>'
        )
        v += 0.5
    for s in (0, steps[-1] // 2, steps[-1]):
        ticks.append(f'<text x="{x(s):.1f}" y="{h - bottom + 18}" text-anchor="middle">{s:,}</text>')
    end = x(steps[-1]) + 8
    labels = [
        (y(c["train"][-1]), f"训练集 {c['train'][-1]:.2f}"),
        (y(c["held"][-1]), f"验证集 {c['held'][-1]:.2f}"),
        (y(refs["bigram"]), f"二元模型 {refs['bigram']:.2f}"),
        (y(refs["mlp"]), f"MLP {refs['mlp']:.2f}"),
    ]
    labels.sort()
    for k in range(1, len(labels)):
        if labels[k][0] - labels[k - 1][0] < 16:
            labels[k] = (labels[k - 1][0] + 16, labels[k][1])
    texts = "".join(f'<text x="{end:.1f}" y="{yy + 4:.1f}">{escapeHtml(t)}</text>' for yy, t in labels)
    refs_svg = "".join(
        f'<line class="line-ref" x1="{left}" x2="{w - right}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>' for v in refs.values()
    )
    desc = (
        f"Transformer 训练 {steps[-1]:,} 步：训练集损失从 {c['train'][0]:.2f} 降到 {c['train'][-1]:.2f}，验证集从 "
        f"{c['held'][0]:.2f} 降到 {c['held'][-1]:.2f}（奈特/字）；二元模型在验证集上是 {refs['bigram']:.2f}，MLP 是 "
        f"{refs['mlp']:.2f}。"
    )
    mid = (top + h - bottom) / 2
    return (
        '<div class="heat-scroll lm-scroll" tabindex="0" role="region" aria-label="损失曲线（可左右滑动）">'
        f'<svg class="lm-chart lm-curves" viewBox="0 0 {w} {h}" role="img" aria-labelledby="pm-curve-t pm-curve-d">'
        f'<title id="pm-curve-t">Transformer 的损失曲线</title><desc id="pm-curve-d">{escapeHtml(desc)}</desc>'
        f'<path class="axis" d="M{left},{top} L{left},{h - bottom} L{w - right},{h - bottom}"/>{"".join(ticks)}'
        f'<text x="{(left + w - right) / 2:.0f}" y="{h - 6}" text-anchor="middle">训练步数</text>'
        f'<text x="14" y="{mid:.0f}" text-anchor="middle" transform="rotate(-90 14 {mid:.0f})">'
        "平均损失（奈特/字）</text>"
        f'{refs_svg}<path class="line-train" d="{path(c["train"])}"/><path class="line-held" d="{path(c["held"])}"/>'
        f"{texts}</svg></div>"
        f'<p class="widget-caption">实线：训练集；虚线：验证集（每 {steps[1] - steps[0]} 步各在固定的 '
        f"{d['quotes']['transformer_eval_windows']} 段、每段 {d['quotes']['transformer_window']} 个字上量一次）；"
        "两条点线：二元模型和 MLP 在整个验证集上的平均损失。</p>"
    )


def fallback(d: dict) -> str:
    parts = {"table": _table_html, "heads": _heads_html, "curve": _curve_svg}
    return "".join(parts[p](d) for p in d["parts"]) + note_html(d["note"])


WIDGET = Widget(
    "poem-models",
    "同一份唐诗上的三个语言模型",
    {"parts": PartsOption("list", list(PARTS), f"what to show, in order: {', '.join(PARTS)}")},
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    embed=lambda d: {"parts": d["parts"]},
    quote=quote_named,
    styles=("bigram",),
)  # the script draws nothing: the page carries the build's tables and SVG only
