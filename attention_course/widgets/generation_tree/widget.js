// Generation one token at a time with SmolLM2-135M's real next-token distributions
// (widget.py). The reader picks one of the top tokens — or lets greedy decoding (always
// the first) or temperature sampling (drawn among the top tokens in proportion to their probabilities at T) pick —
// the token is appended and the next distribution appears. The model does not run here: every distribution was
// computed at build time for a tree of continuations; the page carries each prompt's first one, the whole tree is
// one data script loaded on first interaction. A pick the tree does not contain is said to be so.
import { choiceButtons, h, liveRegion, pctRow } from "@theme/widgets/common.js";
import { part } from "@theme/shared/course.js";

const shown = (t) => t.replace(/\n/g, "↵").replace(/ /g, "␣") || "∅";
const inText = (t) => t.replace(/\n/g, "↵");

function loader(data) {
  let promise = null;
  return () => {
    const store = part("generationTree");
    const key = `d${data.key}`;
    if (!promise && store[key]) promise = Promise.resolve(store[key]);
    if (!promise) {
      promise = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = data.data;
        script.onload = () => (store[key] ? resolve(store[key]) : reject(new Error(`${data.data} is empty`)));
        script.onerror = () => { promise = null; script.remove(); reject(new Error(`cannot load ${data.data}`)); };
        document.head.append(script);
      });
    }
    return promise;
  };
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const load = loader(data);
  const temps = data.temperatures;
  const others = data.vocab_size - data.top;
  let prompt = 0;
  let tIndex = data.temperature;
  let path = []; // [{id, text, node (index or -1: outside the tree)}]
  let busy = false;

  const status = liveRegion("gt-status");
  const text = h("p", { class: "gt-text", "aria-label": "当前文本" });
  const stepInfo = h("p", { class: "widget-caption gt-step" });
  const list = h("ol", { class: "bars gt-bars", "aria-label": "下一个 token 的候选（点一个把它接上）" });
  const rest = h("p", { class: "widget-caption gt-rest" });
  const outside = h("div", { class: "gt-outside", hidden: true });
  const greedy = h("button", { type: "button", class: "btn-primary gt-greedy", onclick: () => act(() => 0, "贪心") }, "贪心：选第一名");
  const sample = h("button", { type: "button", class: "gt-sample", onclick: () => act(sampleIndex, "抽样") }, "按温度抽一个");
  const undo = h("button", { type: "button", class: "gt-undo", onclick: () => { path.pop(); render(); status.textContent = "撤销了一步。"; } }, "撤销一步");
  const reset = h("button", { type: "button", class: "gt-reset", onclick: () => { path = []; render(); status.textContent = "回到了开头。"; } }, "重来");
  const tempButtons = choiceButtons(temps.map((t) => `T = ${t}`), { label: "温度", initial: tIndex,
    onSelect: (i, fromUser) => { if (fromUser) { tIndex = i; render(); status.textContent = `温度改为 ${temps[i]}。`; } } });
  const prompts = data.prompts.length > 1 ? choiceButtons(data.prompts.map((p) => p.title), { label: "开头", initial: 0,
    onSelect: (i, fromUser) => { if (fromUser) { prompt = i; path = []; render(); status.textContent = `换成了“${data.prompts[i].title}”。`; } } }) : null;

  body.replaceChildren(
    prompts ? h("div", { class: "widget-controls" }, h("span", { class: "widget-label" }, "开头"), prompts.el) : null,
    text, stepInfo,
    h("div", { class: "widget-controls" }, h("span", { class: "widget-label" }, "温度"), tempButtons.el),
    list, rest, outside,
    h("div", { class: "widget-controls gt-actions" }, greedy, sample, undo, reset),
    status);

  const full = () => (data.full ? data.full[data.prompts[prompt].id] : null);
  const strings = () => (full() ? full().strings : data.prompts[prompt].strings);

  /** The node the text is at: the prompt's root, a node of the loaded tree, or null (outside the tree). */
  function node() {
    if (!path.length) return data.prompts[prompt].root;
    const last = path[path.length - 1];
    return last.node >= 0 && full() ? full().nodes[last.node] : null;
  }

  function sampleIndex(nd) { // temperature sampling among the shown tokens, in proportion to their probabilities at T
    const p = nd.p[tIndex];
    let u = Math.random() * p.reduce((a, b) => a + b, 0);
    for (let k = 0; k < p.length; k++) { u -= p[k]; if (u < 0) return k; }
    return p.length - 1;
  }

  async function pick(k, how) {
    if (busy) return;
    const nd = node();
    if (!nd) return;
    busy = true;
    try {
      if (!data.full) {
        status.textContent = "正在加载预先算好的续写树…";
        const loaded = await load();
        data.full = loaded;
      }
    } catch (err) {
      status.textContent = "数据加载失败，请刷新页面重试。";
      console.warn("generation-tree:", err); // eslint-disable-line no-console
      busy = false;
      return;
    }
    busy = false;
    const id = nd.t[k];
    const word = strings()[String(id)];
    const share = pctRow(nd.p[tIndex])[k];
    path.push({ id, text: word, node: nd.c[k] });
    render();
    const where = nd.c[k] < 0 ? "这一步已经走出了预先算好的树。" : "";
    status.textContent = `${how}：接上「${shown(word)}」（${share}%）。${where}`;
  }

  function act(choose, how) {
    const nd = node();
    if (nd) pick(choose(nd), how === "抽样" ? `按 T = ${temps[tIndex]} 抽样` : how);
  }

  function render() {
    const p0 = data.prompts[prompt];
    const nd = node();
    text.replaceChildren(h("span", { class: "gt-prompt" }, p0.text),
      ...path.map((step, i) => h("span", { class: `gt-added${step.node < 0 ? " is-outside" : ""}${i === path.length - 1 ? " is-last" : ""}` }, inText(step.text))));
    stepInfo.textContent = `已生成 ${path.length} 个 token（预先算好的树最深 ${data.depth} 步）。`;
    undo.disabled = !path.length;
    reset.disabled = !path.length;
    greedy.disabled = !nd;
    sample.disabled = !nd;
    outside.hidden = Boolean(nd);
    list.hidden = !nd;
    rest.hidden = !nd;
    if (!nd) {
      const deep = path.length > data.depth;
      outside.replaceChildren(
        h("p", { class: "gt-outside-title" }, deep ? "到头了：预先算好的树只有这么深。" : "这里超出了预先算好的树。"),
        h("p", {}, "浏览器里并没有运行模型：每一步的概率都是网页生成时用 NumPy 跑真实模型预先算好的。"
          + `为了控制页面大小，只为前几步的热门候选各算了后续（每步分叉 ${data.branching.join("、")} 个，之后只沿第一名往下），`
          + "你刚才选的这条路不在其中。模型本身当然可以接着算——只要把新的 token 接在末尾，再完整跑一遍前向计算。"),
        h("p", {}, "点“撤销一步”回到树里，换一个候选试试。"));
      return;
    }
    const p = nd.p[tIndex];
    const tail = Math.max(0, 1 - p.reduce((a, b) => a + b, 0)); // the rest of the vocabulary (generation_tree.py with_tail)
    const percents = pctRow([...p, tail]);
    const words = nd.t.map((id) => strings()[String(id)]);
    list.replaceChildren(...words.map((w, k) => {
      const fill = h("span", { class: "bar-fill", style: { width: `${(p[k] * 100).toFixed(2)}%` } });
      const off = nd.c[k] < 0;
      return h("li", {}, h("button", { type: "button", class: `gt-pick${off ? " is-leaf" : ""}`,
        "aria-label": `接上「${shown(w)}」：${percents[k]}%${off ? "（之后不在预先算好的树里）" : ""}`,
        onclick: () => pick(k, "你选了") }, shown(w)),
      h("span", { class: "bar-track" }, fill), h("span", { class: "bar-value" }, `${percents[k]}%`));
    }), h("li", { class: "gt-tail" }, h("span", { class: "bar-label" }, `其余 ${others} 个`),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${(tail * 100).toFixed(2)}%` } })),
      h("span", { class: "bar-value" }, `${percents[data.top]}%`)));
    rest.textContent = `T = ${temps[tIndex]} 时的概率。抽样只在前 ${data.top} 个里进行（按它们的概率比例）；带虚线的候选之后不在预先算好的树里。`;
  }

  render();
}
