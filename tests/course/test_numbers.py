"""Issue 32 points 3, 9 and 12: numbers the prose or a quiz states that no `{data}` quote can carry yet, checked
against the data they come from — so they change with the data or the test fails.

* module 05 ⑥: how the tired/wide head was found — of all heads (layers × heads), how many send more of tired's
  row to animal than to street and more of wide's row to street than to animal, and how many do so by at least
  10 points in both sentences (just one, the one ② shows): the prose quotes these from the model-attention
  widget, and the rendered quotes are checked against a recomputation here;
* module 05's shape quizzes: SmolLM2-135M-Instruct's d_model, query heads, d_k and KV heads, and the token count
  of the animal-tired sentence;
* the explainer's step-calculator sentence: the two equal scores of 我 (爱, 吃) are shown as equal weights, through
  the prose's own quotes.
These read the real model's cached runs (the machine-wide cache, $COURSE_MACHINE_CACHE, as the build does) and are
skipped when the model is absent.
"""

from __future__ import annotations

import re

import pytest

from builder.model import BuildOptions
from tests.conftest import ROOT, TEST_CACHE
from tests.course.learner_text import CONTENT, front_matter
from tests.plugin_harness import render_page


def model_options() -> BuildOptions:
    from attention_course.smollm2.weights import MODEL

    options = BuildOptions(root=ROOT, cache_dir=TEST_CACHE, python_runtime=False)
    if not MODEL.location().is_file():
        pytest.skip(
            f"the model is not at {MODEL.location()} (set COURSE_MACHINE_CACHE; these tests do not download it)"
        )
    return options


MODULE_05 = front_matter(CONTENT / "module-05-attention.md")[1]
CLEAR = 10  # percentage points in both sentences: the prose's 至少 10 个百分点


WIDGET_FENCE_RE = re.compile(r"```\{widget\} model-attention\n.*?```\n", re.S)


def test_the_head_search_in_module_05_is_quoted_from_the_models_runs() -> None:
    """Module 05 ⑥ quotes its head search from the model-attention widget (``{data}`model-attention 头总数` `` …);
    the quotes, rendered as the page renders them, equal a recomputation here from the model's runs."""
    from attention_core.models.sentences import get_sentence
    from attention_course import smollm2

    options = model_options()
    tired = smollm2.sentence_run(options, get_sentence("animal-tired").text)
    wide = smollm2.sentence_run(options, get_sentence("animal-wide").text)
    animal, street = tired.tokens.index(" animal"), tired.tokens.index(" street")
    assert (wide.tokens.index(" animal"), wide.tokens.index(" street")) == (animal, street)
    t_row, w_row = tired.tokens.index(" tired"), wide.tokens.index(" wide")
    both, clear = [], []
    for layer in range(tired.n_layers):
        for head in range(tired.n_heads):
            t, w = tired.matrix(layer, head)[t_row], wide.matrix(layer, head)[w_row]
            if t[animal] > t[street] and w[street] > w[animal]:
                both.append((layer, head))
                if t[animal] - t[street] >= CLEAR and w[street] - w[animal] >= CLEAR:
                    clear.append((layer, head))
    total = tired.n_layers * tired.n_heads

    # the page's first model-attention widget is the compare view the quotes read
    first = WIDGET_FENCE_RE.search(MODULE_05).group(0)
    assert "view: compare\nsentences: [animal-tired, animal-wide]\n" in first
    section = MODULE_05.split("{#multi-head}", 1)[1].split("\n## ", 1)[0]
    said = next(p for p in section.split("\n\n") if "逐个检查" in p)
    later = next(p for p in MODULE_05.split("\n\n") if "个把这件事做得清清楚楚" in p)
    for name in ("层数", "每层头数", "头总数", "方向一致的头", "明显的门槛", "明显的头位置"):
        assert f"{{data}}`model-attention {name}`" in said, f"module 05 ⑥ no longer quotes {name}: update this test"
    html, problems, _ = render_page(f"{first}\n{said}\n\n{later}\n", cache_dir=TEST_CACHE)
    assert problems == []
    text = re.sub(r"<[^>]+>", "", html)
    assert f"全部 {tired.n_layers} 层、每层 {tired.n_heads} 个头，一共 {total} 个头" in text
    assert f"两个方向都对的头有 {len(both)} 个" in text and f"至少 {CLEAR} 个百分点" in text
    assert len(clear) == 1, "the prose says 这一个: one head tells the sentences apart clearly"
    layer, head = clear[0]
    assert f"只有第 {layer} 层 · 头 {head} 这一个" in text
    assert f"{total} 个头里只有 {len(clear)} 个把这件事做得清清楚楚" in text
    # 其中大多数只差一两个百分点: most of the other heads that point the right way do so by 1 or 2 points
    margins = []
    for layer_, head_ in set(both) - set(clear):
        t, w = tired.matrix(layer_, head_)[t_row], wide.matrix(layer_, head_)[w_row]
        margins.append(min(t[animal] - t[street], w[street] - w[animal]))
    assert "其中大多数只差一两个百分点" in section and 2 * sum(m <= 2 for m in margins) > len(margins)
    # and ② shows that very head
    assert f"layer: {layer}\nhead: {head}\n" in first


def test_the_shape_quizzes_use_the_models_sizes() -> None:
    from attention_core.models.sentences import get_sentence
    from attention_course import smollm2

    options = model_options()
    cfg = smollm2.model_config(options)
    tokens = smollm2.sentence_run(options, get_sentence("animal-tired").text).length
    assert (cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.n_kv_heads) == (576, 9, 64, 3)
    assert cfg.d_model // cfg.n_heads == cfg.head_dim  # d_k = d/h holds for this model
    shapes = MODULE_05.split("id: head-shapes", 1)[1].split("```", 1)[0]
    assert f"$d = {cfg.d_model}$，有 {cfg.n_heads} 个查询头，每个头 $d_k = {cfg.head_dim}$" in shapes
    assert f"$L = {tokens}$" in shapes and f"$({tokens}, {cfg.head_dim})$" in shapes
    width = MODULE_05.split("id: head-width", 1)[1].split("```", 1)[0]
    assert f"$d = {cfg.d_model}$，有 $h = {cfg.n_heads}$ 个头" in width and f"= {cfg.head_dim}" in width


def test_the_step_calculator_shows_two_equal_scores_as_equal_weights() -> None:
    """The explainer's 我 row: 爱 and 吃 have the same score, so the same weight, and the widget (and the prose's
    quotes of it) show the same figure for both — one decimal, not whole percents split 35 / 34."""
    from attention_core import get_example

    ex = get_example("four-words")
    trace = ex.trace()
    me, love, eat = (ex.tokens.index(w) for w in ("我", "爱", "吃"))
    assert trace.scores[me][love] == pytest.approx(trace.scores[me][eat], abs=1e-12)  # equal scores
    assert trace.weights[me][love] == pytest.approx(trace.weights[me][eat], abs=1e-12)  # so equal weights
    html, problems, _ = render_page(
        "```{widget} step-calculator\nexample: four-words\n```\n\n"
        "权重：爱 {data}`step-calculator 我→爱` 吃 {data}`step-calculator 我→吃`。\n"
    )
    assert problems == []
    shown = re.search(r"爱 ([\d.]+)% 吃 ([\d.]+)%", re.sub(r"<[^>]+>", "", html))
    assert shown, "the two quotes did not render as percentages"
    love_shown, eat_shown = shown.groups()
    assert love_shown == eat_shown == f"{100 * trace.weights[me][love]:.1f}", (love_shown, eat_shown)
    # the page quotes them the same way, and no longer explains a difference that is not shown
    text = front_matter(CONTENT / "attention-explained.md")[1]
    assert "{data}`step-calculator 我→爱`" in text and "{data}`step-calculator 我→吃`" in text
    assert "靠左" not in text and "显示成不同" not in text
