"""Hand-designed example data for the course's widgets and code cells.

Every number here is chosen by hand to make one attention pattern visible; none of
it comes from a trained model.  The recipe is the same for every example:

1. Each embedding dimension of ``X`` has a *meaning* (e.g. "is a person",
   "is a pronoun"), documented next to the matrix.
2. ``W_K`` maps those features to "what I offer" (key space), ``W_Q`` maps them to
   "what I am looking for" (query space).  Key/query dimensions are named too.
3. A score ``q_i · k_j`` is therefore large exactly when token ``i`` looks for a
   feature that token ``j`` offers.

Shapes: ``X (L, d_model)``, ``W_Q/W_K (d_model, d_k)``, ``W_V (d_model, d_v)``.
``tests/course/test_examples.py`` asserts that every pattern described here really
shows up in the computed weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .core import (
    AttentionTrace,
    MultiHeadTrace,
    attention_trace,
    causal_mask,
    multi_head_trace,
    softmax,
)

__all__ = ["EXAMPLES", "Example", "get_example"]

FloatArray = NDArray[np.floating[Any]]


def _frozen(a: ArrayLike | None) -> FloatArray | None:
    if a is None:
        return None
    arr = np.array(a, dtype=np.float64)  # private copy
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class Example:
    """One named example: tokens, embeddings and projection matrices.

    Attributes:
        id: stable id used in Markdown (``examples: [cat-fast]``).
        title: Chinese title shown in the widget.
        tokens: the ``L`` tokens.
        note: Chinese sentence: the numbers are illustrative (示意) and what they show.
        X: ``(L, d_model)`` embeddings (``None`` for score-only examples).
        W_Q, W_K: ``(d_model, num_heads*d_k)``; W_V: ``(d_model, num_heads*d_v)``.
        W_O: ``(num_heads*d_v, d_out)`` output projection (multi-head only).
        num_heads: number of heads (columns of W_Q are split evenly among them).
        causal: whether widgets should start with the causal mask on.
        scores: 1-D raw scores of one query over ``tokens`` (temperature widget).
        query: the query token the example focuses on (e.g. the pronoun 他).
        head_labels: Chinese short label per head (multi-head only).
        feature_labels: Chinese name of each embedding dimension of ``X``.
    """

    id: str
    title: str
    tokens: tuple[str, ...]
    note: str
    X: FloatArray | None = None
    W_Q: FloatArray | None = None
    W_K: FloatArray | None = None
    W_V: FloatArray | None = None
    W_O: FloatArray | None = None
    num_heads: int = 1
    causal: bool = False
    scores: FloatArray | None = None
    query: str | None = None
    head_labels: tuple[str, ...] = ()
    feature_labels: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("X", "W_Q", "W_K", "W_V", "W_O", "scores"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "tokens", tuple(self.tokens))
        L = len(self.tokens)
        if self.X is not None:
            if self.X.shape[0] != L:
                raise ValueError(f"{self.id}: X has {self.X.shape[0]} rows for {L} tokens")
            if self.W_Q is None or self.W_K is None or self.W_V is None:
                raise ValueError(f"{self.id}: X needs W_Q, W_K and W_V")
            if self.feature_labels and len(self.feature_labels) != self.X.shape[1]:
                raise ValueError(f"{self.id}: feature_labels do not match X's width")
        if self.scores is not None and self.scores.shape != (L,):
            raise ValueError(f"{self.id}: scores must have shape ({L},)")
        if self.num_heads > 1 and len(self.head_labels) != self.num_heads:
            raise ValueError(f"{self.id}: need one head label per head")
        if self.query is not None and self.scores is None and self.query not in self.tokens:
            raise ValueError(f"{self.id}: query {self.query!r} is not a token")

    # ----------------------------------------------------------------- helpers
    @property
    def length(self) -> int:
        """Number of tokens ``L``."""
        return len(self.tokens)

    def index(self, token: str) -> int:
        """Position of the first occurrence of ``token`` (ValueError if absent)."""
        try:
            return self.tokens.index(token)
        except ValueError:
            raise ValueError(f"{token!r} is not a token of example {self.id!r}: {list(self.tokens)}") from None

    def mask(self, causal: bool | None = None) -> NDArray[np.bool_] | None:
        """The causal mask if ``causal`` (default: ``self.causal``), else ``None``."""
        use = self.causal if causal is None else causal
        return causal_mask(self.length) if use else None

    def _mask_arg(self, mask: ArrayLike | None, causal: bool | None) -> ArrayLike | None:
        return mask if mask is not None else self.mask(causal)

    # ----------------------------------------------------------------- computations
    def trace(
        self,
        mask: ArrayLike | None = None,
        temperature: float = 1.0,
        causal: bool | None = None,
    ) -> AttentionTrace:
        """Single-head :class:`AttentionTrace` of ``X`` with ``W_Q/W_K/W_V``.

        ``mask`` wins over ``causal``; with neither, ``self.causal`` decides.
        For multi-head examples use :meth:`multi_head_trace`.
        """
        if self.X is None:
            raise ValueError(f"example {self.id!r} has no embeddings (score-only example)")
        if self.num_heads != 1:
            raise ValueError(f"example {self.id!r} has {self.num_heads} heads; use multi_head_trace()")
        return attention_trace(
            self.X,
            W_Q=self.W_Q,
            W_K=self.W_K,
            W_V=self.W_V,
            mask=self._mask_arg(mask, causal),
            temperature=temperature,
        )

    def multi_head_trace(
        self,
        mask: ArrayLike | None = None,
        temperature: float = 1.0,
        causal: bool | None = None,
    ) -> MultiHeadTrace:
        """:class:`MultiHeadTrace` using ``num_heads`` and ``W_O`` (works for 1 head too)."""
        if self.X is None:
            raise ValueError(f"example {self.id!r} has no embeddings (score-only example)")
        return multi_head_trace(
            self.X,
            self.W_Q,  # type: ignore[arg-type]
            self.W_K,  # type: ignore[arg-type]
            self.W_V,  # type: ignore[arg-type]
            self.W_O,
            self.num_heads,
            mask=self._mask_arg(mask, causal),
            temperature=temperature,
        )

    def weights(
        self,
        causal: bool | None = None,
        temperature: float = 1.0,
        mask: ArrayLike | None = None,
    ) -> FloatArray:
        """Attention weights: ``(L,)`` for score-only examples (softmax of ``scores``),
        ``(L, L)`` for single-head and ``(num_heads, L, L)`` for multi-head examples."""
        if self.scores is not None and self.X is None:
            return softmax(self.scores, temperature=temperature)
        if self.num_heads == 1:
            return self.trace(mask=mask, temperature=temperature, causal=causal).weights
        return self.multi_head_trace(mask=mask, temperature=temperature, causal=causal).weights

    def to_dict(self, decimals: int | None = None) -> dict[str, Any]:
        """Plain-Python/JSON view of the example (arrays -> nested lists, None kept)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = np.round(v, decimals).tolist() if decimals is not None else v.tolist()
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out


# =========================================================================== cat-fast
# 小 猫 跑 得 真 快 —— read left to right with a causal mask, like a language model.
#
# X dimensions (d_model = 6):
#   0 名词/实体   (猫)          1 修饰语 (小; 快 is partly adjectival too)
#   2 动作       (跑)          3 结构助词“得” (introduces a complement)
#   4 程度副词   (真)          5 状态补语 (快: how the action goes)
# Key / query space (d_k = 4):
#   k0 “我是实体”  k1 “我是修饰语”  k2 “我是动作”  k3 “我是补语标记/程度词”
_CAT_X = [
    #  实体 修饰 动作  得  程度 补语
    [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # 小
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # 猫
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],  # 跑
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0],  # 得
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # 真
    [0.0, 0.3, 0.0, 0.0, 0.0, 1.0],  # 快
]
# W_K: what each feature offers (rows = X dims, cols = k0..k3).
_CAT_WK = [
    [1.0, 0.0, 0.0, 0.0],  # 实体 -> "I am an entity"
    [0.0, 1.0, 0.0, 0.0],  # 修饰 -> "I am a modifier"
    [0.0, 0.0, 1.0, 0.0],  # 动作 -> "I am an action"
    [0.0, 0.0, 0.0, 1.0],  # 得   -> "I introduce a complement"
    [0.0, 0.0, 0.0, 0.5],  # 真   -> a degree word, weakly the same role
    [0.0, 0.0, 0.0, 0.0],  # 补语 -> offers nothing special
]
# W_Q: what each feature looks for.
_CAT_WQ = [
    [0.0, 3.0, 0.5, 0.0],  # a noun looks for its modifier (猫 -> 小), a little for verbs
    [2.0, 0.0, 0.0, 0.0],  # a modifier looks for the noun it modifies
    [3.0, 0.0, 0.0, 0.0],  # a verb looks for its subject (跑 -> 猫)
    [0.0, 0.0, 3.0, 0.0],  # 得 attaches to the verb before it (得 -> 跑)
    [0.0, 0.0, 1.0, 3.0],  # 真 looks for the complement marker 得 (and the verb)
    [0.0, 0.0, 4.0, 1.0],  # 快 describes the action: looks for 跑 (and 得/真)
]
_CAT_WV = np.eye(6)[:, [0, 1, 2, 5]]  # values: carry the entity/modifier/action/state features

CAT_FAST = Example(
    id="cat-fast",
    title="小猫跑得真快",
    tokens=("小", "猫", "跑", "得", "真", "快"),
    note="这些数字是人为设计的示意值，不是真实模型的参数：在因果遮罩下，猫看向小，跑看向猫，"
    "得看向跑，快主要看向跑，呈现出语言模型从左往右阅读的模式。",
    X=_CAT_X,
    W_Q=_CAT_WQ,
    W_K=_CAT_WK,
    W_V=_CAT_WV,
    causal=True,
    feature_labels=("名词/实体", "修饰语", "动作", "结构助词“得”", "程度副词", "状态补语"),
)


# ============================================================== animal-tired / -wide
# "The animal didn't cross the street because it was tired / too wide."
# A single attention layer cannot make `it` depend on a word *after* it (and with a
# causal mask it cannot even see it).  So, as in real deep models, the rows of X are
# treated as *contextual* representations from an earlier layer: the vector of `it`
# already carries a hint from "tired" (→ needs an animate referent) or from "wide"
# (→ needs a physical thing / place).  That hint is the only difference between the
# two examples' `it` rows.
#
# X dimensions (d_model = 7):
#   0 有生命 (animate)   1 物体/地点 (thing/place)   2 名词 (entity)   3 代词
#   4 动词/谓语          5 虚词 (the, because, too)   6 性质形容词 (tired, wide)
# Key / query space (d_k = 4):
#   k0 “我是可被指代的实体”  k1 “我有生命”  k2 “我是物体/地点”  k3 “我是动作”
_ANIMAL_WK = [
    [0.0, 1.0, 0.0, 0.0],  # 有生命 -> offers "animate"
    [0.0, 0.0, 1.0, 0.0],  # 物体   -> offers "thing/place"
    [1.0, 0.0, 0.0, 0.0],  # 名词   -> offers "I can be referred to"
    [0.0, 0.0, 0.0, 0.0],  # 代词   -> a pronoun is not itself a referent
    [0.0, 0.0, 0.0, 1.0],  # 动词   -> offers "action"
    [0.0, 0.0, 0.0, 0.0],  # 虚词   -> offers nothing
    [0.0, 0.0, 0.0, 0.0],  # 形容词 -> offers nothing
]
_ANIMAL_WQ = [
    [0.0, 3.0, 0.0, 0.0],  # animate hint   -> look for animate things
    [0.0, 0.0, 3.0, 0.0],  # thing hint     -> look for things/places
    [0.0, 0.0, 0.0, 1.5],  # a noun looks for the verb it takes part in
    [2.0, 0.0, 0.0, 0.0],  # a pronoun looks for an entity to refer to
    [2.0, 0.0, 0.0, 0.0],  # a verb looks for its participants
    [0.0, 0.0, 0.0, 0.0],  # function words look nowhere in particular
    [1.5, 0.0, 0.0, 0.0],  # an adjective looks for the entity it describes
]
# Values: each token passes on its entity / animate / thing / action features.
_ANIMAL_WV = np.eye(7)[:, [2, 0, 1, 4]]

#                 有生命 物体 名词 代词 动词 虚词 形容词
_ANIMAL_COMMON = {
    "The": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    "animal": [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    "didn't": [0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0],
    "cross": [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
    "the": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    "street": [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    "because": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    "was": [0.0, 0.0, 0.0, 0.0, 0.8, 0.2, 0.0],
    "too": [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
}
_ANIMAL_TIRED_EXTRA = {
    "it": [0.6, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],  # context says: the referent is alive
    "tired": [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # "tired" describes living things
}
_ANIMAL_WIDE_EXTRA = {
    "it": [0.0, 0.6, 0.0, 1.0, 0.0, 0.0, 0.0],  # context says: the referent is a thing
    "wide": [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 1.0],  # "wide" describes things/places
}
_ANIMAL_FEATURES = ("有生命", "物体/地点", "名词", "代词", "动词/谓语", "虚词", "性质形容词")


def _animal_x(tokens: tuple[str, ...], extra: dict[str, list[float]]) -> list[list[float]]:
    table = {**_ANIMAL_COMMON, **extra}
    return [table[t] for t in tokens]


_TIRED_TOKENS = tuple("The animal didn't cross the street because it was tired".split())
_WIDE_TOKENS = tuple("The animal didn't cross the street because it was too wide".split())

ANIMAL_TIRED = Example(
    id="animal-tired",
    title="it 指谁？（tired）",
    tokens=_TIRED_TOKENS,
    note="这些数字是人为设计的示意值：it 的向量已带有上文“tired（累了）”的线索（需要有生命的指代对象），"
    "所以 it 的注意力最集中在 animal 上。",
    X=_animal_x(_TIRED_TOKENS, _ANIMAL_TIRED_EXTRA),
    W_Q=_ANIMAL_WQ,
    W_K=_ANIMAL_WK,
    W_V=_ANIMAL_WV,
    causal=True,
    query="it",
    feature_labels=_ANIMAL_FEATURES,
)

ANIMAL_WIDE = Example(
    id="animal-wide",
    title="it 指谁？（wide）",
    tokens=_WIDE_TOKENS,
    note="这些数字是人为设计的示意值：只把 tired 换成 wide，it 的向量带上“物体/地点”的线索，"
    "注意力便从 animal 转到 street 上。",
    X=_animal_x(_WIDE_TOKENS, _ANIMAL_WIDE_EXTRA),
    W_Q=_ANIMAL_WQ,
    W_K=_ANIMAL_WK,
    W_V=_ANIMAL_WV,
    causal=True,
    query="it",
    feature_labels=_ANIMAL_FEATURES,
)


# =========================================================================== xiaoming
# 小明 打 了 小红 ， 因为 他 生气  (non-causal: the query-focus widget looks both ways)
#
# X dimensions (d_model = 8):
#   0 人物(具名)  1 主语(本分句的主语)  2 代词  3 动作  4 状态/情绪
#   5 助词“了”    6 连词“因为”           7 标点
# Key / query space (d_k = 4):
#   k0 “我是具体人物”  k1 “我是主语”  k2 “我是动作”  k3 “我是状态/原因”
_XM_X = [
    # 人物 主语 代词 动作 状态 助词 连词 标点
    [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # 小明: a person, subject of 打
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # 打
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0],  # 了
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # 小红: a person, the object
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],  # ，
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # 因为
    [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # 他: a pronoun, subject of 生气
    [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],  # 生气
]
_XM_WK = [
    [1.0, 0.0, 0.0, 0.0],  # 人物 -> "I am a concrete person"
    [0.0, 1.0, 0.0, 0.0],  # 主语 -> "I am a subject"
    [0.0, 0.5, 0.0, 0.0],  # 代词 -> pronouns are typical subjects, but not referents
    [0.0, 0.0, 1.0, 0.0],  # 动作 -> "I am an action"
    [0.0, 0.0, 0.0, 1.0],  # 状态 -> "I am a state / a reason"
    [0.0, 0.0, 0.0, 0.0],  # 助词
    [0.0, 0.0, 0.0, 0.0],  # 连词
    [0.0, 0.0, 0.0, 0.0],  # 标点
]
_XM_WQ = [
    [0.0, 0.0, 2.0, 0.0],  # a person looks for the action it takes part in
    [0.0, 0.0, 0.0, 0.0],  # (being a subject adds no query)
    [4.0, 1.5, 0.0, 0.0],  # a pronoun looks for a concrete person, preferably a subject
    [2.0, 0.5, 0.0, 0.0],  # an action looks for its participants (agent a bit more)
    [0.0, 2.5, 0.0, 0.0],  # a state looks for who is in that state (its subject)
    [0.0, 0.0, 3.0, 0.0],  # 了 attaches to the action
    [0.0, 0.5, 0.0, 2.5],  # 因为 looks for the reason (a state)
    [0.0, 0.0, 0.0, 0.0],  # punctuation looks nowhere in particular
]
_XM_WV = np.eye(8)[:, [0, 1, 3, 4]]  # values pass on person / subject / action / state

XIAOMING = Example(
    id="xiaoming",
    title="他 指的是谁？",
    tokens=("小明", "打", "了", "小红", "，", "因为", "他", "生气"),
    note="这些数字是人为设计的示意值：“他”在寻找具体的人物、并偏向主语，"
    "所以它最关注小明，其次是小红；“打”看向小明和小红，“生气”看向他和小明。",
    X=_XM_X,
    W_Q=_XM_WQ,
    W_K=_XM_WK,
    W_V=_XM_WV,
    causal=False,
    query="他",
    feature_labels=("人物", "主语", "代词", "动作", "状态/情绪", "助词", "连词", "标点"),
)


# ========================================================================= four-words
# 我 爱 吃 苹果 —— tiny enough to compute by hand in the step calculator.
# All inputs have one decimal, so Q, K, V have at most two decimals.
#
# X dimensions (d_model = d_k = d_v = 3):
#   0 名词性 (是一个事物/人)   1 动作性 (是一个动作)   2 与“吃/食物”相关
_FW_X = [
    [1.0, 0.2, 0.0],  # 我:   a noun (the subject)
    [0.0, 1.0, 0.2],  # 爱:   an action, slightly food-related ("爱吃")
    [0.0, 1.0, 1.0],  # 吃:   an action about food
    [1.0, 0.0, 1.0],  # 苹果: a noun that is food
]
# Query columns: what I look for = (名词, 动作, 食物).  Nouns look for actions,
# actions look for nouns, and food-related words look for other food-related words.
_FW_WQ = [
    [0.0, 2.0, 0.0],  # 名词性 -> looks for actions
    [2.0, 0.0, 0.0],  # 动作性 -> looks for nouns
    [0.0, 0.0, 2.0],  # 食物   -> looks for food
]
# Key columns: what I offer = (名词, 动作, 食物); slightly damped food signal.
_FW_WK = [
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 0.5],
]
# Value columns: the information passed on when someone attends to me.
_FW_WV = [
    [1.0, 0.0, 0.5],
    [0.0, 1.0, 0.0],
    [0.0, 0.5, 1.0],
]

FOUR_WORDS = Example(
    id="four-words",
    title="我爱吃苹果：一步一步算注意力",
    tokens=("我", "爱", "吃", "苹果"),
    note="这些数字是人为设计的示意值（维度分别表示“名词性”“动作性”“与食物相关”），"
    "小到可以手算：名词找动作、动作找名词，所以“吃”最关注“苹果”。",
    X=_FW_X,
    W_Q=_FW_WQ,
    W_K=_FW_WK,
    W_V=_FW_WV,
    causal=False,
    feature_labels=("名词性", "动作性", "与食物相关"),
)


# ================================================================ temperature-scores
# The raw (already scaled) scores of the query 他 over the other words of the
# 小明/小红 sentence.  Designed so the gap between the best (小明) and second
# (小红) score is 1.0: at T = 0.2 the gap becomes 5 (almost one-hot: ~99% on 小明),
# at T = 4 the whole range 1.6 shrinks to 0.4 (almost uniform: every weight 13-21%).
TEMPERATURE_SCORES = Example(
    id="temperature-scores",
    title="温度如何改变注意力分布",
    tokens=("小明", "打", "了", "小红", "因为", "生气"),
    note="这些分数是人为设计的示意值（“他”对其他词的打分）：温度低时几乎只看小明，温度高时注意力几乎平均分配。",
    scores=[2.0, 0.6, 0.4, 1.0, 0.5, 0.8],
    query="他",
)


# ========================================================================= multi-head
# 小明 打 了 小红 因为 他 生气, three heads of d_k = d_v = 2 (d_model = 6).
#
# X dimensions:
#   0-1  position as an angle on a circle: (cos(i·π/4), sin(i·π/4)) — a tiny version of
#        sinusoidal / rotary position encodings; 8 steps per turn, so 7 tokens are distinct
#   2 人物(具名)  3 主语  4 代词  5 谓词(动作/状态)
#
# Head 0 “看前一个词”: W_Q rotates the position back by one step (×3.5),
#   W_K copies it (×3.5): q_i·k_j = 12.25·cos((i-1-j)·π/4), largest at j = i-1.
# Head 1 “看指代对象”: the pronoun asks for (人物, 主语); keys offer them, so 他 → 小明
#   (person and subject) beats 小红 (person only) and 他 itself (subject only).
# Head 2 “看自己”: query and key are both the position (×3.5), so j = i wins.
_MH_TOKENS = ("小明", "打", "了", "小红", "因为", "他", "生气")
_MH_SEMANTIC = [
    # 人物 主语 代词 谓词
    [1.0, 1.0, 0.0, 0.0],  # 小明
    [0.0, 0.0, 0.0, 1.0],  # 打
    [0.0, 0.0, 0.0, 0.3],  # 了 (attached to the verb)
    [1.0, 0.0, 0.0, 0.0],  # 小红
    [0.0, 0.0, 0.0, 0.0],  # 因为
    [0.0, 1.0, 1.0, 0.0],  # 他
    [0.0, 0.0, 0.0, 1.0],  # 生气
]
_MH_ANGLE = math.pi / 4
_MH_X = [
    [round(math.cos(i * _MH_ANGLE), 4), round(math.sin(i * _MH_ANGLE), 4), *sem] for i, sem in enumerate(_MH_SEMANTIC)
]
_S = 3.5
_c, _s = math.cos(_MH_ANGLE), math.sin(_MH_ANGLE)
# Row vector p·R with R = [[c, -s], [s, c]] turns angle θ into θ - π/4 (one step back).
_MH_WQ = np.zeros((6, 6))
_MH_WQ[0:2, 0:2] = _S * np.array([[_c, -_s], [_s, _c]])  # head 0: previous position
_MH_WQ[4, 2:4] = [4.0, 1.5]  # head 1: a pronoun looks for (人物, 主语)
_MH_WQ[0:2, 4:6] = _S * np.eye(2)  # head 2: my own position
_MH_WK = np.zeros((6, 6))
_MH_WK[0:2, 0:2] = _S * np.eye(2)  # head 0: key = position
_MH_WK[2, 2] = 1.0  # head 1: offers "person"
_MH_WK[3, 3] = 1.0  # head 1: offers "subject"
_MH_WK[0:2, 4:6] = _S * np.eye(2)  # head 2: key = position
# Values: every head passes on semantic features, each head a different pair.
_MH_WV = np.zeros((6, 6))
_MH_WV[2, 0] = _MH_WV[5, 1] = 1.0  # head 0: (人物, 谓词) of the previous word
_MH_WV[2, 2] = _MH_WV[3, 3] = 1.0  # head 1: (人物, 主语) of the referent
_MH_WV[4, 4] = _MH_WV[5, 5] = 1.0  # head 2: (代词, 谓词) of the word itself
# Output projection: write the heads' findings back into the semantic dims 2-5
# (positions 0-1 are left untouched).  Rows = concat dims, cols = d_model dims.
_MH_WO = np.zeros((6, 6))
_MH_WO[0, 2] = 0.5  # head 0 person  -> 人物 (a bit: "the previous word was a person")
_MH_WO[1, 5] = 0.5  # head 0 predicate -> 谓词
_MH_WO[2, 2] = 1.0  # head 1 person  -> 人物 (a pronoun becomes "a person", 小明)
_MH_WO[3, 3] = 1.0  # head 1 subject -> 主语
_MH_WO[4, 4] = 1.0  # head 2 pronoun -> 代词
_MH_WO[5, 5] = 1.0  # head 2 predicate -> 谓词

MULTI_HEAD = Example(
    id="multi-head",
    title="多头注意力：三个头各看各的",
    tokens=_MH_TOKENS,
    note="这些数字是人为设计的示意值：头 0 看前一个词，头 1 让“他”看向指代对象“小明”，"
    "头 2 看自己；三个头的输出拼接后再经 W_O 融合。",
    X=_MH_X,
    W_Q=_MH_WQ,
    W_K=_MH_WK,
    W_V=_MH_WV,
    W_O=_MH_WO,
    num_heads=3,
    causal=True,
    query="他",
    head_labels=("看前一个词", "看指代对象", "看自己"),
    feature_labels=("位置 cos", "位置 sin", "人物", "主语", "代词", "谓词"),
)


EXAMPLES: dict[str, Example] = {
    ex.id: ex
    for ex in (
        CAT_FAST,
        ANIMAL_TIRED,
        ANIMAL_WIDE,
        XIAOMING,
        FOUR_WORDS,
        TEMPERATURE_SCORES,
        MULTI_HEAD,
    )
}


def get_example(example_id: str) -> Example:
    """Return the example with this id; ``KeyError`` lists the valid ids."""
    try:
        return EXAMPLES[example_id]
    except (KeyError, TypeError):
        raise KeyError(f"unknown example id {example_id!r}; valid ids: {', '.join(EXAMPLES)}") from None
