#!/usr/bin/env python3
"""The offline weight of a built site: bytes of site/, of site/assets/python/ and of the offline package
(`zip_site`, what `make zip` writes) — and, with --wheels, what the same transport would add for more wheels
(e.g. matplotlib's, lazily loaded): each wheel made into a pack (builder/runtime/wheels.py, `wheel_pack`) and
into wrapper scripts (builder/runtime/wrappers.py), added to a copy of the site and zipped again.

    .venv/bin/python bench/weight_bench.py [--site site] [--wheels DIR/*.whl]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from builder.runtime.wheels import pack_name, wheel_pack  # noqa: E402
from builder.runtime.wrappers import encode_payload, wrapper_chunks, wrapper_name  # noqa: E402
from builder.zipsite import zip_site  # noqa: E402


def tree(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def weight(site: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="weight-zip-") as tmp:
        zip_bytes = zip_site(site, Path(tmp) / "attention-course.zip").stat().st_size
    py = site / "assets" / "python"
    return {"site_bytes": tree(site), "python_bytes": tree(py) if py.is_dir() else 0, "zip_bytes": zip_bytes}


def with_wheels(site: Path, wheels: list[Path]) -> dict:
    with tempfile.TemporaryDirectory(prefix="weight-wheels-") as tmp:
        copy = Path(tmp) / "site"
        shutil.copytree(site, copy)
        py = copy / "assets" / "python"
        added = 0
        for whl in wheels:
            payload, _ = encode_payload(wheel_pack(whl.read_bytes()))
            name = pack_name(whl.name)
            for i, chunk in enumerate(wrapper_chunks(name, payload)):
                (py / wrapper_name(name, i)).write_bytes(chunk)
                added += len(chunk)
        return {
            **weight(copy),
            "wheels": [w.name for w in wheels],
            "added_bytes": added,
            "wheel_bytes": sum(w.stat().st_size for w in wheels),
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--wheels", type=Path, nargs="*", default=[])
    args = ap.parse_args()
    report = {"site": weight(args.site)}
    if args.wheels:
        report["with_wheels"] = with_wheels(args.site, args.wheels)
    mb = lambda n: f"{n / 1e6:.1f}"  # noqa: E731
    print("| | site/ MB | assets/python/ MB | zip MB |\n| --- | ---: | ---: | ---: |")
    for label, w in report.items():
        print(f"| {label} | {mb(w['site_bytes'])} | {mb(w['python_bytes'])} | {mb(w['zip_bytes'])} |")
    print(json.dumps(report, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
