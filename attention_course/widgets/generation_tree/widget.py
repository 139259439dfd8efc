"""The `generation-tree` widget: text generation one token at a time with SmolLM2-135M's real next-token
distributions (widget.js). The reader picks one of the top tokens (or lets greedy
decoding or temperature sampling pick), it is appended, and the next distribution appears.

The model does not run in the browser: attention_course/smollm2/generation.py `continuation_tree` precomputes, per
prompt, a tree of contexts (the prompt, its top few continuations, theirs, …, then greedy to a fixed depth) with
each context's top tokens and their probabilities at each temperature. The page embeds each prompt's first
distribution; the whole tree is one data script loaded on first interaction. A pick outside the tree is said to be
so."""

from __future__ import annotations

import json
from typing import Any

from markdown_it.common.utils import escapeHtml

from attention_course import smollm2 as real_model
from attention_course.smollm2.weights import ModelWeightsError
from attention_course.widgets.transformer_flow.widget import shown_token
from builder.bundle import browser_data_script
from builder.widgets.fallback import bars_list, percent_row, round_significant
from builder.widgets.schema import Option, OptionError, Widget, WidgetDataError

PROMPTS = {  # id → (title, English prompt): a confident one and an open one
    "capital": ("法国首都", "The capital of France is"),
    "story": ("童话开头", "Once upon a time, there was a little"),
}
TOP = 8  # tokens shown (and sampled among) at every step
BRANCHING = (5, 3, 2)  # children kept at depth 0, 1, 2; then greedy only
TEMPERATURES = (0.5, 1.0, 2.0)
PROBABILITY_DIGITS = 4  # significant digits in the data script (page weight; the bars show whole percents)


class PromptsOption(Option):
    """Prompt ids of PROMPTS or {text: …, title: …} items (English)."""

    def check(self, name: str, value: Any, *_: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise OptionError(
                f"option '{name}' must be a non-empty list of prompt ids ({', '.join(PROMPTS)}) "
                "or {text: …, title: …} items"
            )
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str) and item in PROMPTS:
                out.append({"id": item, "title": PROMPTS[item][0], "text": PROMPTS[item][1]})
            elif (
                isinstance(item, dict)
                and isinstance(item.get("text"), str)
                and item["text"].strip()
                and not set(item) - {"text", "title"}
                and isinstance(item.get("title", ""), str)
            ):
                out.append(
                    {"id": f"custom-{i + 1}", "title": item.get("title") or item["text"][:16], "text": item["text"]}
                )
            else:
                raise OptionError(
                    f"option '{name}': unknown prompt {item!r} (known ids: {', '.join(PROMPTS)}; "
                    "or give {text: …, title: …})",
                    item=i,
                )
        if len({p["text"] for p in out}) != len(out):
            raise OptionError(f"option '{name}' lists a prompt twice")
        return out


class TemperatureOption(Option):
    def check(self, name: str, value: Any, *_: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) not in TEMPERATURES:
            raise OptionError(
                f"option '{name}' must be one of the widget's temperatures "
                f"{', '.join(f'{t:g}' for t in TEMPERATURES)}; got {value!r}"
            )
        return float(value)


def _node_json(node: real_model.ContinuationNode) -> dict:
    return {
        "t": list(node.top_ids),
        "p": round_significant([list(r) for r in node.probs], PROBABILITY_DIGITS),
        "c": list(node.children),
    }


def greedy_text(tree: real_model.ContinuationTree) -> tuple[str, int]:
    """The greedy continuation inside the tree (always the first token) and how many tokens it has."""
    node, text, n = tree.nodes[0], "", 0
    while True:
        text += tree.strings[node.top_ids[0]]
        n += 1
        if node.children[0] < 0:
            return text, n
        node = tree.nodes[node.children[0]]


def with_tail(probs: list[float]) -> list[float]:
    """A shown row: the top tokens' probabilities and, last, the rest of the vocabulary's (so it sums to 1)."""
    return [*probs, max(0.0, 1.0 - sum(probs))]


def build_data(o: dict, build: Any) -> tuple[dict, dict[str, bytes]]:
    prompts, full = [], {}
    items = o["prompts"]
    if items and isinstance(items[0], str):  # the default list, as written (options are checked only when given)
        items = WIDGET.options["prompts"].check("prompts", items)
    for p in items:
        try:
            tree = real_model.continuation_tree(
                build, p["text"], top=TOP, branching=BRANCHING, depth=o["depth"], temperatures=TEMPERATURES
            )
        except real_model.ModelInputError as exc:
            raise WidgetDataError(f"prompt {p['id']}: {exc}", "prompts") from exc
        except ModelWeightsError as exc:
            raise WidgetDataError(f"the model SmolLM2-135M is not available: {exc}") from exc
        root = tree.nodes[0]
        greedy, greedy_n = greedy_text(tree)
        prompts.append(
            {
                **p,
                "tokens": [tree.strings[i] for i in tree.prompt_ids],
                "root": _node_json(root),
                "strings": {str(i): tree.strings[i] for i in root.top_ids},
                "greedy": greedy,
                "greedy_tokens": greedy_n,
                "nodes": len(tree.nodes),
                "passes": tree.forward_passes,
            }
        )
        full[p["id"]] = {
            "nodes": [_node_json(n) for n in tree.nodes],
            "strings": {str(k): v for k, v in tree.strings.items()},
        }
    payload = json.dumps(full, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    key = real_model.digest_of(payload.encode())
    path = f"assets/model/generation-{key}.js"
    shape = real_model.model_shape(build)
    data = {
        "prompts": prompts,
        "temperatures": list(TEMPERATURES),
        "temperature": TEMPERATURES.index(o["temperature"]),
        "top": TOP,
        "branching": list(BRANCHING),
        "depth": o["depth"],
        "vocab_size": shape.vocab_size,
        "data": path,
        "key": key,
    }
    return data, {path: browser_data_script("generationTree", f"d{key}", payload)}


def fallback(d: dict) -> str:
    t1 = d["temperatures"].index(1.0)
    parts = []
    for p in d["prompts"]:
        root = p["root"]
        words = [shown_token(p["strings"][str(i)]) for i in root["t"]] + [f"其余 {d['vocab_size'] - d['top']} 个"]
        parts.append(
            f'<p class="widget-caption">{escapeHtml(p["title"])}：<code>{escapeHtml(p["text"])}</code></p>'
            + bars_list(
                words,
                with_tail(root["p"][t1]),
                f"{p['title']}：下一个 token 的概率（前 {d['top']} 名与其余全部，T = 1）",
            )
            + f'<p class="widget-note">每次都选第一名（贪心）会接着写出：<code>{escapeHtml(p["greedy"])}</code></p>'
        )
    return "".join(parts) + (
        '<p class="widget-note">启用 JavaScript 后可以在这里一步步挑选下一个 token，比较贪心和按温度抽样。</p>'
    )


def quote(d: dict, selectors: list[str], target: str) -> str:
    """``{data}`generation-tree <prompt id> [T=<t>] <token>` `` → the token's whole percent at the prompt's first
    step (T = 1 unless given): the number the widget's bar shows."""
    ids = [p["id"] for p in d["prompts"]]
    prompt = next((s for s in selectors if s in ids), None)
    temps = [s[2:] for s in selectors if s.startswith("T=")]
    if prompt is None or len(selectors) != 1 + len(temps) or len(temps) > 1:
        raise ValueError(f"write generation-tree <prompt id: {', '.join(ids)}> [T=<t>] <token>")
    try:
        k = d["temperatures"].index(float(temps[0]) if temps else 1.0)
    except ValueError:
        raise ValueError(f"T={temps[0]} is not one of the widget's temperatures") from None
    p = d["prompts"][ids.index(prompt)]
    words = [p["strings"][str(i)].strip() for i in p["root"]["t"]]
    if target not in words:
        raise ValueError(f"'{target}' is not among the first step's top tokens ({', '.join(words)})")
    return f"{percent_row(with_tail(p['root']['p'][k]))[words.index(target)]}%"  # as the widget's bar rounds it


WIDGET = Widget(
    "generation-tree",
    "一次生成一个 token：真实模型的下一个词",
    {
        "prompts": PromptsOption("prompts", ["capital", "story"], "prompt ids or {text: …, title: …}"),
        "depth": Option(
            "integer", 7, "tokens the tree goes past the prompt (greedy after the branching)", minimum=1, maximum=10
        ),
        "temperature": TemperatureOption("number", 1.0, "initial temperature: 0.5, 1 or 2"),
    },
    compute=lambda o: {},
    fallback=fallback,
    build_data=build_data,
    lazy=True,
    quote=quote,
)
