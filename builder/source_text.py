"""Reading the author's files the one way: UTF-8 with the line of the first byte that is not, nothing from outside
the content folder, and no control characters (which HTML forbids and no editor shows).

Every reader of content/ (pages, site.yml, glossary.yml, figures, images) goes through here, so a file in another
encoding is `path:line: not valid UTF-8 …` wherever it is, and a symbolic link out of content/ is refused the same
way for a page as for a figure.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

# C0 controls but tab, line feed, form feed and carriage return; DEL; the C1 controls.
CONTROL = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), *range(0x7F, 0xA0)])
CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0B: "VT", 0x1B: "ESC", 0x7F: "DEL"}


class SourceTextError(Exception):
    """A file that cannot be read as text: `line` is 1-based, or None when the whole file is concerned."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


def decode(data: bytes) -> str:
    """`data` as UTF-8; raises SourceTextError at the line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.start + 2].hex(" ")
        raise SourceTextError(
            f"not valid UTF-8: byte {bad.split()[0]} at column {column} ({exc.reason}); the file seems to be in "
            f"another encoding (GBK, Latin-1, …): save it as UTF-8",
            line,
        ) from None


def read_text(path: Path) -> str:
    """The file's text (UTF-8); raises SourceTextError (an OSError's reason, or the undecodable byte's line)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceTextError(f"cannot read the file: {exc.strerror or exc}") from None
    return decode(data)


def control_name(char: str) -> str:
    code = ord(char)
    name = CONTROL_NAMES.get(code) or unicodedata.name(char, "") or "control character"
    return f"U+{code:04X} ({name})"


def control_characters(text: str) -> list[tuple[int, int, str]]:
    """[(1-based line, 1-based column, character)] of every control character HTML forbids."""
    found = []
    for n, line in enumerate(text.split("\n"), start=1):
        for col, char in enumerate(line, start=1):
            if ord(char) in CONTROL and char != "\r":
                found.append((n, col, char))
    return found


def visible_controls(text: str) -> tuple[str, list[str]]:
    """`text` with each control character HTML forbids replaced by its visible picture (NUL → ␀, ESC → ␛, others
    → �); also the names of what was replaced, in order of first appearance."""
    if not any(ord(c) in CONTROL for c in text):
        return text, []
    out: list[str] = []
    names: dict[str, None] = {}
    for char in text:
        code = ord(char)
        if code in CONTROL and char != "\r":
            names[control_name(char)] = None
            out.append(chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd")
        else:
            out.append(char)
    return "".join(out), list(names)


def outside_folder(path: Path, folder: Path) -> Path | None:
    """Where `path` really is (symbolic links followed) when that is outside `folder`, else None."""
    real = path.resolve()
    return None if real.is_relative_to(folder.resolve()) else real


__all__ = [
    "SourceTextError",
    "control_characters",
    "control_name",
    "decode",
    "outside_folder",
    "read_text",
    "visible_controls",
]
