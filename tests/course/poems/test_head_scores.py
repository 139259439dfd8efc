"""head_scores: the (query, target) pairs of each poetic pattern, and heads built to show one pattern score 1 on it."""

from __future__ import annotations

import numpy as np
import pytest

from attention_course.poems import head_scores

POEM = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
VOCAB = ["◆", "□", "，", "。"] + sorted(set(POEM) - set("，。"))
IDS = np.array([0] + [VOCAB.index(ch) for ch in POEM])  # the input: ◆ and the poem (no closing ◆)
MARKS = {2, 3}


def test_pairs_of_a_regular_quatrain():
    lines = head_scores.lines_of(IDS, MARKS)
    assert [len(line) for line in lines] == [5, 5, 5, 5] and lines[1][0] == 7  # 疑 at position 7
    assert head_scores.is_regular(lines, IDS, MARKS)
    p = head_scores.pairs(IDS, MARKS)
    q, t = p["previous"]
    assert len(q) == 16 and np.all(t == q - 1)
    q, t = p["line_start"]
    assert len(q) == 12 and list(zip(q[:3], t[:3])) == [(3, 1), (4, 1), (5, 1)]
    q, t = p["same_position"]
    assert len(q) == 15 and np.all(q - t == 6)  # 5 characters and a mark back
    q, t = p["line_end"]
    assert list(zip(q[:4], t[:4])) == [(8, 5), (9, 5), (10, 5), (11, 5)]  # line 2's characters → 光
    q, t = p["line_break"]
    assert list(zip(q[:4], t[:4])) == [(8, 6), (9, 6), (10, 6), (11, 6)] and len(q) == 12  # → ，
    q, t = p["rhyme"]
    assert list(zip(q, t)) == [(22, 11)]  # 故 (predicts 乡) → 霜


def test_irregular_poems_have_no_same_position_or_rhyme_pairs():
    ids = np.array([0] + [VOCAB.index(ch) for ch in "床前明月光，疑是霜。"])
    p = head_scores.pairs(ids, MARKS)
    assert len(p["same_position"][0]) == 0 and len(p["rhyme"][0]) == 0
    assert len(p["previous"][0]) == 4 + 2


def made_heads(ids: np.ndarray) -> np.ndarray:
    """Layer 0: head 0 looks at the previous position, head 1 spreads evenly, head 2 looks 6 back (same position in
    the previous line; itself when there is none), head 3 at the opening ◆."""
    T = len(ids)
    A = np.zeros((1, 4, T, T))
    for i in range(T):
        A[0, 0, i, max(i - 1, 0)] = 1
        A[0, 1, i, : i + 1] = 1 / (i + 1)
        A[0, 2, i, i - 6 if i >= 6 else i] = 1
        A[0, 3, i, 0] = 1
    return A


def test_scores_lifts_and_what_shows():
    s = head_scores.HeadScores(1, 4, marks=MARKS)
    s.add(IDS, made_heads(IDS))
    s.add(IDS, made_heads(IDS))
    table = s.table()
    prev = table["previous"]
    assert prev["score"][0][0] == 1 and prev["pairs"] == 32 and prev["poems"] == 2
    assert prev["score"][0][1] == pytest.approx(prev["baseline"], abs=1e-4)  # even spreading is the baseline
    assert prev["lift"][0][1] == pytest.approx(1, abs=0.01)
    assert prev["shows"] == [[0, 0]] and prev["best"] == {"layer": 0, "head": 0, "score": 1.0}
    assert table["same_position"]["shows"] == [[0, 2]] and table["same_position"]["score"][0][2] == 1
    assert table["line_start"]["shows"] == [] and table["rhyme"]["score"][0][3] == 0
    assert table["opening"]["shows"] == [[0, 3]] and table["opening"]["pairs"] == 2 * 19  # all but the 1st character
    assert table["previous"]["lift_2"] == 1 and table["same_position"]["lift_3"] >= 1


def test_a_poem_longer_than_its_window_counts_the_pairs_inside_it():
    s = head_scores.HeadScores(1, 4, marks=MARKS)
    s.add(IDS, made_heads(IDS)[:, :, :12, :12])  # the window ends after 。 of line 2 (position 11)
    table = s.table()
    assert table["previous"]["pairs"] == 8 and table["same_position"]["pairs"] == 5
    assert table["rhyme"]["pairs"] == 0 and table["same_position"]["score"][0][2] == 1
