// Real attention of SmolLM2-135M (widget.py). Three views of the same data:
//   explorer — one sentence as a token × token grid at a layer and head (or the heads' average); hover, focus or
//              tap a cell for its value; choose a query token for its row as bars;
//   compare  — two sentences side by side at one layer and head, rows that are the same marked as such;
//   gallery  — the best head for each pattern, its pattern drawn on a sentence.
// The page carries what the first view shows; every other layer and head comes from one data script
// (whole percentages, each row summing to 100) that is loaded the first time the reader asks for it.
import { choiceButtons, h, liveRegion, note, shade, wireGrid } from "@theme/widgets/common.js";
import { part } from "@theme/shared/course.js";

const CELL_HINT = "把鼠标移到格子上、轻触格子，或用方向键浏览。";
const HINT = "把鼠标移到格子上、轻触格子，或用方向键浏览；点行首的词看它这一行的柱状图。";

function decode(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Loads the widget's full data once (a <script src>, which works on file://); → {sentence id: {percents, mean}}
 * with both packed arrays decoded to bytes. */
function loader(data) {
  let promise = null;
  const decoded = (raw) => Object.fromEntries(Object.entries(raw).map(([id, d]) =>
    [id, { percents: decode(d.percents), mean: decode(d.mean) }]));
  return () => {
    const store = part("modelAttention");
    const key = `d${data.key}`;
    if (!promise && store[key]) promise = Promise.resolve(decoded(store[key]));
    if (!promise) {
      promise = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = data.data;
        script.onload = () => (store[key] ? resolve(decoded(store[key])) : reject(new Error(`${data.data} is empty`)));
        script.onerror = () => { promise = null; script.remove(); reject(new Error(`cannot load ${data.data}`)); };
        document.head.append(script);
      });
    }
    return promise;
  };
}

/** The (T, T) percentages of one head (or the layer's average) from the packed lower triangles. */
function unpack(full, n, heads, layer, head) {
  const tri = (n * (n + 1)) / 2;
  const bytes = head === "mean" ? full.mean : full.percents;
  const start = (head === "mean" ? layer : layer * heads + head) * tri;
  const rows = [];
  for (let i = 0, at = start; i < n; i++) {
    const row = new Array(n).fill(0);
    for (let j = 0; j <= i; j++) row[j] = bytes[at + j];
    rows.push(row);
    at += i + 1;
  }
  return rows;
}

const headText = (layer, head) => `第 ${layer} 层 · ${head === "mean" ? "各头平均" : `头 ${head}`}`;

/** A token × token grid (role=grid, one cell in the tab order, arrow keys); returns its parts. */
function grid(tokens, matrix, { label, readout, onRow, rowMark }) {
  const n = tokens.length;
  const cells = [];
  const rowHeads = tokens.map((t, i) => h("th", { scope: "row" },
    onRow ? h("button", { type: "button", class: "ma-row", "aria-label": `看“${t}”这一行（第 ${i + 1} 行）`,
      onclick: () => onRow(i) }, t) : t, rowMark ? rowMark(i) : null));
  const describe = (i, j) => (j > i ? `第 ${i + 1} 行第 ${j + 1} 列：${tokens[i]} → ${tokens[j]}：在它之后，看不见（因果遮罩）`
    : `第 ${i + 1} 行第 ${j + 1} 列：${tokens[i]} → ${tokens[j]}：${matrix[i][j]}%`);
  const table = h("table", { class: "heat-table heat-grid heat-long ma-grid", role: "grid", "aria-label": label },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Query ＼ Key")),
      tokens.map((t) => h("th", { scope: "col" }, h("span", { class: "heat-col" }, t))))),
    h("tbody", {}, tokens.map((t, i) => h("tr", { "data-row": i }, rowHeads[i], tokens.map((_, j) => {
      const off = j > i; // rows may carry only their i + 1 visible entries (the page's first view)
      const w = off ? 0 : matrix[i][j];
      const cell = h("td", { role: "gridcell", class: `heat-cell${off ? " is-masked" : ""}`, tabindex: "-1",
        "data-row": i, "data-col": j, "aria-label": describe(i, j) }, off ? "—" : String(w));
      if (!off) shade(cell, w / 100);
      cells.push(cell);
      return cell;
    })))));
  const show = (c) => { if (readout) readout.textContent = describe(+c.dataset.row, +c.dataset.col); };
  wireGrid(table, n, { cellAt: (i, j) => cells[i * n + j], show });
  return { table, rows: [...table.tBodies[0].rows] };
}

/** Layer and head controls; `onChange(layer, head)` after the full data has loaded. */
function layerHeadControls(data, load, status, onChange) {
  let layer = data.layer;
  let head = data.head;
  const layerInput = h("input", { type: "range", min: 0, max: data.layers - 1, step: 1, value: layer,
    "aria-label": "层（0 到 " + (data.layers - 1) + "）", class: "ma-layer" });
  const layerValue = h("output", { class: "ma-layer-value", "aria-hidden": "true" }, String(layer));
  const heads = [...Array(data.heads).keys()].map(String).concat(["平均"]);
  const headIndex = (x) => (x === "mean" ? data.heads : x);
  const headButtons = choiceButtons(heads.map((x, i) => (i === data.heads ? "平均" : `头 ${x}`)), {
    label: "注意力头", initial: headIndex(head),
    onSelect: (i, fromUser) => { if (fromUser) { head = i === data.heads ? "mean" : i; update(); } },
  });
  async function update() {
    layerValue.textContent = String(layer);
    status.textContent = "正在加载全部 30 层的注意力数据…";
    try {
      const full = await load();
      status.textContent = "";
      onChange(layer, head, full);
    } catch (err) {
      status.textContent = "数据加载失败，请刷新页面重试。";
      console.warn("model-attention:", err); // eslint-disable-line no-console
    }
  }
  layerInput.addEventListener("input", () => { layer = +layerInput.value; update(); });
  const reload = () => update();
  const el = h("div", { class: "widget-controls ma-controls" },
    // a <div>, not a <label>: a label holds one control, and the slider is named by its aria-label
    h("div", { class: "ma-layer-label" }, h("span", { class: "widget-label" }, "层"), layerInput, layerValue),
    headButtons.el);
  return { el, get: () => [layer, head], reload };
}

function bars(tokens, row, i) {
  return h("ol", { class: "bars ma-bars", "aria-label": `“${tokens[i]}”（第 ${i + 1} 行）分给前面每个 token 的注意力` },
    tokens.slice(0, i + 1).map((t, j) => h("li", {}, h("span", { class: "bar-label" }, t),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${row[j]}%` } })),
      h("span", { class: "bar-value" }, `${row[j]}%`))));
}

function explorer(root, body, data, load) {
  let sentence = 0;
  let query = null;
  let matrices = data.sentences.map((s) => s.matrix);
  let [layer, head] = [data.layer, data.head];
  const status = liveRegion("widget-caption ma-status");
  const readout = h("p", { class: "heat-readout", "aria-live": "polite" }, HINT);
  const caption = h("p", { class: "widget-caption ma-caption" });
  const gridWrap = h("div", { class: "heat-scroll" });
  const rowWrap = h("div", { class: "ma-row-view" });
  const noteEl = note("");
  const sentences = choiceButtons(data.sentences.map((s) => s.title), {
    label: "选择句子",
    onSelect: (i) => {
      sentence = i;
      query = null;
      if (matrices[i]) draw();
      else controls.reload(); // only the first sentence's numbers are in the page
    },
  });
  const controls = layerHeadControls(data, load, status, (l, hd, full) => {
    [layer, head] = [l, hd];
    matrices = data.sentences.map((s) => unpack(full[s.id], s.tokens.length, data.heads, l, hd));
    draw();
  });
  function draw() {
    const s = data.sentences[sentence];
    const m = matrices[sentence];
    caption.textContent = `${s.text}（${headText(layer, head)}）`;
    const g = grid(s.tokens, m, { label: `${s.title}：${headText(layer, head)}的注意力（%）`, readout,
      onRow: (i) => { query = i; draw(); } });
    if (query !== null) g.rows[query].classList.add("is-query");
    gridWrap.replaceChildren(g.table);
    rowWrap.replaceChildren(...(query === null ? [] : [h("p", { class: "widget-caption" },
      `第 ${query + 1} 行“${s.tokens[query]}”：它只能看自己和前面的 token，权重合计 100%`), bars(s.tokens, m[query], query)]));
    noteEl.textContent = s.note;
  }
  body.replaceChildren(h("div", { class: "widget-controls" }, sentences.el), controls.el, status, caption,
    gridWrap, readout, rowWrap, noteEl);
  draw();
}

/** The rows of a fallback table (the build's static heatmap): each row's visible percentages. */
function readTable(table) {
  return [...table.tBodies[0].rows].map((row) => [...row.cells].slice(1)
    .filter((cell) => !cell.colSpan || cell.colSpan === 1).filter((cell) => cell.textContent !== "—")
    .map((cell) => Number(cell.textContent)));
}

function compare(root, body, data, load) {
  const facts = data.compare;
  const fallbackTables = [...body.querySelectorAll("table")];
  const status = liveRegion("widget-caption ma-status");
  const readout = h("p", { class: "heat-readout", "aria-live": "polite" }, CELL_HINT);
  const summary = h("p", { class: "widget-caption ma-summary" });
  const pair = h("div", { class: "ma-pair" });
  let matrices = data.sentences.map((s, k) => s.matrix || readTable(fallbackTables[k])); // the first view's numbers
  let [layer, head] = [data.layer, data.head];
  const controls = layerHeadControls(data, load, status, (l, hd, full) => {
    [layer, head] = [l, hd];
    matrices = data.sentences.map((s) => unpack(full[s.id], s.tokens.length, data.heads, l, hd));
    draw();
  });
  function draw() {
    const same = [];
    for (let i = 0; i < facts.shared_prefix; i++) {
      if (matrices[0][i].slice(0, i + 1).every((w, j) => w === matrices[1][i][j])) same.push(i);
    }
    const mark = (i) => (same.includes(i) ? h("span", { class: "ma-same", title: "两句这一行完全相同" }, " ＝") : null);
    pair.replaceChildren(...data.sentences.map((s, k) => {
      const g = grid(s.tokens, matrices[k], { label: `${s.title}：${headText(layer, head)}（%）`, readout, rowMark: mark });
      g.rows.forEach((row, i) => row.classList.add(same.includes(i) ? "is-same" : "is-different"));
      if (facts.focus[k]) g.rows[facts.focus[k].row].classList.add("is-query"); // the row the lesson reads
      return h("figure", { class: "ma-side" }, h("figcaption", {}, s.title), h("div", { class: "heat-scroll" }, g.table));
    }));
    const focus = facts.focus.map((f, k) => (f ? `${data.sentences[k].tokens[f.row].trim()} → `
      + f.keys.map((j) => `${data.sentences[k].tokens[j].trim()} ${matrices[k][f.row][j]}%`).join("、") : null))
      .filter(Boolean).join("；");
    summary.textContent = `${headText(layer, head)}：两句的前 ${facts.shared_prefix} 个 token 相同，`
      + `其中 ${same.length} 行的注意力逐格相同（标 ＝）；${focus}。`;
  }
  body.replaceChildren(controls.el, status, summary, pair, readout, note(data.sentences[0].note));
  draw();
}

function gallery(root, body, data, load) {
  const s = data.sentences[0];
  const readout = h("p", { class: "heat-readout", "aria-live": "polite" }, CELL_HINT);
  const status = liveRegion("widget-caption ma-status");
  body.prepend(status);
  status.textContent = "正在加载例句的注意力数据…";
  load().then((full) => {
    const cards = data.gallery.map((g) => h("figure", { class: "ma-card" },
      h("figcaption", {}, h("strong", {}, g.name), ` · 第 ${g.layer} 层 · 头 ${g.head}`),
      h("p", { class: "widget-caption" }, `得分 ${g.score.toFixed(2)}（全部 ${data.layers * data.heads} 个头的中位数 ${g.median.toFixed(2)}）：${g.what}`),
      h("div", { class: "heat-scroll" }, grid(s.tokens, unpack(full[s.id], s.tokens.length, data.heads, g.layer, g.head),
        { label: `${g.name}：第 ${g.layer} 层头 ${g.head} 在例句上的注意力（%）`, readout }).table)));
    body.replaceChildren(h("p", { class: "widget-caption" }, `例句：${s.text}`), h("div", { class: "ma-cards" }, cards),
      readout, note(s.note));
  }).catch((err) => {
    status.textContent = "数据加载失败，请刷新页面重试。";
    console.warn("model-attention:", err); // eslint-disable-line no-console
  });
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body");
  const load = loader(data);
  if (data.view === "compare") compare(root, body, data, load);
  else if (data.view === "gallery") gallery(root, body, data, load);
  else explorer(root, body, data, load);
}
