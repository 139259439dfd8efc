#!/usr/bin/env python3
"""Where does the time to the first Python output go?  Profiles the first code cell of the real site.

    .venv/bin/python tests/e2e/python_harness/profile_site.py [--runs 3] [--site DIR] [--schemes http,file]

Builds the site once into a temp dir (or refreshes only assets/python/ of --site), then for each scheme and
run: a fresh browser context (cold), click 运行 on the first cell right after the load event, and print
the runtime's own milestones (`Course.python.getRuntime().timings`: main-thread and worker marks on one
clock), the click → first-output time and the longest main-thread task while loading; then a new page in
the same context (warm) and 停止 after a short loop.  Not a test: numbers depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:] = [str(ROOT)] + [x for x in sys.path if Path(x or ".").resolve() != Path(__file__).parent]  # not ./bench.py

from bench.site_bench import INIT_SCRIPT, RUN_FIRST_CELL  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, serve  # noqa: E402

STOP_AFTER_SHORT_LOOP = """async (delay) => { const rt = Course.python.getRuntime();
  const p = rt.run('while True: pass', {}); p.catch(() => {});
  await new Promise((r) => setTimeout(r, delay));
  const t0 = performance.now(); await rt.stop(); const ready = performance.now() - t0;
  let out = ''; await rt.run('print(1+1)', {onStdout: (t) => { out += t; }});
  return {ready, output: performance.now() - t0, out}; }"""


EXTRA_INIT = ""


def one_visit(context, url: str) -> dict:
    page = context.new_page()
    page.add_init_script(INIT_SCRIPT + EXTRA_INIT)
    page.set_default_timeout(120_000)
    page.goto(url, wait_until="load")
    res = page.evaluate(RUN_FIRST_CELL, 0)
    page.wait_for_timeout(200)
    res["timings"] = page.evaluate("Course.python.getRuntime().timings")
    res["long_at"] = page.evaluate("(t0) => window.__bench.longTasks.filter(([s]) => s >= t0)", res["t0"])
    res["long"] = [d for _, d in res["long_at"]]
    return {"page": page, **res}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--site", type=Path, default=None, help="a built site to reuse (its assets/python/ is refreshed)")
    ap.add_argument("--schemes", default="http,file")
    ap.add_argument("--stop-delay", type=int, default=500)
    ap.add_argument("--persistent", action="store_true", help="a fresh on-disk profile per run (V8 code cache on)")
    ap.add_argument("--init", default="", help="extra JS run before page scripts (A/B switches)")
    args = ap.parse_args()
    global EXTRA_INIT
    EXTRA_INIT = args.init
    from playwright.sync_api import sync_playwright

    from builder.runtime import prepare_python_runtime

    if args.site:
        site = args.site.resolve()
        prepare_python_runtime(site / "assets" / "python", cache_dir=ROOT / ".cache", project_root=ROOT)
    else:
        from builder.model import BuildOptions
        from builder.pipeline import build_site

        site = Path(tempfile.mkdtemp(prefix="pyprofile-")) / "site"
        build_site(BuildOptions.with_defaults(out_dir=site))
        print(f"built {site}", file=sys.stderr)
    page_name = next(p.name for p in sorted(site.glob("*.html")) if 'class="code-cell"' in p.read_text("utf-8"))
    server = serve(site)
    bases = {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": site.as_uri() + "/"}
    print("uptime:", os.popen("uptime").read().strip())
    with sync_playwright() as p:
        exe = chromium_executable()
        browser = (
            p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch(args=CHROMIUM_ARGS)
        )
        for scheme in args.schemes.split(","):
            url = bases[scheme] + page_name
            cold, warm, longest, stop = [], [], [], []
            for _ in range(args.runs):
                opts = dict(viewport={"width": 1280, "height": 800}, locale="zh-CN", service_workers="block")
                if args.persistent:
                    ctx = p.chromium.launch_persistent_context(
                        tempfile.mkdtemp(prefix="pyprofile-user-"), args=CHROMIUM_ARGS, executable_path=exe, **opts
                    )
                else:
                    ctx = browser.new_context(**opts)
                a = one_visit(ctx, url)
                a["page"].close()  # like navigating on: the first page (and its standby worker) is gone
                b = one_visit(ctx, url)
                s = b["page"].evaluate(STOP_AFTER_SHORT_LOOP, args.stop_delay)
                ctx.close()
                (
                    cold.append(a["ms"]),
                    warm.append(b["ms"]),
                    longest.append(max(a["long"], default=0)),
                    stop.append(s["output"]),
                )
                for name, r in (("cold", a), ("warm", b)):
                    marks = " ".join(f"{label}={t - r['t0']:.0f}" for label, t in r["timings"])
                    marks += "  long tasks (start+ms): " + " ".join(
                        f"{s - r['t0']:.0f}+{d:.0f}" for s, d in r["long_at"]
                    )
                    print(
                        f"{scheme} {name}: first output {r['ms']:.0f} ms, longest task {max(r['long'], default=0):.0f} ms"
                        f" ({len(r['long'])} long)\n    {marks}",
                        flush=True,
                    )
                print(
                    f"{scheme} stop after {args.stop_delay} ms loop: ready {s['ready']:.0f} ms, print(1+1) {s['output']:.0f} ms"
                )
            med = statistics.median
            print(
                f"== {scheme}: cold {med(cold):.0f} warm {med(warm):.0f} longest task {max(longest):.0f} "
                f"stop→print {med(stop):.0f} ms   ({time.strftime('%H:%M:%S')}, {os.popen('uptime').read().strip()})\n"
            )
        browser.close()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
