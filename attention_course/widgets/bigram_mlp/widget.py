"""The `bigram-mlp` widget: what the small MLP language model (trained by attention_course/poems/train_mlp.py) learned,
beside the bigram of the same poems — three parts, all drawn at build time as inline SVG and lists (the numbers
are the data; widget.js only adds a readout for the embedding map):

* `curves`: training and held-out loss (nats per character) every 100 steps, with the bigram's held-out loss as a
  dotted reference line;
* `samples`: poems written by each model at T = 1 with the same seed, side by side;
* `embeddings`: the learned character embeddings of the most frequent characters, projected to 2-D (PCA).
"""

from __future__ import annotations

import math
import re
from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_course.widgets.bigram.widget import NOTE, load
from builder.widgets.fallback import fmt, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, OptionError, Widget

PARTS = ("curves", "samples", "embeddings")
MAX_LEN = 48  # attention_core.ngram's samplers stop at 48 characters


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


def pca_ends(pca: dict, n: int = 5) -> tuple[list[str], list[str]]:
    """The `n` characters at each end of the first principal component (smallest first; largest first): what the
    embeddings' caption lists and the prose quotes (`pca_low`, `pca_high`)."""
    chars, xy = pca["chars"], pca["xy"]
    order = sorted(range(len(chars)), key=lambda k: xy[k][0])
    return [chars[k] for k in order[:n]], [chars[k] for k in order[::-1][:n]]


def sample_lines(poems: list[str]) -> tuple[int, int]:
    """(lines closed by "，" or "。", of those how many have 5 or 7 characters) over the poems."""
    lines = [line for p in poems for line in re.findall(r"([^，。]*)[，。]", p)]
    return len(lines), sum(len(line) in (5, 7) for line in lines)


def derived_quotes(r: dict) -> dict[str, str]:
    """Numbers the prose quotes that the widget computes from the data (not facts of ngram_lm)."""
    low, high = pca_ends(r["pca"])
    out = {"pca_low": "、".join(low), "pca_high": "、".join(high), "samples": f"{len(r['mlp_samples'])}"}
    for key in ("bigram", "mlp"):
        poems = r[f"{key}_samples"]
        lines, regular = sample_lines(poems)
        out[f"{key}_sample_lines"] = f"{lines}"
        out[f"{key}_sample_regular"] = f"{regular}"
        out[f"{key}_capped"] = f"{sum(len(p) >= MAX_LEN for p in poems)}"
    return out


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    r = load(build)
    return {
        "parts": o["parts"],
        "quotes": {**r["facts"], **derived_quotes(r)},
        "curve": r["curve"],
        "bigram_held_nll": r["bigram_held_nll"],
        "bigram_samples": r["bigram_samples"],
        "mlp_samples": r["mlp_samples"],
        "pca": r["pca"],
        "note": NOTE,
    }, {}


def _curves_svg(d: dict) -> str:
    c, f = d["curve"], d["quotes"]
    w, h, left, right, top, bottom = 640, 300, 56, 175, 16, 44  # right: room for the end labels
    steps = c["steps"]
    values = c["train"] + c["held"] + [d["bigram_held_nll"]]
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
    ref = d["bigram_held_nll"]
    end = x(steps[-1]) + 8
    labels = [
        (y(c["train"][-1]), f"训练集 {c['train'][-1]:.2f}"),
        (y(c["held"][-1]), f"验证集 {c['held'][-1]:.2f}"),
        (y(ref), f"二元模型（验证集）{ref:.2f}"),
    ]
    labels.sort()
    for k in range(1, len(labels)):  # keep the end labels at least one line apart
        if labels[k][0] - labels[k - 1][0] < 16:
            labels[k] = (labels[k - 1][0] + 16, labels[k][1])
    texts = "".join(f'<text x="{end:.1f}" y="{yy + 4:.1f}">{escapeHtml(t)}</text>' for yy, t in labels)
    desc = (
        f"MLP 训练 {steps[-1]:,} 步：训练集损失从 {c['train'][0]:.2f} 降到 {c['train'][-1]:.2f}，验证集损失从 "
        f"{c['held'][0]:.2f} 降到 {c['held'][-1]:.2f}（奈特/字）；二元模型在验证集上是 {ref:.2f}。"
    )
    return (
        f'<div class="heat-scroll lm-scroll" tabindex="0" role="region" aria-label="损失曲线（可左右滑动）">'
        f'<svg class="lm-chart lm-curves" viewBox="0 0 {w} {h}" role="img" aria-labelledby="lm-curves-t lm-curves-d">'
        f'<title id="lm-curves-t">MLP 语言模型的损失曲线</title><desc id="lm-curves-d">{escapeHtml(desc)}</desc>'
        f'<path class="axis" d="M{left},{top} L{left},{h - bottom} L{w - right},{h - bottom}"/>{"".join(ticks)}'
        f'<text x="{(left + w - right) / 2:.0f}" y="{h - 6}" text-anchor="middle">训练步数</text>'
        f'<text x="14" y="{(top + h - bottom) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + h - bottom) / 2:.0f})">平均损失（奈特/字）</text>'
        f'<line class="line-ref" x1="{left}" x2="{w - right}" y1="{y(ref):.1f}" y2="{y(ref):.1f}"/>'
        f'<path class="line-train" d="{path(c["train"])}"/><path class="line-held" d="{path(c["held"])}"/>'
        f"{texts}</svg></div>"
        f'<p class="widget-caption">实线：训练集（每 {steps[1] - steps[0]} 步在固定的 {f["eval_positions"]} 个位置上'
        "量一次）；"
        f"虚线：验证集（同样取固定的 {f['eval_positions']} 个位置）；点线：二元模型在整个验证集上的平均损失。</p>"
    )


def _samples_html(d: dict) -> str:
    def column(title: str, poems: list[str]) -> str:
        items = "".join(f'<li lang="zh-Hans">{escapeHtml(p) or "（空）"}</li>' for p in poems)
        return f'<section><h3 class="widget-subtitle">{escapeHtml(title)}</h3><ol>{items}</ol></section>'

    f = d["quotes"]
    capped = [sum(len(p) >= MAX_LEN for p in d[k]) for k in ("bigram_samples", "mlp_samples")]
    return (
        '<div class="lm-compare">'
        + column("二元模型（只看前 1 个字）", d["bigram_samples"])
        + column(f"MLP（看前 {f['mlp_context']} 个字）", d["mlp_samples"])
        + "</div>"
        '<p class="widget-caption">两个模型都在温度 T = 1 下、用同一个随机种子各写 '
        f"{len(d['mlp_samples'])} 首，写到 ◆ 或满 {MAX_LEN} 字为止（二元模型有 {capped[0]} 首、MLP 有 "
        f"{capped[1]} 首写满 {MAX_LEN} 字被截断）；□ 是词表之外的字。</p>"
    )


def _embeddings_svg(d: dict) -> str:
    chars, xy = d["pca"]["chars"], d["pca"]["xy"]
    low, high = pca_ends(d["pca"])
    w, h, pad = 640, 420, 24
    xs, ys = [p[0] for p in xy], [p[1] for p in xy]
    sx = lambda v: pad + (v - min(xs)) / (max(xs) - min(xs)) * (w - 2 * pad)  # noqa: E731
    sy = lambda v: h - pad - (v - min(ys)) / (max(ys) - min(ys)) * (h - 2 * pad)  # noqa: E731
    marks = {"，", "。"}
    labels = "".join(
        f'<text class="pca-label{" pca-mark" if ch in marks else ""}" x="{sx(px):.1f}" y="{sy(py) + 5:.1f}" '
        f'text-anchor="middle" data-char="{escapeHtml(ch)}">{escapeHtml(ch)}</text>'
        for ch, (px, py) in zip(chars, xy)
    )
    return (
        f'<div class="heat-scroll lm-scroll" tabindex="0" role="region" aria-label="字向量投影（可左右滑动）">'
        f'<svg class="lm-chart lm-pca" viewBox="0 0 {w} {h}" role="img" aria-labelledby="lm-pca-t lm-pca-d" '
        'lang="zh-Hans">'
        f'<title id="lm-pca-t">字向量的二维投影（PCA）</title><desc id="lm-pca-d">训练后 MLP 的字向量中最常见的 '
        f"{len(chars)} 个字，投影到前两个主成分上；位置相近的字，在模型眼里用法相近。</desc>"
        f'<rect class="axis" x="1" y="1" width="{w - 2}" height="{h - 2}" rx="6"/>{labels}</svg></div>'
        f'<p class="widget-caption">横轴、纵轴是字向量（{d["quotes"]["mlp_dim"]} 维）的第一、第二主成分，'
        f"两个标点用强调色标出。第一主成分最小的 {len(low)} 个字：{'、'.join(low)}；最大的 {len(high)} 个字："
        f"{'、'.join(high)}。</p>" + _coordinates_table(chars, xy)
    )


def _coordinates_table(chars: list[str], xy: list[list[float]]) -> str:
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(ch)}</th><td>{fmt(x)}</td><td>{fmt(y)}</td></tr>'
        for ch, (x, y) in zip(chars, xy)
    )
    return (
        '<details class="widget-more"><summary>各字的坐标</summary><div class="heat-scroll"><table class="num-table">'
        '<caption>字向量在前两个主成分上的坐标</caption><thead><tr><th scope="col">字</th>'
        '<th scope="col">第一主成分</th>'
        f'<th scope="col">第二主成分</th></tr></thead><tbody>{rows}</tbody></table></div></details>'
    )


def fallback(d: dict) -> str:
    parts = {"curves": _curves_svg, "samples": _samples_html, "embeddings": _embeddings_svg}
    return "".join(parts[p](d) for p in d["parts"]) + note_html(d["note"])


WIDGET = Widget(
    "bigram-mlp",
    "MLP 语言模型学到了什么",
    {
        "parts": PartsOption("list", list(PARTS), f"what to show, in order: {', '.join(PARTS)}"),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    embed=lambda d: {"parts": d["parts"]},
    quote=quote_named,
    styles=("bigram",),
)  # the script draws nothing: the page carries the build's SVG only
