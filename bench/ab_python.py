#!/usr/bin/env python3
"""Interleaved A/B of the Python timings of two built sites (e.g. before / after a runtime change): each round
measures every site once (bench/site_bench.py's `measure_python`, and with --phone its phone profile), so a
noisy shared machine slows both alike.  Medians per site; the load average is printed with each round.

    .venv/bin/python bench/ab_python.py --runs 3 [--phone] before=/tmp/a/site after=/tmp/b/site
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from site_bench import measure_python, measure_python_phone, python_context  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, serve  # noqa: E402

PAGE = "module-05-attention.html"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sites", nargs="+", help="label=DIR")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--phone", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ab_python.json")
    args = ap.parse_args()
    sites = dict(s.split("=", 1) for s in args.sites)
    servers = {label: serve(Path(d)) for label, d in sites.items()}
    bases = {
        label: {
            "http": f"http://127.0.0.1:{srv.server_address[1]}/",
            "file": Path(sites[label]).resolve().as_uri() + "/",
        }
        for label, srv in servers.items()
    }
    samples: dict = {label: {} for label in sites}
    loads = []
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        exe = chromium_executable()
        browser = (
            p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch(args=CHROMIUM_ARGS)
        )
        for r in range(args.runs):
            loads.append(os.getloadavg()[0])
            for label in sites:
                for scheme, base in bases[label].items():
                    m = measure_python(lambda: python_context(p, browser, "disk"), base + PAGE, 1, Path(sites[label]))
                    s = samples[label].setdefault(
                        scheme, {"cold": [], "warm": [], "long_task": [], "stop_to_output": []}
                    )
                    s["cold"].append(m["cold_ms"])
                    s["warm"].append(m["warm_ms"])
                    s["long_task"].append(m["long_task_max_ms"])
                    s["stop_to_output"].append(m["stop_to_output_ms"])
                    if args.phone:
                        ph = measure_python_phone(p, base + PAGE, 1)
                        s.setdefault("phone_cold", []).append(ph["cold_ms"])
                        s.setdefault("phone_warm", []).append(ph["warm_ms"])
            print(f"round {r + 1}: load {loads[-1]:.1f}", file=sys.stderr)
        browser.close()
    for srv in servers.values():
        srv.shutdown()
    loads.append(os.getloadavg()[0])
    med = statistics.median
    cols = ["cold", "warm", "long_task", "stop_to_output"] + (["phone_cold", "phone_warm"] if args.phone else [])
    print(f"load avg per round: {' → '.join(f'{x:.1f}' for x in loads)}")
    print("| site | via | " + " | ".join(cols) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in cols) + " |")
    for label, by in samples.items():
        for scheme, s in by.items():
            print(
                f"| {label} | {scheme} | "
                + " | ".join(
                    f"{med(s[c]):.0f} ms" if c in ("long_task",) else f"{med(s[c]) / 1000:.2f} s" for c in cols
                )
                + " |"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"loads": loads, "samples": samples}, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
