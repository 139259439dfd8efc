// Real next-token prediction of SmolLM2-135M (widget.py). Two views of build-time runs:
//   predict — the ten most likely next tokens of a prompt; the temperature slider looks up the probabilities the
//             build computed over the whole vocabulary at that temperature (no softmax runs here);
//   lens    — the logit lens: the best token when the residual stream is read out after each block, and the
//             rank and probability of the final answer at that depth.
// The live view draws the same table as the static fallback, so nothing moves when it mounts.
import { choiceButtons, h, liveRegion, note, num } from "@theme/widgets/common.js";
import { loadDataScript } from "@theme/widgets/data-script.js";

/** One decimal; below 0.05% says so (next_token.py `percent1`). */
export const percent1 = (p) => (p < 0.0005 ? "<0.1%" : `${num(p * 100, 1)}%`);

export function depthLabel(layer, n) {
  if (layer === 0) return "嵌入（第 0 层之前）";
  return `第 ${layer} 层之后${layer === n ? "（输出）" : ""}`;
}

/** The lens table's short row label (next_token.py `row_label`). */
export const rowLabel = (layer, n) => (layer === 0 ? "嵌入" : `第 ${layer} 层${layer === n ? "·输出" : ""}`);

/** Where the final answer forms (next_token.py `lens_caption`: the same words). */
export function lensCaption(n, p) {
  const parts = [];
  if (p.first_top10 !== null && p.first_top10 !== p.first_top) parts.push(`从${depthLabel(p.first_top10, n)}起一直在前 10 名`);
  parts.push(p.first_top === n ? "直到输出处才排到第一" : `从${depthLabel(p.first_top, n)}起一直排第一`);
  return `最终答案 ${p.top[0]}：${parts.join("，")}。`;
}

function barRow(label) {
  const fill = h("span", { class: "bar-fill" });
  const value = h("td", { class: "nt-value" });
  const row = h("tr", {}, h("th", { scope: "row" }, label),
    h("td", { class: "nt-bar" }, h("span", { class: "bar-track" }, fill)), value);
  return { row, set(p, top) { fill.style.width = `${(top > 0 ? Math.min(100, (p / top) * 100) : 0).toFixed(1)}%`; value.textContent = percent1(p); } };
}

function predictView(data, area, live) {
  const temps = data.temperatures;
  const id = `${area.closest(".widget").id}-t`;
  const input = h("input", { type: "range", id, min: temps[0], max: temps[temps.length - 1], step: "0.1",
    value: temps[data.value_index] });
  const output = h("output", { for: id, class: "temp-value" });
  const control = h("div", { class: "temp-control nt-temp" }, h("label", { for: id }, "温度 T"), input, output);
  let prompt = data.prompt;
  let k = data.value_index;
  const caption = h("caption");
  const tbody = h("tbody");
  const table = h("div", { class: "heat-scroll" }, h("table", { class: "num-table nt-table" }, caption,
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "token"),
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "条形")), h("th", { scope: "col" }, "概率"))), tbody));
  function draw(announce) {
    const p = data.prompts[prompt];
    const probs = p.probs[k];
    const t = num(temps[k], 1);
    output.textContent = `T = ${t}`;
    input.setAttribute("aria-valuetext", `温度 ${t}`);
    caption.textContent = `“${p.text}”之后的下一个 token（温度 T = ${t}）`;
    const rows = p.top.map((tok) => barRow(tok));
    rows.forEach((r, j) => r.set(probs[j], probs[0]));
    const rest = barRow(`其余 ${data.vocab - p.top.length} 个 token 合计`);
    rest.set(p.rest[k], Math.max(probs[0], p.rest[k]));
    tbody.replaceChildren(...rows.map((r) => r.row), rest.row);
    if (announce) live.textContent = `T = ${t}：第一名 ${p.top[0]}，${percent1(probs[0])}；其余 token 合计 ${percent1(p.rest[k])}`;
  }
  input.addEventListener("input", () => {
    k = Math.max(0, Math.min(temps.length - 1, Math.round((+input.value - temps[0]) / 0.1)));
    draw(true);
  });
  area.replaceChildren(control, table);
  draw(false);
  return (i) => { prompt = i; draw(true); };
}

function lensView(data, area, live) {
  const n = data.layers;
  const caption = h("p", { class: "widget-caption" });
  const tableCaption = h("caption");
  const answerHead = h("th", { scope: "col" });
  const answerProbHead = h("th", { scope: "col" });
  const tbody = h("tbody");
  const table = h("div", { class: "heat-scroll" }, h("table", { class: "num-table nt-lens" }, tableCaption,
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "读出"), h("th", { scope: "col" }, "第一名"),
      h("th", { scope: "col" }, "概率"), answerHead, answerProbHead)), tbody));
  function draw(i, announce) {
    const p = data.prompts[i];
    caption.textContent = lensCaption(n, p);
    tableCaption.textContent = `logit 透镜：“${p.text}”在每一层之后读出的预测`;
    answerHead.textContent = `${p.top[0]} 名次`;
    answerProbHead.textContent = `${p.top[0]} 概率`;
    tbody.replaceChildren(...p.lens.map((tok, l) => h("tr", { class: p.rank[l] === 1 ? "is-answer" : null },
      h("th", { scope: "row" }, rowLabel(l, n)), h("td", {}, tok), h("td", {}, percent1(p.lens_prob[l])),
      h("td", {}, String(p.rank[l])), h("td", {}, percent1(p.answer_prob[l])))));
    if (announce) live.textContent = caption.textContent;
  }
  area.replaceChildren(caption, table);
  draw(data.prompt, false);
  return (i) => draw(i, true);
}

export function mount(root, data) {
  // the prompts' numbers are in a data script (widget.py HEAVY); the static view stays until then
  return loadDataScript("nextToken", data).then((numbers) => start(root, {
    ...data, prompts: data.prompts.map((p, i) => ({ ...p, ...numbers[i] })) }));
}

function start(root, data) {
  const body = root.querySelector(".widget-body");
  const live = liveRegion();
  const area = h("div", { class: "nt-area" });
  let choose = () => {};
  const prompts = choiceButtons(data.prompts.map((p) => p.text), {
    label: "选择提示词", initial: data.prompt, className: "seg",
    onSelect: (i, fromUser) => { if (fromUser) choose(i); },
  });
  prompts.el.classList.add("nt-prompts");
  body.replaceChildren(h("div", { class: "widget-controls nt-controls" }, prompts.el), area, live, note(data.note));
  choose = data.view === "predict" ? predictView(data, area, live) : lensView(data, area, live);
}
