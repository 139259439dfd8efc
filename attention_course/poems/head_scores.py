"""What the tiny Transformer's heads do on the held-out poems, measured for patterns a reader of classical
poetry recognises.

A poem's input is ◆ c c c c c ， c c c c c 。 … (position 0 is the opening ◆; "，" and "。" end the lines). Each
held-out poem counts once, with the attention of its first window: the whole poem when it fits the context (64),
else its first 64 positions (lines and regularity are still the whole poem's). `A[i, j]`
is one head's attention weight from query position i to key position j (causal: j ≤ i; a row sums to 1). The
query's output predicts the character at i + 1. For each pattern, a set of (query, target) pairs per poem; the
score of a head is the mean of A[query, target] over all pairs of all poems measured. Only character positions
are queries (not ◆, not the marks).

* `previous` — the previous character: target i − 1, for every character i ≥ 2 whose previous position is a
  character too (not a mark, not ◆).
* `line_start` — the first character of the query's own line, for characters at least 2 after it (so the
  target is neither the query itself nor its previous character).
* `line_break` — the mark that closed the previous line (just before the query's line begins): for characters
  of line 2 onwards that are at least the 2nd of their line (for the 1st, that mark is the previous position).
* `same_position` — the character at the same place in the previous line (对仗 pairs words place by place):
  target i − (L + 1), in *regular* poems (every line L = 5 or 7 characters, an even number of lines), for every
  character of line 2 onwards.
* `line_end` — the last character of the previous line (where the rhyme sits, at the end of lines 2, 4, …): for
  every character of line 2 onwards that is at least the 2nd of its line (the first one's previous-but-one
  position is that character, which `previous`-like heads would take).
* `rhyme` — narrowest: the query whose next character is a rhyme (the second-to-last character of line 4, 6, 8, …
  of a regular poem) and, as target, the previous rhyme (the last character of line 2, 4, 6, …, two lines up).
* `opening` — not poetic, for reference: the opening ◆ at position 0, for every character i ≥ 2 (many heads park
  the attention they do not need on the first position: "attention sinks", Xiao et al. 2023).

Baseline: a head that spreads its attention evenly over everything it may see gives query i the weight 1/(i + 1)
on any one position; `baseline` is that mean over the same pairs, and `lift` = score / baseline. A head *shows*
a pattern when its score is at least `SHOWS_SCORE` and its lift at least `SHOWS_LIFT` (both stated with the data,
so the page can say exactly what "shows" means); `lift_2` and `lift_3` count the heads whose lift alone is ≥ 2, ≥ 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

PATTERNS = ("previous", "line_start", "line_break", "same_position", "line_end", "rhyme", "opening")
SHOWS_SCORE = 0.3  # at least 30 % of the head's attention on the target, on average
SHOWS_LIFT = 3.0  # and at least 3 × what spreading attention evenly would give


def lines_of(ids: np.ndarray, marks: set[int]) -> list[list[int]]:
    """The positions of each line's characters (a line ends at a mark; position 0, the ◆, is in none)."""
    lines: list[list[int]] = []
    current: list[int] = []
    for pos in range(1, len(ids)):
        tok = int(ids[pos])
        if tok in marks:
            if current:
                lines.append(current)
            current = []
        elif tok == 0:
            break
        else:
            current.append(pos)
    if current:
        lines.append(current)
    return lines


def is_regular(lines: list[list[int]], ids: np.ndarray, marks: set[int]) -> bool:
    """Every line 5 or 7 characters long, all the same, an even number of them, each closed by a mark."""
    if len(lines) < 2 or len(lines) % 2:
        return False
    length = len(lines[0])
    if length not in (5, 7) or any(len(line) != length for line in lines):
        return False
    return all(line[-1] + 1 < len(ids) and int(ids[line[-1] + 1]) in marks for line in lines)


def pairs(ids: np.ndarray, marks: set[int]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(queries, targets) of every pattern for one poem's input ids."""
    lines = lines_of(ids, marks)
    regular = is_regular(lines, ids, marks)
    out: dict[str, tuple[list[int], list[int]]] = {name: ([], []) for name in PATTERNS}

    def add(name: str, q: int, t: int) -> None:
        out[name][0].append(q)
        out[name][1].append(t)

    for m, line in enumerate(lines):
        for k, i in enumerate(line):
            if i >= 2:
                add("opening", i, 0)
            if k >= 1:
                add("previous", i, i - 1)
            if k >= 2:
                add("line_start", i, line[0])
            if m >= 1:
                if regular:
                    add("same_position", i, lines[m - 1][k])
                if k >= 1:
                    add("line_end", i, lines[m - 1][-1])
                    add("line_break", i, line[0] - 1)
        if regular and m >= 3 and m % 2 == 1:  # lines 4, 6, 8 … (0-based 3, 5, 7)
            add("rhyme", line[-2], lines[m - 2][-1])
    return {name: (np.array(q, dtype=np.int64), np.array(t, dtype=np.int64)) for name, (q, t) in out.items()}


@dataclass
class HeadScores:
    """Running sums over poems; `table()` gives the scores."""

    n_layers: int
    n_heads: int
    marks: set[int]
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    baseline_sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    poems: dict[str, int] = field(default_factory=dict)
    n_poems: int = 0

    def __post_init__(self) -> None:
        for name in PATTERNS:
            self.sums[name] = np.zeros((self.n_layers, self.n_heads))
            self.baseline_sums[name] = 0.0
            self.counts[name] = 0
            self.poems[name] = 0

    def add(self, ids: np.ndarray, attention: np.ndarray) -> None:
        """One poem: its ids (the whole poem; lines and regularity are the poem's) and the attention of its first
        T positions (layers, heads, T, T); pairs whose query lies beyond T are left out."""
        self.n_poems += 1
        T = attention.shape[-1]
        for name, (q, t) in pairs(ids, self.marks).items():
            inside = q < T
            q, t = q[inside], t[inside]
            if len(q) == 0:
                continue
            self.sums[name] += attention[:, :, q, t].astype(np.float64).sum(axis=-1)
            self.baseline_sums[name] += float((1.0 / (q + 1)).sum())
            self.counts[name] += len(q)
            self.poems[name] += 1

    def table(self) -> dict[str, dict]:
        out = {}
        for name in PATTERNS:
            n = max(self.counts[name], 1)
            score = self.sums[name] / n
            baseline = self.baseline_sums[name] / n
            lift = score / baseline if baseline else np.zeros_like(score)
            shows = (score >= SHOWS_SCORE) & (lift >= SHOWS_LIFT)
            best = np.unravel_index(int(np.argmax(score)), score.shape)
            out[name] = {
                "score": np.round(score, 4).tolist(),
                "lift": np.round(lift, 2).tolist(),
                "baseline": round(baseline, 4),
                "pairs": self.counts[name],
                "poems": self.poems[name],
                "shows": [[int(layer), int(head)] for layer, head in zip(*np.nonzero(shows))],
                "lift_2": int((lift >= 2).sum()),
                "lift_3": int((lift >= 3).sum()),
                "best": {"layer": int(best[0]), "head": int(best[1]), "score": round(float(score[best]), 4)},
            }
        return out


__all__ = ["PATTERNS", "SHOWS_LIFT", "SHOWS_SCORE", "HeadScores", "is_regular", "lines_of", "pairs"]
