// Where a decoder-only Transformer's parameters are (widget.py). The presets arrive with
// their counts from attention_core/param_count.py; when the reader edits a number the same arithmetic runs here
// (`countParameters`, checked against the Python by tests/course/test_module06.py).
import { choiceButtons, h, liveRegion, num } from "@theme/widgets/common.js";

/** attention_core/param_count.py `check_config`, in words for the reader; [] when the numbers can be counted. */
export function configProblems(cfg) {
  const problems = [];
  for (const key of ["vocab_size", "n_layers", "d_model", "n_heads", "n_kv_heads", "d_ffn", "context_length"]) {
    if (!Number.isInteger(cfg[key]) || cfg[key] < 1) problems.push(`${key} 必须是正整数`);
  }
  if (problems.length) return problems;
  if (cfg.d_model % cfg.n_heads) problems.push(`d_model（${cfg.d_model}）必须能被注意力头数（${cfg.n_heads}）整除`);
  if (cfg.n_heads % cfg.n_kv_heads) problems.push(`注意力头数（${cfg.n_heads}）必须能被 K/V 头数（${cfg.n_kv_heads}）整除`);
  return problems;
}

/** attention_core/param_count.py `count_parameters`, term for term (plain numbers: exact below 2^53). */
export function countParameters(cfg) {
  const d = cfg.d_model;
  const f = cfg.d_ffn;
  const dh = d / cfg.n_heads;
  const qWidth = cfg.n_heads * dh;
  const kvWidth = cfg.n_kv_heads * dh;
  let attention = d * qWidth + 2 * d * kvWidth + qWidth * d;
  let mlp = (cfg.ffn === "swiglu" ? 3 : 2) * d * f;
  if (cfg.bias) {
    attention += qWidth + 2 * kvWidth + d;
    mlp += (cfg.ffn === "swiglu" ? 2 * f : f) + d;
  }
  const oneNorm = cfg.norm === "layernorm" ? 2 * d : d;
  const token = cfg.vocab_size * d;
  const positions = cfg.positions === "learned" ? cfg.context_length * d : 0;
  const lmHead = cfg.tied_embeddings ? 0 : cfg.vocab_size * d;
  const parts = {
    token_embedding: token,
    position_embedding: positions,
    embeddings: token + positions,
    attention: cfg.n_layers * attention,
    mlp: cfg.n_layers * mlp,
    norms: cfg.n_layers * 2 * oneNorm + oneNorm,
    lm_head: lmHead,
    attention_per_layer: attention,
    mlp_per_layer: mlp,
    norms_per_layer: 2 * oneNorm,
  };
  parts.total = parts.embeddings + parts.attention + parts.mlp + parts.norms + lmHead;
  return parts;
}

/** 124.4M / 174.6B / 9.4K, a trailing .0 dropped (param_count.py `short_count`). */
export function shortCount(n) {
  for (const [size, unit] of [[1e9, "B"], [1e6, "M"], [1e3, "K"]]) {
    if (n >= size) return `${(n / size).toFixed(1).replace(/\.0$/, "")}${unit}`;
  }
  return String(Math.trunc(n));
}

const grouped = (n) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const live = liveRegion();
  let cfg = { ...data.presets[data.preset].config };
  const inputs = {};
  const selects = {};
  const fields = data.fields.map(([key, label]) => {
    const input = h("input", { type: "number", min: 1, step: 1, inputmode: "numeric", value: cfg[key],
      onchange: () => edit(), oninput: () => edit() });
    inputs[key] = input;
    return h("label", { class: "pc-field" }, h("span", {}, label), input);
  });
  const choiceFields = Object.entries(data.choices).map(([key, options]) => {
    const select = h("select", { onchange: () => edit() },
      options.map(([value, text], i) => h("option", { value: String(i) }, text)));
    selects[key] = { select, options };
    return h("label", { class: "pc-field" }, h("span", {}, data.choice_labels[key]), select);
  });
  const custom = data.presets.length;
  const presets = choiceButtons(data.presets.map((p) => p.config.name).concat(["自定义"]), {
    label: "选择配置", initial: data.preset, onSelect: (i, fromUser) => { if (fromUser && i < custom) usePreset(i); },
  });
  presets.el.classList.add("pc-presets");
  const totalLine = h("p", { class: "widget-caption pc-total" });
  const caption = h("caption");
  const tbody = h("tbody");
  const table = h("div", { class: "heat-scroll" }, h("table", { class: "num-table pc-table" }, caption,
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "部分"), h("th", { scope: "col" }, "参数"),
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "条形")), h("th", { scope: "col" }, "占比"))), tbody));
  body.replaceChildren(h("div", { class: "widget-controls pc-controls" }, presets.el, h("div", { class: "pc-grid" }, fields, choiceFields)),
    totalLine, table, live);

  function fill() {
    for (const [key, input] of Object.entries(inputs)) input.value = String(cfg[key]);
    for (const [key, { select, options }] of Object.entries(selects)) {
      select.value = String(options.findIndex(([value]) => value === cfg[key]));
    }
  }
  function draw(counts, published) {
    const total = counts.total;
    totalLine.replaceChildren(`${cfg.name}：合计 `, h("strong", {}, grouped(total)), ` 个参数（${shortCount(total)}）`,
      published ? `；公开数字 ${shortCount(published.value)}（${published.source}）` : "");
    caption.textContent = `参数分布（每层：注意力 ${grouped(counts.attention_per_layer)}，FFN ${grouped(counts.mlp_per_layer)}）`;
    tbody.replaceChildren(...data.parts.map(([key, label]) => {
      const share = total > 0 ? (counts[key] / total) * 100 : 0;
      return h("tr", { "data-part": key }, h("th", { scope: "row" }, label), h("td", { class: "pc-num" }, grouped(counts[key])),
        h("td", { class: "pc-bar" }, h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${share.toFixed(1)}%` } }))),
        h("td", { class: "pc-share" }, `${num(share, 1)}%`));
    }));
  }
  function usePreset(i) {
    const p = data.presets[i];
    cfg = { ...p.config };
    fill();
    draw(p.counts, { value: p.config.published, source: p.config.source }); // the build's numbers (Python)
    live.textContent = `${cfg.name}：合计 ${shortCount(p.counts.total)} 个参数`;
  }
  function edit() {
    const next = { ...cfg, name: "自定义配置" };
    for (const [key, input] of Object.entries(inputs)) next[key] = input.value.trim() === "" ? NaN : Number(input.value);
    for (const [key, { select, options }] of Object.entries(selects)) next[key] = options[+select.value][0];
    const problems = configProblems(next);
    presets.select(custom, false);
    if (problems.length) {
      live.textContent = `无法计算：${problems.join("；")}`;
      totalLine.replaceChildren(`无法计算：${problems.join("；")}`);
      return;
    }
    cfg = next;
    draw(countParameters(cfg), null);
    live.textContent = `自定义配置：合计 ${shortCount(cfg === next ? countParameters(cfg).total : 0)} 个参数`;
  }
  usePreset(data.preset);
  live.textContent = "";
}
