// 你来写一句 (poem_writer/widget.py): the tiny Transformer of the Tang poems runs here, in the reader's browser.
// Typing runs one new position per character (tiny_gpt.js createSession: a KV cache), so a keystroke costs a few
// milliseconds; the view shows every layer's and head's attention from the chosen query over what was typed, the
// most likely next characters, and a continuation drawn with NumPy's own generator (numpy_random.js), so a seed,
// a temperature and a text give the poem Python's sampler gives. The weights and the traditional → simplified map
// come from one data script, loaded when the widget mounts (its page script loads when it nears the view); until
// then the view is the build's first view (the same DOM as the static fallback, so nothing moves when it mounts).
import { h, liveRegion, num, pctRow, shade } from "@theme/widgets/common.js";
import { loadDataScript } from "@theme/widgets/data-script.js";
import { createSession, decodeWeights } from "../../poems/tiny_gpt.js";
import { defaultRng } from "../../poems/numpy_random.js";

const UNKNOWN_TITLE = "模型没见过这个字，按 □ 处理";

/** The typed text as the model reads it: spaces dropped, the map applied, unknown characters → id 1 (□). */
export function convertText(text, index, t2s) {
  const out = [];
  for (const typed of Array.from(text)) {
    if (/\s/.test(typed)) continue;
    const simple = t2s.get(typed) ?? typed;
    const id = index.get(simple) ?? 1;
    out.push({ typed, char: id === 1 ? typed : simple, id, known: id !== 1 });
  }
  return out;
}

/** softmax(logits / T) in doubles. */
export function probabilities(logits, temperature) {
  const V = logits.length;
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i] / temperature);
  const p = new Float64Array(V);
  let sum = 0;
  for (let i = 0; i < V; i++) sum += p[i] = Math.exp(logits[i] / temperature - max);
  for (let i = 0; i < V; i++) p[i] /= sum;
  return p;
}

function topK(p, k) {
  const order = [];
  for (let i = 0; i < p.length; i++) {
    if (order.length < k || p[i] > p[order[order.length - 1]]) {
      let at = order.length;
      while (at > 0 && p[order[at - 1]] < p[i]) at--;
      order.splice(at, 0, i);
      if (order.length > k) order.pop();
    }
  }
  return order;
}

/** A continuation of `ids` (◆ first) as transformer_lm.sample draws one: at each step P = softmax(logits / T) and
 * NumPy's Generator(PCG64(seed)).choice; stops at ◆, after `maxNew` characters, or when the context is full. */
export function continuation(model, ids, { seed, temperature, maxNew }) {
  const session = createSession(model);
  const rng = defaultRng(seed);
  let logits = null;
  ids.forEach((id, i) => { logits = session.push(id, { logits: i === ids.length - 1 }).logits; });
  const out = [];
  while (out.length < maxNew) {
    const next = rng.choice(probabilities(logits, temperature));
    if (next === 0) return { ids: out, ended: true };
    out.push(next);
    if (session.ids.length >= model.config.context) break;
    logits = session.push(next).logits;
  }
  return { ids: out, ended: false };
}


export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const base = root.id || "poem-writer";
  const limit = data.context - 1;
  let model = null;
  let index = new Map();
  let t2s = new Map();
  let session = null;
  let rows = []; // rows[pos][layer][head]: the attention row of position pos (pos + 1 weights)
  let lastLogits = null;
  let chars = data.first.chars;
  let query = chars.length;
  let probsT1 = null;
  let firstShown = data.first; // the build's view until the model is here
  let pending = false;

  // ---- controls
  const inputId = `${base}-text`;
  const input = h("input", { type: "text", id: inputId, class: "pw-input", value: data.text, lang: "zh-Hans",
    autocomplete: "off", spellcheck: "false", "aria-describedby": `${base}-hint` });
  const examples = h("div", { class: "seg pw-examples", role: "group", "aria-label": "挑一个开头" },
    data.examples.map((text) => h("button", { type: "button", class: "seg-btn",
      onclick: () => { input.value = text; update(); input.focus(); } }, text || "（空白）从头写")));
  const hint = h("p", { class: "widget-caption pw-hint", id: `${base}-hint` },
    `简体、繁体都行，最多 ${limit} 个字；标点只认“，”和“。”。`);
  const status = h("p", { class: "widget-caption pw-status", role: "status" });
  const strip = h("div", { class: "pw-chars", role: "toolbar", "aria-label": "选一个字，看它这一行的注意力（左右方向键）" });
  const gridCaption = h("p", { class: "widget-caption pw-grid-caption", "aria-hidden": "true" });
  const gridWrap = h("div", { class: "heat-scroll pw-scroll", tabindex: "0", role: "region",
    "aria-label": "每个头的注意力（可左右滑动）" });
  const topTitle = h("h3", { class: "widget-subtitle pw-top-title" }, "下一个字");
  const topList = h("ol", { class: "bars pw-top" });
  const live = liveRegion();

  const tempId = `${base}-t`;
  const seedId = `${base}-seed`;
  const temp = h("input", { type: "range", id: tempId, min: 0.2, max: 2, step: 0.1, value: data.temperature });
  const tempOut = h("output", { for: tempId, class: "temp-value" });
  const seed = h("input", { type: "number", id: seedId, min: 0, max: 2147483647, step: 1, value: data.seed,
    class: "bigram-seed pw-seed", inputmode: "numeric" });
  const write = h("button", { type: "button", class: "btn-primary pw-write", onclick: () => writeOn() }, "续写");
  const another = h("button", { type: "button", class: "pw-another",
    onclick: () => { seed.value = String((seedValue() + 1) % 2147483648); writeOn(); } }, "换个种子");
  const adopt = h("button", { type: "button", class: "pw-adopt", disabled: true,
    onclick: () => { input.value = poem.dataset.text || input.value; update(); input.focus(); } }, "放进输入框");
  const poem = h("p", { class: "pw-poem", "aria-live": "polite", lang: "zh-Hans" });
  const poemNote = h("p", { class: "widget-caption pw-poem-note" });

  body.replaceChildren(
    h("div", { class: "pw-js-only" }, examples),
    h("div", { class: "pw-input-row" }, h("label", { for: inputId, class: "widget-label" }, "诗的开头"), input),
    hint, strip, status, topTitle, topList,
    h("h3", { class: "widget-subtitle" }, "每个头在看哪里"), gridCaption, gridWrap,
    live,
    h("div", { class: "pw-js-only pw-writer" },
      h("h3", { class: "widget-subtitle" }, "让它接着写"),
      h("div", { class: "temp-control" }, h("label", { for: tempId }, "温度 T"), temp, tempOut),
      h("div", { class: "widget-controls" }, h("label", { for: seedId }, "随机种子"), seed, write, another, adopt),
      poem, poemNote),
    ...[...body.querySelectorAll(".widget-note")]);

  // ---- drawing
  function label(pos) {
    if (pos === 0) return "◆";
    const c = chars[pos - 1];
    return c.known ? c.char : "□";
  }

  function drawChips() {
    const chips = [h("button", { type: "button", class: "pw-char pw-boundary", title: "诗的开头", "data-pos": 0 }, "◆")];
    chars.forEach((c, i) => {
      const attrs = { type: "button", class: "pw-char", "data-pos": i + 1 };
      if (!c.known) {
        attrs.class += " is-unknown";
        attrs.title = UNKNOWN_TITLE;
        attrs["aria-label"] = `${c.typed}：${UNKNOWN_TITLE}`;
      } else if (c.typed !== c.char) {
        attrs.class += " is-converted";
        attrs.title = `由“${c.typed}”转成简体`;
        attrs["aria-label"] = `${c.char}（由“${c.typed}”转成简体）`;
      }
      chips.push(h("button", attrs, c.known ? c.char : c.typed));
    });
    chips.forEach((b, pos) => {
      b.setAttribute("aria-pressed", String(pos === query));
      b.tabIndex = pos === query ? 0 : -1;
      if (pos === query) b.classList.add("is-query");
    });
    strip.replaceChildren(...chips);
  }

  function pickQuery(pos, focus) {
    query = Math.max(0, Math.min(chars.length, pos));
    drawChips();
    drawGrid();
    if (focus) strip.querySelector(`[data-pos="${query}"]`).focus();
  }

  strip.addEventListener("click", (e) => {
    const b = e.target.closest("[data-pos]");
    if (b) pickQuery(+b.dataset.pos, true);
  });
  strip.addEventListener("keydown", (e) => {
    const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1 };
    if (moves[e.key]) pickQuery(query + moves[e.key], true);
    else if (e.key === "Home") pickQuery(0, true);
    else if (e.key === "End") pickQuery(chars.length, true);
    else return;
    e.preventDefault();
  });

  function rowOf(layer, head) {
    if (model) return rows[query][layer][head];
    return query === chars.length ? firstShown.attention[layer][head] : null;
  }

  function drawGrid() {
    const n = chars.length + 1;
    const head = h("tr", {}, h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "层与头 ＼ 字")),
      Array.from({ length: n }, (_, j) => h("th", { scope: "col", class: j === query ? "pw-q" : null }, label(j))));
    const bodyRows = [];
    for (let l = 0; l < data.layers; l++) {
      for (let hd = 0; hd < data.heads; hd++) {
        const row = rowOf(l, hd);
        const shown = row ? pctRow(row.slice(0, query + 1)) : null; // each row adds up to 100, like the fallback's
        const name = data.head_names[`${l},${hd}`];
        const cells = [];
        for (let j = 0; j < n; j++) {
          if (!row || j > query) { cells.push(h("td")); continue; }
          const cell = h("td", { title: `第 ${l} 层 · 头 ${hd}：${label(query)} → ${label(j)} ${num(row[j] * 100, 1)}%` }, String(shown[j]));
          shade(cell, row[j]);
          cells.push(cell);
        }
        bodyRows.push(h("tr", { class: name ? "pw-named" : null }, h("th", { scope: "row" }, `第 ${l} 层 · 头 ${hd}`,
          name ? h("span", { class: "pw-head-name" }, name) : null), cells));
      }
    }
    const caption = `查询是“${label(query)}”（第 ${query} 个位置）：每一行是一个头，格子里是它分给前面各字的注意力（%）`;
    gridCaption.textContent = caption;
    const table = h("table", { class: "heat-table heat-static pw-grid" },
      h("caption", { class: "visually-hidden" }, caption), h("thead", {}, head), h("tbody", {}, bodyRows));
    gridWrap.replaceChildren(table);
    // keep the query's column in view (a long text scrolls sideways on a phone)
    const column = head.children[query + 1];
    const rowHead = head.children[0];
    const right = column.offsetLeft + column.offsetWidth;
    if (right > gridWrap.scrollLeft + gridWrap.clientWidth || column.offsetLeft < gridWrap.scrollLeft + rowHead.offsetWidth) {
      gridWrap.scrollLeft = Math.max(0, right - gridWrap.clientWidth + 8);
    }
  }

  function temperature() {
    return Math.min(2, Math.max(0.2, +temp.value || 1));
  }

  function drawTop(announce) {
    const t = model ? temperature() : 1; // before the weights are here: the build's numbers, at T = 1
    let top;
    if (model) {
      const p = t === 1 ? probsT1 : probabilities(lastLogits, t);
      top = topK(p, data.top).map((i) => [model.vocab[i], p[i]]);
    } else {
      top = firstShown.top; // the build's, at T = 1
    }
    const peak = Math.max(...top.map(([, p]) => p)) || 1;
    const shown = (ch) => (ch === "◆" ? "◆（结束）" : ch);
    topTitle.textContent = `下一个字（温度 T = ${num(t, 1)}）`;
    topList.setAttribute("aria-label", `下一个字的概率（温度 ${num(t, 1)}）`);
    topList.replaceChildren(...top.map(([ch, p]) => h("li", {},
      h("span", { class: "bar-label" }, shown(ch)),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${((p / peak) * 100).toFixed(1)}%` } })),
      h("span", { class: "bar-value" }, `${num(p * 100, 1)}%`))));
    if (announce) {
      live.textContent = `下一个字最可能是：${top.slice(0, 3).map(([ch, p]) => `${shown(ch)} ${num(p * 100, 1)}%`).join("，")}`;
    }
  }

  // ---- the model
  function run() {
    const ids = [0, ...chars.map((c) => c.id)];
    let keep = 0;
    while (keep < session.ids.length && keep < ids.length && session.ids[keep] === ids[keep]) keep++;
    if (keep === ids.length && lastLogits && rows.length === ids.length) return; // nothing changed
    if (keep === ids.length) keep -= 1; // a deletion: run the last position again for its logits
    session.truncate(keep);
    rows.length = keep;
    for (let i = keep; i < ids.length; i++) {
      const step = session.push(ids[i], { logits: i === ids.length - 1 });
      rows.push(step.attention);
      if (step.logits) lastLogits = step.logits;
    }
    probsT1 = probabilities(lastLogits, 1);
  }

  function update() {
    let converted = convertText(input.value, index, t2s);
    let message = "";
    if (converted.length > limit) {
      converted = converted.slice(0, limit);
      message = `模型一次最多看 ${limit} 个字，后面的字没有算进去。`;
    }
    chars = converted;
    query = chars.length;
    if (!model) {
      pending = true;
      status.textContent = "正在载入模型…";
      drawChips();
      drawGrid();
      return;
    }
    const unknown = chars.filter((c) => !c.known).length;
    run();
    status.textContent = message || (unknown ? `有 ${unknown} 个字模型没见过（灰色），按 □ 处理。` : "");
    drawChips();
    drawGrid();
    drawTop(true);
    root.dataset.resultFor = input.value; // what the view now shows (tests and bench/poem_writer_bench.py wait for it)
  }

  function seedValue() {
    const s = Math.floor(Number(seed.value));
    return Number.isFinite(s) && s >= 0 ? s % 2147483648 : 0;
  }

  function showTemp() {
    tempOut.textContent = `T = ${num(temperature(), 1)}`;
    temp.setAttribute("aria-valuetext", `温度 ${num(temperature(), 1)}`);
  }

  function writeOn() {
    if (!model) { status.textContent = "正在载入模型…"; return; }
    const t = temperature();
    const s = seedValue();
    const ids = [0, ...chars.map((c) => c.id)];
    const prefix = chars.map((c) => (c.known ? c.char : "□")).join("");
    const { ids: more, ended } = continuation(model, ids, { seed: s, temperature: t, maxNew: data.max_new });
    const added = more.map((i) => model.vocab[i]).join("");
    poem.replaceChildren(prefix, h("mark", { class: "pw-new" }, added), ended ? "◆" : "");
    poem.dataset.text = (prefix + added).replace(/□/g, "");
    poem.dataset.seed = String(s);
    poem.dataset.temperature = num(t, 1);
    poem.dataset.added = added;
    adopt.disabled = !added;
    poemNote.textContent = ended
      ? `种子 ${s}、温度 ${num(t, 1)}：写到 ◆（这首诗写完了）为止，新写的字用底色标出。`
      : `种子 ${s}、温度 ${num(t, 1)}：写满 ${more.length} 个字（或模型的 ${data.context} 个位置）就停下。`;
  }

  // ---- start
  input.addEventListener("input", update);
  temp.addEventListener("input", () => { showTemp(); drawTop(false); });
  showTemp();
  drawChips();
  drawGrid();
  drawTop(false);
  poemNote.textContent = `按“续写”，模型从你写的地方接着写，直到写完一首（◆）或满 ${data.max_new} 字。`;
  const started = performance.now();
  return loadDataScript("poemWriter", data).then((loaded) => {
    model = decodeWeights(loaded.model);
    index = new Map(model.vocab.map((ch, i) => [ch, i]));
    const pairs = Array.from(loaded.t2s);
    t2s = new Map();
    for (let k = 0; k + 1 < pairs.length; k += 2) t2s.set(pairs[k], pairs[k + 1]);
    session = createSession(model);
    root.dataset.loadMs = String(Math.round(performance.now() - started));
    firstShown = null;
    status.textContent = "";
    if (pending) update();
    else {
      chars = convertText(input.value, index, t2s).slice(0, limit);
      run();
      drawGrid();
      drawTop(false);
      root.dataset.resultFor = input.value;
    }
    root.dataset.model = "ready";
  }, (err) => {
    status.textContent = "模型载入失败，请刷新页面重试。";
    throw err;
  });
}
