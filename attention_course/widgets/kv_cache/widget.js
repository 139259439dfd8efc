// The KV cache per token: layers × 2 × KV heads × head_dim × bytes (attention_core.qkv.kv_cache_bytes_per_token,
// the same product). A preset fills the inputs; the reader may type any sizes. Bad input shows a message, never NaN.
import { choiceButtons, h, liveRegion } from "@theme/widgets/common.js";

/** layers × 2 (K and V) × KV heads × head_dim × bytes per number. */
export function kvBytesPerToken(layers, kvHeads, headDim, bytes) {
  return layers * 2 * kvHeads * headDim * bytes;
}

/** 23040 → "23,040" (widget.py group_digits). */
export const groupDigits = (n) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** Bytes as KiB / MiB / GiB with one decimal (widget.py binary_size). */
export function binarySize(n) {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]]) {
    if (n >= size) return `${(n / size).toFixed(1)} ${unit}`;
  }
  return `${Math.round(n)} B`;
}

const LABELS = { float32: "float32 · 4 字节", float16: "float16 · 2 字节", int8: "int8 · 1 字节" };

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const base = root.id || "kv";
  const field = (key, label, min, max) => {
    const id = `${base}-${key}`;
    const input = h("input", { type: "number", id, min, max, step: 1, inputmode: "numeric", class: "kv-input", "data-key": key });
    return { input, el: h("label", { for: id, class: "kv-field" }, h("span", {}, label), input) };
  };
  const fields = {
    layers: field("layers", "层数", 1, 1000),
    kv_heads: field("kv_heads", "KV 头数", 1, 1000),
    head_dim: field("head_dim", "头维度", 1, 100000),
    context: field("context", "上下文长度（token）", 1, 100000000),
  };
  const dtypeId = `${base}-dtype`;
  const dtype = h("select", { id: dtypeId, class: "kv-dtype" },
    data.dtypes.map((d, i) => h("option", { value: i, selected: i === data.dtype }, LABELS[d.name] || d.name)));
  const formula = h("p", { class: "kv-formula" });
  const total = h("p", { class: "kv-total" });
  const compare = h("p", { class: "widget-caption kv-compare" });
  const source = h("p", { class: "widget-note kv-source" });
  const live = liveRegion();
  let preset = data.model;
  const presets = choiceButtons(data.presets.map((p) => p.label), {
    label: "选择模型", initial: preset, onSelect: (i) => { preset = i; fill(); update(); },
  });

  function fill() {
    const p = data.presets[preset];
    fields.layers.input.value = p.layers;
    fields.kv_heads.input.value = p.kv_heads;
    fields.head_dim.input.value = p.head_dim;
  }

  function readInt(f) {
    const text = f.input.value.trim();
    const v = Number(text);
    const ok = text !== "" && Number.isInteger(v) && v >= +f.input.min && v <= +f.input.max;
    f.input.setAttribute("aria-invalid", String(!ok));
    return ok ? v : null;
  }

  function update() {
    const [layers, kv, dim, ctx] = ["layers", "kv_heads", "head_dim", "context"].map((k) => readInt(fields[k]));
    const bytes = data.dtypes[+dtype.value].bytes;
    const p = data.presets[preset];
    const matches = layers === p.layers && kv === p.kv_heads && dim === p.head_dim;
    presets.buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(matches && i === preset)));
    if ([layers, kv, dim, ctx].includes(null)) {
      formula.textContent = "请在每一格里填一个正整数。";
      total.textContent = "";
      compare.textContent = "";
      return;
    }
    const perToken = kvBytesPerToken(layers, kv, dim, bytes);
    formula.replaceChildren(`${layers} 层 × 2（K 和 V）× ${kv} 个 KV 头 × ${dim} 维 × ${bytes} 字节 = `,
      h("strong", { class: "kv-per-token" }, `${groupDigits(perToken)} 字节`), `（${binarySize(perToken)}）/ 每个 token`);
    total.replaceChildren(`${groupDigits(ctx)} 个 token 的上下文：`, h("strong", { class: "kv-context" }, binarySize(perToken * ctx)));
    compare.textContent = matches && p.heads !== p.kv_heads
      ? `${p.label} 有 ${p.heads} 个查询头、只有 ${p.kv_heads} 个 KV 头；若每个查询头都有自己的 K 和 V，每个 token 要 ${groupDigits(kvBytesPerToken(layers, p.heads, dim, bytes))} 字节，是现在的 ${p.heads / p.kv_heads} 倍。`
      : matches ? `${p.label} 没有共享 K/V：查询头和 KV 头一样多（${p.heads} 个）。` : "自定义尺寸。";
    source.textContent = matches ? `尺寸来源：${p.source}` : "";
    live.textContent = `每个 token ${groupDigits(perToken)} 字节，整个上下文 ${binarySize(perToken * ctx)}`;
  }

  body.replaceChildren(presets.el,
    h("div", { class: "kv-fields" }, fields.layers.el, fields.kv_heads.el, fields.head_dim.el, fields.context.el,
      h("label", { for: dtypeId, class: "kv-field" }, h("span", {}, "每个数"), dtype)),
    formula, total, compare, live, source);
  fill();
  fields.context.input.value = data.context;
  for (const f of Object.values(fields)) f.input.addEventListener("input", update);
  dtype.addEventListener("change", update);
  update();
}
