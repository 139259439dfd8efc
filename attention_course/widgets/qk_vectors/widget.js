// The real queries and keys of one layer of SmolLM2-135M, drawn on the plane that keeps most of their length
// (widget.py). One key head and the query heads that share it: switching heads moves the
// orange queries, never the blue keys. Scores and weights come from the build (full 64-dimensional vectors).
import { choiceButtons, h, liveRegion, note, num, svg } from "@theme/widgets/common.js";

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { words, heads, k: keys } = data;
  const t = words.length;
  let headIndex = Math.max(0, heads.findIndex((p) => p.head === data.head));
  let query = Math.max(0, Math.min(t - 1, data.query | 0));

  // One frame for every head of the group (and the origin), equal scale on both axes: angles stay true.
  const all = [[0, 0], ...keys, ...heads.flatMap((p) => p.q)];
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => -p[1]);
  const pad = 0.08 * Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys));
  const [x0, y0] = [Math.min(...xs) - pad, Math.min(...ys) - pad];
  const [w, hgt] = [Math.max(...xs) - x0 + pad, Math.max(...ys) - y0 + pad];
  const unit = Math.max(w, hgt) / 100; // sizes of marks and text, in the picture's units
  const plane = svg("svg", { viewBox: `${x0} ${y0} ${w} ${hgt}`, class: "qkv-plane qk-plane", role: "img",
    "aria-labelledby": `${root.id || "qk"}-desc` });
  const desc = svg("desc", { id: `${root.id || "qk"}-desc` });
  const marks = svg("g", {});
  plane.append(desc, svg("g", { class: "qkv-grid" },
    svg("line", { x1: x0, y1: 0, x2: x0 + w, y2: 0 }), svg("line", { x1: 0, y1: y0, x2: 0, y2: y0 + hgt })), marks);

  const headButtons = choiceButtons(heads.map((p) => `查询头 ${p.head}`), {
    label: "选择查询头", initial: headIndex, onSelect: (i) => { headIndex = i; draw(); },
  });
  const tokenButtons = words.map((word, i) => h("button", { type: "button", class: "qf-token qk-token",
    "aria-pressed": String(i === query), onclick: () => { query = i; draw(); } }, word));
  const caption = h("p", { class: "widget-caption qk-caption" });
  const bars = h("ol", { class: "bars qk-bars", "aria-label": "所选 Query 给每个 Key 的分数与权重" });
  const live = liveRegion();
  const shared = heads.map((p) => p.head).join("、");
  body.replaceChildren(
    h("div", { class: "widget-controls" }, h("span", { class: "widget-label" }, `第 ${data.layer} 层`), headButtons.el),
    h("p", { class: "widget-hint" }, `查询头 ${shared} 共用第 ${data.kv_head} 组 K/V（共 ${data.n_kv_heads} 组，每组 ${data.group} 个查询头）：切换查询头时，蓝色的 Key 不动。`),
    h("div", { class: "qf-sentence qk-sentence", role: "group", "aria-label": "选择 Query 词" }, tokenButtons),
    h("div", { class: "qk-layout" },
      h("div", { class: "qkv-figure" }, plane,
        h("p", { class: "qkv-legend", "aria-hidden": "true" }, h("span", { class: "qkv-key-q" }, "● Query"),
          h("span", { class: "qkv-key-k" }, "■ Key"),
          h("span", {}, `二维平面保留了平方长度的 ${Math.round(data.kept * 100)}%`))),
      h("div", { class: "qk-readout" }, caption, bars)),
    live, note(data.note));

  function draw() {
    const p = heads[headIndex];
    const q = p.q[query];
    const percents = p.percents[query];
    const scores = p.scores[query];
    tokenButtons.forEach((b, i) => b.setAttribute("aria-pressed", String(i === query)));
    const top = percents.map((x, j) => [x, j]).sort((a, b) => b[0] - a[0]).slice(0, 3).map(([, j]) => j);
    const r = 2.2 * unit;
    const kmarks = keys.map((k, j) => {
      const visible = j <= query;
      const g = svg("g", { class: `qkv-k${visible ? "" : " is-future"}` });
      if (visible) g.append(svg("line", { class: "qk-link", x1: q[0], y1: -q[1], x2: k[0], y2: -k[1],
        "stroke-width": (0.15 + (percents[j] / 100) * 1.6) * unit, "stroke-opacity": 0.25 + 0.75 * (percents[j] / 100) }));
      g.append(svg("rect", { x: k[0] - r / 2, y: -k[1] - r / 2, width: r, height: r }));
      if (visible && top.includes(j)) {
        g.append(svg("text", { x: k[0] + r, y: -k[1] + r / 2, style: `font-size:${5 * unit}px` }, words[j]));
      }
      return g;
    });
    const qmarks = p.q.map((v, i) => svg("circle", { class: `qk-q${i === query ? " is-query" : ""}`, cx: v[0], cy: -v[1],
      r: i === query ? 1.4 * unit : 0.8 * unit }));
    marks.replaceChildren(...kmarks, ...qmarks,
      svg("line", { class: "qk-qarrow", x1: 0, y1: 0, x2: q[0], y2: -q[1], "stroke-width": 0.5 * unit }),
      svg("text", { class: "qk-qlabel", x: q[0] - 2 * unit, y: -q[1] - 2 * unit, "text-anchor": "end", style: `font-size:${5.5 * unit}px` }, `q·${words[query]}`));
    desc.textContent = `第 ${data.layer} 层查询头 ${p.head}：“${words[query]}”的 Query 与前面每个 Key 的连线，越粗权重越大。`;
    caption.textContent = `“${words[query]}”的 Query（第 ${data.layer} 层 · 查询头 ${p.head}）给每个 Key 的分数 q·k/√${data.head_dim} 和权重：`;
    bars.replaceChildren(...percents.map((pc, j) => h("li", {},
      h("span", { class: "bar-label" }, words[j]),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${pc}%` } })),
      h("span", { class: "bar-value" }, `${pc}%`),
      h("span", { class: "qk-score" }, num(scores[j], 2)))));
    const best = top[0];
    live.textContent = `查询头 ${p.head}，${words[query]}：权重最大的是 ${words[best]}，${percents[best]}%`;
  }
  draw();
}
