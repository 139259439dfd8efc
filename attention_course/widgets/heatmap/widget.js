// Attention heatmap: token × token weights of one example sentence, with an example switcher and a
// causal-mask toggle. Both weight matrices (with and without the mask) come precomputed from the build.
// The grid is a real table with role="grid": one cell is in the tab order (roving tabindex), arrow keys,
// Home/End move between cells; hovering, focusing or tapping a cell shows its value in the readout.
import { choiceButtons, h, note, pctRow, pctText, shade, wireGrid } from "@theme/widgets/common.js";

const HINT = "把鼠标移到格子上、轻触格子，或用方向键浏览，即可看到具体数值。";

/** A code cell's own row (attention_core.display.show_row): one query's weights as bars, same CSS as the
 *  temperature widget's. */
function mountBars(body, data) {
  const shown = pctRow(data.row);
  const query = data.query ? `“${data.query}”` : "这一行";
  body.replaceChildren(
    h("p", { class: "widget-caption" }, `${data.title}：${query} 分给各个词的权重`),
    h("ol", { class: "bars", "aria-label": `${data.title}（%）` }, data.tokens.map((t, j) => {
      const fill = h("span", { class: "bar-fill", style: { width: `${(data.row[j] * 100).toFixed(2)}%` } });
      return h("li", {}, h("span", { class: "bar-label" }, t), h("span", { class: "bar-track" }, fill),
        h("span", { class: "bar-value" }, `${shown[j]}%`));
    })));
}

export function mount(root, data) {
  if (data.bars) { mountBars(root.querySelector(".widget-body"), data); return; }
  const fixed = !!data.fixed; // a code cell's own matrix (attention_core.display.show_attention): no switcher, no mask toggle
  let exampleIndex = 0;
  let masked = data.mask === "causal";
  let active = [0, 0]; // row, column of the cell in the tab order
  const body = root.querySelector(".widget-body");

  const examples = choiceButtons(data.examples.map((e) => e.title), {
    label: "选择例句",
    onSelect: (i, fromUser) => {
      exampleIndex = i;
      draw(fromUser);
    },
  });
  const maskButton = h("button", { type: "button", class: "toggle", "aria-pressed": String(masked),
    onclick: () => { masked = !masked; maskButton.setAttribute("aria-pressed", String(masked)); draw(true); } },
  h("span", { class: "toggle-track", "aria-hidden": "true" }), "因果遮罩");
  const maskLine = h("p", { class: "widget-caption heat-mask-line" });
  const gridWrap = h("div", { class: "heat-scroll" });
  const readout = h("p", { class: "heat-readout", "aria-live": "polite" }, HINT);
  const noteEl = note("");
  const legend = h("div", { class: "heat-legend", "aria-hidden": "true" },
    h("span", {}, "0%"), h("span", { class: "heat-legend-bar" }), h("span", {}, "100%"),
    h("span", { class: "heat-legend-masked" }, h("span", { class: "heat-cell is-masked" }, "—"), "被遮罩挡住"));

  if (fixed) legend.querySelector(".heat-legend-masked").remove(); // a cell's own matrix has no mask toggle
  body.replaceChildren(
    ...(fixed ? [] : [h("div", { class: "widget-controls" }, examples.el, maskButton)]),
    maskLine, gridWrap, legend, readout, noteEl);

  function describe(ex, i, j, shown) {
    const where = `第 ${i + 1} 行第 ${j + 1} 列：${ex.tokens[i]} → ${ex.tokens[j]}：`;
    if (masked && j > i) return `${where}被因果遮罩遮住（0%）`;
    return `${where}${shown}%`;
  }

  function draw(keepFocus) {
    const ex = data.examples[exampleIndex];
    const weights = ex.weights[masked ? "causal" : "none"];
    const sums = ex.row_sums[masked ? "causal" : "none"];
    const L = ex.tokens.length;
    active = [Math.min(active[0], L - 1), Math.min(active[1], L - 1)];
    const long = ex.tokens.some((t) => t.length > 2);
    const cells = [];
    const table = h("table", { class: `heat-table heat-grid${long ? " heat-long" : ""}`, role: "grid",
      "aria-label": `${ex.title}：注意力权重（%）`, "aria-describedby": readout.id || null },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Query ＼ Key")),
      ex.tokens.map((t) => h("th", { scope: "col" }, long ? h("span", { class: "heat-col" }, t) : t)),
      h("th", { scope: "col", class: "heat-sum" }, "合计"))),
    h("tbody", {}, ex.tokens.map((tok, i) => {
      const shown = pctRow(weights[i]); // a row's whole percents add up to 100
      const row = weights[i].map((w, j) => {
        const off = masked && j > i;
        const cell = h("td", { role: "gridcell", class: `heat-cell${off ? " is-masked" : ""}`, tabindex: "-1",
          "data-row": i, "data-col": j, "aria-label": describe(ex, i, j, shown[j]) }, off ? "—" : String(shown[j]));
        if (!off) shade(cell, w);
        cells.push(cell);
        return cell;
      });
      return h("tr", {}, h("th", { scope: "row" }, tok), row, h("td", { class: "heat-sum" }, pctText(sums[i])));
    })));
    const show = (cell) => {
      readout.textContent = cell.getAttribute("aria-label");
    };
    wireGrid(table, L, { cellAt: (i, j) => cells[i * L + j], show, active, onActive: (where) => { active = where; } });

    gridWrap.replaceChildren(table);
    maskLine.textContent = fixed ? `${ex.title}：每一行是一个 query 分给各个 key 的权重。`
      : masked
        ? "因果遮罩已开启：灰色的右上角被遮住，每个词只能看自己和前面的词。"
        : "因果遮罩已关闭：每个词都能看到整句话，包括后面的词。";
    noteEl.textContent = ex.note;
    noteEl.hidden = !ex.note;
    if (keepFocus) readout.textContent = `${ex.title}，${masked ? "因果遮罩开" : "无遮罩"}。${HINT}`;
  }

  readout.id = `${root.id || "heatmap"}-readout`;
  draw(false);
}
