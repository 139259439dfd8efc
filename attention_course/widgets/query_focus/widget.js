// Query focus: the sentence as buttons; choosing a word makes it the query. Its precomputed weights are
// shown twice: as a bar chart with % labels, and as the sentence itself tinted by weight.
import { choiceButtons, h, liveRegion, note, pctRow, shade } from "@theme/widgets/common.js";

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const { tokens, weights } = data;
  const live = liveRegion();
  const caption = h("p", { class: "widget-caption" });
  const bars = tokens.map((t) => {
    const fill = h("span", { class: "bar-fill" });
    const value = h("span", { class: "bar-value" });
    const item = h("li", {}, h("span", { class: "bar-label" }, t), h("span", { class: "bar-track" }, fill), value);
    return { item, fill, value };
  });
  const list = h("ol", { class: "bars" }, bars.map((b) => b.item));

  const sentence = choiceButtons(tokens, {
    label: "句子中的词：选择一个作为 Query",
    initial: data.query,
    className: "qf-sentence",
    onSelect: (q, fromUser) => show(q, fromUser),
  });
  sentence.buttons.forEach((b) => b.classList.add("qf-token"));

  function show(q, announce) {
    const row = weights[q];
    const shown = pctRow(row);
    sentence.buttons.forEach((b, j) => {
      shade(b, row[j]);
      b.setAttribute("aria-label", `${tokens[j]}（${shown[j]}%）`);
      b.classList.toggle("is-query", j === q);
    });
    bars.forEach((b, j) => {
      b.fill.style.width = `${(row[j] * 100).toFixed(2)}%`;
      b.value.textContent = `${shown[j]}%`;
      b.item.classList.toggle("is-query", j === q);
    });
    list.setAttribute("aria-label", `“${tokens[q]}”的注意力权重`);
    caption.textContent = `Query：“${tokens[q]}”分给每个词的注意力权重（底色越显眼、柱子越长，关注越多）`;
    const top = row.indexOf(Math.max(...row));
    if (announce) live.textContent = `Query：${tokens[q]}，最关注“${tokens[top]}”（${shown[top]}%）`;
  }

  body.replaceChildren(
    h("p", { class: "widget-hint" }, "点一个词（或用 Tab 键选中后按回车）把它当作 Query："),
    sentence.el, caption, list, live, note(data.note));
  show(data.query, false);
}
