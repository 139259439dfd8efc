// Q and K from one X: four sliders turn and stretch W_Q and W_K (2 × 2: a rotation times a scale), and the
// query / key arrows, the score matrix QKᵀ/√d_k and the chosen query's softmax row follow live. The maths is
// attention_core's, line for line (attention_core/qkv.py plane_projection, core.py softmax): the build's
// initial state is in data.reference and the e2e tests compare other positions with attention_core.
import { choiceButtons, h, liveRegion, note, num, pctRow, shade, svg } from "@theme/widgets/common.js";

/** x @ W for W = scale · [[cos, sin], [−sin, cos]]: x turned anticlockwise by `deg` and stretched. */
export function planeProjection(deg, scale) {
  const a = (deg * Math.PI) / 180;
  const c = Math.cos(a);
  const s = Math.sin(a);
  return [[scale * c, scale * s], [-scale * s, scale * c]];
}

const times = (x, w) => [x[0] * w[0][0] + x[1] * w[1][0], x[0] * w[0][1] + x[1] * w[1][1]];

export function softmaxRow(row) {
  const m = Math.max(...row);
  const e = row.map((s) => Math.exp(s - m));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / total);
}

/** The state attention_core.qkv.projection_state computes: Q, K, scores = QKᵀ/√2, softmax rows. */
export function projectionState(X, angleQ, scaleQ, angleK, scaleK) {
  const WQ = planeProjection(angleQ, scaleQ);
  const WK = planeProjection(angleK, scaleK);
  const Q = X.map((x) => times(x, WQ));
  const K = X.map((x) => times(x, WK));
  const dk = 2;
  const scores = Q.map((q) => K.map((k) => (q[0] * k[0] + q[1] * k[1]) / Math.sqrt(dk)));
  return { WQ, WK, Q, K, scores, weights: scores.map(softmaxRow) };
}

const finite = (x, fallback) => (Number.isFinite(x) ? x : fallback);

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { tokens, X } = data;
  const n = tokens.length;
  const base = root.id || "qkv";
  let query = Math.max(0, Math.min(n - 1, data.query | 0));

  function slider(key, label, min, max, step, value, unit) {
    const id = `${base}-${key}`;
    const input = h("input", { type: "range", id, min, max, step, value, class: "qkv-range", "data-key": key });
    const out = h("output", { for: id, class: "qkv-value" });
    return { input, out, unit, el: h("div", { class: "qkv-slider" }, h("label", { for: id }, label), input, out) };
  }
  const sliders = {
    angle_q: slider("angle_q", "W_Q 旋转", -180, 180, data.angle_step, data.angle_q, "°"),
    scale_q: slider("scale_q", "W_Q 缩放", data.scale_min, data.scale_max, data.scale_step, data.scale_q, "×"),
    angle_k: slider("angle_k", "W_K 旋转", -180, 180, data.angle_step, data.angle_k, "°"),
    scale_k: slider("scale_k", "W_K 缩放", data.scale_min, data.scale_max, data.scale_step, data.scale_k, "×"),
  };
  const value = (key) => finite(+sliders[key].input.value, data[key]);

  // The plane: x (grey, dashed), q (orange circles), k (blue squares), the chosen query's q bold.
  const R = 2.6;
  const plane = svg("svg", { viewBox: `${-R} ${-R} ${2 * R} ${2 * R}`, class: "qkv-plane", role: "img",
    "aria-labelledby": `${base}-plane-desc` });
  const desc = svg("desc", { id: `${base}-plane-desc` });
  const grid = svg("g", { class: "qkv-grid" },
    svg("line", { x1: -R, y1: 0, x2: R, y2: 0 }), svg("line", { x1: 0, y1: -R, x2: 0, y2: R }),
    svg("circle", { cx: 0, cy: 0, r: 1, class: "qkv-unit" }));
  const layer = svg("g", {});
  plane.append(desc, grid, layer);
  const legend = h("p", { class: "qkv-legend", "aria-hidden": "true" },
    h("span", { class: "qkv-key-x" }, "┄ x 原始向量"), h("span", { class: "qkv-key-q" }, "● q = x·W_Q"),
    h("span", { class: "qkv-key-k" }, "■ k = x·W_K"));

  const wText = h("p", { class: "qkv-w" });
  const table = h("table", { class: "heat-table qkv-scores" });
  const caption = h("caption", {}, "分数矩阵 QKᵀ/√2（行 = 谁在找，列 = 被找的 Key；颜色 = 该行 softmax 后的权重）");
  const headRow = h("tr", {}, h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Query ＼ Key")),
    tokens.map((t) => h("th", { scope: "col" }, `k·${t}`)));
  const cells = [];
  const rows = tokens.map((t, i) => {
    cells[i] = tokens.map((_, j) => h("td", { class: "heat-cell", "data-row": i, "data-col": j }));
    return h("tr", {}, h("th", { scope: "row" }, `q·${t}`), cells[i]);
  });
  table.append(caption, h("thead", {}, headRow), h("tbody", {}, rows));
  const asym = liveRegion("qkv-asym");
  const rowCaption = h("p", { class: "widget-caption" });
  const bars = tokens.map((t) => {
    const fill = h("span", { class: "bar-fill" });
    const val = h("span", { class: "bar-value" });
    return { fill, val, item: h("li", {}, h("span", { class: "bar-label" }, t), h("span", { class: "bar-track" }, fill), val) };
  });
  const barList = h("ol", { class: "bars", "aria-label": "所选 Query 的注意力权重" }, bars.map((b) => b.item));
  const picker = choiceButtons(tokens.map((t) => `Query：${t}`), {
    label: "选择 Query 词", initial: query, onSelect: (i) => { query = i; draw(); },
  });
  const same = h("button", { type: "button", class: "seg-btn qkv-same" }, "让 W_K = W_Q");
  const reset = h("button", { type: "button", class: "seg-btn qkv-reset" }, "复位");

  body.replaceChildren(
    h("div", { class: "qkv-layout" },
      h("div", { class: "qkv-figure" }, plane, legend),
      h("div", { class: "qkv-controls" },
        h("fieldset", { class: "qkv-group qkv-group-q" }, h("legend", {}, "W_Q（生成 Query）"), sliders.angle_q.el, sliders.scale_q.el),
        h("fieldset", { class: "qkv-group qkv-group-k" }, h("legend", {}, "W_K（生成 Key）"), sliders.angle_k.el, sliders.scale_k.el),
        h("div", { class: "qkv-buttons" }, same, reset), wText)),
    picker.el,
    h("div", { class: "heat-scroll" }, table),
    asym, rowCaption, barList, note(data.note));

  function arrow(from, to, cls, label, dx = 0.12) {
    const [x, y] = [to[0], -to[1]]; // SVG's y grows downwards
    const g = svg("g", { class: cls });
    g.append(svg("line", { x1: from[0], y1: -from[1], x2: x, y2: y }));
    if (cls.includes("qkv-k")) g.append(svg("rect", { x: x - 0.09, y: y - 0.09, width: 0.18, height: 0.18 }));
    else if (cls.includes("qkv-q")) g.append(svg("circle", { cx: x, cy: y, r: 0.1 }));
    if (label) g.append(svg("text", { x: x + dx, y: y - 0.12 }, label));
    return g;
  }
  const clip = (p) => { // keep arrows inside the picture (long ones are drawn to the edge, in the right direction)
    const len = Math.hypot(p[0], p[1]);
    const max = R - 0.35;
    return len > max ? [(p[0] * max) / len, (p[1] * max) / len] : p;
  };

  function draw() {
    const s = projectionState(X, value("angle_q"), value("scale_q"), value("angle_k"), value("scale_k"));
    for (const [key, sl] of Object.entries(sliders)) {
      const v = value(key);
      sl.out.textContent = sl.unit === "°" ? `${num(v, 0)}°` : `${num(v, 2)}×`;
      sl.input.setAttribute("aria-valuetext", sl.unit === "°" ? `${num(v, 0)} 度` : `${num(v, 2)} 倍`);
    }
    const m = (w) => `[[${num(w[0][0])}, ${num(w[0][1])}], [${num(w[1][0])}, ${num(w[1][1])}]]`;
    wText.textContent = `W_Q = ${m(s.WQ)}，W_K = ${m(s.WK)}`;
    layer.replaceChildren(
      ...X.map((x, i) => arrow([0, 0], clip(x), "qkv-x", "", 0)),
      ...s.K.map((k, j) => arrow([0, 0], clip(k), "qkv-k", `k·${tokens[j]}`)),
      ...s.Q.map((q, i) => arrow([0, 0], clip(q), `qkv-q${i === query ? " is-query" : ""}`, `q·${tokens[i]}`)));
    desc.textContent = tokens.map((t, i) => `${t}：q = (${num(s.Q[i][0])}, ${num(s.Q[i][1])})，k = (${num(s.K[i][0])}, ${num(s.K[i][1])})`).join("；");
    s.scores.forEach((row, i) => row.forEach((score, j) => {
      const cell = cells[i][j];
      cell.textContent = num(score, 2);
      shade(cell, s.weights[i][j]);
      cell.classList.toggle("is-query-row", i === query);
    }));
    const w = s.weights[query];
    const shown = pctRow(w);
    rowCaption.textContent = `“${tokens[query]}”作为 Query：分数 ${s.scores[query].map((x, j) => `${tokens[j]} ${num(x, 2)}`).join("，")} → softmax 后的权重`;
    bars.forEach((b, j) => {
      b.fill.style.width = `${(w[j] * 100).toFixed(2)}%`;
      b.val.textContent = `${shown[j]}%`;
    });
    // The pair of words whose two directions differ most: q_i·k_j next to q_j·k_i.
    let best = [0, 1];
    let gap = -1;
    for (let i = 0; i < n; i += 1) for (let j = i + 1; j < n; j += 1) {
      const d = Math.abs(s.scores[i][j] - s.scores[j][i]);
      if (d > gap) { gap = d; best = [i, j]; }
    }
    const [i, j] = best;
    asym.textContent = gap < 0.005
      ? "现在 QKᵀ 是对称的：每一对词互相打的分都一样——谁找谁，分不出方向。"
      : `不对称：“${tokens[i]}”找“${tokens[j]}”得 ${num(s.scores[i][j], 2)} 分，“${tokens[j]}”找“${tokens[i]}”得 ${num(s.scores[j][i], 2)} 分。`;
  }

  for (const sl of Object.values(sliders)) sl.input.addEventListener("input", draw);
  same.addEventListener("click", () => {
    sliders.angle_k.input.value = sliders.angle_q.input.value;
    sliders.scale_k.input.value = sliders.scale_q.input.value;
    draw();
  });
  reset.addEventListener("click", () => {
    for (const key of Object.keys(sliders)) sliders[key].input.value = data[key];
    draw();
  });
  draw();
}
