// Sinusoidal position encoding (widget.py): a canvas heatmap of positions × dimensions
// for the chosen dimension count, and an SVG chart of the cosine similarity between position p and every other
// position. All numbers are the build's (attention_core/positional.py); the encodings arrive as signed bytes in a
// data script of their own (a <script src>, which works on file://), loaded when the widget mounts; until then the
// static view stays.
import { choiceButtons, h, heatBackground, liveRegion, num, svg as s } from "@theme/widgets/common.js";
import { loadDataScript } from "@theme/widgets/data-script.js";

function decode(b64) {
  const bin = atob(b64);
  const out = new Int8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = (bin.charCodeAt(i) << 24) >> 24;
  return out;
}

const dark = () => window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;

export function mount(root, data) {
  // (the static view stays until the encodings are there, and if they fail to load)
  return loadDataScript("positionalEncoding", data).then((pe) => start(root, data, pe));
}

function start(root, data, pe) {
  const body = root.querySelector(".widget-body");
  const n = data.positions;
  const encodings = data.encodings.map((e) => {
    const numbers = pe[String(e.dims)];
    return { ...e, values: decode(numbers.pe), similarity: numbers.similarity };
  });
  let k = data.dim_index;
  let p = data.position;
  const id = `${root.id || "pe"}-p`;
  const live = liveRegion();
  const dims = choiceButtons(encodings.map((e) => `${e.dims} 维`), {
    label: "编码维度", initial: k, onSelect: (i, fromUser) => { k = i; draw(); if (fromUser) announce(); },
  });
  const slider = h("input", { type: "range", id, min: 0, max: n - 1, step: 1, value: p });
  const sliderOut = h("output", { for: id });
  const canvas = h("canvas", { class: "pe-canvas", role: "img" });
  const readout = h("p", { class: "widget-caption pe-readout" }, "把鼠标移到图上或轻触某一行，查看那个格子的数值；轻触也会选中那个位置。");
  const heatCaption = h("p", { class: "widget-caption" });
  const chartBox = h("div", { class: "pe-chart" });
  const chartCaption = h("p", { class: "widget-caption pe-sim" });
  body.replaceChildren(
    h("div", { class: "widget-controls pe-controls" }, dims.el,
      h("div", { class: "pe-pos" }, h("label", { class: "widget-label", for: id }, "位置 p"), slider, sliderOut)),
    heatCaption, h("div", { class: "pe-heat" }, canvas), readout, chartCaption, chartBox, live);

  const value = (e, pos, j) => e.values[pos * e.dims + j] / data.quant;

  function drawHeat() {
    const e = encodings[k];
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(200, canvas.clientWidth || 600);
    const height = canvas.clientHeight || 220;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const scheme = dark() ? "dark" : "light";
    const cw = width / e.dims;
    const ch = height / n;
    for (let pos = 0; pos < n; pos++) {
      for (let j = 0; j < e.dims; j++) {
        const [r, g, b] = heatBackground((value(e, pos, j) + 1) / 2, scheme);
        ctx.fillStyle = `rgb(${r},${g},${b})`;
        ctx.fillRect(j * cw, pos * ch, Math.ceil(cw + 0.5), Math.ceil(ch + 0.5));
      }
    }
    ctx.strokeStyle = getComputedStyle(root).getPropertyValue("--accent") || "#c2410c";
    ctx.lineWidth = 2;
    ctx.strokeRect(1, p * ch, width - 2, Math.max(2, ch));
    canvas.setAttribute("aria-label", `${n} 个位置 × ${e.dims} 维的正弦位置编码热力图：越深越接近 +1，越浅越接近 −1；` +
      `左边几列随位置快速振荡，越往右变化越慢。当前选中第 ${p} 行。`);
    heatCaption.textContent = `${n} 个位置（行，自上而下 0 → ${n - 1}）× ${e.dims} 维（列，自左向右）。颜色越深越接近 +1，越浅越接近 −1；框出的是位置 p = ${p}。`;
  }

  function drawChart() {
    const e = encodings[k];
    const width = Math.max(260, chartBox.clientWidth || 600);
    const height = 170;
    const pad = { l: 40, r: 10, t: 10, b: 30 };
    const x = (q) => pad.l + (q / (n - 1)) * (width - pad.l - pad.r);
    const y = (v) => pad.t + ((1 - v) / 2) * (height - pad.t - pad.b);
    const sims = [...Array(n).keys()].map((q) => e.similarity[Math.abs(p - q)]);
    const points = sims.map((v, q) => `${x(q).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
      "aria-label": `位置 ${p} 与 0 到 ${n - 1} 各位置的余弦相似度折线：在位置 ${p} 处等于 1，离得越远越低。` },
    s("line", { x1: pad.l, x2: width - pad.r, y1: y(0), y2: y(0), class: "pe-axis" }),
    s("line", { x1: pad.l, x2: pad.l, y1: y(1), y2: y(-1), class: "pe-axis" }),
    s("text", { x: pad.l - 6, y: y(1) + 4, "text-anchor": "end", class: "pe-tick" }, "1"),
    s("text", { x: pad.l - 6, y: y(0) + 4, "text-anchor": "end", class: "pe-tick" }, "0"),
    s("text", { x: pad.l - 6, y: y(-1) + 4, "text-anchor": "end", class: "pe-tick" }, "−1"),
    s("text", { x: pad.l, y: height - 8, class: "pe-tick" }, "0"),
    s("text", { x: width - pad.r, y: height - 8, "text-anchor": "end", class: "pe-tick" }, String(n - 1)),
    s("text", { x: (pad.l + width - pad.r) / 2, y: height - 8, "text-anchor": "middle", class: "pe-tick" }, "位置 q"),
    s("polyline", { points, class: "pe-line" }),
    s("circle", { cx: x(p), cy: y(1), r: 4, class: "pe-dot" }));
    chartBox.replaceChildren(svg);
    const near = Math.min(1, n - 1);
    const far = Math.min(10, n - 1);
    chartCaption.textContent = `位置 p = ${p} 与每个位置 q 的余弦相似度（${e.dims} 维）：相距 ${near} 为 ${num(e.similarity[near], 2)}，` +
      `相距 ${far} 为 ${num(e.similarity[far], 2)}——只取决于相距多远，与 p 本身无关。`;
  }

  function draw() {
    sliderOut.textContent = String(p);
    slider.setAttribute("aria-valuetext", `位置 ${p}`);
    drawHeat();
    drawChart();
  }
  const announce = () => { live.textContent = chartCaption.textContent; };
  slider.addEventListener("input", () => { p = +slider.value; draw(); announce(); });

  const cellAt = (event) => {
    const rect = canvas.getBoundingClientRect();
    const e = encodings[k];
    const j = Math.min(e.dims - 1, Math.max(0, Math.floor(((event.clientX - rect.left) / rect.width) * e.dims)));
    const pos = Math.min(n - 1, Math.max(0, Math.floor(((event.clientY - rect.top) / rect.height) * n)));
    return [pos, j];
  };
  canvas.addEventListener("pointermove", (event) => {
    const [pos, j] = cellAt(event);
    readout.textContent = `位置 ${pos}，第 ${j} 维（${j % 2 ? "cos" : "sin"}，第 ${Math.floor(j / 2)} 对频率）：${num(value(encodings[k], pos, j), 2)}`;
  });
  canvas.addEventListener("click", (event) => {
    const [pos] = cellAt(event);
    p = pos;
    slider.value = String(p);
    draw();
    announce();
  });
  if ("ResizeObserver" in window) {
    let last = 0;
    new ResizeObserver(() => { const w = chartBox.clientWidth; if (w !== last) { last = w; draw(); } }).observe(chartBox);
  }
  window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", draw);
  draw();
}
