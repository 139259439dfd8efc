"""The `bigram` widget: a character bigram model of the Tang poems (attention_course/poems/ngram_lm.py), three parts —

* the count / probability matrix of the most frequent characters as a heatmap (the attention heatmap's scale:
  a cell's weight is its probability, or its count over the largest count shown);
* a character's next-character distribution (click a row, a cell or a character button);
* a sampler that writes poems in the browser at a chosen temperature and seed (widget.js: a
  seeded RNG, so the same seed and temperature give the same poem). Its table — every character's most frequent
  next characters (top-k) — is one data script loaded on first use, so it does not weigh on the first view; the
  heatmap's numbers are another, loaded when the widget mounts.
"""

from __future__ import annotations

import json
from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_course.poems import ngram_lm as poetry_lm
from attention_course.poems.artifacts import StaleWeights
from attention_course.poems.corpus import CorpusError
from attention_course.poems.dataset import CONVERTER_CONFIG, CONVERTER_VERSION, SOURCE
from attention_course.smollm2 import digest_of
from builder.bundle import browser_data_script, widget_data_script
from builder.widgets.fallback import css_number, ink_classes, note_html, percent_row
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, Widget, WidgetDataError

NOTE = (
    f"数据：npm 包 {SOURCE['package']} 的《全唐诗》（合集以 MIT 许可发布，诗文本身属于公有领域；原书是繁体字），"
    f"网页生成时用 OpenCC {CONVERTER_VERSION}（{CONVERTER_CONFIG}，繁体转简体）转成简体字、去掉重复的诗，"
    "再按每首诗内容的哈希值取出约十分之一作验证集；计数与概率都在网页生成时用 NumPy 预先算好。"
)


def load(build: Any) -> dict:
    """Module 04's numbers; a missing corpus or stale committed weights is a widget error at the fence, not a
    traceback."""
    try:
        return poetry_lm.results(build)
    except CorpusError as exc:
        raise WidgetDataError(f"the Tang poems corpus is not available: {exc}") from exc
    except StaleWeights as exc:
        raise WidgetDataError(f"the MLP's committed weights do not match this checkout: {exc}") from exc


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    r = load(build)
    chars = r["heat_chars"]
    if o["char"] not in chars:
        raise WidgetDataError(
            f"option 'char' must be one of the heatmap's characters ({' '.join(chars)}), got {o['char']!r}", "char"
        )
    payload = json.dumps(
        {"vocab": r["vocab"], "next": r["successors"], "counts": r["successor_counts"]},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    key = digest_of(payload.encode())
    path = f"assets/ngram/bigram-{key}.js"
    facts = r["facts"]
    data = {
        "view": o["view"],
        "char": chars.index(o["char"]),
        "temperature": o["temperature"],
        "seed": o["seed"],
        "chars": chars,
        "counts": r["heat_counts"],
        "probs": r["heat_probs"],
        "rows": r["rows"],
        "max_count": max(max(row) for row in r["heat_counts"]),
        "quotes": facts,
        "note": NOTE,
        "data": path,
        "key": key,
    }
    # The heatmap's numbers and the next-character rows (~9 KB, half of module 04's widget JSON) travel in a data
    # script the widget loads when it mounts (issue 19's first view); the fallback reads them from `data` at build.
    heat, files = widget_data_script(
        "bigram-heat", "bigram", json.dumps({k: data[k] for k in HEAVY}, separators=(",", ":"), ensure_ascii=False)
    )
    data["heat"] = heat
    return data, {path: browser_data_script("bigram", f"d{key}", payload), **files}


HEAVY = ("counts", "probs", "rows")


def embedded(d: dict) -> dict:
    """The data as the page carries it: without the numbers that are in the heat data script."""
    return {k: v for k, v in d.items() if k not in HEAVY}


def _weight(d: dict, i: int, j: int) -> float:
    return d["probs"][i][j] if d["view"] == "probability" else d["counts"][i][j] / d["max_count"]


def fallback(d: dict) -> str:
    chars = d["chars"]
    head = "".join(f'<th scope="col">{escapeHtml(c)}</th>' for c in chars)
    rows = []
    for i, c in enumerate(chars):
        cells = []
        for j in range(len(chars)):
            w = _weight(d, i, j)
            shown = f"{d['probs'][i][j] * 100:.0f}" if d["view"] == "probability" else f"{d['counts'][i][j]:,}"
            ink = " ".join(ink_classes(w))
            cells.append(
                f'<td{f" class={chr(34)}{ink}{chr(34)}" if ink else ""} style="--w:{css_number(w)}">{shown}</td>'
            )
        rows.append(f'<tr><th scope="row">{escapeHtml(c)}</th>{"".join(cells)}</tr>')
    what = "P(下一个字 | 这个字)，%" if d["view"] == "probability" else "次数"
    table = (
        f'<div class="heat-scroll"><table class="heat-table heat-static"><caption>训练集里“行的字”后面紧跟'
        f'“列的字”的{what}（◆ 是诗的开头或结尾）</caption><thead><tr><th scope="col"><span class="visually-hidden">'
        f"这个字 ＼ 下一个字</span></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    row = d["rows"][d["char"]]
    shown = percent_row([p for _, _, p, _ in row["next"]] + [max(0.0, 1 - sum(p for _, _, p, _ in row["next"]))])
    items = "".join(
        f'<li><span class="bar-label">{escapeHtml(ch)}</span><span class="bar-track"><span class="bar-fill" '
        f'style="width:{css_number(p * 100, 2)}%"></span></span><span class="bar-value">{s}%</span></li>'
        for (_, ch, p, _), s in zip(
            row["next"] + [[None, "其余", 1 - sum(q for _, _, q, _ in row["next"]), None]], shown
        )
    )
    f = d["quotes"]
    return (
        table + f'<p class="widget-caption">“{escapeHtml(row["char"])}”后面最常见的 {len(row["next"])} 个字'
        f'和其余所有字的合计：</p><ol class="bars">{items}</ol>'
        f'<p class="widget-caption">验证集困惑度：二元模型 {f["bigram_held_ppl"]}，只看字频的一元模型 '
        f"{f['unigram_held_ppl']}，均匀猜测 {f['uniform_ppl']}。</p>" + note_html(d["note"])
    )


WIDGET = Widget(
    "bigram",
    "二元模型：唐诗里下一个字是什么",
    {
        "view": Option("choice", "probability", "what the heatmap shows first", choices=("probability", "count")),
        "char": Option("character", "山", "the character whose next-character distribution is shown first"),
        "temperature": Option("number", 1, "the sampler's initial temperature", minimum=0.2, maximum=2),
        "seed": Option("integer", 1, "the sampler's initial seed", minimum=0, maximum=2**31 - 1),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote_named,
    embed=embedded,
)
