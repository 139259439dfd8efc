"""Real models for the course: SmolLM2-135M read from its GGUF file and run in plain NumPy.

Not imported by `import attention_core` (nor by this package's own import): the `gguf` and `tokenizers`
packages it needs are imported only inside the functions that read a file, so the package also imports
in Pyodide, where neither exists.

    model = load_model(path)                  # weights (float32) + tokenizer, one pass over the file
    result = model.run("The capital of France is")
    result.logits, result.attention           # (T, vocab), (layers, heads, T, T)
    model.tokenizer.token_strings(result.tokens)

Modules: `gguf_reader` (file → `LlamaWeights`), `tokenizer` (`GGUFTokenizer`), `llama` (the forward
pass), `heads` (per-head behaviour scores for the head gallery).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .gguf_reader import LayerWeights, LlamaConfig, LlamaWeights, load_llama, open_gguf
from .llama import ForwardResult, forward, perplexity
from .tokenizer import GGUFTokenizer


@dataclass
class LlamaModel:
    """A model's weights with its tokenizer."""

    weights: LlamaWeights
    tokenizer: GGUFTokenizer

    @property
    def config(self) -> LlamaConfig:
        return self.weights.config

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def run(self, text: str, *, return_residuals: bool = False) -> ForwardResult:
        """Tokenise `text` and run the forward pass."""
        return forward(self.weights, self.tokenizer.encode(text), return_residuals=return_residuals)

    def perplexity(self, text: str) -> float:
        return perplexity(self.weights, self.tokenizer.encode(text))


def load_model(path: str | Path) -> LlamaModel:
    """Read the GGUF at `path` once: the tokenizer from its metadata, then the dequantised weights."""
    reader = open_gguf(path)
    tokenizer = GGUFTokenizer.from_reader(reader)
    return LlamaModel(weights=load_llama(path, reader=reader), tokenizer=tokenizer)


__all__ = [
    "ForwardResult",
    "GGUFTokenizer",
    "LayerWeights",
    "LlamaConfig",
    "LlamaModel",
    "LlamaWeights",
    "forward",
    "load_llama",
    "load_model",
    "perplexity",
]
