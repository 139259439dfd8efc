"""attention_core — the course's attention maths in pure NumPy.

Single source of truth used by the site build (widget data, code cells) and, packaged
as a pure-Python wheel, inside Pyodide in the browser.  No I/O; only stdlib + numpy.

Public API::

    softmax(x, temperature=1.0, axis=-1)
    causal_mask(n)
    scaled_dot_product_attention(Q, K, V, mask=None, temperature=1.0) -> (output, weights)
    multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=None) -> (output, weights)
    multi_head_trace(...)  -> MultiHeadTrace
    attention_trace(X=None, *, Q=, K=, V=, W_Q=, W_K=, W_V=, mask=, temperature=) -> AttentionTrace
    EXAMPLES, Example, get_example(id)

The real model (SmolLM2-135M from its GGUF file: reader, tokenizer, NumPy Llama forward pass, head
scores) is the subpackage `attention_core.models`, imported only on request (`import attention_core`
does not load it, nor the `gguf` / `tokenizers` packages it needs to read a file).
"""

from .core import (
    AttentionTrace,
    MultiHeadTrace,
    attention_trace,
    causal_mask,
    multi_head_attention,
    multi_head_trace,
    scaled_dot_product_attention,
    softmax,
)
from .examples import EXAMPLES, Example, get_example

__version__ = "0.1.0"

__all__ = [
    "EXAMPLES",
    "AttentionTrace",
    "Example",
    "MultiHeadTrace",
    "attention_trace",
    "causal_mask",
    "get_example",
    "multi_head_attention",
    "multi_head_trace",
    "scaled_dot_product_attention",
    "softmax",
]
