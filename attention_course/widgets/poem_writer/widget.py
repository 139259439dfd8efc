"""The `poem-writer` widget (你来写一句): the reader types the start of a poem and the tiny Transformer of the Tang
poems (attention_course/poems/tiny_gpt.js, the same forward pass as attention_core/tiny_gpt.py) runs in the browser —

* every layer's and head's attention from one query (the last character typed, or one the reader picks) over what
  was typed, as a compact grid: one row per head, one column per character;
* the most likely next characters and their probabilities (at the chosen temperature);
* a continuation, drawn with NumPy's own generator ported to JavaScript (attention_course/poems/numpy_random.js):
  the same seed, temperature and text give the same poem as the build's sampler (transformer_lm.sample) — an
  empty text with seed 1 at T = 1 writes the Transformer's poem of the three-model table.

Traditional input works: a character map made here with OpenCC (each character that is not in the vocabulary but
that OpenCC's t2s turns into one that is → that one) converts typed text before encoding; a character the model does
not know is shown as such (□) and encoded as the unknown token.

The weights (int8 rows, base64) and the map travel in one data script (`builder.bundle.widget_data_script`), loaded
when the widget mounts — its page script loads only when it nears the view (`lazy=True`), so neither is part of the
page's first view. The page embeds the first view: the initial text's attention from its last character and the top
next characters, computed here with attention_core.tiny_gpt (the fallback table without JavaScript).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import numpy as np
from markdown_it.common.utils import escapeHtml

from attention_core import tiny_gpt
from attention_course.poems import transformer_lm
from attention_course.poems.artifacts import StaleWeights
from attention_course.poems.corpus import CorpusError
from attention_course.poems.dataset import CONVERTER, CONVERTER_CONFIG, CONVERTER_VERSION
from builder.bundle import widget_data_script
from builder.widgets.fallback import css_number, ink_classes, note_html, percent_row
from builder.widgets.quote import quote_named
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

TOP = 10  # next characters shown
MAX_NEW = transformer_lm.MAX_LEN  # a continuation stops at ◆, after this many characters, or when the context is full
DEFAULT_TEXT = "白日依山尽，黄河入海流。欲穷千里目，更上一层"  # the held-out worked example, up to its last character
DEFAULT_EXAMPLES = ["白日依山尽，黄河入海流。欲穷千里目，更上一层", "春眠不觉晓，", "孤舟蓑笠翁，獨釣寒江", ""]
# BMP blocks whose characters are looked up in OpenCC's t2s (CJK Unified Ideographs, Extension A, Compatibility)
BLOCKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
# the two marks the poems use, typed on a Latin keyboard
PUNCTUATION = {",": "，", ".": "。"}
NOTE = (
    f"模型：4 层、每层 4 个头的小 Transformer，在《全唐诗》（npm 包 chinese-poetry@2.0.1，原书为繁体字，用 OpenCC "
    f"{CONVERTER_VERSION}（{CONVERTER_CONFIG}）转成简体字）的训练集上训练；权重约 1 MB，在你的浏览器里运行，"
    "不联网。繁体字先按 OpenCC 的对照表转成简体；模型没见过的字当作 □。"
)


class TextOption(Option):
    """A poem's start: a string (possibly empty) of at most `maximum` characters."""

    def check(self, name: str, value: Any, *_: Any) -> Any:
        if value is None:
            value = ""
        if not isinstance(value, str):
            raise OptionError(f"option '{name}' must be text (the start of a poem), got {value!r}")
        if len(value) > self.maximum:
            raise OptionError(f"option '{name}' is {len(value)} characters long; the model sees at most {self.maximum}")
        return value


class ExamplesOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise OptionError(f"option '{name}' must be a non-empty list of poem starts (text)")
        out = []
        for i, item in enumerate(value):
            item = "" if item is None else item
            if not isinstance(item, str) or len(item) > self.maximum:
                raise OptionError(
                    f"option '{name}': each example is text of at most {self.maximum} characters, got {item!r}", item=i
                )
            if item in out:
                raise OptionError(f"option '{name}' lists {item!r} twice", item=i)
            out.append(item)
        return out


def t2s_map(vocab: list[str] | str) -> dict[str, str]:
    """{traditional (or variant) character: the vocabulary character OpenCC's t2s makes of it}, for every character
    of the BMP's CJK blocks that is not itself in the vocabulary (so 乾 stays 乾 where the poems use it), plus the
    two marks typed on a Latin keyboard. One OpenCC call; characters convert one per line (no phrase context)."""
    import opencc  # dataset.simplify has checked that it is there (the corpus needs it)

    known = set(vocab)
    chars = [chr(c) for lo, hi in BLOCKS for c in range(lo, hi + 1) if chr(c) not in known]
    converted = opencc.OpenCC(CONVERTER_CONFIG).convert("\n".join(chars)).split("\n")
    if len(converted) != len(chars):
        raise WidgetDataError(f"{CONVERTER} {CONVERTER_VERSION}: the conversion changed the number of characters")
    out = {t: s for t, s in zip(chars, converted) if s != t and s in known}
    out.update({k: v for k, v in PUNCTUATION.items() if v in known})
    return out


@lru_cache(maxsize=1)
def _model() -> tuple[tiny_gpt.Params, tiny_gpt.Config, dict[str, Any], str]:
    params, cfg, meta, _ = transformer_lm.load()
    return params, cfg, meta, meta["weights_sha256"]


def convert(text: str, vocab: list[str], t2s: dict[str, str]) -> list[dict]:
    """Each typed character as the widget shows it: {typed, char (after the map), id, known}; spaces dropped."""
    index = {ch: i for i, ch in enumerate(vocab)}
    out = []
    for ch in text:
        if ch.isspace():
            continue
        simple = t2s.get(ch, ch)
        i = index.get(simple, 1)
        out.append({"typed": ch, "char": simple if i != 1 else ch, "id": i, "known": i != 1})
    return out


def first_view(text: str, params: Any, cfg: tiny_gpt.Config, vocab: list[str], t2s: dict[str, str]) -> dict:
    """The initial text's characters, the attention of every layer and head from its last position, and the top
    next characters at T = 1 — what the page shows before (and without) its script."""
    chars = convert(text, vocab, t2s)
    ids = [0] + [c["id"] for c in chars]
    out = tiny_gpt.forward(params, cfg, ids)
    p = tiny_gpt.softmax(out.logits[-1].astype(np.float64))
    top = np.argsort(-p, kind="stable")[:TOP]
    return {
        "chars": chars,
        # (layers, heads, T): the last row of every head, 4 decimals
        "attention": np.round(out.attention[:, :, -1, :].astype(np.float64), 4).tolist(),
        "top": [[vocab[j], round(float(p[j]), 6)] for j in top],
    }


def head_names(heads: dict) -> dict[str, str]:
    """ "layer,head" → the pattern it clears the thresholds for (head_scores.py), for the grid's row labels."""
    names = {"previous": "前一个字", "line_break": "上一句末的标点", "line_start": "本句第一个字",
             "line_end": "上一句最后一个字", "same_position": "上一句同位置", "rhyme": "上一个韵脚"}  # fmt: skip
    out: dict[str, str] = {}
    for pattern, name in names.items():
        for layer, head in heads["patterns"][pattern]["shows"]:
            out.setdefault(f"{layer},{head}", name)
    return out


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    try:
        params, cfg, meta, sha = _model()
        payload = transformer_lm.browser_payload()
        tf = transformer_lm.results(build)
    except CorpusError as exc:
        raise WidgetDataError(f"the Tang poems corpus is not available: {exc}") from exc
    except StaleWeights as exc:
        raise WidgetDataError(f"the Transformer's committed weights do not match this checkout: {exc}") from exc
    vocab = list(meta["vocab"])
    t2s = t2s_map(vocab)
    limit = cfg.context - 1
    for option, texts in (("text", [o["text"]]), ("examples", o["examples"])):
        for t in texts:
            if len(convert(t, vocab, t2s)) > limit:
                raise WidgetDataError(f"option '{option}': {t!r} is longer than the model's {limit} characters", option)
    script = json.dumps(
        {"model": payload, "t2s": "".join(k + v for k, v in sorted(t2s.items()))},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    where, files = widget_data_script("poem-writer", "poemWriter", script)
    first = first_view(o["text"], params, cfg, vocab, t2s)
    sample = tf["samples"][0]
    data = {
        "text": o["text"],
        "examples": o["examples"],
        "temperature": o["temperature"],
        "seed": o["seed"],
        "layers": cfg.n_layers,
        "heads": cfg.n_heads,
        "context": cfg.context,
        "max_new": MAX_NEW,
        "top": TOP,
        "first": first,
        "head_names": head_names(tf["heads"]),
        # what the build's sampler wrote from ◆ with the sampling seed at T = 1 (the three-model table's poem)
        "build_sample": {"seed": transformer_lm.SAMPLE_SEED, "temperature": 1, "poem": sample},
        "weights_bytes": len(files[where["data"]]),
        "weights_sha256": sha,
        "quotes": {
            "download_kb": f"{len(files[where['data']]) / 1024:,.0f}",
            "t2s_pairs": f"{len(t2s) - len(PUNCTUATION):,}",
            "context_chars": f"{limit}",
            "max_new": f"{MAX_NEW}",
        },
        "note": NOTE,
        **where,
    }
    return data, files


# ------------------------------------------------------------------------------------------ fallback


def char_chip(c: dict, selected: bool = False) -> str:
    if not c["known"]:
        return (
            f'<span class="pw-char is-unknown" title="模型没见过这个字，按 □ 处理">'
            f'{escapeHtml(c["typed"])}<span class="visually-hidden">（模型没见过这个字，按 □ 处理）</span></span>'
        )
    conv = c["typed"] != c["char"]
    title = f' title="由“{escapeHtml(c["typed"])}”转成简体"' if conv else ""
    cls = "pw-char" + (" is-converted" if conv else "") + (" is-query" if selected else "")
    return f'<span class="{cls}"{title}>{escapeHtml(c["char"])}</span>'


def grid_caption(label: str, query: int) -> str:
    return f"查询是“{label}”（第 {query} 个位置）：每一行是一个头，格子里是它分给前面各字的注意力（%）"


def attention_table(d: dict, chars: list[dict], rows: list[list[list[float]]], query: int) -> str:
    """One row per layer and head: the query's attention over ◆ and every character (whole percents, each row
    rounded to add up to 100 like every attention row of the course: `percent_row`)."""
    labels = ["◆"] + [c["char"] if c["known"] else "□" for c in chars]
    head = "".join(
        f'<th scope="col"{" class=pw-q" if j == query else ""}>{escapeHtml(t)}</th>' for j, t in enumerate(labels)
    )
    body = []
    for layer in range(d["layers"]):
        for h in range(d["heads"]):
            weights = rows[layer][h][: query + 1]
            name = d["head_names"].get(f"{layer},{h}")
            tag = f'<span class="pw-head-name">{escapeHtml(name)}</span>' if name else ""
            cells = "".join(
                f"<td{f' class={chr(34)}{chr(32).join(ink_classes(w))}{chr(34)}' if ink_classes(w) else ''} "
                f'style="--w:{css_number(w)}">{shown}</td>'
                for w, shown in zip(weights, percent_row(weights))
            )
            cells += "".join("<td></td>" for _ in range(len(labels) - len(weights)))
            named = " class=pw-named" if name else ""
            body.append(f'<tr{named}><th scope="row">第 {layer} 层 · 头 {h}{tag}</th>{cells}</tr>')
    caption = grid_caption(labels[query], query)
    return (
        f'<p class="widget-caption pw-grid-caption" aria-hidden="true">{escapeHtml(caption)}</p>'
        '<div class="heat-scroll pw-scroll" tabindex="0" role="region" aria-label="每个头的注意力（可左右滑动）">'
        '<table class="heat-table heat-static pw-grid"><caption class="visually-hidden">'
        f"{escapeHtml(caption)}</caption>"
        f'<thead><tr><th scope="col"><span class="visually-hidden">层与头 ＼ 字</span></th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def top_list(top: list[list], temperature: float = 1) -> str:
    peak = max(p for _, p in top) or 1
    items = "".join(
        f'<li><span class="bar-label">{escapeHtml(ch)}</span><span class="bar-track"><span class="bar-fill" '
        f'style="width:{css_number(p / peak * 100, 1)}%"></span></span>'
        f'<span class="bar-value">{p * 100:.1f}%</span></li>'
        for ch, p in top
    )
    return f'<ol class="bars pw-top" aria-label="下一个字的概率（温度 {temperature:g}）">{items}</ol>'


def fallback(d: dict) -> str:
    """The build's first view, in the same elements (and so the same height) as the live view: the controls the
    script brings are there disabled (hidden without scripting), the grid and the bars are the build's numbers."""
    first = d["first"]
    chars = first["chars"]
    query = len(chars)
    limit = d["context"] - 1
    strip = "".join(char_chip(c, i + 1 == query) for i, c in enumerate(chars))
    shown = "".join(c["char"] if c["known"] else "□" for c in chars) or "（空白：从第一个字写起）"
    examples = "".join(
        f'<button type="button" class="seg-btn" disabled>{escapeHtml(x) or "（空白）从头写"}</button>'
        for x in d["examples"]
    )
    t = f"{d['temperature']:.1f}"
    return (
        f'<div class="pw-js-only" aria-hidden="true"><div class="seg pw-examples">{examples}</div></div>'
        '<div class="pw-input-row"><span class="widget-label">诗的开头</span>'
        f'<span class="pw-input pw-static-text" lang="zh-Hans">{escapeHtml(shown)}</span></div>'
        f'<p class="widget-caption pw-hint">简体、繁体都行，最多 {limit} 个字；标点只认“，”和“。”。</p>'
        f'<div class="pw-chars" aria-hidden="true"><span class="pw-char pw-boundary{" is-query" if not query else ""}">'
        f'◆</span>{strip}</div><p class="widget-caption pw-status"></p>'
        '<h3 class="widget-subtitle pw-top-title">下一个字（温度 T = 1.0）</h3>'
        + top_list(first["top"])
        + '<h3 class="widget-subtitle">每个头在看哪里</h3>'
        + attention_table(d, chars, first["attention"], query)
        + '<div class="pw-js-only pw-writer" aria-hidden="true"><h3 class="widget-subtitle">让它接着写</h3>'
        f'<div class="temp-control"><span class="widget-label">温度 T</span><input type="range" disabled min="0.2" '
        f'max="2" step="0.1" value="{t}"><output class="temp-value">T = {t}</output></div>'
        '<div class="widget-controls"><span class="widget-label">随机种子</span><input type="number" disabled '
        f'class="bigram-seed pw-seed" value="{d["seed"]}">'
        '<button type="button" class="btn-primary" disabled>续写</button>'
        '<button type="button" disabled>换个种子</button><button type="button" disabled>放进输入框</button></div>'
        '<p class="pw-poem"></p><p class="widget-caption pw-poem-note">按“续写”，模型从你写的地方接着写，直到写完一首'
        f"（◆）或满 {d['max_new']} 字。</p></div>"
        '<p class="widget-caption pw-nojs">这是网页生成时预先算好的一个例子：从最后一个字出发，每一层每个头的注意力，'
        "和模型猜的下一个字。启用 JavaScript 后，可以在这里输入任意诗句（简体、繁体都行），看这些数随你的输入变化，"
        "还能让模型接着往下写。</p>" + note_html(d["note"])
    )


WIDGET = Widget(
    "poem-writer",
    "你来写一句：小 Transformer 在你的浏览器里续写唐诗",
    {
        "text": TextOption(
            "text", DEFAULT_TEXT, "the poem's start shown first (simplified or traditional)", maximum=63
        ),
        "examples": ExamplesOption("list", DEFAULT_EXAMPLES, 'starts the reader can pick ("" = blank)', maximum=63),
        "temperature": Option("number", 1, "the sampler's initial temperature", minimum=0.2, maximum=2),
        "seed": Option("integer", 1, "the sampler's initial seed", minimum=0, maximum=2**31 - 1),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote_named,
    lazy=True,
    styles=("bigram",),
)
