#!/usr/bin/env python3
"""What the runtime's one transport costs the browser (builder/runtime/browser/transport.js on a built site's wrapper
scripts, builder/runtime/wrappers.py): per asset, reading the payload out of the fetched wrapper bytes (http),
decoding the base-85 literals of the loaded scripts (file://, `<script src>`), hashing
the payload, and inflating its Zstandard frame (npm zstddec, builder/runtime/browser/zstd.js).  Medians of --runs,
unthrottled and with the CPU 4× slower (CDP Emulation.setCPUThrottlingRate), on the page's main thread.

    .venv/bin/python bench/transport_bench.py [--site site] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, serve  # noqa: E402

MEASURE = """async ([mode, index]) => {
  const t = await import("/builder/runtime/browser/transport.js");
  const out = {};
  for (const a of index.assets) {
    const payload = new Uint8Array(a.size);
    const t0 = performance.now();
    let decodeMs = 0;
    if (mode === "http") {
      await Promise.all(a.wrappers.map(async (file, i) => {
        const script = new Uint8Array(await (await fetch("/site/assets/python/" + file)).arrayBuffer());
        const s = performance.now();
        t.wrapperBytesInto(payload, i * index.chunkBytes, script);
        decodeMs += performance.now() - s;
      }));
    } else {
      window.Course ||= {};
      window.Course.python ||= {};
      const store = (window.Course.python.assets ||= {});
      for (const [i, file] of a.wrappers.entries()) {
        await new Promise((res, rej) => { const s = document.createElement("script");
          s.src = "/site/assets/python/" + file; s.onload = res; s.onerror = rej; document.head.appendChild(s); });
        const s = performance.now();
        t.literalInto(payload, i * index.chunkBytes, store[`${a.name}/${i}`]);
        decodeMs += performance.now() - s;
        delete store[`${a.name}/${i}`];
      }
    }
    const t1 = performance.now();
    const h0 = performance.now();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", payload));
    const hashMs = performance.now() - h0;
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    if (hex !== a.sha256) throw new Error(a.name + ": sha256 mismatch");
    const g0 = performance.now();
    const bytes = await t.decodePayload(a, payload);
    const inflateMs = a.encoding ? performance.now() - g0 : 0;
    out[a.name] = { payloadMB: a.size / 1e6, bytesMB: bytes.length / 1e6, decodeMs, hashMs, inflateMs,
                    loadMs: t1 - t0 };
  }
  return out;
}"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    site = args.site.resolve()
    text = (site / "assets" / "python" / "runtime-index.js").read_text("utf-8")
    index = json.loads(text[text.index(".index=") + len(".index=") :].rstrip().rstrip(";"))
    # one origin serving the runtime's modules and the built site side by side
    root = Path(__import__("tempfile").mkdtemp(prefix="transport-bench-"))
    (root / "builder").symlink_to(ROOT / "builder")
    (root / "site").symlink_to(site)
    (root / "node_modules").symlink_to(ROOT / "node_modules")
    # the runtime's modules import the decoder by its npm name (esbuild resolves it when it bundles them)
    imports = {"imports": {"zstddec": "/node_modules/zstddec/dist/zstddec.mjs"}}
    (root / "index.html").write_text(
        "<!doctype html><meta charset=utf-8><title>transport</title>"
        f"<script type=importmap>{json.dumps(imports)}</script><p>x",
        "utf-8",
    )
    server = serve(root)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    from playwright.sync_api import sync_playwright

    results: dict = {}
    with sync_playwright() as p:
        exe = chromium_executable()
        browser = (
            p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch(args=CHROMIUM_ARGS)
        )
        for rate in (1, 4):
            for mode in ("http", "file"):
                samples = []
                for _ in range(args.runs):
                    context = browser.new_context()
                    page = context.new_page()
                    if rate != 1:
                        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
                    page.goto(base + "index.html")
                    samples.append(page.evaluate(MEASURE, [mode, index]))
                    context.close()
                results[f"{mode} cpu×{rate}"] = {
                    name: {k: statistics.median(s[name][k] for s in samples) for k in samples[0][name]}
                    for name in samples[0]
                }
        browser.close()
    server.shutdown()
    print("| run | asset | payload MB | → MB | decode ms | sha256 ms | inflate ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for run, per in results.items():
        tot = {k: sum(v[k] for v in per.values()) for k in ("payloadMB", "bytesMB", "decodeMs", "hashMs", "inflateMs")}
        for name, v in list(per.items()) + [("all", tot)]:
            print(
                f"| {run} | {name} | {v['payloadMB']:.2f} | {v['bytesMB']:.2f} | {v['decodeMs']:.0f} | "
                f"{v['hashMs']:.0f} | {v['inflateMs']:.0f} |"
            )
    out = ROOT / "bench" / "out" / "transport_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
