"""The poems' split: simplified characters, one side per poem, the worked example held out."""

from __future__ import annotations

import pytest

from attention_course.poems import dataset

MADE_UP = [
    "白日依山盡，黃河入海流。欲窮千里目，更上一層樓。",  # the worked example: held out by name
    "床前明月光，疑是地上霜。舉頭望明月，低頭思故鄉。",
    "床前明月光。疑是地上霜，舉頭望明月。低頭思故鄉。",  # the same poem with other marks: a duplicate
    "春眠不覺曉，處處聞啼鳥。夜來風雨聲，花落知多少。",
    "注：此詩一作某某詩",  # a note: filtered out
    "千山鳥飛絕，萬徑人蹤滅。孤舟蓑笠翁，獨釣寒江雪。",
] + [f"{a}山{b}水間，{c}月照人還。" for a in "一二三四五六七八九十" for b in "東南西北" for c in "春秋"]


def test_made_up_poems_are_simplified_deduplicated_and_split_by_content():
    s = dataset.split_poems(MADE_UP, expected_sha256=None)
    assert s.n_total == len(MADE_UP) and s.n_clean == len(MADE_UP) - 1 and s.n_duplicates == 1
    assert s.n_unique == s.n_clean - 1
    everything = s.train + s.held
    assert "床前明月光，疑是地上霜。举头望明月，低头思故乡。" in everything  # simplified, first copy kept
    assert not any("舉" in p or "鄉" in p for p in everything)
    keys_train = {dataset.normalise(p) for p in s.train}
    keys_held = {dataset.normalise(p) for p in s.held}
    assert not keys_train & keys_held
    assert "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。" in s.held
    # the side is a function of the text alone: another order keeps another copy, on the same side
    again = dataset.split_poems(list(reversed(MADE_UP)), expected_sha256=None)
    assert {dataset.normalise(p) for p in again.held} == keys_held
    assert {dataset.normalise(p) for p in again.train} == keys_train
    assert 0 < len(s.held) < len(s.train)  # ≈ 1 in 10 by hash, plus the worked example


def test_a_different_conversion_is_an_error_naming_the_fix():
    with pytest.raises(dataset.CorpusError, match=r"pip install opencc==1\.4\.2"):
        dataset.split_poems(MADE_UP, expected_sha256="0" * 64)


@pytest.fixture(scope="module")
def real_split():
    from builder.model import BuildOptions
    from tests.conftest import ROOT

    return dataset.load_split(BuildOptions(root=ROOT, cache_dir=None))


def test_real_split_has_no_poem_on_both_sides_and_holds_out_the_worked_example(real_split):
    s = real_split
    assert s.simplified_sha256 == dataset.SIMPLIFIED_SHA256
    assert s.converter == f"opencc {dataset.CONVERTER_VERSION} (t2s)"
    train_keys = {dataset.normalise(p) for p in s.train}
    held_keys = {dataset.normalise(p) for p in s.held}
    assert len(train_keys) == len(s.train) and len(held_keys) == len(s.held)  # no repeats within a side either
    assert not train_keys & held_keys
    assert any(dataset.HELD_OUT_LINES[0] in p for p in s.held)
    assert not any(dataset.HELD_OUT_LINES[0] in p for p in s.train)
    assert 0.09 < len(s.held) / s.n_unique < 0.11
