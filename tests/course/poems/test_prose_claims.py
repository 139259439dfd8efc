"""What modules 04 and 07 say in words about the poem models, held to the data (issue 31, issue 32 item 8): the
numbers themselves are {data} quotes, but a sentence like "no head does 对仗" or "most of the 山 row is smoothing"
is only true of the data it was written against — if the data changes, these fail and the sentence must be
re-read. Needs the corpus (fetched once per machine) and the committed weights."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

from attention_course.poems import lm_table, ngram_lm, transformer_lm
from attention_course.widgets.bigram_mlp import widget as bigram_mlp
from attention_course.widgets.poem_models import widget as poem_models
from tests.course.learner_text import CONTENT, front_matter

MODULE_04 = front_matter(CONTENT / "module-04-bigram-mlp.md")[1]
MODULE_07 = front_matter(CONTENT / "module-07-train-transformer.md")[1]
# "放在动词前面、表示否定、疑问或“互相”的虚字" and "常放在名词前面、描写颜色、冷暖和季节的字"
FUNCTION_WORDS = set("不未何相自莫无犹还又已欲应谁岂皆共独难尚亦且乃")
DESCRIBING = set("金寒秋青白清春红碧绿冷暖黄紫素霜暮朱翠苍")


@pytest.fixture(scope="module")
def options():
    from builder.model import BuildOptions
    from tests.conftest import ROOT

    return BuildOptions(root=ROOT, cache_dir=None)


@pytest.fixture(scope="module")
def ng(options):
    return ngram_lm.results(options)


@pytest.fixture(scope="module")
def heads(options):
    return transformer_lm.results(options)["heads"]["patterns"]


def test_module_04_mlp_story(ng):
    f, c = ng["facts"], ng["curve"]
    assert "看得更远的 MLP 赢了" in MODULE_04 and ng["mlp_held_nll"] < ng["bigram_held_nll"]
    # 训练不够的 MLP，会输给只会数数的二元模型: the held-out curve starts above the bigram and crosses it later
    assert c["held"][0] > ng["bigram_held_nll"] and int(f["mlp_beats_bigram_at_step"].replace(",", "")) > 0
    # 两者之差比二元模型的小
    assert c["held"][-1] - c["train"][-1] < ng["bigram_held_nll"] - ng["bigram_train_nll"]
    assert "反而输了" not in MODULE_04 and "几十秒" not in MODULE_04 and "按原顺序" not in MODULE_04


def test_module_04_samples_and_pca_ends(ng):
    q = bigram_mlp.derived_quotes(ng)
    mlp = int(q["mlp_sample_regular"]) / int(q["mlp_sample_lines"])
    bigram = int(q["bigram_sample_regular"]) / int(q["bigram_sample_lines"])
    assert mlp > 0.9 and bigram < 0.5  # "大多是五言或七言" against "长短没有规律"
    assert int(q["mlp_capped"]) >= 1  # "写满上限也不收尾"
    low, high = q["pca_low"].split("、"), q["pca_high"].split("、")
    assert len(FUNCTION_WORDS & set(low)) >= 3, low
    assert len(DESCRIBING & set(high)) >= 3, high


def test_module_04_mini_corpus_smoothing_takes_most_of_the_shan_row():
    """The cell prints the share the add-α smoothing gives the unseen successors of 山; the prose says 大半."""
    code = re.search(r"```\{code-cell\} python\n:id: bigram-counts\n(.*?)```", MODULE_04, re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "bigram-counts", "exec"), {"np": np})  # noqa: S102 (the page's own cell)
    share = int(re.search(r"平滑分给它们的概率合计 (\d+)%", out.getvalue()).group(1))
    assert share > 50 and "占了大半" in MODULE_04


def test_module_07_head_claims(heads):
    assert heads["previous"]["shows"] == [[0, 2]]  # 有一个头专门做
    assert len(heads["line_break"]["shows"]) == 1 and heads["line_break"]["lift_3"] > 1
    rhyme = heads["rhyme"]
    assert not rhyme["shows"] and max(max(row) for row in rhyme["lift"]) >= 3  # 真实存在，但很弱
    assert rhyme["pairs"] * 10 < heads["previous"]["pairs"]  # 不到“前一个字”的十分之一
    assert not heads["same_position"]["shows"] and heads["same_position"]["best"]["score"] < 0.2  # 没有对仗头
    assert not heads["line_start"]["shows"] and not heads["line_end"]["shows"]


def test_module_07_training_and_sample_claims(options):
    table = lm_table.results(options)
    tf = transformer_lm.results(options)
    rows = {r["key"]: r for r in table["models"]}
    # 参数多并不是原因: the bigram has the most parameters and the highest perplexity
    assert (
        rows["bigram"]["params"] > rows["transformer"]["params"]
        and rows["bigram"]["held_ppl"] > rows["mlp"]["held_ppl"]
    )
    q = poem_models.sample_quotes(table["models"])
    assert q["transformer_sample_regular"] == q["transformer_sample_lines"]
    data, _ = poem_models.build_data({"parts": ["curve"]}, options)
    dq = data["quotes"]
    # 写到上限时正好写完最后一句; then ◆ is likely, and it was not after half of the lines
    assert rows["transformer"]["sample"].endswith("。") and q["transformer_sample_chars"] == dq["sample_cap"]
    assert float(dq["transformer_sample_end_prob"][:-1]) > 90 > 20 > float(dq["transformer_sample_half_end_prob"][:-1])
    assert 0 < int(dq["transformer_beats_bigram_at_step"].replace(",", "")) < int(dq["transformer_beats_mlp_at_step"])
    # 它只学了十几分钟 (CPU); 8 位整数是 32 位浮点数的四分之一左右
    assert 10 <= tf["training"]["cpu_seconds"] / 60 < 20
    ratio = float(dq["transformer_weights_kb"]) / float(dq["transformer_float32_kb"].replace(",", ""))
    assert 0.2 < ratio < 0.3
    # 一首连标点 48 个字的五言律诗 fits the context with its ◆
    assert tf["config"]["context"] >= 1 + 48
