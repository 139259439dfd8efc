"""The `next-token` widget: SmolLM2-135M's real next-token prediction
(attention_course/smollm2/generation.py `next_token_run`), two views of the same precomputed runs
(widget.js draws them) —

* `predict`: for each prompt, the ten most likely next tokens and their probabilities, with a temperature slider
  (the probabilities at every temperature of the grid are computed at build time over the whole vocabulary);
* `lens`: the logit lens — the model's final RMSNorm and LM head applied to the residual stream after every
  block: the best token at each depth, and the rank and probability of the final answer there.
"""

from __future__ import annotations

import json
from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.bundle import widget_data_script
from builder.widgets.fallback import fmt, note_html
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

VIEWS = ("predict", "lens")
DEFAULT_PROMPTS = ["The capital of France is", "The opposite of hot is", "Once upon a", "The cat sat on the"]
TEMPERATURES = tuple(round(0.1 * k, 1) for k in range(1, 21))  # 0.1 … 2.0: the slider's grid
NOTE = (
    "真实模型 SmolLM2-135M-Instruct（Q4_1 量化权重）网页生成时用 NumPy 逐层预先算好；概率是对整个词表（49152 个 token）"
    "做 softmax 的结果。␣ 表示 token 开头的空格。"
)


class PromptsOption(Option):
    """A non-empty list of distinct English prompts (strings)."""

    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise OptionError(f"option '{name}' must be a non-empty list of prompts (English text)")
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                raise OptionError(f"option '{name}': every prompt must be a non-empty string, got {item!r}", item=i)
            if item in value[:i]:
                raise OptionError(f"option '{name}' lists the prompt {item!r} twice", item=i)
        return list(value)


def shown_token(token: str) -> str:
    """A token as the widget shows it: a leading space as ␣, a newline as ⏎ (so " Paris" and "Paris" differ)."""
    return token.replace(" ", "␣").replace("\n", "⏎") or "∅"


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    runs = []
    for text in o["prompts"]:
        try:
            runs.append(real_model.next_token_run(build, text, TEMPERATURES))
        except real_model.ModelInputError as exc:
            raise WidgetDataError(f"prompt {text!r}: {exc}", "prompts") from exc
        except ModelWeightsError as exc:
            raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
    if not 0 <= o["prompt"] < len(runs):
        raise WidgetDataError(
            f"option 'prompt' must be between 0 and {len(runs) - 1} (the index of one of the "
            f"{len(runs)} prompts), got {o['prompt']}",
            "prompt",
        )
    prompts = []
    for r in runs:
        item = {
            "text": r.text,
            "tokens": [shown_token(t) for t in r.tokens],
            "top": [shown_token(t) for t in r.top_tokens],
        }
        if o["view"] == "predict":
            item.update(probs=[[round(x, 5) for x in row] for row in r.probs], rest=[round(x, 5) for x in r.rest])
        else:
            item.update(
                lens=[shown_token(row[0]) for row in r.lens_tokens],
                lens_prob=[round(row[0], 5) for row in r.lens_probs],
                rank=r.answer_rank,
                answer_prob=[round(x, 6) for x in r.answer_prob],
                first_top=first_stays(r.answer_rank, 1),
                first_top10=first_stays(r.answer_rank, 10),
            )
        prompts.append(item)
    data = {
        "view": o["view"],
        "prompt": o["prompt"],
        "layers": runs[0].n_layers,
        "vocab": runs[0].vocab_size,
        "prompts": prompts,
        "note": NOTE,
    }
    if o["view"] == "predict":
        data["temperatures"] = list(TEMPERATURES)
        data["value_index"] = TEMPERATURES.index(o["temperature"])
    # The numbers of every prompt (4 × 20 temperatures × 11 probabilities, or 4 × 31 depths) are ~40 % of module
    # 06's widget JSON: they travel in a data script the widget loads when it mounts (issue 19's first view);
    # the page keeps the rest, and the fallback and the prose's quotes read the whole `data` at build time.
    payload = json.dumps(
        [{k: p[k] for k in HEAVY[o["view"]]} for p in prompts], separators=(",", ":"), ensure_ascii=False
    )
    where, files = widget_data_script("next-token", "nextToken", payload)
    data.update(where)
    return data, files


HEAVY = {"predict": ("probs", "rest"), "lens": ("lens", "lens_prob", "rank", "answer_prob")}


def embedded(d: dict) -> dict:
    """The data as the page carries it: without the numbers that are in the data script."""
    heavy = HEAVY[d["view"]]
    return {**d, "prompts": [{k: v for k, v in p.items() if k not in heavy} for p in d["prompts"]]}


def first_stays(ranks: list[int], best: int) -> int | None:
    """The first depth from which on the final answer stays within the `best` first places to the end."""
    depth = None
    for layer in range(len(ranks) - 1, -1, -1):
        if ranks[layer] > best:
            break
        depth = layer
    return depth


def check(o: dict) -> list[tuple[str, str]]:
    if o["temperature"] not in TEMPERATURES:
        return [
            (
                "temperature",
                f"option 'temperature' must be one of 0.1, 0.2, … 2.0 (the slider's grid), got {o['temperature']}",
            )
        ]
    return []


def percent1(p: float) -> str:
    """One decimal; below 0.05% says so instead of a misleading 0.0% (widget.js: same). Text, not HTML: its "<" is
    escaped where it goes into markup."""
    return "<0.1%" if p < 0.0005 else f"{fmt(p * 100, 1)}%"


def depth_label(layer: int, n_layers: int) -> str:
    if layer == 0:
        return "嵌入（第 0 层之前）"
    return f"第 {layer} 层之后" + ("（输出）" if layer == n_layers else "")


def prompt_buttons(d: dict) -> str:
    """The prompt choice as the live view draws it, disabled: the static view takes the live one's height."""
    buttons = "".join(
        f'<button type="button" class="seg-btn" disabled aria-pressed="{str(i == d["prompt"]).lower()}">'
        f"{escapeHtml(p['text'])}</button>"
        for i, p in enumerate(d["prompts"])
    )
    return (
        f'<div class="widget-controls nt-controls" aria-hidden="true"><div class="seg nt-prompts">{buttons}</div></div>'
    )


def temperature_control(d: dict) -> str:
    t = d["temperatures"][d["value_index"]]
    return (
        '<div class="temp-control nt-temp" aria-hidden="true"><label>温度 T</label>'
        f'<input type="range" disabled min="0.1" max="2" step="0.1" value="{fmt(t, 1)}">'
        f'<output class="temp-value">T = {fmt(t, 1)}</output></div>'
    )


def bar_row(label: str, p: float, top: float) -> str:
    width = 0 if top <= 0 else min(100.0, p / top * 100)
    return (
        f'<tr><th scope="row">{escapeHtml(label)}</th>'
        '<td class="nt-bar"><span class="bar-track"><span class="bar-fill" '
        f'style="width:{width:.1f}%"></span></span></td><td class="nt-value">{escapeHtml(percent1(p))}</td></tr>'
    )


def predict_table(d: dict, p: dict) -> str:
    k = d["value_index"]
    t = d["temperatures"][k]
    probs = p["probs"][k]
    rows = "".join(bar_row(tok, pr, probs[0]) for tok, pr in zip(p["top"], probs))
    rest = f"其余 {d['vocab'] - len(p['top'])} 个 token 合计"
    return (
        f'<div class="heat-scroll"><table class="num-table nt-table"><caption>“{escapeHtml(p["text"])}”之后的'
        f'下一个 token（温度 T = {fmt(t, 1)}）</caption><thead><tr><th scope="col">token</th>'
        f'<th scope="col"><span class="visually-hidden">条形</span></th><th scope="col">概率</th></tr></thead>'
        f"<tbody>{rows}{bar_row(rest, p['rest'][k], max(probs[0], p['rest'][k]))}</tbody></table></div>"
    )


def lens_caption(d: dict, p: dict) -> str:
    """Where the final answer forms, from the ranks (widget.js `lensCaption`: same words)."""
    n, first, ten = d["layers"], p["first_top"], p["first_top10"]
    parts = []
    if ten is not None and ten != first:
        parts.append(f"从{depth_label(ten, n)}起一直在前 10 名")
    parts.append("直到输出处才排到第一" if first == n else f"从{depth_label(first, n)}起一直排第一")
    return f"最终答案 {p['top'][0]}：" + "，".join(parts) + "。"


def row_label(layer: int, n_layers: int) -> str:
    """The lens table's short row label (fits a phone): 嵌入 / 第 l 层 / 第 n 层·输出 (next-token.js `rowLabel`)."""
    return "嵌入" if layer == 0 else f"第 {layer} 层" + ("·输出" if layer == n_layers else "")


ANSWER_ROW = ' class="is-answer"'  # a depth at which the final answer is already the best token


def lens_table(d: dict, p: dict) -> str:
    rows = "".join(
        f'<tr{ANSWER_ROW if rank == 1 else ""}><th scope="row">{escapeHtml(row_label(layer, d["layers"]))}</th>'
        f"<td>{escapeHtml(tok)}</td><td>{escapeHtml(percent1(pr))}</td><td>{rank}</td>"
        f"<td>{escapeHtml(percent1(ap))}</td></tr>"
        for layer, (tok, pr, rank, ap) in enumerate(zip(p["lens"], p["lens_prob"], p["rank"], p["answer_prob"]))
    )
    return (
        f'<p class="widget-caption">{escapeHtml(lens_caption(d, p))}</p>'
        f'<div class="heat-scroll"><table class="num-table nt-lens"><caption>logit 透镜：“{escapeHtml(p["text"])}”'
        f'在每一层之后读出的预测</caption><thead><tr><th scope="col">读出</th><th scope="col">第一名</th>'
        f'<th scope="col">概率</th><th scope="col">{escapeHtml(p["top"][0])} 名次</th>'
        f'<th scope="col">{escapeHtml(p["top"][0])} 概率</th></tr></thead><tbody>{rows}</tbody></table></div>'
    )


def fallback(d: dict) -> str:
    p = d["prompts"][d["prompt"]]
    if d["view"] == "predict":
        body = temperature_control(d) + predict_table(d, p)
    else:
        body = lens_table(d, p)
    return prompt_buttons(d) + body + note_html(d["note"])


WIDGET = Widget(
    "next-token",
    "真实模型的下一个 token：SmolLM2-135M-Instruct",
    {
        "view": Option("choice", "predict", "predict | lens", choices=VIEWS),
        "prompts": PromptsOption("prompts", DEFAULT_PROMPTS, "English prompts (at most 48 tokens each)"),
        "prompt": Option("integer", 0, "the prompt shown first (0-based)", minimum=0),
        "temperature": Option("number", 1, "initial temperature (0.1 … 2.0, step 0.1)", minimum=0.1, maximum=2),
    },
    compute=lambda o: {},
    fallback=fallback,
    check=check,
    build_data=build_data,
    embed=embedded,
)
