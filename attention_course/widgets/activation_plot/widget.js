// Activation functions overlaid: f(x) in the upper panel, f′(x) in the lower one, and a point the reader drags
// along x (pointer anywhere on the plot, or the keyboard on the focused plot: ←/→ 0.1, Shift 0.01, PageUp/PageDown
// 1, Home/End the ends) for the exact values. Saturation regions (|f′| < the data's threshold) and ReLU's dead side
// are shaded. The curves are computed here from the same closed forms as attention_core/activations.py; the build
// embeds reference samples from NumPy, which the end-to-end test compares with this readout.
import { h, liveRegion, num, svg as s } from "@theme/widgets/common.js";

// ------------------------------------------------------------------ the formulas (attention_core/activations.py)

/** erf to double precision: its Maclaurin series for |x| < 2.5, else erfc's continued fraction (from the tail). */
export function erf(x) {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a < 2.5) {
    const x2 = a * a;
    let term = a;
    let sum = a;
    for (let n = 1; n < 80; n += 1) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * sum * (2 / Math.sqrt(Math.PI));
  }
  if (a > 6) return Math.sign(x); // erfc(6) ≈ 2e-17: below double precision next to 1
  let fraction = a; // erfc(a) = e^(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …))))
  for (let k = 120; k >= 1; k -= 1) fraction = a + (k / 2) / fraction;
  return Math.sign(x) * (1 - Math.exp(-a * a) / (Math.sqrt(Math.PI) * fraction));
}

const sigmoid = (x) => {
  const e = Math.exp(-Math.abs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
};
const normalCdf = (x) => 0.5 * (1 + erf(x / Math.SQRT2));
const normalPdf = (x) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
const GELU_TANH_COEFF = 0.044715;
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

export const FORMULAS = {
  sigmoid: [sigmoid, (x) => { const v = sigmoid(x); return v * (1 - v); }],
  tanh: [Math.tanh, (x) => { const t = Math.tanh(x); return 1 - t * t; }],
  relu: [(x) => Math.max(x, 0), (x) => (x > 0 ? 1 : 0)],
  gelu: [(x) => x * normalCdf(x), (x) => normalCdf(x) + x * normalPdf(x)],
  gelu_tanh: [
    (x) => 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * x ** 3))),
    (x) => {
      const t = Math.tanh(SQRT_2_OVER_PI * (x + GELU_TANH_COEFF * x ** 3));
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * GELU_TANH_COEFF * x * x);
    }],
  silu: [(x) => x * sigmoid(x), (x) => { const v = sigmoid(x); return v * (1 + x * (1 - v)); }],
};

/** [f(x), f′(x)] of one activation by name (also for tests: Course.widgets["activation-plot"].evaluate). */
export function evaluate(name, x) {
  const [f, g] = FORMULAS[name];
  return [f(x), g(x)];
}

// --------------------------------------------------------------------------------------------- the plot

const DASHES = ["", "8 4", "", "", "3 3", "10 3 2 3"]; // with the colours, so no curve relies on colour alone
const PANELS = [
  { key: "f", title: "f(x)", height: 220, y: [-1.5, 4], ticks: [-1, 0, 1, 2, 3, 4], index: 0 },
  { key: "g", title: "f′(x)（梯度）", height: 170, y: [-0.25, 1.25], ticks: [0, 0.5, 1], index: 1 },
];
const MARGIN = { left: 34, right: 10, top: 20, bottom: 20 };
const GAP = 14;
const SAMPLES = 320;

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const id = root.id || "activation-plot";
  const limit = data.x_limit;
  const ticksPerUnit = Math.round(1 / data.x_step);
  const maxTick = limit * ticksPerUnit;
  const functions = data.functions.map((f, k) => ({ ...f, k })); // k: the function's colour and dash
  const shown = new Set(data.shown);
  let tick = data.x; // the point's x, in steps of x_step (an integer, so keyboard moves never accumulate error)
  let width = 0;

  const swatch = (k) => s("svg", { class: "act-swatch", viewBox: "0 0 28 10", "aria-hidden": "true", width: 28, height: 10 },
    s("line", { x1: 1, y1: 5, x2: 27, y2: 5, class: `act-line act-c${k}`, "stroke-dasharray": DASHES[k] || null }));
  const toggles = functions.map((f, k) => h("button", { type: "button", class: "act-toggle", "aria-pressed": String(shown.has(f.name)),
    onclick: (e) => {
      if (shown.has(f.name)) shown.delete(f.name); else shown.add(f.name);
      e.currentTarget.setAttribute("aria-pressed", String(shown.has(f.name)));
      draw();
    } }, swatch(k), f.label));

  const svg = s("svg", { class: "act-svg", role: "presentation", "aria-hidden": "true" });
  const plot = h("div", { class: "act-plot", role: "slider", tabindex: "0", id: `${id}-plot`,
    "aria-label": "取值点 x（左右方向键移动，Shift 微调，PageUp/PageDown 跳 1）", "aria-valuemin": -limit, "aria-valuemax": limit,
    "aria-describedby": `${id}-readout` }, svg);
  const xLabel = h("strong", { class: "act-x" });
  const readoutBody = h("tbody");
  const readout = h("table", { class: "num-table act-readout", id: `${id}-readout` },
    h("caption", {}, "取值点 ", xLabel, " 处的精确值"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "函数"), h("th", { scope: "col" }, "f(x)"),
      h("th", { scope: "col" }, "f′(x)"), h("th", { scope: "col" }, "梯度"))),
    readoutBody);
  const live = liveRegion();

  body.replaceChildren(
    h("div", { class: "act-toggles", role: "group", "aria-label": "叠加显示的函数" }, toggles),
    plot,
    h("p", { class: "widget-hint" }, "在图上按住拖动（或聚焦图后按左右方向键）移动取值点；浅色带是饱和区（|f′| < ",
      num(data.saturated_slope, 2), "），斜线区是 ReLU 的死区（f′ = 0）。"),
    h("div", { class: "heat-scroll" }, readout),
    live);

  const x = () => tick / ticksPerUnit;
  const plotWidth = () => width - MARGIN.left - MARGIN.right;
  const sx = (v) => MARGIN.left + ((v + limit) / (2 * limit)) * plotWidth();
  const panelTop = (p) => (p.index === 0 ? 0 : PANELS[0].height + GAP);
  const sy = (p, v) => panelTop(p) + MARGIN.top + ((p.y[1] - v) / (p.y[1] - p.y[0])) * (p.height - MARGIN.top - MARGIN.bottom);
  const visible = () => functions.filter((f) => shown.has(f.name));

  function drawPanel(p) {
    const top = panelTop(p);
    const inner = [sy(p, p.y[1]), sy(p, p.y[0])];
    const clip = `${id}-clip-${p.key}`;
    const g = s("g", { class: `act-panel act-panel-${p.key}` },
      s("clipPath", { id: clip }, s("rect", { x: sx(-limit), y: inner[0], width: plotWidth(), height: inner[1] - inner[0] })),
      s("text", { x: MARGIN.left, y: top + 13, class: "act-panel-title" }, p.title));
    const bands = s("g", { "clip-path": `url(#${clip})` });
    for (const f of visible()) {
      if (p.key === "g" && f.dead) {
        bands.append(s("rect", { x: sx(-limit), y: inner[0], width: sx(0) - sx(-limit), height: inner[1] - inner[0], class: "act-dead",
          fill: `url(#${id}-hatch)` }));
        bands.append(s("text", { x: sx(-limit) + 6, y: sy(p, 0) - 6, class: "act-band-label" }, "ReLU 死区：梯度恒为 0"));
      }
      if (f.saturated_from !== null) {
        for (const [a, b] of [[-limit, -f.saturated_from], [f.saturated_from, limit]]) {
          bands.append(s("rect", { x: sx(a), y: inner[0], width: sx(b) - sx(a), height: inner[1] - inner[0], class: `act-band act-fill${f.k}` }));
        }
        if (p.key === "g") {
          bands.append(s("text", { x: sx(limit) - 4, y: inner[0] + 14 + 14 * (f.k % 2), class: "act-band-label", "text-anchor": "end" },
            `${f.label} 饱和区`));
        }
      }
    }
    g.append(bands);
    for (let v = -limit; v <= limit; v += 1) {
      g.append(s("line", { x1: sx(v), x2: sx(v), y1: inner[0], y2: inner[1], class: v === 0 ? "act-axis" : "act-grid" }));
      if (p.index === 1 || v % 2 === 0) g.append(s("text", { x: sx(v), y: inner[1] + 14, class: "act-tick", "text-anchor": "middle" }, num(v, 0)));
    }
    for (const v of p.ticks) {
      g.append(s("line", { x1: sx(-limit), x2: sx(limit), y1: sy(p, v), y2: sy(p, v), class: v === 0 ? "act-axis" : "act-grid" }));
      g.append(s("text", { x: MARGIN.left - 4, y: sy(p, v) + 4, class: "act-tick", "text-anchor": "end" }, num(v, v % 1 ? 1 : 0)));
    }
    const curves = s("g", { "clip-path": `url(#${clip})` });
    for (const f of visible()) {
      const fn = FORMULAS[f.name][p.index];
      let d = "";
      for (let i = 0; i <= SAMPLES; i += 1) {
        const v = -limit + (2 * limit * i) / SAMPLES;
        d += `${i ? "L" : "M"}${sx(v).toFixed(1)} ${sy(p, Math.max(p.y[0] - 1, Math.min(p.y[1] + 1, fn(v)))).toFixed(1)}`;
      }
      curves.append(s("path", { d, class: `act-line act-c${f.k}`, "stroke-dasharray": DASHES[f.k] || null }));
    }
    g.append(curves);
    return g;
  }

  const cursor = s("g", { class: "act-cursor" });

  function drawCursor() {
    const v = x();
    const total = PANELS[0].height + GAP + PANELS[1].height;
    cursor.replaceChildren(s("line", { x1: sx(v), x2: sx(v), y1: MARGIN.top, y2: total - MARGIN.bottom, class: "act-cursor-line" }));
    for (const p of PANELS) {
      for (const f of visible()) {
        const value = FORMULAS[f.name][p.index](v);
        if (value < p.y[0] || value > p.y[1]) continue;
        cursor.append(s("circle", { cx: sx(v), cy: sy(p, value), r: 4.5, class: `act-dot act-c${f.k}` }));
      }
    }
    cursor.append(s("rect", { x: sx(v) - 8, y: total - MARGIN.bottom - 2, width: 16, height: 8, rx: 3, class: "act-handle" }));
  }

  function showValues() {
    const v = x();
    const text = num(v, 2);
    xLabel.textContent = `x = ${text}`;
    plot.setAttribute("aria-valuenow", String(v));
    plot.setAttribute("aria-valuetext", `x = ${text}`);
    const rows = visible().map((f) => {
      const [fx, gx] = evaluate(f.name, v);
      const state = f.dead && v <= 0 ? "死区" : (Math.abs(gx) < data.saturated_slope ? "饱和" : "正常");
      return { f, fx, gx, state };
    });
    readoutBody.replaceChildren(...(rows.length ? rows.map(({ f, fx, gx, state }) => h("tr", { "data-name": f.name },
      h("th", { scope: "row" }, swatch(f.k), f.label),
      h("td", { class: "act-f" }, num(fx, data.decimals)), h("td", { class: "act-g" }, num(gx, data.decimals)),
      h("td", { class: `act-state${state === "正常" ? "" : " is-flat"}` }, state)))
      : [h("tr", {}, h("td", { colspan: 4 }, "请在上方至少选择一个函数。"))]));
    live.textContent = `x = ${text}：` + rows.map(({ f, fx, gx }) => `${f.label} ${num(fx, 2)}，导数 ${num(gx, 2)}`).join("；");
  }

  function draw() {
    width = Math.max(280, Math.round(plot.clientWidth || 640));
    const height = PANELS[0].height + GAP + PANELS[1].height;
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.replaceChildren(
      s("defs", {}, s("pattern", { id: `${id}-hatch`, width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
        s("line", { x1: 0, y1: 0, x2: 0, y2: 8, class: "act-hatch" }))),
      ...PANELS.map(drawPanel), cursor);
    drawCursor();
    showValues();
  }

  function moveTo(next) {
    tick = Math.max(-maxTick, Math.min(maxTick, Math.round(next)));
    drawCursor();
    showValues();
  }

  const tickAt = (clientX) => {
    const box = svg.getBoundingClientRect();
    const px = ((clientX - box.left) / box.width) * width;
    return ((px - MARGIN.left) / plotWidth() * 2 * limit - limit) * ticksPerUnit;
  };
  plot.addEventListener("pointerdown", (e) => {
    plot.setPointerCapture?.(e.pointerId);
    plot.focus({ preventScroll: true });
    moveTo(tickAt(e.clientX));
  });
  plot.addEventListener("pointermove", (e) => {
    if (plot.hasPointerCapture?.(e.pointerId)) moveTo(tickAt(e.clientX));
  });
  plot.addEventListener("keydown", (e) => {
    const small = e.shiftKey ? 1 : Math.round(ticksPerUnit / 10);
    const moves = { ArrowLeft: -small, ArrowDown: -small, ArrowRight: small, ArrowUp: small,
      PageDown: -ticksPerUnit, PageUp: ticksPerUnit };
    if (e.key in moves) moveTo(tick + moves[e.key]);
    else if (e.key === "Home") moveTo(-maxTick);
    else if (e.key === "End") moveTo(maxTick);
    else return;
    e.preventDefault();
  });
  if (typeof ResizeObserver === "function") {
    let last = 0;
    new ResizeObserver(() => { const w = Math.round(plot.clientWidth); if (w && w !== last) { last = w; draw(); } }).observe(plot);
  }
  draw();
}
mount.evaluate = evaluate;
