"""The English sentences the course shows through SmolLM2-135M (attention_course/widgets/model_attention/widget.py).

Chosen for what they make visible in a real causal model: the pronoun pair (the *it* row cannot differ: the
model has not seen *tired* / *wide* yet; the difference appears at those words), a name repeated (copying and
induction-like heads), and a factual pattern. English only: the model is English-first, and its byte-level
pieces of Chinese characters would not be honest tokens to show.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sentence:
    id: str
    title: str  # Chinese label of the sentence button
    text: str
    note: str  # one line under the heatmap
    focus: str | None = None  # a token whose row the lesson reads (as the tokenizer writes it: " tired")
    candidates: tuple[str, ...] = ()  # tokens that row is compared over (" animal", " street")


SENTENCES: dict[str, Sentence] = {
    s.id: s
    for s in (
        Sentence(
            "animal-tired",
            "it 指谁？（tired）",
            "The animal didn't cross the street because it was tired.",
            "真实模型的注意力：SmolLM2-135M-Instruct 网页生成时用 NumPy 预先算好，百分数已四舍五入且每行合计 100%。",
            " tired",
            (" animal", " street"),
        ),
        Sentence(
            "animal-wide",
            "it 指谁？（too wide）",
            "The animal didn't cross the street because it was too wide.",
            "与上一句只差结尾两个词：直到 was，两句的每个 token 都相同。",
            " wide",
            (" animal", " street"),
        ),
        Sentence(
            "repeat-name",
            "名字第二次出现",
            "Mr Dursley said hello to Mrs Potter, and then Mrs Potter said hello to Mr Dursley.",
            "名字第二次出现时，有些头会回头找它第一次出现的位置，以及紧跟其后的词。",
        ),
        Sentence(
            "capitals",
            "首都",
            "The capital of France is Paris, and the capital of Japan is Tokyo.",
            "事实类句子：看 Tokyo 之前的位置在回看哪些词。",
        ),
    )
}


def get_sentence(sentence_id: str) -> Sentence:
    try:
        return SENTENCES[sentence_id]
    except KeyError:
        raise KeyError(f"unknown sentence {sentence_id!r}; known: {', '.join(SENTENCES)}") from None
