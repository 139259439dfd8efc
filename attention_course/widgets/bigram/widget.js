// Bigram model of the Tang poems (widget.py): the count / probability heatmap of the most frequent
// characters (the attention heatmap's scale and grid keys: common.js shade, wireGrid), a character's next-character
// distribution, and a sampler that writes a poem in the browser. The sampler's table (every character's most
// frequent next characters) is a data script loaded on first use; its randomness is a seeded generator
// (mulberry32), so a seed and a temperature always give the same poem (the e2e test recomputes it).
import { part } from "@theme/shared/course.js";
import { choiceButtons, h, note, num, shade, wireGrid } from "@theme/widgets/common.js";
import { loadDataScript } from "@theme/widgets/data-script.js";

const HINT = "把鼠标移到格子上、轻触格子，或用方向键浏览；点一个格子或下面的字，看这个字后面接什么。";
const MAX_LEN = 48;

/** mulberry32: a tiny seeded generator of floats in [0, 1) (same sequence for the same 32-bit seed). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One poem from the top-k table: from the boundary (id 0), draw each next id with weight count^(1/T) —
 * softmax(log count / T), the attention softmax's temperature — until the boundary comes again. */
export function samplePoem(table, seed, temperature) {
  const rand = mulberry32(seed);
  const out = [];
  let prev = 0;
  while (out.length < MAX_LEN) {
    const ids = table.next[prev];
    const weights = table.counts[prev].map((c) => (c > 0 ? c ** (1 / temperature) : 0));
    const total = weights.reduce((a, b) => a + b, 0);
    let r = rand() * total;
    let pick = ids[ids.length - 1];
    for (let k = 0; k < ids.length; k++) {
      r -= weights[k];
      if (r < 0) { pick = ids[k]; break; }
    }
    if (pick === 0) break;
    out.push(table.chars[pick]);
    prev = pick;
  }
  return out.join("");
}

function loader(data) {
  let promise = null;
  return () => {
    const store = part("bigram");
    const key = `d${data.key}`;
    const ready = () => ({ ...store[key], chars: Array.from(store[key].vocab) });
    if (!promise && store[key]) promise = Promise.resolve(ready());
    if (!promise) {
      promise = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = data.data;
        script.onload = () => (store[key] ? resolve(ready()) : reject(new Error(`${data.data} is empty`)));
        script.onerror = () => { promise = null; script.remove(); reject(new Error(`cannot load ${data.data}`)); };
        document.head.append(script);
      });
    }
    return promise;
  };
}

const thousands = (n) => n.toLocaleString("en-US");
const percent = (p) => `${num(p * 100, p < 0.1 ? 2 : 1)}%`;

export function mount(root, data) {
  // the heatmap's numbers are in a data script (widget.py HEAVY); the static view stays until then
  return loadDataScript("bigram", data.heat).then((numbers) => start(root, { ...data, ...numbers }));
}

function start(root, data) {
  const body = root.querySelector(".widget-body");
  const { chars } = data;
  const n = chars.length;
  const base = root.id || "bigram";
  let view = data.view;
  let selected = data.char;
  let active = [selected, 0];
  const load = loader(data);

  const readout = h("p", { class: "heat-readout", id: `${base}-readout`, "aria-live": "polite" }, HINT);
  const gridWrap = h("div", { class: "heat-scroll" });
  const views = choiceButtons(["概率", "次数"], {
    label: "热力图显示", initial: view === "count" ? 1 : 0,
    onSelect: (i, fromUser) => { view = i === 1 ? "count" : "probability"; drawGrid(); if (fromUser) readout.textContent = HINT; },
  });
  const legend = h("div", { class: "heat-legend", "aria-hidden": "true" },
    h("span", { class: "bigram-legend-lo" }, "0"), h("span", { class: "heat-legend-bar" }), h("span", { class: "bigram-legend-hi" }));
  const picker = choiceButtons(chars, {
    label: "选一个字，看它后面接什么", initial: selected,
    onSelect: (i) => { selected = i; drawNext(); },
  });
  picker.el.classList.add("bigram-chars");
  const nextTitle = h("p", { class: "widget-caption bigram-next-title" });
  const nextBars = h("ol", { class: "bars bigram-next" });

  const tempId = `${base}-t`;
  const seedId = `${base}-seed`;
  const temp = h("input", { type: "range", id: tempId, min: 0.2, max: 2, step: 0.1, value: data.temperature });
  const tempOut = h("output", { for: tempId, class: "temp-value" });
  const seed = h("input", { type: "number", id: seedId, min: 0, max: 2147483647, step: 1, value: data.seed,
    class: "bigram-seed", inputmode: "numeric" });
  const poem = h("p", { class: "bigram-poem", "aria-live": "polite", lang: "zh-Hans" }, "（按“生成”让模型写一首）");
  const status = h("p", { class: "widget-caption bigram-status" });
  const generate = h("button", { type: "button", class: "btn-primary bigram-generate", onclick: () => run() }, "生成");
  const another = h("button", { type: "button", class: "bigram-another",
    onclick: () => { seed.value = String((seedValue() + 1) % 2147483648); run(); } }, "换个种子再来");
  const f = data.quotes;

  body.replaceChildren(
    h("div", { class: "widget-controls" }, views.el),
    gridWrap, legend, readout,
    h("h3", { class: "widget-subtitle" }, "一个字后面接什么"),
    picker.el, nextTitle, nextBars,
    h("h3", { class: "widget-subtitle" }, "让二元模型写诗"),
    h("div", { class: "temp-control" }, h("label", { for: tempId }, "温度 T"), temp, tempOut),
    h("div", { class: "widget-controls bigram-sampler" },
      h("label", { for: seedId }, "随机种子"), seed, generate, another),
    poem, status,
    h("p", { class: "widget-caption bigram-ppl" },
      `验证集困惑度：二元模型 ${f.bigram_held_ppl}，只看字频的一元模型 ${f.unigram_held_ppl}，均匀乱猜 ${f.uniform_ppl}（越小越好）。`),
    note(data.note));

  function weight(i, j) {
    return view === "probability" ? data.probs[i][j] : data.counts[i][j] / data.max_count;
  }

  // the cell's visible text comes first in its name (WCAG 2.5.3: what you see is what a voice command says)
  function describe(i, j, text) {
    const row = data.rows[i];
    const shown = view === "probability" ? `约 ${text}%，精确值 ${percent(data.probs[i][j])}` : `${text} 次，概率 ${percent(data.probs[i][j])}`;
    return `“${chars[i]}”后面接“${chars[j]}”：${shown}（训练集里 ${thousands(data.counts[i][j])} 次，` +
      `“${chars[i]}”共出现在 ${thousands(row.total)} 个字之前）`;
  }

  function drawGrid() {
    const cells = [];
    const table = h("table", { class: "heat-table heat-grid bigram-grid", role: "grid",
      "aria-label": view === "probability" ? "下一个字的概率（%）：行是这个字，列是下一个字" : "相邻两字出现的次数：行是这个字，列是下一个字",
      "aria-describedby": readout.id },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "这个字 ＼ 下一个字")),
      chars.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, chars.map((c, i) => h("tr", {}, h("th", { scope: "row" }, c), chars.map((_, j) => {
      const text = view === "probability" ? String(Math.round(data.probs[i][j] * 100)) : compact(data.counts[i][j]);
      const cell = h("td", { role: "gridcell", class: "heat-cell", tabindex: "-1", "data-row": i, "data-col": j,
        "aria-label": describe(i, j, text) }, text);
      shade(cell, weight(i, j));
      cells.push(cell);
      return cell;
    })))));
    wireGrid(table, n, { cellAt: (i, j) => cells[i * n + j], active,
      show: (cell) => { readout.textContent = cell.getAttribute("aria-label"); },
      onActive: (where) => { active = where; picker.select(where[0]); } });
    gridWrap.replaceChildren(table);
    legend.querySelector(".bigram-legend-hi").textContent = view === "probability" ? "100%" : thousands(data.max_count);
  }

  function compact(count) {
    return count >= 10000 ? `${num(count / 10000, 1)}万` : String(count);
  }

  function drawNext() {
    const row = data.rows[selected];
    const rest = Math.max(0, 1 - row.next.reduce((a, [, , p]) => a + p, 0));
    nextTitle.textContent = `“${row.char}”后面最可能的 ${row.next.length} 个字（其余 ${percent(rest)}）：`;
    nextBars.setAttribute("aria-label", `“${row.char}”的下一个字的概率`);
    nextBars.replaceChildren(...row.next.map(([, ch, p, c]) => h("li", {},
      h("span", { class: "bar-label" }, ch),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${(p * 100).toFixed(2)}%` } })),
      h("span", { class: "bar-value", title: `${thousands(c)} 次` }, percent(p)))));
  }

  function seedValue() {
    const s = Math.floor(Number(seed.value));
    return Number.isFinite(s) && s >= 0 ? s % 2147483648 : 0;
  }

  function showTemp() {
    tempOut.textContent = `T = ${num(+temp.value, 1)}`;
    temp.setAttribute("aria-valuetext", `温度 ${num(+temp.value, 1)}`);
  }

  async function run() {
    const t = Math.min(2, Math.max(0.2, +temp.value || 1));
    const s = seedValue();
    status.textContent = "正在载入各字的后继表…";
    try {
      const table = await load();
      const text = samplePoem(table, s, t);
      poem.textContent = text || "（模型一开头就选了“结尾”）";
      poem.dataset.seed = String(s);
      poem.dataset.temperature = num(t, 1);
      status.textContent = `种子 ${s}，温度 ${num(t, 1)}：每一步只看前一个字，从它最常见的 ${f.successors} 个后继里按 次数^(1/T) 抽一个` +
        `（这 ${f.successors} 个后继平均占一个字全部后继的 ${f.successors_kept}）。`;
    } catch (err) {
      status.textContent = `载入失败：${err.message}`;
    }
  }

  temp.addEventListener("input", showTemp);
  showTemp();
  drawGrid();
  drawNext();
}
