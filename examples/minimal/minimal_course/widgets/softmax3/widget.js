// softmax3 (widget.py): a slider per score; the weights are recomputed here with the same softmax as the build's,
// so the first view shows exactly the numbers of the fallback table.
import { h, num, pctRow } from "@theme/widgets/common.js";

export function softmax(scores) {
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const scores = [...data.scores];
  const rows = data.names.map((name, i) => {
    const id = `${root.id || "softmax3"}-${name}`;
    const input = h("input", { type: "range", id, min: -5, max: 5, step: 0.1, value: scores[i] });
    const score = h("output", { for: id, class: "softmax3-score" });
    const fill = h("span", { class: "bar-fill" });
    const weight = h("span", { class: "bar-value" });
    input.addEventListener("input", () => {
      scores[i] = Number(input.value);
      show();
    });
    return { score, fill, weight, item: h("li", { class: "softmax3-row" },
      h("label", { for: id, class: "bar-label" }, name), input, score,
      h("span", { class: "bar-track" }, fill), weight) };
  });

  function show() {
    const weights = softmax(scores);
    const shown = pctRow(weights);
    rows.forEach((r, i) => {
      r.score.textContent = num(scores[i], 1);
      r.fill.style.width = `${(weights[i] * 100).toFixed(2)}%`;
      r.weight.textContent = `${shown[i]}%`;
    });
  }

  body.replaceChildren(h("p", { class: "widget-caption" }, data.label),
    h("ol", { class: "softmax3-rows", "aria-label": "分数与权重" }, rows.map((r) => r.item)));
  show();
}
