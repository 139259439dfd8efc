"""Benchmark the Python runtime: bytes, cold/warm time from load() to the first numpy result, stop() recovery.

    .venv/bin/python tests/e2e/python_harness/bench.py [--runs 3]

Cold = a fresh browser context (empty HTTP cache); warm = a reload in the same context.
Not a test (numbers depend on the machine); the e2e tests assert the behaviour.
"""

from __future__ import annotations

import argparse
import functools
import json
import socketserver
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from builder.runtime import prepare_python_runtime  # noqa: E402
from tests.e2e.test_python_runtime import CHROMIUM_ARGS, FIRST_RESULT, HARNESS, _chromium, _Handler  # noqa: E402

STOP = """async () => { const rt = Course.python.getRuntime();
  const p = rt.run("while True: pass"); p.catch(() => {});
  await new Promise((r) => setTimeout(r, DELAY));
  const t0 = performance.now(); await rt.stop(); const tStop = performance.now() - t0;
  await rt.run("print(1+1)"); return [tStop, performance.now() - t0]; }"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        info = prepare_python_runtime(root / "assets" / "python", cache_dir=ROOT / ".cache", project_root=ROOT)
        (root / "index.html").write_text(HARNESS, "utf-8")
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=tmp))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        bases = {"http": f"http://127.0.0.1:{server.server_address[1]}/", "file": root.as_uri() + "/"}
        rt_js = (root / "assets" / "python" / "python-runtime.js").stat().st_size
        out: dict = {"bytes_first_load": {"http": info.http_bytes + rt_js, "file": info.file_bytes + rt_js}}
        with sync_playwright() as p:
            exe = _chromium()
            browser = (
                p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
                if exe
                else p.chromium.launch(args=CHROMIUM_ARGS)
            )
            for transport, base in bases.items():
                cold, warm, stop_short, stop_long = [], [], [], []
                for _ in range(args.runs):
                    ctx = browser.new_context(service_workers="block")
                    page = ctx.new_page()
                    page.set_default_timeout(120_000)
                    page.goto(base + "index.html")
                    cold.append(page.evaluate(FIRST_RESULT)["tFirst"])
                    page.reload()
                    warm.append(page.evaluate(FIRST_RESULT)["tFirst"])
                    stop_short.append(page.evaluate(STOP.replace("DELAY", "300"))[1])
                    stop_long.append(page.evaluate(STOP.replace("DELAY", "6000"))[1])
                    ctx.close()
                    print(
                        transport,
                        "cold",
                        round(cold[-1]),
                        "warm",
                        round(warm[-1]),
                        "stop",
                        round(stop_short[-1]),
                        round(stop_long[-1]),
                        file=sys.stderr,
                        flush=True,
                    )
                med = lambda xs: round(statistics.median(xs))  # noqa: E731
                out[transport] = {
                    "cold_ms": med(cold),
                    "warm_ms": med(warm),
                    "stop_after_0.3s_loop_to_print_ms": med(stop_short),
                    "stop_after_6s_loop_to_print_ms": med(stop_long),
                    "raw": {
                        "cold": [round(x) for x in cold],
                        "warm": [round(x) for x in warm],
                        "stop_short": [round(x) for x in stop_short],
                        "stop_long": [round(x) for x in stop_long],
                    },
                }
            browser.close()
        server.shutdown()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
