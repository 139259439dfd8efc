"""《全唐诗》 for a training loop in the browser's Python: module 04's vocabulary and split, a documented slice of
them (the build makes the files: attention_course/poems/browser_data.py).

    import tang_poems
    poems = tang_poems.load()
    poems.vocab[:5]                      # ['◆', '□', '，', '。', '不']: the boundary, the unknown, …
    x, y = poems.batch(16, 64, rng)      # 16 windows of 64 ids from the training text, y = x shifted by one
    poems.decode(x[0])                   # the characters
    poems.held                           # the held-out poems, each an id array ◆ … ◆
    poems.facts["models"]["bigram"]      # the course's models on exactly these held-out poems
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import numpy as np

__version__ = "0.1.0"

BOUNDARY = 0  # ◆: before a poem's first character and after its last
UNKNOWN = 1  # □: a character outside the vocabulary


class Poems:
    def __init__(self, vocab: list[str], train: np.ndarray, held_stream: np.ndarray, facts: dict) -> None:
        self.vocab = vocab
        self.index = {ch: i for i, ch in enumerate(vocab)}
        self.train = train  # ◆ poem ◆ poem … ◆
        self.starts = np.flatnonzero(train[:-1] == BOUNDARY)  # where a poem's ◆ stands
        ends = np.flatnonzero(held_stream == BOUNDARY)
        self.held = [held_stream[a : b + 1] for a, b in zip(ends[:-1], ends[1:])]
        self.facts = facts

    def encode(self, text: str) -> list[int]:
        """Ids of the characters (□ for one outside the vocabulary)."""
        return [self.index.get(ch, UNKNOWN) for ch in text]

    def decode(self, ids) -> str:
        return "".join(self.vocab[int(i)] for i in ids)

    def batch(self, n: int, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """`n` windows of `length` ids of the training text and their next ids: half of them start at a poem's ◆
        (as a poem is read), the others anywhere (as module 07's Transformer was trained)."""
        last = len(self.train) - length - 1
        at_poem = rng.random(n) < 0.5
        first = np.where(
            at_poem, self.starts[rng.integers(0, len(self.starts), n)].clip(max=last), rng.integers(0, last + 1, n)
        )
        windows = self.train[first[:, None] + np.arange(length + 1)]
        return windows[:, :-1], windows[:, 1:]


def _ids(name: str) -> np.ndarray:
    return np.frombuffer(resources.files(__name__).joinpath(name).read_bytes(), dtype="<u2").astype(np.intp)


@lru_cache(maxsize=1)
def load() -> Poems:
    here = resources.files(__name__)
    vocab = here.joinpath("vocab.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
    facts = json.loads(here.joinpath("facts.json").read_text(encoding="utf-8"))
    return Poems(vocab, _ids("train.u16"), _ids("held.u16"), facts)


__all__ = ["BOUNDARY", "UNKNOWN", "Poems", "load"]
