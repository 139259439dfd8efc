"""The poems every model of the course learns from: the Tang poems of `chinese-poetry@2.0.1` (corpus.py, traditional
characters as the package has them), filtered, converted to simplified characters with OpenCC, de-duplicated and
split by content into training and held-out poems.

1. **Filter** (on the package's traditional text): only poems made of CJK ideographs and the two marks "，" "。",
   at least 10 characters (drops notes, gaps and variant marks) — as module 04 always did.
2. **Simplify**: OpenCC's `t2s` (traditional → simplified) of the PyPI package `opencc` (`CONVERTER_VERSION`). The
   models learn the text the zh-CN reader sees. The converted text is checked against `SIMPLIFIED_SHA256`, so a
   different OpenCC that converts differently is an error naming the fix, never silently different numbers.
   A few rare traditional characters become simplified forms outside the BMP (e.g. 鑪 → 𬬻); they are rare enough
   to be outside the vocabulary (the unknown token) for every model.
3. **De-duplicate**: poems whose normalised text (simplified, without "，" "。") is the same are one poem; the first
   in the package's order is kept (the package holds some poems twice, e.g. 《登鹳雀楼》).
4. **Split by content**: a poem is held out when the first 8 bytes of sha256(its normalised text), read as a
   big-endian integer, are ≡ 0 (mod `HELD_OUT_MOD`), or when it contains one of `HELD_OUT_LINES` (the module's
   worked example, so that "a poem the model has never seen" is true). Identical poems cannot land on both sides.

No I/O here except through corpus.py; the result is memoised per corpus file in the process.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from attention_core import ngram
from builder.model import BuildOptions
from builder.runtime.verify import sha256_bytes

from .corpus import LICENSE_NAME, PACKAGE, POEMS_SHA256, CorpusError, ensure_tang_poems

POEM_RE = re.compile(r"^[\u4e00-\u9fff，。]{10,}$")  # CJK ideographs and the two marks: drops notes, gaps, variants
MARKS_RE = re.compile(r"[，。]")
CONVERTER = "opencc"  # the PyPI package: the official Python binding of OpenCC (BYVoid/OpenCC, Apache-2.0)
CONVERTER_VERSION = "1.4.2"
CONVERTER_CONFIG = "t2s"  # traditional → simplified, characters and phrases (OpenCC's own dictionaries)
VOCAB_SIZE = 2000  # the most frequent characters of the training poems; the rest are the unknown token
HELD_OUT_MOD = 10  # ≈ 1 poem in 10 is held out
HELD_OUT_LINES = ("白日依山尽",)  # module 04's worked example (王之涣《登鹳雀楼》) is always held out
# sha256 of the filtered, simplified poems (one per line, package order, before de-duplication)
SIMPLIFIED_SHA256 = "85e29ed47b1d52a0ad71376e6b0a05be7559df4902b858b5f5f9ddb414cb1eea"
SOURCE = {
    "package": PACKAGE,
    "collection": "全唐诗 (dist/quantangshi)",
    "script": "traditional (繁体), as published",
    "licence": "MIT (the collection); the poems themselves are public domain",
    "licence_file": LICENSE_NAME,
    "sha256": POEMS_SHA256,
}


def normalise(poem: str) -> str:
    """The text that decides identity and side: the poem without its marks."""
    return MARKS_RE.sub("", poem)


def is_held_out(poem: str) -> bool:
    """The split's rule for one (simplified) poem: by the hash of its normalised text, or by a named line."""
    key = normalise(poem)
    if any(line in key for line in HELD_OUT_LINES):
        return True
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % HELD_OUT_MOD == 0


def converter_version() -> str:
    try:
        return metadata.version(CONVERTER)
    except metadata.PackageNotFoundError:
        return ""


def simplify(texts: list[str]) -> list[str]:
    """The texts in simplified characters (OpenCC t2s), one call for all of them (the converter keeps lines)."""
    try:
        import opencc
    except ImportError:
        raise CorpusError(
            f"the Python package {CONVERTER}=={CONVERTER_VERSION} is not installed: it converts the Tang poems to "
            f"simplified characters; fix: pip install {CONVERTER}=={CONVERTER_VERSION}"
        ) from None
    out = opencc.OpenCC(CONVERTER_CONFIG).convert("\n".join(texts)).split("\n")
    if len(out) != len(texts):
        raise CorpusError(f"{CONVERTER} {converter_version()}: the conversion changed the number of poems")
    return out


@dataclass(frozen=True)
class Split:
    train: list[str]  # simplified, package order
    held: list[str]
    n_total: int  # poems in the package
    n_clean: int  # passing POEM_RE
    n_duplicates: int  # clean poems dropped as repeats of an earlier one
    simplified_sha256: str
    converter: str  # "opencc 1.4.2 (t2s)"

    @property
    def n_unique(self) -> int:
        return len(self.train) + len(self.held)


def split_poems(poems: list[str], *, expected_sha256: str | None = SIMPLIFIED_SHA256) -> Split:
    """Filter, simplify, de-duplicate and split `poems` (the package's traditional text). With `expected_sha256`,
    the simplified text must be exactly the checked one (None: tests on small made-up poems)."""
    clean = [p for p in poems if POEM_RE.match(p)]
    simplified = simplify(clean)
    digest = sha256_bytes("".join(p + "\n" for p in simplified).encode("utf-8"))
    version = converter_version()
    if expected_sha256 is not None and digest != expected_sha256:
        raise CorpusError(
            f"the Tang poems converted by {CONVERTER} {version or '(not installed)'} ({CONVERTER_CONFIG}) are not "
            f"the checked text\n  expected sha256 {expected_sha256}\n  actual          {digest}\n  fix: pip install "
            f"{CONVERTER}=={CONVERTER_VERSION} (the version the course's numbers were made with)"
        )
    seen: set[str] = set()
    train: list[str] = []
    held: list[str] = []
    for poem in simplified:
        key = normalise(poem)
        if key in seen:
            continue
        seen.add(key)
        (held if is_held_out(poem) else train).append(poem)
    return Split(
        train=train,
        held=held,
        n_total=len(poems),
        n_clean=len(clean),
        n_duplicates=len(clean) - len(seen),
        simplified_sha256=digest,
        converter=f"{CONVERTER} {version} ({CONVERTER_CONFIG})",
    )


def vocabulary(split: Split) -> list[str]:
    """Every model's vocabulary: the boundary ◆, the unknown □, then the `VOCAB_SIZE` most frequent characters of
    the training poems (attention_core.ngram.build_vocab)."""
    return ngram.build_vocab(split.train, VOCAB_SIZE)


@functools.lru_cache(maxsize=2)
def _split_of_file(path: Path, mtime_ns: int) -> Split:
    return split_poems(path.read_text(encoding="utf-8").splitlines())


def load_split(options: BuildOptions) -> Split:
    """The course's split of the real corpus (fetched on first use, see corpus.py); raises CorpusError."""
    path = ensure_tang_poems(options)
    return _split_of_file(path, path.stat().st_mtime_ns)


__all__ = [
    "CONVERTER",
    "CONVERTER_CONFIG",
    "CONVERTER_VERSION",
    "HELD_OUT_LINES",
    "POEM_RE",
    "SIMPLIFIED_SHA256",
    "SOURCE",
    "Split",
    "VOCAB_SIZE",
    "converter_version",
    "is_held_out",
    "load_split",
    "normalise",
    "simplify",
    "split_poems",
    "vocabulary",
]
