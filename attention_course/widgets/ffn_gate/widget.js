// The real SwiGLU gates of SmolLM2-135M for one sentence: a layer slider, the histogram of that layer's gate values
// g (negative bins, which ReLU would turn into exactly 0, in their own colour and hatched), and a strip of every
// layer's negative share with the chosen layer marked. All numbers are the build's (attention_course/smollm2/).
import { h, svg as s } from "@theme/widgets/common.js";

const pct = (x) => `${Math.round(x * 100)}%`;

const W = 360;
const H = 150;
const PAD = { left: 8, right: 8, top: 8, bottom: 20 };

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const id = `${root.id || "ffn-gate"}-layer`;
  const [lo, hi, count] = data.bins;
  const width = (hi - lo) / count;
  const input = h("input", { type: "range", id, min: 0, max: data.n_layers - 1, step: 1, value: data.layer, class: "lc-range" });
  const layerOut = h("output", { for: id, class: "lc-x" });
  const hist = s("svg", { class: "fg-svg", viewBox: `0 0 ${W} ${H}`, role: "img" });
  const strip = s("svg", { class: "fg-strip", viewBox: `0 0 ${W} 70`, role: "img" });
  const summary = h("p", { class: "fg-summary", "aria-live": "polite" });
  const sx = (v) => PAD.left + ((v - lo) / (hi - lo)) * (W - PAD.left - PAD.right);

  body.replaceChildren(
    h("p", { class: "widget-caption" }, `句子：${data.text}（${data.tokens.length} 个 token）。每层 FFN 把 ${data.d_model} 维的向量展开成 `,
      `${data.d_ffn} 个门控单元；下图是第 L 层全部 ${data.tokens.length} × ${data.d_ffn} 个门控值 g（进入 SiLU 之前）的分布。`),
    h("div", { class: "widget-controls" }, h("label", { for: id }, "层 L"), input, layerOut),
    hist,
    h("p", { class: "lc-legend" }, h("span", { class: "fg-key fg-key-neg" }, "g < 0：ReLU 会输出 0，SiLU 输出小负数"),
      h("span", { class: "fg-key fg-key-pos" }, "g ≥ 0")),
    summary,
    h("p", { class: "widget-label" }, "每一层里负门控值的占比（当前层加粗）"),
    strip,
    h("p", { class: "widget-note" }, "真实模型的数字：SmolLM2-135M-Instruct 网页生成时用 NumPy 预先跑过这句话，记录每层进入 SiLU 之前的门控值；两端的柱子也包含范围之外的值。"));

  function show() {
    const layer = +input.value;
    layerOut.textContent = `第 ${layer} 层`;
    input.setAttribute("aria-valuetext", `第 ${layer} 层`);
    const counts = data.histogram[layer];
    const top = Math.max(...counts);
    const total = counts.reduce((a, b) => a + b, 0);
    const barW = (W - PAD.left - PAD.right) / count;
    const bars = counts.map((c, k) => {
      const left = lo + k * width;
      const height = (c / top) * (H - PAD.top - PAD.bottom);
      return s("rect", { x: sx(left) + 0.5, y: H - PAD.bottom - height, width: Math.max(0, barW - 1), height,
        class: left < 0 ? "fg-bar fg-neg" : "fg-bar fg-pos" });
    });
    const ticks = [-4, -2, 0, 2, 4].map((v) => s("text", { x: sx(v), y: H - 5, class: "act-tick", "text-anchor": "middle" }, String(v).replace("-", "−")));
    hist.setAttribute("aria-label", `第 ${layer} 层门控值的直方图：共 ${total} 个值，负数占 ${pct(data.negative[layer])}`);
    hist.replaceChildren(s("line", { x1: sx(0), x2: sx(0), y1: PAD.top, y2: H - PAD.bottom, class: "act-axis" }), ...bars,
      s("line", { x1: PAD.left, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom, class: "act-axis" }), ...ticks);
    summary.replaceChildren(`第 ${layer} 层：`, h("strong", { class: "fg-negative" }, pct(data.negative[layer])),
      " 的门控值是负数——换成 ReLU，它们全都会变成 0，梯度也是 0；SiLU 让它们输出一个小负数，仍有梯度。另有 ",
      h("strong", { class: "fg-near-zero" }, pct(data.near_zero[layer])), ` 的 |SiLU(g)| 小于 ${data.near_zero_limit}，这些单元几乎“关门”。`);
    const stripW = (W - PAD.left - PAD.right) / data.n_layers;
    strip.setAttribute("aria-label", `各层负门控值占比，从 ${pct(Math.min(...data.negative))} 到 ${pct(Math.max(...data.negative))}`);
    strip.replaceChildren(...data.negative.map((v, l) => s("rect", { x: PAD.left + l * stripW + 0.5, y: 58 - v * 50,
      width: Math.max(0, stripW - 1), height: v * 50, class: l === layer ? "fg-strip-bar is-current" : "fg-strip-bar" })),
    s("line", { x1: PAD.left, x2: W - PAD.right, y1: 58 - 25, y2: 58 - 25, class: "act-grid" }),
    s("text", { x: W - PAD.right, y: 58 - 28, class: "act-tick", "text-anchor": "end" }, "50%"),
    s("text", { x: PAD.left, y: 69, class: "act-tick" }, "第 0 层"),
    s("text", { x: W - PAD.right, y: 69, class: "act-tick", "text-anchor": "end" }, `第 ${data.n_layers - 1} 层`));
  }
  input.addEventListener("input", show);
  show();
}
