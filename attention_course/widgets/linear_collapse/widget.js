// Two linear layers vs the one layer they collapse into: the reader moves x (a slider) and sees the layer-by-layer
// sums (h = x·W₁ + b₁, y = h·W₂ + b₂: the site's rows, W₂ a column) and the merged y = x·W + b give the same number; the toggle puts ReLU between the layers, and the curve
// bends where a hidden unit crosses 0 while the merged line stays straight. The weights come from the build
// (attention_core.activations.designed_two_layer_net); the arithmetic here is the three sums, shown term by term.
import { h, short, svg as s } from "@theme/widgets/common.js";

const W = 320;
const H = 200;
const PAD = { left: 30, right: 8, top: 10, bottom: 22 };

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const id = `${root.id || "linear-collapse"}-x`;
  const { w1, b1, w2, b2, w, b } = data;
  const limit = data.x_limit;
  const steps = Math.round(limit / data.x_step);
  let relu = data.relu;

  const hidden = (x) => w1.map((wi, i) => x * wi + b1[i]); // x·W₁ + b₁: a row of 3
  const out = (x, withRelu) => hidden(x).reduce((sum, v, i) => sum + (withRelu ? Math.max(v, 0) : v) * w2[i], b2);
  const xs = Array.from({ length: 2 * steps + 1 }, (_, k) => (k - steps) * data.x_step);
  const all = xs.flatMap((x) => [out(x, false), out(x, true), w * x + b]);
  const yLo = Math.floor(Math.min(...all));
  const yHi = Math.ceil(Math.max(...all));
  const sx = (x) => PAD.left + ((x + limit) / (2 * limit)) * (W - PAD.left - PAD.right);
  const sy = (y) => PAD.top + ((yHi - y) / (yHi - yLo)) * (H - PAD.top - PAD.bottom);
  const path = (f) => xs.map((x, k) => `${k ? "L" : "M"}${sx(x).toFixed(1)} ${sy(f(x)).toFixed(1)}`).join("");

  const input = h("input", { type: "range", id, min: -steps, max: steps, step: 1, value: data.x, class: "lc-range" });
  const xOut = h("output", { for: id, class: "lc-x" });
  const toggle = h("button", { type: "button", class: "toggle lc-toggle", "aria-pressed": String(relu),
    onclick: () => { relu = !relu; toggle.setAttribute("aria-pressed", String(relu)); show(); } },
  h("span", { class: "toggle-track", "aria-hidden": "true" }), "在两层之间加 ReLU");
  const layerSteps = h("div", { class: "lc-steps", "aria-live": "polite" });
  const verdict = h("p", { class: "lc-verdict" });
  const reluPath = s("path", { class: "lc-relu" });
  const dots = s("g", {});
  const grid = [];
  for (let y = yLo; y <= yHi; y += 1) {
    if (y % 2 && yHi - yLo > 8) continue;
    grid.push(s("line", { x1: sx(-limit), x2: sx(limit), y1: sy(y), y2: sy(y), class: y === 0 ? "act-axis" : "act-grid" }),
      s("text", { x: PAD.left - 4, y: sy(y) + 4, class: "act-tick", "text-anchor": "end" }, String(y).replace("-", "−")));
  }
  for (let x = -limit; x <= limit; x += 1) {
    grid.push(s("line", { x1: sx(x), x2: sx(x), y1: sy(yHi), y2: sy(yLo), class: x === 0 ? "act-axis" : "act-grid" }),
      s("text", { x: sx(x), y: H - 6, class: "act-tick", "text-anchor": "middle" }, String(x).replace("-", "−")));
  }
  const svg = s("svg", { class: "lc-svg", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": "输出 y 随输入 x 变化的曲线：两层线性网络与合并后的一层完全重合；加 ReLU 后变成折线" },
  grid, s("path", { d: path((x) => out(x, false)), class: "lc-linear" }),
  s("path", { d: path((x) => w * x + b), class: "lc-merged" }), reluPath, dots);
  const legend = h("p", { class: "lc-legend" },
    h("span", { class: "lc-key lc-key-linear" }, "两层线性，逐层算"), h("span", { class: "lc-key lc-key-merged" }, "合并成一层"),
    h("span", { class: "lc-key lc-key-relu" }, "中间加 ReLU"));

  body.replaceChildren(
    h("p", { class: "widget-caption" }, `第一层 W₁ = [${w1.map((v) => short(v)).join(", ")}]，b₁ = [${b1.map((v) => short(v)).join(", ")}]；`,
      `第二层 W₂ = [${w2.map((v) => short(v)).join(", ")}]ᵀ，b₂ = ${short(b2)}。两层合并：W = W₁·W₂ = ${short(w)}，b = b₁·W₂ + b₂ = ${short(b)}。`),
    h("div", { class: "widget-controls" }, h("label", { for: id }, "输入 x"), input, xOut, toggle),
    h("div", { class: "lc-figure" }, svg, legend),
    layerSteps, verdict, h("p", { class: "widget-note" }, data.note));

  const sum = (terms) => terms.join(" + ").replace(/\+ −/g, "− ");
  const factor = (t) => (t.startsWith("−") ? `(${t})` : t); // a negative right-hand factor: 2×(−1.5)
  function show() {
    const x = +input.value * data.x_step;
    const xs_ = short(x, 2);
    xOut.textContent = `x = ${xs_}`;
    input.setAttribute("aria-valuetext", `x = ${xs_}`);
    const pre = hidden(x);
    const act = pre.map((v) => Math.max(v, 0));
    const used = relu ? act : pre;
    const y = out(x, relu);
    const merged = w * x + b;
    reluPath.setAttribute("d", relu ? path((v) => out(v, true)) : "");
    dots.replaceChildren(s("circle", { cx: sx(x), cy: sy(merged), r: 5, class: "lc-dot-merged" }),
      s("circle", { cx: sx(x), cy: sy(y), r: 4, class: relu ? "lc-dot-relu" : "lc-dot-linear" }));
    layerSteps.replaceChildren(...[
      h("p", {}, h("strong", {}, "第一层 "), `h = x·W₁ + b₁ = [${pre.map((v) => short(v)).join(", ")}]`),
      relu ? h("p", {}, h("strong", {}, "ReLU "), `max(0, h) = [${act.map((v) => short(v)).join(", ")}]`,
        pre.some((v) => v < 0) ? "（负数被截成 0）" : "") : null,
      h("p", {}, h("strong", {}, "第二层 "), `y = ${relu ? "max(0, h)" : "h"}·W₂ + b₂ = `,
        sum(used.map((v, i) => `${short(v)}×${factor(short(w2[i]))}`).concat(short(b2))), " = ", h("strong", { class: "lc-y" }, short(y))),
      h("p", {}, h("strong", {}, "合并成一层 "), `y = x·W + b = ${xs_}×${factor(short(w))} + ${short(b)} = `.replace("+ −", "− "),
        h("strong", { class: "lc-merged-y" }, short(merged)))].filter(Boolean));
    const same = Math.abs(y - merged) < 1e-9;
    verdict.className = `lc-verdict ${same ? "is-same" : "is-different"}`;
    verdict.textContent = same
      ? (relu ? "在这个 x 上恰好相等：所有隐藏单元都为正，ReLU 什么也没改。换一个 x 看看。" : "两条路算出同一个数：没有激活函数，两层线性层和一层没有区别。")
      : `不相等了：ReLU 把负的隐藏值截成 0，网络不再是一条直线（差 ${short(Math.abs(y - merged))}）。`;
  }
  input.addEventListener("input", show);
  show();
}
