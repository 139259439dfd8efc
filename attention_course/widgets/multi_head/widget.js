// Multi-head attention: the same sentence through h heads side by side (one small heatmap per head with
// its pattern label), then the concatenation of the head outputs (coloured by head) and the output
// after W_O. Choosing a token highlights that row everywhere.
import { choiceButtons, h, liveRegion, note, num, pctRow, shade } from "@theme/widgets/common.js";

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { tokens, weights, d_v: dv } = data;
  const L = tokens.length;
  const rows = []; // every <tr> that belongs to token i, per i
  for (let i = 0; i < L; i++) rows.push([]);
  const live = liveRegion();
  const summary = h("ul", { class: "mh-summary" });

  const heads = weights.map((w, k) => {
    const table = h("table", { class: "heat-table mh-mini", "aria-label": `头 ${k}：${data.head_labels[k]}` },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Query ＼ Key")),
        tokens.map((t) => h("th", { scope: "col" }, h("span", { class: "heat-col" }, t))))),
      h("tbody", {}, tokens.map((t, i) => {
        const shown = pctRow(w[i]);
        const tr = h("tr", {}, h("th", { scope: "row" }, t), w[i].map((x, j) => {
          const off = data.causal && j > i;
          const cell = h("td", { class: `heat-cell${off ? " is-masked" : ""}`, title: `${t} → ${tokens[j]}：${shown[j]}%` },
            off ? "" : String(shown[j]));
          if (!off) shade(cell, x);
          return cell;
        }));
        rows[i].push(tr);
        return tr;
      })));
    return h("figure", { class: `mh-head mh-block-${k % 3}` },
      h("figcaption", {}, h("span", { class: "mh-head-name" }, `头 ${k}`), data.head_labels[k]), table);
  });

  // Focusable and named: on a phone the matrix scrolls sideways, and a scrollable box must be reachable by keyboard.
  const matrix = (values, labels, caption, colClass) => h("div", { class: "mh-matrix", tabindex: "0", role: "group",
    "aria-label": `${caption}（可左右滚动）` },
    h("table", { class: "num-table" }, h("caption", {}, caption),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "词")),
        labels.map((l, j) => h("th", { scope: "col", class: colClass ? colClass(j) : null }, l)))),
      h("tbody", {}, values.map((row, i) => {
        const tr = h("tr", {}, h("th", { scope: "row" }, tokens[i]),
          row.map((x, j) => h("td", { class: colClass ? colClass(j) : null }, num(x))));
        rows[i].push(tr);
        return tr;
      }))));
  const block = (j) => `mh-block-${Math.floor(j / dv) % 3}`;
  const concatLabels = data.concat[0].map((_, j) => `头${Math.floor(j / dv)}·${j % dv}`);

  const picker = choiceButtons(tokens, {
    label: "选择一行（Query 词），在所有头中高亮",
    initial: data.query,
    onSelect: (i, fromUser) => select(i, fromUser),
  });

  function select(i, announce) {
    rows.forEach((trs, r) => trs.forEach((tr) => tr.classList.toggle("is-selected", r === i)));
    const lines = weights.map((w, k) => {
      const top = w[i].indexOf(Math.max(...w[i]));
      return `头 ${k}（${data.head_labels[k]}）：“${tokens[i]}”最关注“${tokens[top]}”${pctRow(w[i])[top]}%`;
    });
    summary.replaceChildren(...lines.map((t) => h("li", {}, t)));
    if (announce) live.textContent = lines.join("；");
  }

  body.replaceChildren(
    h("div", { class: "widget-controls" }, h("span", { class: "widget-label", "aria-hidden": "true" }, "高亮一行："), picker.el),
    h("div", { class: "mh-heads" }, heads),
    summary,
    h("p", { class: "widget-caption" }, `拼接（concat）：${data.num_heads} 个头的输出并排，每个头 ${dv} 列（颜色表示来自哪个头）`),
    matrix(data.concat, concatLabels, "拼接后的矩阵", block),
    h("p", { class: "widget-caption" }, data.has_wo ? "再乘以 W_O，把各头的发现融合成每个词的新表示：" : "输出（没有 W_O，直接使用拼接结果）："),
    matrix(data.output, data.output_labels, "经 W_O 融合后的输出"),
    live, note(data.note));
  select(data.query, false);
}
