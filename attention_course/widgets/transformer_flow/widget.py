"""The `transformer-flow` widget: one token's journey through SmolLM2-135M, stage by stage — tokens, embedding, one
block (norm, Q/K/V, scores, mixing, residual, norm, FFN, residual), the stack of blocks, the output layer and the
next-token probabilities — with the shape of the data at every stage (widget.js).

Every size comes from the model file's metadata (attention_course/smollm2/inside.py `model_shape`), the tokens from its
tokenizer and the final prediction from a real forward pass (`continuation_tree`, the root only); nothing here
is typed by hand. tests/course/test_transformer_explained.py runs the stages' pieces on the real weights and
checks every shape against the arrays they produce."""

from __future__ import annotations

from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from builder.widgets.fallback import percent
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

DEFAULT_SENTENCE = "The capital of France is"
TOP_SHOWN = 3  # predictions named at the last stage
STAGE_IDS = (
    "tokens",
    "embed",
    "norm1",
    "qkv",
    "scores",
    "mix",
    "add1",
    "norm2",
    "ffn_up",
    "ffn_down",
    "add2",
    "stack",
    "head",
    "probs",
)
BLOCK_STAGES = ("norm1", "qkv", "scores", "mix", "add1", "norm2", "ffn_up", "ffn_down", "add2")  # inside one block


def shown_token(text: str) -> str:
    """A token as the reader sees it in a label: a leading space as ␣, a line break as ↵."""
    return text.replace("\n", "↵").replace(" ", "␣") or "∅"


def flow_stages(
    shape: real_model.ModelShape, n_tokens: int, token: str, token_id: int, predictions: list[tuple[str, float]]
) -> list[dict[str, Any]]:
    """The stages in order: id, name, group (入口 / 块内 / 出口), the arrays' shapes (label, dims, what the dims are)
    and one sentence of what happens. `token` is the followed (last) token, `predictions` its real top next tokens."""
    s, t = shape, n_tokens
    q_width, kv_width = s.n_heads * s.head_dim, s.n_kv_heads * s.head_dim
    group = s.n_heads // s.n_kv_heads
    tok = f"「{shown_token(token)}」"
    guesses = "、".join(f"「{shown_token(w)}」{percent(p)}%" for w, p in predictions)

    def dims(label: str, values: list[int], meaning: str) -> dict[str, Any]:
        return {"label": label, "dims": values, "meaning": meaning}

    x = dims("x", [t, s.d_model], "token 数 × 模型宽度")
    stages = [
        (
            "tokens",
            "分词",
            [dims("编号", [t], "token 数")],
            f"句子被切成 {t} 个 token，每个换成词表里的一个编号；我们跟踪最后一个 token {tok}（编号 {token_id}）。",
        ),
        (
            "embed",
            "词嵌入",
            [dims("嵌入表", [s.vocab_size, s.d_model], "词表大小 × 模型宽度"), x],
            f"按编号从嵌入表里取出一行：{tok} 变成 {s.d_model} 个数的向量，之后沿“残差流”一路向上。",
        ),
        ("norm1", "归一化（RMSNorm）", [x], "把每个向量的整体大小调到统一尺度再送进注意力，数值才稳定；形状不变。"),
        (
            "qkv",
            "投影出 Q、K、V",
            [
                dims("Q", [t, q_width], f"token 数 × ({s.n_heads} 头 × {s.head_dim})"),
                dims("K", [t, kv_width], f"token 数 × ({s.n_kv_heads} 组 × {s.head_dim})"),
                dims("V", [t, kv_width], f"token 数 × ({s.n_kv_heads} 组 × {s.head_dim})"),
            ],
            f"三个矩阵把同一个向量变成查询、键、值：Q 分 {s.n_heads} 个头，K、V 只有 {s.n_kv_heads} 组，"
            f"每 {group} 个头共用一组；位置信息（RoPE）在这里旋转进 Q 和 K。",
        ),
        (
            "scores",
            "打分、遮罩、softmax",
            [dims("权重", [s.n_heads, t, t], "头数 × token 数 × token 数")],
            f"每个头里，{tok} 的 Q 与它自己和前面每个 token 的 K 做点积，"
            "遮住后面的位置，softmax 成一行加起来为 1 的权重。",
        ),
        (
            "mix",
            "加权汇总，合并各头",
            [dims("各头结果", [s.n_heads, t, s.head_dim], "头数 × token 数 × 头维度"), x],
            f"按权重把 V 加起来，每个头得到 {s.head_dim} 维，{s.n_heads} 个头拼回 {q_width} 维，再乘输出矩阵。",
        ),
        ("add1", "残差相加", [x], "把注意力的结果加回原来的向量：原信息原样保留，新信息像批注一样叠在上面。"),
        ("norm2", "归一化（RMSNorm）", [x], "进前馈网络之前，再把向量的尺度调一次。"),
        (
            "ffn_up",
            "前馈网络：升维与门控",
            [dims("隐藏层", [t, s.d_ffn], "token 数 × 前馈宽度")],
            f"每个 token 各算各的：两路投影到 {s.d_ffn} 维，一路经 SiLU 激活当“门”，"
            "与另一路逐元素相乘；token 之间不交流。",
        ),
        ("ffn_down", "前馈网络：降维", [x], f"再投影回 {s.d_model} 维，得到前馈网络的输出。"),
        ("add2", "残差相加", [x], "再加回残差流。一个块到此结束：出来的形状和进去时一模一样。"),
        (
            "stack",
            f"重复 {s.n_layers} 层",
            [x],
            f"同样结构、各自参数的块一共叠 {s.n_layers} 层；正因为形状不变，块才能一层接一层地堆。",
        ),
        (
            "head",
            "最终归一化 + 输出层",
            [dims("logits", [t, s.vocab_size], "token 数 × 词表大小")],
            f"最后一次 RMSNorm 后乘以词表矩阵（SmolLM2 复用嵌入表），给 {s.vocab_size} 个 token 各打一个分；"
            f"只用 {tok} 那一行。",
        ),
        (
            "probs",
            "softmax：下一个 token 的概率",
            [dims("概率", [s.vocab_size], "词表大小")],
            f"分数经 softmax 变成概率。真实模型在 {tok} 之后最看好：{guesses}。",
        ),
    ]
    assert tuple(st[0] for st in stages) == STAGE_IDS
    return [
        {
            "id": ident,
            "name": name,
            "group": "块内" if ident in BLOCK_STAGES else ("入口" if ident in ("tokens", "embed") else "出口"),
            "shapes": shapes,
            "explain": explain,
        }
        for ident, name, shapes, explain in stages
    ]


class StageOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, str) or value not in STAGE_IDS:
            raise OptionError(f"option '{name}' must be one of {', '.join(STAGE_IDS)}; got {value!r}")
        return value


class TextOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise OptionError(f"option '{name}' must be a non-empty English sentence, got {value!r}")
        return value


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    try:
        shape = real_model.model_shape(build)
        tree = real_model.continuation_tree(
            build, o["sentence"], top=TOP_SHOWN, branching=(), depth=0, temperatures=(1.0,)
        )
    except real_model.ModelInputError as exc:
        raise WidgetDataError(f"sentence: {exc}", "sentence") from exc
    except ModelWeightsError as exc:
        raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
    root = tree.nodes[0]
    last = tree.prompt_ids[-1]
    predictions = [(tree.strings[i], p) for i, p in zip(root.top_ids, root.probs[0])]
    return {
        "sentence": o["sentence"],
        "tokens": [tree.strings[i] for i in tree.prompt_ids],
        "ids": list(tree.prompt_ids),
        "shape": {
            k: getattr(shape, k)
            for k in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ffn", "vocab_size")
        },
        "stages": flow_stages(shape, len(tree.prompt_ids), tree.strings[last], last, predictions),
        "start": STAGE_IDS.index(o["stage"]),
    }, {}


def dims_text(dims: list[int]) -> str:
    return " × ".join(str(d) for d in dims)


def fallback(d: dict) -> str:
    rows = "".join(
        f'<tr><th scope="row">{n + 1}. {escapeHtml(st["name"])}</th><td>'
        + "<br>".join(f"{escapeHtml(sh['label'])}：{dims_text(sh['dims'])}" for sh in st["shapes"])
        + f'</td><td class="tf-explain-cell">{escapeHtml(st["explain"])}</td></tr>'
        for n, st in enumerate(d["stages"])
    )
    return (
        '<div class="heat-scroll"><table class="num-table tf-table"><caption>'
        f"{escapeHtml(d['sentence'])}：最后一个 token 走过 SmolLM2-135M-Instruct 的每一站（形状取自模型文件）</caption>"
        '<thead><tr><th scope="col">阶段</th><th scope="col">形状</th><th scope="col">发生了什么</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def embedded(d: dict) -> dict:
    """Each stage's sentence is in the fallback table already: the live view reads it there (page weight)."""
    return {**d, "stages": [{k: v for k, v in st.items() if k != "explain"} for st in d["stages"]]}


QUOTABLE = ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ffn", "vocab_size")


def quote(d: dict, selectors: list[str], target: str) -> str:
    """``{data}`transformer-flow d_model` `` → 576: a size of the model, as the widget shows it."""
    if selectors or target not in QUOTABLE:
        raise ValueError(f"transformer-flow quotes one size of the model: {', '.join(QUOTABLE)}")
    return str(d["shape"][target])


WIDGET = Widget(
    "transformer-flow",
    "一个 token 的旅程：逐站走过 Transformer",
    {
        "sentence": TextOption("text", DEFAULT_SENTENCE, "an English sentence; its last token is followed"),
        "stage": StageOption("choice", "tokens", "the stage shown first: " + ", ".join(STAGE_IDS)),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    quote=quote,
    embed=embedded,
)
