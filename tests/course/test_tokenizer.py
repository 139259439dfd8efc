"""attention_core.models.tokenizer: SmolLM2's byte-level BPE rebuilt from the GGUF metadata.

Expected ids were derived once, independently, by Hugging Face transformers' GGUF tokenizer
(`AutoTokenizer.from_pretrained(dir, gguf_file=...)`, transformers 5.24.0: its own converter from the
same GGUF tokens/merges to a `tokenizers` object) in tests/course/fixtures/smollm2/make_golden.py, and stored in
golden.npz (`tokenizer_*`, plus the ids of the two golden sentences).  Nothing here is copied from our
own output.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _cases(golden):
    off, flat = golden["tokenizer_offsets"], golden["tokenizer_ids"]
    cases = [(str(t), flat[off[i] : off[i + 1]].tolist()) for i, t in enumerate(golden["tokenizer_sentences"])]
    cases += [(str(t), golden[f"s{i}_ids"].tolist()) for i, t in enumerate(golden["sentences"])]
    return cases


def test_ids_match_the_independent_tokenizer(smollm2, golden) -> None:
    cases = _cases(golden)
    assert len(cases) == 9 and any("注意力" in t for t, _ in cases) and any("2024" in t for t, _ in cases)
    for text, expected in cases:
        assert smollm2.tokenizer.encode(text) == expected, text


def test_known_ids_and_readable_strings(smollm2, golden) -> None:
    tk = smollm2.tokenizer
    ids = tk.encode("The capital of France is")
    assert ids == golden["tokenizer_ids"][:5].tolist()
    assert tk.token_strings(ids) == ["The", " capital", " of", " France", " is"]
    assert tk.pieces[ids[1]] == "Ġcapital"  # the raw byte-level vocabulary string
    assert tk.token_strings(tk.encode("a\nb")) == ["a", "\n", "b"]


def test_round_trip_and_bytes(smollm2, golden) -> None:
    tk = smollm2.tokenizer
    for text, ids in _cases(golden):
        assert tk.decode(ids) == text
        assert b"".join(tk.token_bytes(i) for i in ids) == text.encode("utf-8")


def test_partial_utf8_tokens_are_shown_as_escapes(smollm2) -> None:
    tk = smollm2.tokenizer
    ids = tk.encode("注意力")
    strings = tk.token_strings(ids)
    assert len(ids) > 3  # Chinese characters are split into byte pieces by this English vocabulary
    assert any("\\x" in s for s in strings)
    assert tk.decode(ids) == "注意力"


def test_bos_and_special_tokens_follow_the_metadata(smollm2, smollm2_metadata) -> None:
    meta = smollm2_metadata
    tk = smollm2.tokenizer
    assert tk.add_bos is bool(meta["tokenizer.ggml.add_bos_token"]) is False
    assert tk.bos_id == meta["tokenizer.ggml.bos_token_id"] == 1
    assert tk.encode("Hello")[0] != tk.bos_id
    assert tk.encode("<|im_start|>user<|im_end|>") == [1, 4093, 2]  # control tokens are matched whole
    assert len(tk.special_ids) == 17 and tk.vocab_size == 49152
    tokens = tk.tokenize("it was too wide")
    assert [(t.text, t.start, t.end) for t in tokens] == [
        ("it", 0, 2),
        (" was", 2, 6),
        (" too", 6, 10),
        (" wide", 10, 15),
    ]


def test_tiny_vocabulary_with_bos() -> None:
    """The BPE machinery on a hand-made vocabulary: merges apply in priority order, BOS is prepended."""
    from attention_core.models.tokenizer import GGUFTokenizer, _bytes_to_unicode

    alphabet = list(dict.fromkeys(_bytes_to_unicode().values()))
    tokens = ["<s>", *alphabet, "he", "ll", "hell", "Ġw"]
    tk = GGUFTokenizer(
        tokens, ["h e", "l l", "he ll", "Ġ w"], [3] + [1] * (len(tokens) - 1), pre="gpt2", bos_id=0, add_bos=True
    )
    ids = tk.encode("hello wo")
    assert [tokens[i] for i in ids] == ["<s>", "hell", "o", "Ġw", "o"]
    assert tk.token_strings(ids) == ["<s>", "hell", "o", " w", "o"]
    with pytest.raises(ValueError, match="not supported"):
        GGUFTokenizer(tokens, [], [1] * len(tokens), pre="llama3")


def test_import_attention_core_loads_neither_gguf_nor_tokenizers() -> None:
    code = (
        "import sys, attention_core, attention_core.models, attention_core.models.heads; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gguf', 'tokenizers', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_browser_warm_imports_stay_numpy_only() -> None:
    """The build pre-imports every module that attention_core's import statements name into Pyodide's
    memory snapshot (builder.runtime.wheels.package_imports); gguf / tokenizers are not there."""
    from builder.runtime.wheels import package_imports

    names = package_imports(ROOT / "attention_core")
    assert not [n for n in names if n.split(".")[0] in ("gguf", "tokenizers", "torch", "builder")], names
