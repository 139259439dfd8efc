#!/usr/bin/env python3
"""Benchmark of 你来写一句 (module 07's poem-writer widget) in Debian's Chromium (Playwright). Run by hand, never part
of `make test`.

For each profile — desktop (1280×800) and phone (390×844, CPU slowed 4× with CDP Emulation.setCPUThrottlingRate,
as bench/site_bench.py's phone profile) — and each of --runs fresh browser contexts (a cold page: empty cache):

* the page's first view: every byte loaded until the load event and 1 s of quiet, with the widget far below
  (raw and gzip, per kind; the widget's script and weights must not be among them);
* first keystroke: the widget is scrolled into view (its script loads, it mounts and starts fetching its weights),
  and the instant its input exists one character is typed (by the page, in the same task: the worst moment) — the
  time from that input event to the moment the widget shows the result for it (`data-result-for`, set after the
  bars and the grid are drawn), and to the next frame;
* then --keys more characters, one at a time, each timed the same way (the median and the worst);
* the bytes the widget loaded lazily: its script and its data script (the weights and the t2s map).

Budgets (issue 31): first result ≤ 2 s desktop / ≤ 3 s phone; then ≤ 150 ms / ≤ 300 ms per keystroke. Prints a table
with the load average and writes bench/out/poem_writer_bench.json.

    .venv/bin/python bench/poem_writer_bench.py [--runs 5] [--keys 12] [--site DIR] [--file]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.site_bench import Traffic, first_view, kb  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS, chromium_executable, serve  # noqa: E402

PAGE = "module-07-train-transformer.html"
WIDGET = ".widget-poem-writer"
TEXT = "春眠不觉晓，处处闻啼鸟。夜来风雨声，"  # the first character cold, the rest one keystroke each
PROFILES = {
    "desktop": {"viewport": {"width": 1280, "height": 800}, "cpu_slowdown": 1, "first_s": 2.0, "key_ms": 150},
    "phone": {"viewport": {"width": 390, "height": 844}, "cpu_slowdown": 4, "first_s": 3.0, "key_ms": 300},
}

# Installed before the page's scripts: the time of every input event on the poem writer's box (capture phase, so
# before the widget's own handler), and of each `data-result-for` the widget sets, and of the frame after it.
INIT_SCRIPT = """
window.__pw = {inputs: [], results: []};
document.addEventListener('input', (e) => {
  if (!e.target.matches || !e.target.matches('.pw-input')) return;
  window.__pw.inputs.push({t: performance.now(), v: e.target.value});
}, true);
new MutationObserver((list) => {
  for (const m of list) {
    if (m.attributeName !== 'data-result-for') continue;
    const v = m.target.dataset.resultFor, t = performance.now();
    const entry = {t, v, frame: null};
    window.__pw.results.push(entry);
    requestAnimationFrame(() => { entry.frame = performance.now(); });
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-result-for']});
"""


def timing(page, typed: str) -> dict:
    """ms from the input event of `typed` to the widget's result for it, and to the frame after that."""
    return page.evaluate(
        """v => { const i = window.__pw.inputs.filter((x) => x.v === v).pop();
                  const r = window.__pw.results.filter((x) => x.v === v).pop();
                  return {result: r.t - i.t, frame: r.frame - i.t}; }""",
        typed,
    )


def measure(browser, url: str, site: Path, profile: dict, keys: int) -> dict:
    context = browser.new_context(viewport=profile["viewport"], locale="zh-CN", service_workers="block")
    page = context.new_page()
    if profile["cpu_slowdown"] > 1:
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": profile["cpu_slowdown"]})
    page.add_init_script(INIT_SCRIPT)
    traffic = Traffic(page, site)
    page.goto(url, wait_until="load")
    traffic.settle(1000)
    first = traffic.summary()
    lazy_early = [u for u, _ in traffic.items if "widget-poem-writer.js" in u or "/widgets/poem-writer-" in u]
    mark = traffic.mark()

    # The first keystroke comes at the worst moment: the instant the widget's input exists (it has just mounted and
    # its weights are still on the way), typed by the page itself in the same task (an input event, as an input
    # method sends one). Then the timing runs to the result drawn for it.
    page.evaluate(
        """([sel, ch]) => {
          const widget = document.querySelector(sel);
          const type = (box) => { box.value = ch; box.dispatchEvent(new Event('input', {bubbles: true})); };
          const seen = new MutationObserver(() => {
            const box = widget.querySelector('.widget-body input.pw-input');
            if (box) { seen.disconnect(); type(box); }
          });
          seen.observe(widget, {subtree: true, childList: true});
          widget.scrollIntoView({block: 'start'});
        }""",
        [WIDGET, TEXT[0]],
    )
    typed = TEXT[0]
    page.wait_for_function(
        "v => window.__pw.results.some((r) => r.v === v && r.frame !== null)", arg=typed, timeout=60_000
    )
    timings = [timing(page, typed)]
    box = page.locator(f"{WIDGET} .widget-body input.pw-input")
    box.focus()
    page.keyboard.press("End")
    for ch in TEXT[1 : keys + 1]:
        typed += ch
        page.keyboard.insert_text(ch)  # what an input method does: one input event with the character
        page.wait_for_function(
            "v => window.__pw.results.some((r) => r.v === v && r.frame !== null)", arg=typed, timeout=60_000
        )
        timings.append(timing(page, typed))
    traffic.settle(300)
    lazy = traffic.summary(mark)
    lazy_files = {
        u.rsplit("/", 1)[-1].split("?")[0]: len(traffic._body(u)) for u, _ in traffic.items[mark:] if "poem-writer" in u
    }
    load_ms = page.evaluate(f"Number(document.querySelector('{WIDGET}').dataset.loadMs)")
    context.close()
    return {
        "first_view": first,
        "lazy_in_first_view": lazy_early,
        "lazy": lazy,
        "lazy_files": lazy_files,
        "weights_load_ms": load_ms,
        "first": timings[0],
        "keys": timings[1:],
    }


def summarise(runs: list[dict], profile: dict) -> dict:
    first = [r["first"]["frame"] for r in runs]
    keys = [k["frame"] for r in runs for k in r["keys"]]
    raw, gz = first_view(runs[0]["first_view"])
    lazy_raw, lazy_gz = first_view(runs[0]["lazy"])
    return {
        "first_result_ms_median": round(statistics.median(first)),
        "first_result_ms_max": round(max(first)),
        "keystroke_ms_median": round(statistics.median(keys), 1),
        "keystroke_ms_p90": round(sorted(keys)[int(0.9 * (len(keys) - 1))], 1),
        "keystroke_ms_max": round(max(keys), 1),
        "weights_load_ms_median": round(statistics.median(r["weights_load_ms"] for r in runs)),
        "first_view_bytes": {"raw": raw, "gzip": gz},
        "lazy_bytes": {"raw": lazy_raw, "gzip": lazy_gz},
        "lazy_files": runs[0]["lazy_files"],
        "widget_in_first_view": sorted({u for r in runs for u in r["lazy_in_first_view"]}),
        "within_budget": statistics.median(first) <= profile["first_s"] * 1000
        and statistics.median(keys) <= profile["key_ms"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keys", type=int, default=12, help="keystrokes timed after the first (at most 17)")
    ap.add_argument("--site", type=Path, default=None, help="a built site (default: build one)")
    ap.add_argument("--file", action="store_true", help="open the page from file:// instead of http")
    ap.add_argument("--profile", choices=tuple(PROFILES), action="append", default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "poem_writer_bench.json")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    if args.site:
        site = args.site.resolve()
    else:
        from builder.model import BuildOptions
        from builder.pipeline import build_site

        site = Path(tempfile.mkdtemp(prefix="poem-writer-bench-")) / "site"
        build_site(BuildOptions.with_defaults(out_dir=site))
    server = serve(site)
    url = site.as_uri() + "/" + PAGE if args.file else f"http://127.0.0.1:{server.server_address[1]}/{PAGE}"
    report = {
        "page": PAGE,
        "transport": "file" if args.file else "http",
        "runs": args.runs,
        "load_before": os.getloadavg(),
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "profiles": {},
    }
    with sync_playwright() as p:
        exe = chromium_executable()
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS) if exe else p.chromium.launch()
        for name in args.profile or list(PROFILES):
            profile = PROFILES[name]
            runs = [measure(browser, url, site, profile, min(args.keys, len(TEXT) - 1)) for _ in range(args.runs)]
            report["profiles"][name] = {**summarise(runs, profile), "budget": profile, "runs": runs}
        browser.close()
    server.shutdown()
    report["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

    before, after = report["load_before"][0], report["load_after"][0]
    print(f"{PAGE} over {report['transport']}, {args.runs} cold runs per profile; load average {before:.2f} before, "
          f"{after:.2f} after ({os.cpu_count()} cores)")  # fmt: skip
    print(f"{'profile':8} {'first result':>14} {'keystroke median':>17} {'p90':>7} {'max':>7} "
          f"{'weights load':>13} {'first view KB':>14} {'lazy KB':>16}  budget")  # fmt: skip
    for name, s in report["profiles"].items():
        b = s["budget"]
        print(
            f"{name:8} {s['first_result_ms_median']:>11} ms {s['keystroke_ms_median']:>14} ms "
            f"{s['keystroke_ms_p90']:>7} {s['keystroke_ms_max']:>7} {s['weights_load_ms_median']:>10} ms "
            f"{kb(s['first_view_bytes']['raw']):>6} ({kb(s['first_view_bytes']['gzip'])}) "
            f"{kb(s['lazy_bytes']['raw']):>7} ({kb(s['lazy_bytes']['gzip'])})  "
            f"≤ {b['first_s']:g} s / ≤ {b['key_ms']} ms: {'ok' if s['within_budget'] else 'OVER'}"
        )
        if s["widget_in_first_view"]:
            print(f"  the widget's script or weights were in the first view: {s['widget_in_first_view']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
