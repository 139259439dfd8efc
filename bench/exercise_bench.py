#!/usr/bin/env python3
"""Exercise check latency in Chromium: click on 检查 → the verdict shown (the exercise's `data-verdict` set), over
http and file://. The first check of a page also boots Python (cold); the next `--runs` checks are warm, alternating a
wrong attempt (the starter) and a right one (the reference solution put into the editor). Prints the medians with
the load average before and after (the machine is shared: quote it).

    .venv/bin/python bench/exercise_bench.py [--site site] [--page module-05-attention.html]
        [--exercise scaled-dot-product] [--runs 10]

Without --site it builds examples/minimal (its `softmax-list` exercise) into a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CALM_OPTIONS, chromium_executable, options_script, serve  # noqa: E402

CLICK_TO_VERDICT = """async ([sel, code]) => {
  const root = document.querySelector(sel);
  const view = root.querySelector('.code-cell');
  const cell = window.Course.cells && window.Course.cells.cells.find((c) => c.section === view);
  if (cell && code !== null) cell.setCode(code);
  delete root.dataset.verdict;
  const done = new Promise((resolve) => {
    const mo = new MutationObserver(() => { if (root.dataset.verdict) { mo.disconnect(); resolve(); } });
    mo.observe(root, { attributes: true, attributeFilter: ['data-verdict'] });
  });
  const t0 = performance.now();
  root.querySelector('.exercise-check').click();
  await done;
  return { ms: performance.now() - t0, verdict: root.dataset.verdict };
}"""


def measure(browser, base: str, page_name: str, exercise: str, runs: int) -> dict:
    context = browser.new_context(bypass_csp=True)
    context.add_init_script(options_script(CALM_OPTIONS))
    page = context.new_page()
    page.goto(base + page_name)
    page.evaluate("localStorage.clear()")
    page.reload()
    sel = f"#exercise-{exercise}"
    page.locator(sel).scroll_into_view_if_needed()
    cold = page.evaluate(CLICK_TO_VERDICT, [sel, None])
    solution = page.evaluate(
        "sel => window.Course.cells.exercises.find((e) => e.root.matches(sel)).loadExtras()"
        ".then((x) => x.solution.replace(/\\n$/, ''))",
        sel,
    )
    starter = page.evaluate(
        "sel => window.Course.cells.cells.find((c) => c.exercise && c.exercise.root.matches(sel)).original", sel
    )
    warm = {"fail": [], "pass": []}
    for i in range(runs):
        r = page.evaluate(CLICK_TO_VERDICT, [sel, solution if i % 2 else starter])
        warm.setdefault(r["verdict"], []).append(r["ms"])
    context.close()
    med = {k: round(statistics.median(v)) for k, v in warm.items() if v}
    return {
        "cold_ms": round(cold["ms"]),
        "cold_verdict": cold["verdict"],
        "warm_median_ms": med,
        "warm_all_ms": {k: [round(x) for x in v] for k, v in warm.items() if v},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path)
    parser.add_argument("--page", default="softmax.html")
    parser.add_argument("--exercise", default="softmax-list")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = None
    site = args.site
    if site is None:
        from tests.conftest import MINIMAL, build

        tmp = tempfile.TemporaryDirectory(prefix="exercise-bench-")
        site = Path(tmp.name) / "site"
        build(MINIMAL, site, python_runtime=True)
    load_before = os.getloadavg()
    server = serve(site.resolve())
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_executable())
        try:
            for transport, base in (
                ("http", f"http://127.0.0.1:{server.server_address[1]}/"),
                ("file", site.resolve().as_uri() + "/"),
            ):
                results[transport] = measure(browser, base, args.page, args.exercise, args.runs)
        finally:
            browser.close()
    server.shutdown()
    results["loadavg_before"] = [round(x, 2) for x in load_before]
    results["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    results["cpus"] = os.cpu_count()
    print(json.dumps(results, indent=1, ensure_ascii=False))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
