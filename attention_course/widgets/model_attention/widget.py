"""The `model-attention` widget: the real attention of SmolLM2-135M (attention_course/smollm2/), three views —

* `explorer`: a sentence as a token × token heatmap at a chosen layer and head (or the average of the heads),
  every layer and head a click away; hover / focus a cell for its value, click a query token for its row as bars;
* `compare`: two sentences side by side at one layer and head — for the pronoun pair, the *it* rows are the same
  (a causal model has not seen the end of the sentence yet) and the rows of the last words differ;
* `gallery`: the best head for each of four patterns, scored on real data, with the median head for contrast.

The page embeds what the first view shows (widget.js draws it); every other layer and
head of the sentences is in one data script (whole percentages, packed and base64), loaded on first interaction.

Quotable (the compare view of two sentences whose focus rows are read over the same two candidates, e.g. tired /
wide over animal / street; make it the page's first model-attention widget): ``{data}`model-attention 头总数` ``
(layers × heads), ``… 层数``, ``… 每层头数``, ``… 方向一致的头`` (heads whose first sentence's focus row gives the
first candidate more than the second and whose second sentence's row does the opposite), ``… 明显的头`` (those
with both margins at least ``… 明显的门槛`` percentage points), ``… 明显的头位置`` (“第 4 层 · 头 2”, joined by 、).
"""

from __future__ import annotations

import json
from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_core.models.sentences import SENTENCES, Sentence, get_sentence
from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.bundle import browser_data_script
from builder.widgets.fallback import css_number, ink_classes, note_html
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

VIEWS = ("explorer", "compare", "gallery")
PATTERN_LABELS = {  # pattern → (Chinese name, what the score measures)
    "previous_token": ("看前一个词", "每个位置分给紧邻前一个 token 的权重，取平均"),
    "first_token": ("看第一个词（注意力汇）", "每个位置分给句首 token 的权重，取平均"),
    "self_token": ("看自己", "每个位置分给自己的权重，取平均"),
    "induction": (
        "归纳（照着上次接着说）",
        "随机 token 序列重复一遍：第二遍里每个位置分给“上次同一 token 后面那个词”的权重，取平均",
    ),
}
GALLERY_SENTENCE = "repeat-name"
CLEAR_MARGIN = 10  # percentage points in both sentences for a head to count as clearly telling them apart


def _sentence_ids(name: str, value: Any) -> list[str | Sentence]:
    """Sentence ids of attention_core/models/sentences.py, or an author's own: `{text: …, title: …}` (English)."""
    if not isinstance(value, list) or not value:
        raise OptionError(
            f"option '{name}' must be a non-empty list of sentence ids ({', '.join(SENTENCES)}) "
            "or {text: …, title: …} items"
        )
    out: list[str | Sentence] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            text, title = item.get("text"), item.get("title")
            unknown = sorted(set(item) - {"text", "title"})
            if unknown or not isinstance(text, str) or (title is not None and not isinstance(title, str)):
                raise OptionError(
                    f"option '{name}': a sentence of your own is {{text: …, title: …}} with text "
                    f"(and an optional title), got {item!r}",
                    item=i,
                )
            out.append(
                Sentence(
                    f"custom-{i + 1}",
                    title or text.strip()[:16] or "（空）",
                    text,
                    "作者给出的句子：注意力由真实模型 SmolLM2-135M-Instruct 在网页生成时预先算好。",
                )
            )
        elif isinstance(item, str) and item in SENTENCES:
            out.append(item)
        else:
            raise OptionError(f"option '{name}': unknown sentence id {item!r} (known: {', '.join(SENTENCES)})", item=i)
    ids = [x if isinstance(x, str) else x.id for x in out]
    if len(set(ids)) != len(ids):
        raise OptionError(f"option '{name}' lists a sentence twice")
    return out


def _spec(item: str | Sentence) -> Sentence:
    return item if isinstance(item, Sentence) else get_sentence(item)


class SentencesOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        return _sentence_ids(name, value)


class HeadOption(Option):
    """A head number (its range is checked against the model) or `mean`: the average of the layer's heads."""

    def check(self, name: str, value: Any, *_: Any) -> Any:
        if value == "mean" or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        raise OptionError(f"option '{name}' must be a head number (0, 1, …) or mean, got {value!r}")


def check(o: dict) -> list[tuple[str, str]]:
    problems = []
    if o["view"] == "compare" and len(o["sentences"]) != 2:
        problems.append(("sentences", f"the compare view shows exactly two sentences, got {len(o['sentences'])}"))
    return problems


def _run(build: Any, item: str | Sentence) -> real_model.SentenceRun:
    spec = _spec(item)
    try:
        return real_model.sentence_run(build, spec.text)
    except real_model.ModelInputError as exc:
        raise WidgetDataError(f"sentence '{spec.id}': {exc}", "sentences") from exc
    except ModelWeightsError as exc:
        raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc


def _check_range(o: dict, run: real_model.SentenceRun) -> None:
    if not 0 <= o["layer"] < run.n_layers:
        raise WidgetDataError(
            f"option 'layer' must be between 0 and {run.n_layers - 1} (SmolLM2-135M has "
            f"{run.n_layers} layers), got {o['layer']}",
            "layer",
        )
    if o["head"] != "mean" and not 0 <= o["head"] < run.n_heads:
        raise WidgetDataError(
            f"option 'head' must be between 0 and {run.n_heads - 1} or mean (each layer has "
            f"{run.n_heads} heads), got {o['head']}",
            "head",
        )


def _view_matrix(run: real_model.SentenceRun, layer: int, head: int | str) -> list[list[int]]:
    """The lower triangle, row i with its i + 1 visible percentages (the rest is the masked future)."""
    full = run.mean_matrix(layer) if head == "mean" else run.matrix(layer, head)
    return [row[: i + 1] for i, row in enumerate(full)]


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    items = o["sentences"] if o["view"] != "gallery" else [GALLERY_SENTENCE]
    specs = [_spec(item) for item in items]
    ids = [spec.id for spec in specs]
    runs = {spec.id: _run(build, spec) for spec in specs}
    first = runs[ids[0]]
    _check_range(o, first)
    sentences = []
    for n, (ident, s) in enumerate(zip(ids, specs)):
        run = runs[ident]
        # the first view's numbers only (the explorer shows one sentence first; the rest load with the full data)
        shown = o["view"] != "explorer" or n == 0
        sentences.append(
            {
                "id": ident,
                "title": s.title,
                "text": s.text,
                "note": s.note,
                "tokens": run.tokens,
                "matrix": _view_matrix(run, o["layer"], o["head"]) if shown else None,
            }
        )
    full = {i: {"percents": runs[i].packed_base64(), "mean": runs[i].packed_mean_base64()} for i in ids}
    payload = json.dumps(full, separators=(",", ":"), sort_keys=True)
    key = real_model.digest_of(payload.encode())
    data = {
        "view": o["view"],
        "layers": first.n_layers,
        "heads": first.n_heads,
        "layer": o["layer"],
        "head": o["head"],
        "sentences": sentences,
        "data": f"assets/model/attention-{key}.js",
        "key": key,
    }
    if o["view"] == "compare":
        data["compare"] = _compare_facts(sentences, specs)
        search = head_search(*(runs[i] for i in ids), *specs)
        if search is not None:
            data["quotes"] = search_quotes(first, search)
    if o["view"] == "gallery":
        data["gallery"] = [_gallery_entry(e, runs[GALLERY_SENTENCE]) for e in real_model.head_gallery(build)]
    return data, {f"assets/model/attention-{key}.js": browser_data_script("modelAttention", f"d{key}", payload)}


def _compare_facts(sentences: list[dict], specs: list[Sentence]) -> dict:
    """Which rows of the two sentences are the same token by token, where they part, and each sentence's focus
    row over its candidate tokens (the numbers the lesson reads: tired → animal / street)."""
    a, b = sentences
    same = 0
    while same < min(len(a["tokens"]), len(b["tokens"])) and a["tokens"][same] == b["tokens"][same]:
        same += 1
    identical_rows = [i for i in range(same) if a["matrix"][i][: i + 1] == b["matrix"][i][: i + 1]]
    focus = []
    for s, spec in zip(sentences, specs):
        if spec.focus is None or spec.focus not in s["tokens"]:
            focus.append(None)
            continue
        i = s["tokens"].index(spec.focus)
        keys = [s["tokens"].index(c) for c in spec.candidates if c in s["tokens"][: i + 1]]
        focus.append({"row": i, "keys": keys, "values": [s["matrix"][i][j] for j in keys]})
    return {"shared_prefix": same, "identical_rows": identical_rows, "focus": focus}


def head_search(
    run_a: real_model.SentenceRun, run_b: real_model.SentenceRun, spec_a: Sentence, spec_b: Sentence
) -> dict | None:
    """Every head of the model checked on the pair's focus rows, in the whole percentages the widget shows: which
    heads point the way a reader does (the first sentence's focus row gives its first candidate more than its
    second, the second sentence's row the opposite — tired → animal, wide → street) and which do so by at least
    CLEAR_MARGIN points in both. None for a pair without focus rows over the same two candidates."""
    if spec_a.focus is None or spec_b.focus is None or len(spec_a.candidates) != 2:
        return None
    if spec_a.candidates != spec_b.candidates:
        return None
    rows, keys = [], []
    for run, spec in ((run_a, spec_a), (run_b, spec_b)):
        if spec.focus not in run.tokens or any(c not in run.tokens for c in spec.candidates):
            return None
        row = run.tokens.index(spec.focus)
        first, second = (run.tokens.index(c) for c in spec.candidates)
        if max(first, second) > row:
            return None
        rows.append(row)
        keys.append((first, second))
    agree, clear = [], []
    for layer in range(run_a.n_layers):
        for head in range(run_a.n_heads):
            a = run_a.matrix(layer, head)[rows[0]]
            b = run_b.matrix(layer, head)[rows[1]]
            margin_a = a[keys[0][0]] - a[keys[0][1]]  # first candidate over second
            margin_b = b[keys[1][1]] - b[keys[1][0]]  # second over first
            if margin_a > 0 and margin_b > 0:
                agree.append((layer, head))
                if margin_a >= CLEAR_MARGIN and margin_b >= CLEAR_MARGIN:
                    clear.append((layer, head))
    return {"agree": agree, "clear": clear}


def search_quotes(run: real_model.SentenceRun, search: dict) -> dict[str, str]:
    """The numbers module 05 states about the head search, as the prose quotes them."""
    return {
        "层数": str(run.n_layers),
        "每层头数": str(run.n_heads),
        "头总数": str(run.n_layers * run.n_heads),
        "方向一致的头": str(len(search["agree"])),
        "明显的门槛": str(CLEAR_MARGIN),
        "明显的头": str(len(search["clear"])),
        "明显的头位置": "、".join(head_label(layer, head) for layer, head in search["clear"]) or "（没有）",
    }


def model_attention_quote(data: dict, selectors: list[str], target: str) -> str:
    """`model-attention 头总数` etc.: the compare view's head search (see the module docstring)."""
    if "quotes" not in data:
        raise ValueError(
            "this page's first model-attention widget has no quotable numbers: only the compare view of a sentence "
            "pair with focus words (e.g. animal-tired, animal-wide) has them; put that widget first"
        )
    return quote_named(data, selectors, target)


def compare_sentence(d: dict) -> str:
    """One sentence of what the focus rows show: “tired → animal 27%、street 7%；wide → …” (from the data)."""
    parts = []
    for s, f in zip(d["sentences"], d["compare"]["focus"]):
        if f is not None:
            pairs = "、".join(f"{s['tokens'][j].strip()} {v}%" for j, v in zip(f["keys"], f["values"]))
            parts.append(f"{s['tokens'][f['row']].strip()} → {pairs}")
    return "；".join(parts)


def _gallery_entry(entry: real_model.GalleryEntry, run: real_model.SentenceRun) -> dict:
    name, what = PATTERN_LABELS[entry.pattern]
    return {
        "pattern": entry.pattern,
        "name": name,
        "what": what,
        "layer": entry.layer,
        "head": entry.head,
        "score": entry.score,
        "median": entry.median,
        "runner_up": list(entry.runner_up),
    }
    # the head's pattern on the sentence is drawn from the full data (loaded when the widget mounts)


# ------------------------------------------------------------------------------------------ fallback


def _cell(percent: int) -> str:
    ink = " ".join(ink_classes(percent / 100))  # the text colour the contrast rule picks (fallback.py, common.js)
    classes = f' class="{ink}"' if ink else ""
    return f'<td{classes} style="--w:{css_number(percent / 100)}">{percent}</td>'


def percent_table(tokens: list[str], matrix: list[list[int]], caption: str) -> str:
    """The static heatmap: whole percentages, masked cells empty (the same classes as the designed heatmap)."""
    head = "".join(f'<th scope="col"><span class="heat-col">{escapeHtml(t)}</span></th>' for t in tokens)
    rows = []
    for i, (tok, row) in enumerate(zip(tokens, matrix)):
        rest = len(tokens) - i - 1  # the masked future: one empty cell across it (a cell without a weight is masked)
        cells = "".join(_cell(w) for w in row[: i + 1]) + (f'<td colspan="{rest}"></td>' if rest else "")
        rows.append(f'<tr><th scope="row">{escapeHtml(tok)}</th>{cells}</tr>')
    return (
        '<div class="heat-scroll"><table class="heat-table heat-static heat-long">'
        f"<caption>{escapeHtml(caption)}</caption>"
        f'<thead><tr><th scope="col"><span class="visually-hidden">Query ＼ Key</span></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def head_label(layer: int, head: int | str) -> str:
    return f"第 {layer} 层 · {'各头平均' if head == 'mean' else f'头 {head}'}"


def controls_placeholder(d: dict) -> str:
    """The layer and head controls as the live view draws them, disabled: the static view takes the height the
    live one will have, so nothing below moves when the widget's script arrives (a reader may jump right here)."""

    def button(label: str, pressed: bool) -> str:
        return f'<button class="seg-btn" disabled{" aria-pressed=true" if pressed else ""}>{label}</button>'

    heads = "".join(button(f"头 {h}", h == d["head"]) for h in range(d["heads"]))
    mean = button("平均", d["head"] == "mean")
    return (
        f'<div class="widget-controls ma-controls ma-placeholder" aria-hidden="true"><div class="ma-layer-label">'
        f'<span class="widget-label">层</span><input type="range" class="ma-layer" disabled min="0" '
        f'max="{d["layers"] - 1}" value="{d["layer"]}"><output class="ma-layer-value">{d["layer"]}</output></div>'
        f'<div class="seg">{heads}{mean}</div></div>'
    )


def embedded(d: dict) -> dict:
    """The compare view's first matrices are in its fallback tables already: the live view reads them there."""
    if d["view"] != "compare":
        return d
    live = {k: v for k, v in d.items() if k != "quotes"}  # the prose's numbers, not the live view's
    return {**live, "sentences": [{**s, "matrix": None} for s in d["sentences"]]}


def fallback(d: dict) -> str:
    label = head_label(d["layer"], d["head"])
    if d["view"] == "gallery":
        s = d["sentences"][0]
        rows = "".join(
            f'<tr><th scope="row">{escapeHtml(g["name"])}</th><td>第 {g["layer"]} 层 · 头 {g["head"]}</td>'
            f"<td>{g['score']:.2f}</td><td>{g['median']:.2f}</td><td>{escapeHtml(g['what'])}</td></tr>"
            for g in d["gallery"]
        )
        return (
            '<div class="heat-scroll"><table class="num-table mg-table">'
            "<caption>SmolLM2-135M-Instruct 中每种模式得分最高的头（得分 0–1，越高越专一）</caption>"
            '<thead><tr><th scope="col">模式</th><th scope="col">最佳头</th>'
            '<th scope="col">得分</th><th scope="col">全部头的中位数</th><th scope="col">怎么算</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>" + note_html(s["note"])
        )
    if d["view"] == "explorer":  # the compare view above already shows this sentence's first view as a table
        s = d["sentences"][0]
        return (
            f'<p class="widget-caption">{escapeHtml(s["text"])}（{escapeHtml(label)}）：启用 JavaScript 后，'
            f"可以在这里切换句子、层和头，逐格查看真实模型的注意力。</p>" + note_html(s["note"])
        )
    parts = []
    if d["view"] == "compare":
        c = d["compare"]
        parts.append(controls_placeholder(d))
        parts.append(
            f'<p class="widget-caption">{escapeHtml(label)}：两句的前 {c["shared_prefix"]} 个 token 相同，'
            f"其中 {len(c['identical_rows'])} 行的注意力逐格相同；{escapeHtml(compare_sentence(d))}。</p>"
        )
    for s in d["sentences"]:
        if s["matrix"] is not None:
            parts.append(percent_table(s["tokens"], s["matrix"], f"{s['title']}：{label}（%，真实模型）"))
    return "".join(parts) + note_html(d["sentences"][0]["note"])


WIDGET = Widget(
    "model-attention",
    "真实模型的注意力：SmolLM2-135M-Instruct",
    {
        "view": Option("choice", "explorer", "explorer | compare | gallery", choices=VIEWS),
        "sentences": SentencesOption(
            "sentences",
            ["animal-tired", "animal-wide", "repeat-name", "capitals"],
            "sentence ids (attention_core/models/sentences.py)",
        ),
        "layer": Option("integer", 4, "initial layer (0-based)", minimum=0),
        "head": HeadOption("head", 2, "initial head (0-based) or mean"),
    },
    compute=lambda o: {},
    fallback=fallback,
    check=check,
    build_data=build_data,
    lazy=True,
    embed=embedded,
    quote=model_attention_quote,
)
