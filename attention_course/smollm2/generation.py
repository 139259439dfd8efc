"""What SmolLM2-135M says next: a prompt's next-token distribution with its logit lens (module 06), and the tree
of continuations a reader can walk (transformer-explained)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from builder.model import BuildOptions

from .store import cached_result, check_text, loaded_model


@dataclass(frozen=True)
class ContinuationNode:
    """One context of a continuation tree: the prompt plus `path` (token ids the reader appended), and the model's
    `top` most likely next tokens there. `probs[t][k]` is token k's probability under softmax(logits / T) over the
    *whole* vocabulary for the tree's t-th temperature (so a row sums to less than 1: the rest is the long tail).
    `children[k]` is the index of the node that appends token k, or -1 where the tree stops."""

    path: tuple[int, ...]
    top_ids: tuple[int, ...]
    probs: tuple[tuple[float, ...], ...]
    children: tuple[int, ...]


@dataclass(frozen=True)
class ContinuationTree:
    """Next-token distributions of SmolLM2-135M for a prompt and the continuations a reader may pick: node 0 is
    the prompt; a node at depth d has children for its first branching[d] tokens (1 past the list: the greedy
    one) down to `depth` appended tokens. `forward_passes` and `seconds` are what computing it cost (once: cached)."""

    prompt: str
    prompt_ids: tuple[int, ...]
    temperatures: tuple[float, ...]
    top: int
    branching: tuple[int, ...]
    depth: int
    nodes: tuple[ContinuationNode, ...]
    strings: dict[int, str]  # token id → its text, for every id in the tree and the prompt
    forward_passes: int
    seconds: float

    def node_at(self, path: tuple[int, ...]) -> ContinuationNode | None:
        """The node reached by appending `path` to the prompt, or None where the tree does not go."""
        node = self.nodes[0]
        for token in path:
            if token not in node.top_ids or node.children[node.top_ids.index(token)] < 0:
                return None
            node = self.nodes[node.children[node.top_ids.index(token)]]
        return node


def temperature_probs(logits: np.ndarray, temperatures: tuple[float, ...], ids: np.ndarray) -> list[list[float]]:
    """softmax(logits / T) over the whole vocabulary for each T, at `ids` only (float64: the tail's sum matters)."""
    z = np.asarray(logits, dtype=np.float64)
    out = []
    for t in temperatures:
        s = z / t
        p = np.exp(s - s.max())
        out.append([float(x) for x in p[ids] / p.sum()])
    return out


def continuation_tree(
    options: BuildOptions,
    prompt: str,
    *,
    top: int = 8,
    branching: tuple[int, ...] = (5, 3, 2),
    depth: int = 7,
    temperatures: tuple[float, ...] = (0.5, 1.0, 2.0),
) -> ContinuationTree:
    """The tree of `prompt`'s continuations (cached): one forward pass of attention_core.models.llama per node
    (the logits of its last position). Raises ModelInputError for an empty or too long prompt."""
    check_text(options, prompt, noun="prompt", more=depth)

    def compute() -> ContinuationTree:
        import time

        from attention_core.models.llama import forward

        started = time.perf_counter()
        model = loaded_model(options)
        prompt_ids = tuple(model.encode(prompt))
        nodes: list[dict] = []
        queue = [()]  # breadth first: node indices grow with depth
        passes = 0
        while queue:
            path = queue.pop(0)
            logits = forward(model.weights, prompt_ids + path).logits[-1]
            passes += 1
            ids = np.argsort(-logits, kind="stable")[:top]
            width = branching[len(path)] if len(path) < len(branching) else 1
            node = {
                "path": path,
                "ids": tuple(int(i) for i in ids),
                "probs": temperature_probs(logits, temperatures, ids),
                "children": [-1] * top,
            }
            if len(path) < depth:
                for k in range(width):
                    node["children"][k] = len(nodes) + len(queue) + 1 + k
                queue.extend(path + (node["ids"][k],) for k in range(width))
            nodes.append(node)
        ids = set(prompt_ids) | {i for nd in nodes for i in nd["ids"]}
        strings = dict(zip(sorted(ids), model.tokenizer.token_strings(sorted(ids))))
        return ContinuationTree(
            prompt,
            prompt_ids,
            tuple(temperatures),
            top,
            tuple(branching),
            depth,
            tuple(
                ContinuationNode(nd["path"], nd["ids"], tuple(tuple(r) for r in nd["probs"]), tuple(nd["children"]))
                for nd in nodes
            ),
            strings,
            passes,
            time.perf_counter() - started,
        )

    shape = json.dumps({"top": top, "branching": list(branching), "depth": depth, "temperatures": list(temperatures)})
    return cached_result(options, compute, "model-continuation-tree", prompt, shape)


TOP_K = 10
LENS_TOP = 3  # the logit lens keeps each layer's three best tokens


@dataclass(frozen=True)
class NextTokenRun:
    """A prompt's next-token distribution at the last position and its logit lens (attention_core.models.llama
    `logit_lens`): what the model would predict if it stopped after each block.

    `top_*` are the TOP_K most likely next tokens at temperature 1 (a temperature rescales the logits and keeps
    their order, so they are the top tokens at every temperature); `probs[k]` is their probabilities at
    `temperatures[k]` over the *whole* vocabulary, `rest[k]` what all other tokens share. `lens_*` have one row
    per depth (0 = the embedding alone, n_layers = the output): the LENS_TOP best tokens and their probabilities,
    and the rank (1 = best) and probability of the final prediction `top_tokens[0]` at that depth."""

    text: str
    tokens: list[str]
    n_layers: int
    vocab_size: int
    top_ids: list[int]
    top_tokens: list[str]
    top_logits: list[float]
    temperatures: list[float]
    probs: list[list[float]]
    rest: list[float]
    lens_tokens: list[list[str]]
    lens_probs: list[list[float]]
    answer_rank: list[int]
    answer_prob: list[float]


def next_token_run(options: BuildOptions, text: str, temperatures: tuple[float, ...]) -> NextTokenRun:
    """`text` through SmolLM2-135M with its residual stream kept (cached like `sentence_run`); raises
    ModelInputError for an empty or too long prompt."""
    check_text(options, text, noun="prompt", fits="are allowed")

    def compute() -> NextTokenRun:
        from attention_core.core import softmax
        from attention_core.models.llama import logit_lens

        model = loaded_model(options)
        result = model.run(text, return_residuals=True)
        logits = result.logits[-1].astype(np.float64)
        top = np.argsort(-logits, kind="stable")[:TOP_K]
        probs, rest = [], []
        for t in temperatures:
            p = softmax(logits, temperature=t)
            probs.append([float(p[i]) for i in top])
            rest.append(float(max(0.0, 1.0 - p[top].sum())))
        lens = softmax(logit_lens(model.weights, result.residuals).astype(np.float64), axis=-1)
        answer = int(top[0])
        lens_ids = np.argsort(-lens, axis=1, kind="stable")[:, :LENS_TOP]
        ranks = [int((row > row[answer]).sum()) + 1 for row in lens]
        strings = model.tokenizer.token_string
        return NextTokenRun(
            text,
            model.tokenizer.token_strings(result.tokens),
            model.config.n_layers,
            model.config.vocab_size,
            [int(i) for i in top],
            [strings(int(i)) for i in top],
            [float(logits[i]) for i in top],
            list(temperatures),
            probs,
            rest,
            [[strings(int(i)) for i in row] for row in lens_ids],
            [[float(lens[layer, i]) for i in row] for layer, row in enumerate(lens_ids)],
            ranks,
            [float(row[answer]) for row in lens],
        )

    return cached_result(options, compute, "model-next-token", text, repr(tuple(temperatures)))
