#!/usr/bin/env python3
r"""Click → first output of a page's first code cell, in Firefox and WebKit (WebDriver), over http and file://.

Each round starts a fresh browser (cold: nothing cached), runs the cell, then loads the page again in the same
browser and runs it again (warm), then times 停止 on a runaway loop until `print(6*7)` answers (`--stops N`: N
times in a row on that page). Medians per engine
and transport, with the load average of each round (the machine is shared: quote it).

    .venv/bin/python bench/engines_bench.py --runs 3 [--site site] [--engines firefox webkit] \
        [--page module-05-attention.html] [--stops 4]

WebKit needs a display: run it under `xvfb-run -a` (tests/engines/conftest.py starts its own Xvfb instead).
Chromium is measured by bench/site_bench.py (Playwright), the same way.
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

from tests.e2e.conftest import serve  # noqa: E402
from tests.engines.conftest import _firefox, _webkit  # noqa: E402
from tests.engines.test_every_engine import (  # noqa: E402
    RUN_FIRST_CELL,
    START_RUNAWAY,
    STOP_RUNAWAY_AND_RECOVER,
    open_page,
)


def measure(engine: str, url: str, stops: int = 1) -> dict:
    driver = _firefox() if engine == "firefox" else _webkit(os.environ.get("DISPLAY", ":0"))
    driver.engine = engine
    driver.set_script_timeout(180)
    try:
        out = {}
        for visit in ("cold", "warm"):
            open_page(driver, url)
            result = driver.execute_async_script(RUN_FIRST_CELL, 0)
            if "error" in result:
                raise RuntimeError(f"{engine} {url}: {result}")
            out[visit] = result["ms"]
        # 停止 → the next output, `stops` times in a row on the same page (each Stop starts a new worker where
        # there is no interrupt buffer: a stopped worker that went on running would make each one slower)
        out["stops"] = []
        for _ in range(stops):
            driver.execute_async_script(START_RUNAWAY)
            out["stops"].append(driver.execute_async_script(STOP_RUNAWAY_AND_RECOVER)["ms"])
        out["stop_to_output"] = out["stops"][0]
        return out
    finally:
        driver.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--engines", nargs="+", default=["firefox", "webkit"])
    ap.add_argument("--page", default="module-05-attention.html")
    ap.add_argument("--stops", type=int, default=1, help="Stops in a row on one page (the first is the table's)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "engines.json")
    args = ap.parse_args()
    server = serve(args.site)
    bases = {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": args.site.resolve().as_uri() + "/"}
    samples: dict = {}
    loads = []
    for r in range(args.runs):
        loads.append(os.getloadavg()[0])
        for engine in args.engines:
            for transport, base in bases.items():
                m = measure(engine, base + args.page, args.stops)
                s = samples.setdefault(
                    f"{engine} {transport}", {"cold": [], "warm": [], "stop_to_output": [], "stops": []}
                )
                for k in s:
                    s[k].append(m[k])
        print(f"round {r + 1}: load {loads[-1]:.1f}", file=sys.stderr)
    server.shutdown()
    loads.append(os.getloadavg()[0])
    med = statistics.median
    print(f"load avg per round: {' → '.join(f'{x:.1f}' for x in loads)}")
    print("| engine, transport | click → first output, cold | warm | 停止 → next output |")
    print("| --- | ---: | ---: | ---: |")
    for key, s in samples.items():
        print(
            f"| {key} | {med(s['cold']) / 1000:.2f} s | {med(s['warm']) / 1000:.2f} s | "
            f"{med(s['stop_to_output']) / 1000:.2f} s |"
        )
    if args.stops > 1:
        print(f"\n停止 → next output, {args.stops} in a row on one page (s, each round):")
        for key, s in samples.items():
            print(f"{key}: " + "; ".join(", ".join(f"{ms / 1000:.1f}" for ms in row) for row in s["stops"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"loads": loads, "samples": samples}, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
