// Softmax temperature: a slider over the precomputed grid of temperatures. Moving it only looks up the
// weights, maximum and entropy computed at build time for that T (no softmax runs in the browser).
import { h, note, num, pctRow, pctText } from "@theme/widgets/common.js";

function verdict(relative, top, tokens, weight) {
  if (relative < 0.5) return `分布很集中：几乎只看“${tokens[top]}”（${weight}%），温度越低越接近“只选最大的那个”。`;
  if (relative > 0.9) return "分布接近均匀：每个词分到的注意力差不多，温度越高越像“平均用力”。";
  return `分布适中：“${tokens[top]}”最突出（${weight}%），其他词也分到一些注意力。`;
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { tokens, temperatures: temps } = data;
  const id = `${root.id || "temperature"}-t`;
  const first = temps[0];
  const last = temps[temps.length - 1];
  const step = temps.length > 1 ? (last - first) / (temps.length - 1) : 1;
  const input = h("input", { type: "range", id, min: first, max: last, step: step.toFixed(6),
    value: temps[data.value_index], "aria-describedby": `${id}-verdict` });
  const output = h("output", { for: id, class: "temp-value" });
  const stats = h("p", { class: "temp-stats" });
  const verdictEl = h("p", { class: "temp-verdict", id: `${id}-verdict`, "aria-live": "polite" });
  const bars = tokens.map((t) => {
    const fill = h("span", { class: "bar-fill" });
    const value = h("span", { class: "bar-value" });
    return { fill, value, item: h("li", {}, h("span", { class: "bar-label" }, t), h("span", { class: "bar-track" }, fill), value) };
  });
  const query = data.query ? `“${data.query}”` : "Query";

  body.replaceChildren(
    h("p", { class: "widget-caption" }, `${query} 的原始分数：`,
      tokens.map((t, j) => `${t} ${num(data.scores[j], 1)}`).join("，")),
    h("div", { class: "temp-control" },
      h("label", { for: id }, "温度 T"), input, output),
    h("div", { class: "temp-scale", "aria-hidden": "true" }, h("span", {}, `${num(first, 1)}（集中）`), h("span", {}, `${num(last, 1)}（均匀）`)),
    h("ol", { class: "bars", "aria-label": "各词的注意力权重" }, bars.map((b) => b.item)),
    stats, verdictEl, note(data.note));

  function show(k) {
    const w = data.weights[k];
    const shown = pctRow(w);
    const t = num(temps[k], 1);
    output.textContent = `T = ${t}`;
    input.setAttribute("aria-valuetext", `温度 ${t}`);
    bars.forEach((b, j) => {
      b.fill.style.width = `${(w[j] * 100).toFixed(2)}%`;
      b.value.textContent = `${shown[j]}%`;
    });
    const top = w.indexOf(data.max_weight[k]);
    const rel = data.entropy_bits[k] / data.max_entropy_bits;
    stats.replaceChildren(
      "最大权重 ", h("strong", { class: "temp-max" }, `${shown[top]}%`),
      `（${tokens[top]}）· 熵 `, h("strong", { class: "temp-entropy" }, `${num(data.entropy_bits[k], 2)} 比特`),
      `，是最大值 log₂${tokens.length} = ${num(data.max_entropy_bits, 2)} 比特的 `,
      h("strong", { class: "temp-relative" }, pctText(rel)));
    verdictEl.textContent = verdict(rel, top, tokens, shown[top]);
  }

  const index = () => Math.max(0, Math.min(temps.length - 1, Math.round((+input.value - first) / step)));
  input.addEventListener("input", () => show(index()));
  show(data.value_index);
}
