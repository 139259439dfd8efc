"""Module 07's widgets hold the data the build computes: the three-model table shows lm_table's numbers, the head
gallery transformer_lm's head scores, and the poem-writer's data script is the committed weights' browser payload
with the traditional → simplified map OpenCC gives; the page types none of these numbers by hand. Needs the corpus
(fetched once per machine) and the committed weights."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_core import tiny_gpt
from attention_course.poems import lm_table, transformer_lm
from attention_course.widgets.poem_models import widget as poem_models
from attention_course.widgets.poem_writer import widget as poem_writer
from builder.bundle import browser_data_script
from tests.course.learner_text import CONTENT, page_text

PAGE = CONTENT / "module-07-train-transformer.md"


@pytest.fixture(scope="module")
def options():
    from builder.model import BuildOptions
    from tests.conftest import ROOT

    return BuildOptions(root=ROOT, cache_dir=None)


def test_the_three_model_table_shows_the_data(options):
    data, files = poem_models.build_data({"parts": ["table"]}, options)
    assert files == {}
    table = lm_table.results(options)
    html = poem_models.fallback(data)
    rows = re.findall(
        r'<tr data-model="(\w+)"><th scope="row">([^<]+)</th><td class="pm-ppl"><span class="pm-ppl-value">(\d+)</span>'
        r'.*?</td><td>[^<]*</td><td class="pm-num">([\d,]+)</td>',
        html,
    )
    assert [r[0] for r in rows] == ["bigram", "mlp", "transformer"]
    for (key, name, ppl, params), want in zip(rows, table["models"]):
        assert (key, name) == (want["key"], want["name"])
        assert int(params.replace(",", "")) == want["params"]
        assert ppl == f"{want['held_ppl']:.0f}" == table["facts"][f"{key}_held_ppl"]
        assert f'<span class="pm-sample" lang="zh-Hans">{want["sample"]}</span>' in html
    # what the prose quotes is lm_table's own text
    for key, value in table["facts"].items():
        assert data["quotes"][key] == value
    assert (data["temperature"], data["seed"]) == (table["temperature"], table["seed"])


def test_the_head_gallery_shows_the_head_scores(options):
    data, _ = poem_models.build_data({"parts": ["heads"]}, options)
    heads = transformer_lm.results(options)["heads"]
    html = poem_models.fallback(data)
    for name, p in heads["patterns"].items():
        card = html.split(f'data-pattern="{name}"', 1)[1].split("</figure>", 1)[0]
        cells = re.findall(
            r"<td[^>]*>(?:<span class=\"pm-star\"[^>]*>★</span>)?(\d+)<span class=\"pm-lift\">×([\d.]+)", card
        )
        assert [int(s) for s, _ in cells] == [round(x * 100) for row in p["score"] for x in row]
        assert [float(x) for _, x in cells] == [round(x, 1) for row in p["lift"] for x in row]
        assert card.count("pm-star") == len(p["shows"])
        best = p["best"]
        assert data["quotes"][f"{name}_best"] == f"第 {best['layer']} 层 · 头 {best['head']}"
        assert data["quotes"][f"{name}_score"] == f"{best['score'] * 100:.0f}%"


def test_the_poem_writers_data_is_what_the_build_computes(options):
    defaults = poem_writer.WIDGET.defaults()
    data, files = poem_writer.build_data(defaults, options)
    params, cfg, meta, _ = transformer_lm.load()
    vocab = list(meta["vocab"])
    t2s = poem_writer.t2s_map(vocab)
    script = json.dumps(
        {"model": transformer_lm.browser_payload(), "t2s": "".join(k + v for k, v in sorted(t2s.items()))},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert files == {data["data"]: browser_data_script("poemWriter", f"d{data['key']}", script)}

    # the map: what OpenCC's t2s makes of each character, only where it leads into the vocabulary
    import opencc

    converter = opencc.OpenCC("t2s")
    known = set(vocab)
    for trad, simple in t2s.items():
        assert trad not in known and simple in known and trad != simple
        if trad not in poem_writer.PUNCTUATION:
            assert converter.convert(trad) == simple
    for trad, simple in {"盡": "尽", "獨": "独", "釣": "钓", "雲": "云", "風": "风", ",": "，", ".": "。"}.items():
        assert t2s[trad] == simple
    assert "乾" not in t2s or "乾" not in known  # a character the poems use as it is stays itself

    # the first view: attention_core's forward pass on the initial text
    ids = [0] + [vocab.index(ch) for ch in defaults["text"]]
    out = tiny_gpt.forward(params, cfg, ids)
    assert np.allclose(data["first"]["attention"], out.attention[:, :, -1, :], atol=1e-4)
    p = tiny_gpt.softmax(out.logits[-1].astype(np.float64))
    assert [ch for ch, _ in data["first"]["top"]] == [vocab[j] for j in np.argsort(-p, kind="stable")[:10]]
    # the continuation the widget checks itself against: the build's first Transformer sample
    assert data["build_sample"]["poem"] == transformer_lm.results(options)["samples"][0]
    assert data["build_sample"]["seed"] == transformer_lm.SAMPLE_SEED


def test_module_07_types_none_of_the_tables_numbers():
    """Every perplexity and parameter count on the page is a {data} quote (page_text leaves the quotes out)."""
    text = page_text(PAGE)
    from builder.model import BuildOptions
    from tests.conftest import ROOT

    facts = lm_table.results(BuildOptions(root=ROOT, cache_dir=None))["facts"]
    for key in ("bigram_held_ppl", "mlp_held_ppl", "transformer_held_ppl", "bigram_params", "mlp_params",
                "transformer_params"):  # fmt: skip
        assert not re.search(rf"(?<![\d.,]){re.escape(facts[key])}(?![\d.,])", text), key
