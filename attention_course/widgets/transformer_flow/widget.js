// One token's journey through SmolLM2-135M (widget.py): a diagram of the stages — the
// way in, the stages of one block inside a frame marked "× N 层", the way out — and a panel with the shapes and one
// sentence for the chosen stage. Click or tap a stage, or use 上一站 / 下一站; in the diagram the arrow keys move
// between stages (one stage in the tab order), Enter or Space picks one. Every size and word comes from the data.
import { h, svg as s } from "@theme/widgets/common.js";

const dimsText = (dims) => dims.join(" × ");
const ROW = 30; // one stage's height in the diagram (viewBox units)
const BOX = 24;

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  // each stage's sentence is in the static table the build wrote (transformer_flow.py `embedded`): read it there
  const sentences = [...body.querySelectorAll(".tf-explain-cell")].map((td) => td.textContent);
  const stages = data.stages.map((st, i) => ({ ...st, explain: st.explain || sentences[i] || "" }));
  const n = stages.length;
  const layers = data.shape.n_layers;
  let current = Math.max(0, Math.min(n - 1, data.start || 0));

  // the diagram: stages top to bottom; the block's stages inside a dashed frame
  const blockRows = stages.map((st, i) => (st.group === "块内" ? i : -1)).filter((i) => i >= 0);
  const y = (i) => 8 + i * ROW + (i >= blockRows[0] ? 22 : 0) + (i > blockRows[blockRows.length - 1] ? 10 : 0);
  const height = y(n - 1) + BOX + 10;
  const boxes = stages.map((st, i) => {
    const g = s("g", { class: `tf-stage tf-${st.group === "块内" ? "block" : "edge"}`, role: "button", tabindex: "-1",
      "data-stage": st.id, "aria-label": `${i + 1}. ${st.name}（${st.group}；${st.shapes.map((sh) => `${sh.label} ${dimsText(sh.dims)}`).join("，")}）` },
    s("rect", { x: 34, y: y(i), width: 200, height: BOX, rx: 6 }),
    s("text", { x: 44, y: y(i) + 16, class: "tf-stage-name" }, `${i + 1}. ${st.name}`));
    g.addEventListener("click", () => select(i, true));
    return g;
  });
  const top = y(blockRows[0]) - 7;
  const bottom = y(blockRows[blockRows.length - 1]) + BOX + 7;
  const svg = s("svg", { class: "tf-diagram", viewBox: `0 0 250 ${height}`, role: "group",
    "aria-label": `Transformer 的 ${n} 个阶段；方向键在阶段之间移动，回车或空格选中` },
  s("title", {}, `一个 token 走过 SmolLM2-135M-Instruct 的 ${n} 站`),
  s("line", { class: "tf-stream", x1: 18, y1: y(1) + BOX / 2, x2: 18, y2: y(n - 3) + BOX / 2 }),
  s("text", { class: "tf-stream-label", x: 12, y: (top + bottom) / 2, transform: `rotate(-90 12 ${(top + bottom) / 2})`,
    "text-anchor": "middle" }, "残差流"),
  s("rect", { class: "tf-frame", x: 27, y: top, width: 214, height: bottom - top, rx: 10 }),
  s("text", { class: "tf-frame-label", x: 238, y: top - 4, "text-anchor": "end" }, `一个块 · 共 ${layers} 层`),
  boxes);

  const position = h("p", { class: "tf-position" });
  const title = h("p", { class: "tf-title" });
  const shapes = h("ul", { class: "tf-shapes" });
  const explain = h("p", { class: "tf-explain" });
  const panel = h("div", { class: "tf-panel", "aria-live": "polite", "aria-atomic": "true" }, position, title, shapes, explain);
  const prev = h("button", { type: "button", class: "tf-prev", onclick: () => select(current - 1, false) }, "← 上一站");
  const next = h("button", { type: "button", class: "btn-primary tf-next", onclick: () => select(current + 1, false) }, "下一站 →");

  body.replaceChildren(
    h("p", { class: "widget-caption" }, "句子 ", h("code", {}, data.sentence),
      `：跟踪最后一个 token。点图中的任一站，或按“下一站”。`),
    h("div", { class: "tf-layout" }, svg, h("div", { class: "tf-side" }, h("div", { class: "widget-controls" }, prev, next), panel)));

  function select(i, fromDiagram) {
    if (i < 0 || i >= n) return;
    current = i;
    const st = stages[i];
    boxes.forEach((g, k) => {
      g.setAttribute("tabindex", k === i ? "0" : "-1");
      if (k === i) g.setAttribute("aria-current", "step");
      else g.removeAttribute("aria-current");
    });
    if (fromDiagram) boxes[i].focus();
    position.textContent = `第 ${i + 1} / ${n} 站 · ${st.group}`;
    title.textContent = st.name;
    shapes.replaceChildren(...st.shapes.map((sh) => h("li", {}, h("strong", {}, sh.label), "：",
      h("span", { class: "tf-dims" }, dimsText(sh.dims)), h("span", { class: "tf-meaning" }, `（${sh.meaning}）`))));
    explain.textContent = st.explain;
    const had = document.activeElement;
    prev.disabled = i === 0;
    next.disabled = i === n - 1;
    if (had === prev && prev.disabled) next.focus(); // a disabled button drops the focus: keep it in the widget
    if (had === next && next.disabled) prev.focus();
  }

  svg.addEventListener("keydown", (e) => {
    const moves = { ArrowUp: -1, ArrowLeft: -1, ArrowDown: 1, ArrowRight: 1 };
    let i = current;
    if (e.key in moves) i += moves[e.key];
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = n - 1;
    else if (e.key === "Enter" || e.key === " ") i = boxes.indexOf(e.target.closest(".tf-stage"));
    else return;
    e.preventDefault();
    select(Math.max(0, Math.min(n - 1, i)), true);
  });
  select(current, false);
}
