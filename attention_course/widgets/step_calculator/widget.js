// Step calculator: one query word through the four steps of attention, showing the actual vectors and
// numbers (all computed at build time): ① q·kⱼ  ② ÷√dₖ  ③ softmax  ④ Σ wⱼ·vⱼ.
import { choiceButtons, h, liveRegion, note, num, pctRowEven, short, vec } from "@theme/widgets/common.js";

const STEPS = [
  { name: "打分 Q·Kᵀ", explain: "Query 向量 q 和每个词的 Key 向量 kⱼ 做点积：对应位置相乘再相加。分数越大，越“对得上”。" },
  { name: "缩放 ÷√dₖ", explain: "每个分数除以 √dₖ，防止维度大时点积过大、softmax 过于尖锐。" },
  { name: "softmax 归一化", explain: "对缩放后的分数取 e 的指数，再除以它们的总和：得到一组加起来等于 100% 的权重（显示时保留一位小数）。" },
  { name: "加权求和 ×V", explain: "用权重给每个词的 Value 向量 vⱼ 打折，再全部相加，得到这个词融合了全场信息的新向量。" },
];

/** A row's weights as steps ③ and ④ show them: percents with one decimal, equal weights alike
 * (step_calculator/widget.py `shown_weights`). */
export const shownWeights = (weights) => pctRowEven(weights, 1);

/** Why a row's shown percents do not add up to its total, or "" when they do (widget.py `total_note`). */
export function totalNote(weights, shown) {
  const shownTotal = shown.reduce((a, x) => a + Math.round(Number(x) * 10), 0);
  const total = Math.round(weights.reduce((a, w) => a + w, 0) * 1000);
  if (shownTotal === total) return "";
  return `这一行显示的百分数合计 ${(shownTotal / 10).toFixed(1)}%，真实的权重合计是 ${(total / 10).toFixed(1)}%：`
    + "有几个权重完全相等，保留一位小数时要显示成同一个数，"
    + `差出的 ${(Math.abs(shownTotal - total) / 10).toFixed(1)}% 没法平分给它们，差别只出在显示上。`;
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { tokens } = data;
  let query = data.query;
  let step = 0;
  const live = liveRegion();
  const indicator = h("span", { class: "step-indicator" });
  const prev = h("button", { type: "button", class: "btn", onclick: () => go(step - 1) }, "上一步");
  const next = h("button", { type: "button", class: "btn btn-primary", onclick: () => go(step + 1) }, "下一步");
  const panel = h("div", { class: "step-panel" });
  const picker = choiceButtons(tokens, {
    label: "选择 Query 词",
    initial: query,
    onSelect: (i, fromUser) => { query = i; draw(); if (fromUser) announce(); },
  });
  const dots = STEPS.map((s, k) => h("li", { class: "step-dot" }, `${"①②③④"[k]} ${s.name}`));

  body.replaceChildren(
    h("div", { class: "widget-controls" }, h("span", { class: "widget-label", "aria-hidden": "true" }, "Query："), picker.el),
    h("ol", { class: "step-dots", "aria-hidden": "true" }, dots),
    panel,
    h("div", { class: "step-nav" }, prev, indicator, next),
    live, note(data.note));

  const allowed = (j) => !data.mask || data.mask[query][j];
  const keyCell = (j, text) => (allowed(j) ? text : "—（被遮罩挡住）");

  function table(headers, rows, caption) {
    return h("table", { class: "num-table step-table" },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((cells) => h("tr", {}, h("th", { scope: "row" }, cells[0]),
        cells.slice(1).map((c) => h("td", {}, c))))));
  }

  function content() {
    const i = query;
    const q = data.Q[i];
    const tok = tokens[i];
    if (step === 0) {
      return [
        h("p", { class: "step-formula" }, `q（${tok}）= ${vec(q)}`),
        table(["Key 词", "kⱼ", "q · kⱼ 展开", "分数"], tokens.map((t, j) => [t, vec(data.K[j]),
          q.map((x, a) => `${short(x)}×${short(data.K[j][a])}`).join(" + "), num(data.scores[i][j])]),
        `“${tok}”对每个词的打分`),
      ];
    }
    if (step === 1) {
      return [
        h("p", { class: "step-formula" }, `dₖ = ${data.d_k}，√dₖ ≈ ${num(data.sqrt_dk, 3)}`),
        table(["Key 词", "分数", "÷ √dₖ", "缩放后"], tokens.map((t, j) => [t, num(data.scores[i][j]),
          `÷ ${num(data.sqrt_dk, 3)}`, num(data.scaled[i][j])]), "缩放后的分数"),
      ];
    }
    const shown = shownWeights(data.weights[i]);
    const why = totalNote(data.weights[i], shown);
    const whyLine = why ? h("p", { class: "widget-caption step-total" }, why) : null;
    if (step === 2) {
      return [
        h("p", { class: "step-formula" }, `Σ e^s = ${num(data.exp_sum[i], 3)}`),
        table(["Key 词", "缩放后 s", "e^s", "权重 = e^s ÷ Σ"], tokens.map((t, j) => [t,
          keyCell(j, num(data.scaled[i][j])), keyCell(j, num(data.exp[i][j], 3)),
          keyCell(j, `${num(data.exp[i][j], 3)} ÷ ${num(data.exp_sum[i], 3)} = ${shown[j]}%`)]),
        "softmax：把分数变成加起来等于 100% 的权重"),
        whyLine,
      ];
    }
    return [
      table(["词", "权重 wⱼ", "vⱼ", "wⱼ × vⱼ"], tokens.map((t, j) => [t, `${shown[j]}%`,
        vec(data.V[j]), vec(data.contributions[i][j], 3)]), "每个词的 Value 按权重打折"),
      whyLine,
      h("p", { class: "step-result" }, `“${tok}”的新向量 = Σ wⱼ·vⱼ = `, h("strong", {}, vec(data.output[i], 3))),
    ];
  }

  function draw() {
    const s = STEPS[step];
    panel.replaceChildren(
      h("p", { class: "step-title" }, `${"①②③④"[step]} ${s.name}`),
      h("p", { class: "step-explain" }, s.explain),
      ...content().filter(Boolean));
    indicator.textContent = `第 ${step + 1} 步 / 共 ${STEPS.length} 步`;
    prev.disabled = step === 0;
    next.disabled = step === STEPS.length - 1;
    dots.forEach((d, k) => d.classList.toggle("is-current", k === step));
  }

  function announce() {
    live.textContent = `Query：${tokens[query]}，第 ${step + 1} 步 / 共 ${STEPS.length} 步：${STEPS[step].name}`;
  }

  function go(k) {
    if (k < 0 || k >= STEPS.length) return;
    const focused = document.activeElement;
    step = k;
    draw();
    announce();
    // Keep keyboard users on a usable button when the one they pressed becomes disabled.
    if (focused && focused.disabled) (focused === prev ? next : prev).focus();
  }

  draw();
}
