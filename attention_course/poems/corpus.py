"""The real corpus of module 04: the Tang poems (全唐诗) of the npm package `chinese-poetry@2.0.1` (MIT-licensed
collection of public-domain texts), a data source of the course (builder/data_sources.py).

The package is 85 MB packed (362 MB unpacked), far too big for package.json and CI's `npm ci`: the engine's pinned
download (builder/downloads.py) only *packs* the pinned version into a temporary folder and checks the tarball's
sha256; `poems_text` reads the 58 members `package/dist/quantangshi/poet.tang.<n>.json` straight out of it and writes
one small text file: one poem per line, its lines joined, in the package's order (files by number, poems in file
order). The licence is kept beside it. The tarball is not kept. Both files are sha256-checked on every use (once per
process while they are unchanged), so a changed or truncated file is an error naming the fix, never different
numbers. They are kept once per machine, in `<machine cache>/downloads/`.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

from builder.data_sources import DerivedStore, PinnedFile
from builder.downloads import DownloadError, Pinned
from builder.model import BuildOptions

PACKAGE = "chinese-poetry@2.0.1"
TARBALL = Pinned("npm", PACKAGE, "25b549e46919c3a0569db6b68ddc96956b04a484ea4518ad2bbd4f137e307e86", 85_000_000)
MEMBER_RE = re.compile(r"^package/dist/quantangshi/poet\.tang\.(\d+)\.json$")
POEMS_NAME = "chinese-poetry-2.0.1-tang.txt"
POEMS_SHA256 = "4e4e168ce9bcf20d2a51d047df9d96f72cc41ca0b3b282d73d3e6363e1633865"
LICENSE_NAME = "chinese-poetry-2.0.1-LICENSE"

CorpusError = DownloadError
"""The corpus is missing, could not be fetched, or its bytes are not the declared ones."""


def poems_from_tarball(tarball: Path) -> list[str]:
    """Every Tang poem of the package as one string (its `paragraphs` joined), in the package's order."""
    files: dict[int, list[str]] = {}
    with tarfile.open(tarball, "r:gz") as tf:
        for member in tf:
            match = MEMBER_RE.match(member.name)
            if match and member.isfile():
                poems = json.loads(tf.extractfile(member).read())  # type: ignore[union-attr]
                files[int(match.group(1))] = ["".join(p.get("paragraphs") or []) for p in poems]
    return [poem for n in sorted(files) for poem in files[n]]


def poems_text(tarball: Path, out: Path) -> None:
    """The poems file made from the package's tarball: one poem per line."""
    poems = poems_from_tarball(tarball)
    out.write_text("".join(p.replace("\n", "") + "\n" for p in poems), encoding="utf-8")


TANG_POEMS = PinnedFile(
    name="tang-poems",
    summary="the Tang poems (全唐诗) of chinese-poetry@2.0.1, one poem a line: module 04's corpus",
    pinned=TARBALL,
    member="package/dist/quantangshi",
    sha256=POEMS_SHA256,
    size=11_054_847,
    file_name=POEMS_NAME,
    transform=poems_text,
)
LICENCE = PinnedFile(
    name="tang-poems-licence",
    summary="the licence of chinese-poetry (MIT)",
    pinned=TARBALL,
    member="package/LICENSE",
    sha256="89c627fc3f9f65efdf438701cc9cc2b5fbf1abf79793c9ec15c05475bd7882cc",
    size=1076,
    file_name=LICENSE_NAME,
)

POEM_MODELS = DerivedStore(
    name="poem-models",
    summary="the bigram, MLP and Transformer models of the Tang poems, counted or evaluated on the corpus (the "
    "trained weights are committed: attention_course/poems/weights/)",
)


def ensure_tang_poems(options: BuildOptions | None = None, *, allow_download: bool = True) -> Path:
    """A verified path to the poems file (one poem per line), fetched on first use; raises CorpusError. One file per
    machine, whatever the build's `options`."""
    return TANG_POEMS.path(allow_download=allow_download)


def tang_poems(options: BuildOptions | None = None) -> list[str]:
    return ensure_tang_poems(options).read_text(encoding="utf-8").splitlines()


__all__ = [
    "LICENCE",
    "PACKAGE",
    "POEM_MODELS",
    "TANG_POEMS",
    "CorpusError",
    "ensure_tang_poems",
    "poems_text",
    "tang_poems",
]
