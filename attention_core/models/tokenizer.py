"""The model's own tokenizer, rebuilt from the GGUF metadata with the `tokenizers` package.

SmolLM2 uses GPT-2 style *byte-level BPE* (`tokenizer.ggml.model == "gpt2"`):

1. pre-tokenise: every digit on its own (`tokenizer.ggml.pre == "smollm"`: llama.cpp's regex `\\p{N}`,
   Hugging Face's `Digits(individual_digits=True)`), then GPT-2's regex splits words, numbers, punctuation
   and whitespace runs, a word keeping the space before it (" Paris");
2. byte-level: every UTF-8 byte becomes one printable character (space → `Ġ`, newline → `Ċ`, the bytes
   of 猫 → `çĮ«`), so any text is representable and there is no unknown token;
3. BPE: the merges (`tokenizer.ggml.merges`, in priority order) glue those characters into vocabulary
   entries (`tokenizer.ggml.tokens`, index = token id).

The 17 control tokens (`tokenizer.ggml.token_type == 3`: `<|endoftext|>`, `<|im_start|>`, …) are matched
whole in the text, as Hugging Face does.  Whether a BOS token is prepended comes from the metadata
(`tokenizer.ggml.add_bos_token`, `tokenizer.ggml.bos_token_id`); for SmolLM2 it is not.

`gguf` and `tokenizers` are imported lazily (Pyodide has neither).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CONTROL = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character table (the inverse turns a vocabulary string back into bytes)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


_BYTE_OF_CHAR = {c: b for b, c in _bytes_to_unicode().items()}


@dataclass
class Token:
    id: int
    text: str  # readable: the bytes decoded (invalid UTF-8 pieces as \\xNN escapes)
    piece: str  # the raw vocabulary string (byte-level characters, e.g. "ĠParis")
    start: int  # character offsets of the token in the encoded text
    end: int


class GGUFTokenizer:
    """Byte-level BPE tokenizer of a GGUF model. Build it with `GGUFTokenizer.from_gguf(path)`."""

    def __init__(
        self,
        tokens: Sequence[str],
        merges: Sequence[str],
        token_types: Sequence[int],
        *,
        pre: str = "smollm",
        bos_id: int | None = None,
        eos_id: int | None = None,
        add_bos: bool = False,
    ) -> None:
        from .gguf_reader import optional_import  # noqa: PLC0415

        tokenizers = optional_import("tokenizers", "tokenizers==0.23.3")  # lazily: Pyodide has no tokenizers
        AddedToken, Tokenizer, decoders = tokenizers.AddedToken, tokenizers.Tokenizer, tokenizers.decoders
        models, pre_tokenizers = tokenizers.models, tokenizers.pre_tokenizers

        vocab = {tok: i for i, tok in enumerate(tokens)}
        pairs = [tuple(m.split(" ", 1)) for m in merges]
        bpe = models.BPE(vocab=vocab, merges=pairs, fuse_unk=False)
        tk = Tokenizer(bpe)
        byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        if pre == "smollm":  # llama.cpp: regexes "\\p{N}" then GPT-2's; HF: Digits(individual) + ByteLevel
            tk.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        elif pre in ("gpt2", "default"):
            tk.pre_tokenizer = byte_level
        else:  # other pre-tokenisers (llama3's \p{N}{1,3}, …) would need their own regex: refuse, not guess
            raise ValueError(f"tokenizer.ggml.pre {pre!r} is not supported (only 'smollm', 'gpt2', 'default')")
        tk.decoder = decoders.ByteLevel()
        special = [
            AddedToken(tokens[i], special=True, normalized=False) for i, t in enumerate(token_types) if t == _CONTROL
        ]
        tk.add_special_tokens(special)
        self._tk = tk
        self.pieces: list[str] = list(tokens)
        self.special_ids = frozenset(i for i, t in enumerate(token_types) if t == _CONTROL)
        self.bos_id, self.eos_id, self.add_bos = bos_id, eos_id, add_bos

    @classmethod
    def from_gguf(cls, path: str | Path) -> GGUFTokenizer:
        """Read tokens, merges, token types, BOS/EOS ids and add_bos_token from the GGUF metadata."""
        from .gguf_reader import open_gguf  # noqa: PLC0415

        return cls.from_reader(open_gguf(path))

    @classmethod
    def from_reader(cls, reader: Any) -> GGUFTokenizer:
        """Like `from_gguf`, from an open `gguf.GGUFReader` (see `gguf_reader.open_gguf`)."""
        from .gguf_reader import field_value  # noqa: PLC0415

        model = field_value(reader, "tokenizer.ggml.model")
        if model != "gpt2":
            raise ValueError(f"tokenizer.ggml.model is {model!r}; only byte-level BPE ('gpt2') is supported")
        if "tokenizer.ggml.tokens" not in reader.fields:
            raise ValueError(
                "the GGUF reader has no tokenizer.ggml.tokens (load_llama drops them: build the tokenizer first)"
            )

        def as_int(key: str) -> int | None:
            v = field_value(reader, key)
            return None if v is None else int(v)

        return cls(
            field_value(reader, "tokenizer.ggml.tokens"),
            field_value(reader, "tokenizer.ggml.merges"),
            field_value(reader, "tokenizer.ggml.token_type"),
            pre=str(field_value(reader, "tokenizer.ggml.pre", "default")),
            bos_id=as_int("tokenizer.ggml.bos_token_id"),
            eos_id=as_int("tokenizer.ggml.eos_token_id"),
            add_bos=bool(field_value(reader, "tokenizer.ggml.add_bos_token", False)),
        )

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (with the BOS id first when the model's metadata asks for it)."""
        ids = self._tk.encode(text, add_special_tokens=False).ids
        return [self.bos_id, *ids] if self.add_bos and self.bos_id is not None else list(ids)

    def tokenize(self, text: str) -> list[Token]:
        """`encode` with each token's readable text and character offsets in `text`."""
        enc = self._tk.encode(text, add_special_tokens=False)
        out = [Token(i, self.token_string(i), self.pieces[i], s, e) for i, (s, e) in zip(enc.ids, enc.offsets)]
        if self.add_bos and self.bos_id is not None:
            out.insert(0, Token(self.bos_id, self.token_string(self.bos_id), self.pieces[self.bos_id], 0, 0))
        return out

    def decode(self, ids: Sequence[int], *, skip_special: bool = False) -> str:
        return self._tk.decode(list(ids), skip_special_tokens=skip_special)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 bytes a token stands for (a control token: its name)."""
        piece = self.pieces[token_id]
        if token_id in self.special_ids:
            return piece.encode("utf-8")
        return bytes(_BYTE_OF_CHAR[c] for c in piece)

    def token_string(self, token_id: int) -> str:
        """One token, readable: `ĠParis` → " Paris", `Ċ` → "\\n"; a piece of a multi-byte character → "\\xe7\\x8c"."""
        return self.token_bytes(token_id).decode("utf-8", errors="backslashreplace")

    def token_strings(self, ids: Sequence[int]) -> list[str]:
        """`token_string` of each id (for tables and attention-map labels)."""
        return [self.token_string(int(i)) for i in ids]


_cache: dict[str, GGUFTokenizer] = {}


def load_tokenizer(path: str | Path) -> GGUFTokenizer:
    """`GGUFTokenizer.from_gguf(path)`, remembered per path for this process."""
    key = str(Path(path).resolve())
    if key not in _cache:
        _cache[key] = GGUFTokenizer.from_gguf(path)
    return _cache[key]


__all__ = ["GGUFTokenizer", "Token", "load_tokenizer"]
