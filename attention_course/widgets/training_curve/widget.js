// A live loss curve. A learner's training loop in the browser's Python sends the same JSON again every ≥ 0.25 s with
// more points, and the page calls `mount(root, data)` again on the same root: the first call builds the chart (one
// SVG, one <path> per series, a legend, a status line, a polite live region and a 数据表 in <details>), every later
// call only updates it in place — the paths' `d`, the ticks, the legend's latest values, the status — with no new
// listener, no new element outside the ticks and labels, and the same height, so focus and scroll stay where they
// are. A page's static widget (```{widget} training-curve```) mounts once on the build's data.
//
// The rules are widget.py's, step for step (nice_step, axes, thin, table_rows, summary: the course tests compare
// them); bad data shows a sentence in the box instead of the chart, never an exception.
import { h, liveRegion, num, svg as s } from "@theme/widgets/common.js";

const MAX_SERIES = 4;
const MAX_POINTS = 5000;
const MAX_REFERENCES = 4;
const MAX_MARKERS = 3;
const MAX_TEXT = 200;
const MAX_NAME = 60;
const DRAW_POINTS = 200;
const TABLE_ROWS = 8;
const DEFAULT_TITLE = "训练曲线";
const DASHES = ["", "8 4", "1 4", "10 3 2 3"]; // with the colours, so no series relies on colour alone
const SHAPES = ["circle", "square", "triangle", "diamond"]; // each series' last point and its legend swatch
const HEIGHT = 280; // the chart's fixed height (px): redraws never move what is below it
const FONT = 13;
const ANNOUNCE_MS = 10000; // the live region speaks at most this often while a run goes on (and when it ends)

// ---------------------------------------------------------------------------------------------- the schema

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const show = (v) => { try { return JSON.stringify(v) ?? String(v); } catch { return String(v); } };

function textProblem(d, key, where, limit, required) {
  const v = d[key];
  if (v === undefined || v === null) return required ? `${where} 缺少 ${key}` : null;
  if (typeof v !== "string") return `${where} 的 ${key} 应是文字，收到 ${show(v).slice(0, 40)}`;
  if (required && !v.trim()) return `${where} 的 ${key} 是空的`;
  if (v.length > limit) return `${where} 的 ${key} 有 ${v.length} 个字符（最多 ${limit} 个）`;
  return null;
}

function numberProblem(d, key, where, required) {
  const v = d[key];
  if (v === undefined || v === null) return required ? `${where} 缺少 ${key}` : null;
  return isNumber(v) ? null : `${where} 的 ${key} 应是有限的数，收到 ${show(v).slice(0, 40)}`;
}

function listProblem(d, key, limit, least) {
  const v = d[key];
  if (v === undefined || v === null) return least ? `缺少 ${key}` : null;
  if (!Array.isArray(v)) return `${key} 应是列表`;
  if (v.length < least || v.length > limit) return `${key} 有 ${v.length} 项（应在 ${least} 到 ${limit} 项之间）`;
  const bad = v.findIndex((item) => !isObject(item));
  return bad >= 0 ? `${key}[${bad}] 应是一个对象 {…}` : null;
}

/** Why `data` cannot be drawn (a sentence), or null: widget.py `check_curve`'s rules (unknown keys pass here). */
export function problemOf(d) {
  if (!isObject(d)) return "数据应是一个对象 {…}";
  for (const key of ["title", "x_label", "y_label", "status"]) {
    const p = textProblem(d, key, "数据", MAX_TEXT, false);
    if (p) return p;
  }
  for (const key of ["x_max", "y_min", "y_max"]) {
    const p = numberProblem(d, key, "数据", false);
    if (p) return p;
  }
  if (isNumber(d.x_max) && d.x_max <= 0) return "x_max 应大于 0";
  if (isNumber(d.y_min) && isNumber(d.y_max) && d.y_max <= d.y_min) return "y_max 应大于 y_min";
  if (d.done !== undefined && d.done !== null && typeof d.done !== "boolean") return "done 应是 true 或 false";
  const listed = listProblem(d, "series", MAX_SERIES, 1) || listProblem(d, "references", MAX_REFERENCES, 0)
    || listProblem(d, "markers", MAX_MARKERS, 0);
  if (listed) return listed;
  const names = new Set();
  for (const [i, series] of d.series.entries()) {
    const where = `series[${i}]`;
    const p = textProblem(series, "name", where, MAX_NAME, true);
    if (p) return p;
    if (names.has(series.name)) return `${where} 的名字“${series.name}”用了两次`;
    names.add(series.name);
    const pts = series.points;
    if (!Array.isArray(pts)) return `${where} 的 points 应是 [x, y] 的列表`;
    if (pts.length > MAX_POINTS) return `${where} 有 ${pts.length} 个点（最多 ${MAX_POINTS} 个）`;
    let last = -Infinity;
    for (let k = 0; k < pts.length; k += 1) {
      const p = pts[k];
      if (!Array.isArray(p) || p.length !== 2 || !isNumber(p[0]) || !isNumber(p[1])) {
        return `${where}.points[${k}] 应是两个有限的数 [x, y]，收到 ${show(p).slice(0, 40)}`;
      }
      if (p[0] < last) return `${where}.points[${k}] 的 x 往回走了（${p[0]} 在 ${last} 之后）`;
      last = p[0];
    }
  }
  for (const [i, r] of (d.references || []).entries()) {
    const p = textProblem(r, "name", `references[${i}]`, MAX_NAME, true) || numberProblem(r, "value", `references[${i}]`, true);
    if (p) return p;
  }
  for (const [i, m] of (d.markers || []).entries()) {
    const p = numberProblem(m, "x", `markers[${i}]`, true) || textProblem(m, "label", `markers[${i}]`, MAX_NAME, true);
    if (p) return p;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------- shared rules

/** A round tick step (1, 2, 2.5 or 5 × 10^k) giving about `count` steps over `span` (widget.py `nice_step`). */
export function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  if (!(raw > 0)) return 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5]) if (raw <= m * mag * (1 + 1e-9)) return m * mag;
  return 10 * mag;
}

const clean = (v) => Number(v.toPrecision(12));

export function ticks(lo, hi, step) {
  const out = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) out.push(clean(k * step));
  return out;
}

export function decimals(step) {
  let d = 0;
  while (d < 6 && Math.abs(step * 10 ** d - Math.round(step * 10 ** d)) > 1e-9) d += 1;
  return d;
}

/** A step as text: whole numbers without decimals, others with up to 2 (widget.py `x_text`). */
export function xText(x) {
  return Number.isInteger(x) ? String(x) : num(x, 2).replace(/0+$/, "").replace(/\.$/, "");
}

const fmt = (v) => num(v, 2);

function extent(d) {
  let xMin = Infinity;
  let xMax = -Infinity;
  let yMin = Infinity;
  let yMax = -Infinity;
  for (const series of d.series) {
    for (const [x, y] of series.points) {
      if (x < xMin) xMin = x;
      if (x > xMax) xMax = x;
      if (y < yMin) yMin = y;
      if (y > yMax) yMax = y;
    }
  }
  for (const r of d.references || []) {
    if (r.value < yMin) yMin = r.value;
    if (r.value > yMax) yMax = r.value;
  }
  return { xMin, xMax, yMin, yMax };
}

/** [x0, x1, y0, y1]: the plotted ranges (widget.py `axes`). */
export function axes(d) {
  const e = extent(d);
  const x0 = Math.min(0, e.xMin);
  let x1 = Math.max(e.xMax, isNumber(d.x_max) ? d.x_max : -Infinity);
  if (!Number.isFinite(x1)) x1 = x0;
  if (x1 <= x0) x1 = x0 + 1;
  let y0 = isNumber(d.y_min) ? d.y_min : Math.min(0, e.yMin);
  let y1;
  if (isNumber(d.y_max)) {
    y1 = d.y_max;
  } else if (!(e.yMax > y0)) { // no values above the bottom (none yet, or a flat line on it): a unit box
    y1 = y0 + 1;
  } else {
    const step = niceStep(e.yMax - y0, 5);
    if (!isNumber(d.y_min)) y0 = clean(Math.floor(y0 / step + 1e-9) * step);
    y1 = clean(y0 + Math.ceil((e.yMax - y0) / step - 1e-9) * step);
  }
  return [x0, x1, y0, y1];
}

/** The smallest round whole number (1, 2, 2.5 or 5 × 10^n) at least `least` (widget.py `round_k`). */
export function roundK(least) {
  for (let mag = 1; ; mag *= 10) {
    for (const m of [1, 2, 2.5, 5]) if (m * mag >= least && Number.isInteger(m * mag)) return m * mag;
  }
}

/** Every k-th item and the last, at most `limit` of them (widget.py `thin`). */
export function thin(items, limit) {
  const n = items.length;
  if (n <= limit) return items.slice();
  const k = roundK(Math.ceil((n - 1) / (limit - 1)));
  const out = [];
  for (let i = 0; i < n - 1; i += k) out.push(items[i]);
  out.push(items[n - 1]);
  return out;
}

/** [[x, [value or null per series]], …]: every k-th x of all series and the last (widget.py `table_rows`). */
export function tableRows(d) {
  const xs = [...new Set(d.series.flatMap((series) => series.points.map((p) => p[0])))].sort((a, b) => a - b);
  const at = d.series.map((series) => new Map(series.points.map((p) => [p[0], p[1]])));
  return thin(xs, TABLE_ROWS).map((x) => [x, at.map((m) => (m.has(x) ? m.get(x) : null))]);
}

/** One sentence: each series' first, last and lowest value, over which steps, and the references (widget.py). */
export function summary(d) {
  const title = d.title || DEFAULT_TITLE;
  const parts = d.series.map((series) => {
    const pts = series.points;
    if (!pts.length) return `${series.name}还没有数据`;
    const first = pts[0][1];
    const last = pts[pts.length - 1][1];
    if (pts.length === 1) return `${series.name}为 ${fmt(first)}`;
    let low = Infinity;
    for (const p of pts) if (p[1] < low) low = p[1];
    if (fmt(first) === fmt(last)) return `${series.name}始终约为 ${fmt(first)}，最低 ${fmt(low)}`;
    return `${series.name}从 ${fmt(first)} ${last < first ? "降到" : "升到"} ${fmt(last)}，最低 ${fmt(low)}`;
  });
  const e = extent(d);
  const span = Number.isFinite(e.xMin) ? `（${d.x_label || "横轴"} ${xText(e.xMin)} 到 ${xText(e.xMax)}）` : "";
  const refs = (d.references || []).map((r) => `${r.name} 为 ${fmt(r.value)}`).join("、");
  return `${title}${span}：${parts.join("；")}${refs ? `；参考线：${refs}` : ""}。`;
}

/** The table's caption and the references and markers in words (widget.py `table_caption`, `notes_text`). */
function tableCaption(d) {
  const n = new Set(d.series.flatMap((series) => series.points.map((p) => p[0]))).size;
  return n > TABLE_ROWS ? `每隔几个点取一行（共 ${n} 个点）` : "全部的点";
}

function notesText(d) {
  const parts = [];
  if (d.references?.length) parts.push(`参考线：${d.references.map((r) => `${r.name} = ${fmt(r.value)}`).join("；")}`);
  if (d.markers?.length) parts.push(`标记：${d.markers.map((m) => `${xText(m.x)} 处 ${m.label}`).join("；")}`);
  return parts.length ? `${parts.join("。")}。` : "";
}

/** A small marker shape centred on (x, y) as path data (widget.py `shape_path`). */
export function shapePath(kind, x, y, r = 4.5) {
  const f = (v) => v.toFixed(1);
  if (kind === "square") {
    const a = r * 0.85;
    return `M${f(x - a)},${f(y - a)}h${f(2 * a)}v${f(2 * a)}h${f(-2 * a)}Z`;
  }
  if (kind === "triangle") return `M${f(x)},${f(y - r * 1.15)}L${f(x + r * 1.1)},${f(y + r * 0.8)}L${f(x - r * 1.1)},${f(y + r * 0.8)}Z`;
  if (kind === "diamond") {
    const a = r * 1.2;
    return `M${f(x)},${f(y - a)}L${f(x + a)},${f(y)}L${f(x)},${f(y + a)}L${f(x - a)},${f(y)}Z`;
  }
  return `M${f(x - r)},${f(y)}a${f(r)},${f(r)} 0 1,0 ${f(2 * r)},0a${f(r)},${f(r)} 0 1,0 ${f(-2 * r)},0`;
}

const textWidth = (text, size) => {
  let w = 0;
  for (const c of text) w += c.codePointAt(0) > 0x2e7f ? size : 0.6 * size;
  return w;
};

/** Baselines for labels that want to be at `wanted`: at least `gap` apart, inside [top, bottom] (widget.py). */
export function labelPositions(wanted, top, bottom, gap) {
  const order = wanted.map((_, i) => i).sort((a, b) => wanted[a] - wanted[b]);
  const placed = new Array(wanted.length).fill(0);
  let last = -Infinity;
  for (const i of order) {
    const y = Math.max(wanted[i], last + gap, top);
    placed[i] = y;
    last = y;
  }
  const over = order.length ? last - bottom : 0;
  return over > 0 ? placed.map((y) => y - over) : placed;
}

/** Where each marker's label goes in the rows above the plot: [x, anchored at its end, row] (widget.py). */
export function markerRows(xs, labels, rightEdge, size) {
  const taken = [];
  return xs.map((x, i) => {
    const w = textWidth(labels[i], size);
    const end = x + 5 + w > rightEdge;
    const [a, b] = end ? [x - 5 - w, x - 5] : [x + 5, x + 5 + w];
    let row = taken.findIndex((spans) => spans.every(([c, e]) => b + 8 <= c || a >= e + 8));
    if (row < 0) {
      row = taken.length;
      taken.push([]);
    }
    taken[row].push([a, b]);
    return [end ? x - 5 : x + 5, end, row];
  });
}

// ---------------------------------------------------------------------------------------------- the chart

const states = new WeakMap(); // root → what the first mount built (its elements, the last data, the width)
let made = 0;

function swatch(i) {
  return s("svg", { class: `tc-swatch tc-s${i}`, viewBox: "0 0 30 12", width: 30, height: 12, "aria-hidden": "true" },
    s("path", { class: "tc-line", d: "M1,6h28", "stroke-dasharray": DASHES[i] || null }),
    s("path", { class: "tc-end", d: shapePath(SHAPES[i], 15, 6, 4) }));
}

function create(root, body) {
  made += 1;
  const id = `${root.id || "training-curve"}-tc${made}`;
  const el = {};
  el.title = h("p", { class: "tc-title" });
  el.legend = h("ul", { class: "tc-legend", "aria-label": "图例与最新的值" });
  el.svgTitle = s("title", { id: `${id}-t` });
  el.svgDesc = s("desc", { id: `${id}-d` });
  el.clipRect = s("rect", {});
  el.grid = s("g", { class: "tc-grid-lines" });
  el.xTicks = s("g", {});
  el.yTicks = s("g", {});
  el.axis = s("path", { class: "tc-axis" });
  el.xLabel = s("text", { class: "tc-axis-label", "text-anchor": "middle" });
  el.yLabel = s("text", { class: "tc-axis-label", x: 0, y: 16 });
  el.refs = s("g", {});
  el.markers = s("g", {});
  el.series = s("g", { "clip-path": `url(#${id}-clip)` });
  el.labels = s("g", {});
  el.svg = s("svg", { class: "tc-chart tc-live", role: "img", "aria-labelledby": `${id}-t`, "aria-describedby": `${id}-d`,
    viewBox: `0 0 640 ${HEIGHT}` },
  el.svgTitle, el.svgDesc, s("defs", {}, s("clipPath", { id: `${id}-clip` }, el.clipRect)),
  el.grid, el.yLabel, el.yTicks, el.xTicks, el.axis, el.xLabel, el.refs, el.markers, el.series, el.labels);
  el.plot = h("div", { class: "tc-plot" }, el.svg);
  el.status = h("p", { class: "tc-status" });
  el.live = liveRegion();
  el.caption = h("caption", {});
  el.head = h("tr", {});
  el.rows = h("tbody", {});
  el.notes = h("p", { class: "widget-caption tc-notes" });
  el.details = h("details", { class: "tc-details" }, h("summary", {}, "数据表"),
    h("div", { class: "heat-scroll" }, h("table", { class: "num-table tc-table" }, el.caption, h("thead", {}, el.head), el.rows)),
    el.notes);
  el.root = h("div", { class: "tc" }, el.title, el.legend, el.plot, el.status, el.live, el.details);
  body.replaceChildren(el.root);
  const state = { el, data: null, width: Math.round(el.plot.clientWidth) || 640, legendKey: "", lastSpoken: 0,
    wasDone: false, drawn: "" };
  el.details.addEventListener("toggle", () => { if (el.details.open && state.data) fillTable(state, state.data); });
  if (typeof ResizeObserver === "function") {
    new ResizeObserver(() => {
      const w = Math.round(el.plot.clientWidth);
      if (w && w !== state.width && state.data) {
        state.width = w;
        state.drawn = "";
        draw(state, state.data);
      }
    }).observe(el.plot);
  }
  return state;
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function fillLegend(state, d) {
  const { el } = state;
  const key = JSON.stringify(d.series.map((series) => series.name));
  if (key !== state.legendKey) {
    state.legendKey = key;
    state.values = d.series.map(() => h("span", { class: "tc-value" }));
    el.legend.replaceChildren(...d.series.map((series, i) => h("li", { class: `tc-key tc-s${i}` }, swatch(i),
      h("span", { class: "tc-name" }, series.name), state.values[i])));
  }
  d.series.forEach((series, i) => {
    const pts = series.points;
    setText(state.values[i], pts.length ? fmt(pts[pts.length - 1][1]) : "—");
  });
}

function fillTable(state, d) {
  const { el } = state;
  setText(el.caption, tableCaption(d));
  const head = [d.x_label || "横轴", ...d.series.map((series) => series.name)];
  if (el.head.childElementCount !== head.length || head.some((t, i) => el.head.children[i].textContent !== t)) {
    el.head.replaceChildren(...head.map((t) => h("th", { scope: "col" }, t)));
  }
  el.rows.replaceChildren(...tableRows(d).map(([x, values]) => h("tr", {}, h("th", { scope: "row" }, xText(x)),
    values.map((v) => h("td", {}, v === null ? "—" : fmt(v))))));
  setText(el.notes, notesText(d));
  el.notes.hidden = !el.notes.textContent;
}

/** Redraw the SVG for `d` at the current width: the parts whose inputs did not change are left as they are. */
function draw(state, d) {
  const { el } = state;
  const width = Math.max(280, state.width);
  const [x0, x1, y0, y1] = axes(d);
  const yStep = niceStep(y1 - y0, 5);
  const yDec = decimals(yStep);
  const yTicks = ticks(y0, y1, yStep).filter((v) => v >= y0 - 1e-9 && v <= y1 + 1e-9);
  const left = Math.round(Math.max(24, ...yTicks.map((v) => textWidth(num(v, yDec), FONT))) + 12);
  const right = 14;
  const bottom = HEIGHT - 44;
  const pw = width - left - right;
  const xStep = niceStep(x1 - x0, Math.max(2, Math.floor(pw / 64)));
  const xDec = decimals(xStep);
  const sx = (v) => left + ((v - x0) / (x1 - x0)) * pw;
  // the markers' labels in rows above the plot (under the y label's row), so nothing on the plot covers them
  const marks = (d.markers || []).filter((m) => m.x >= x0 && m.x <= x1);
  const markAt = markerRows(marks.map((m) => sx(m.x)), marks.map((m) => m.label), width - right, FONT);
  const rowsTop = 22;
  const top = rowsTop + (Math.max(-1, ...markAt.map((m) => m[2])) + 1) * (FONT + 4) + 10;
  const sy = (v) => top + ((y1 - v) / (y1 - y0)) * (bottom - top);

  // the frame: ticks, labels, references and markers (only when their inputs changed)
  const frameKey = JSON.stringify([width, x0, x1, y0, y1, d.x_label, d.y_label, d.references, d.markers]);
  if (frameKey !== state.drawn) {
    state.drawn = frameKey;
    el.svg.setAttribute("viewBox", `0 0 ${width} ${HEIGHT}`);
    const clip = { x: left, y: top - 6, width: pw + right, height: bottom - top + 12 }; // the last points' shapes too
    for (const [k, v] of Object.entries(clip)) el.clipRect.setAttribute(k, v);
    const across = (cls, y) => s("line", { class: cls, x1: left, x2: width - right, y1: y.toFixed(1), y2: y.toFixed(1) });
    el.grid.replaceChildren(...yTicks.map((v) => across("tc-grid", sy(v))));
    el.yTicks.replaceChildren(...yTicks.map((v) => s("text", { class: "tc-tick", x: left - 7, y: (sy(v) + 4.5).toFixed(1),
      "text-anchor": "end" }, num(v, yDec))));
    el.xTicks.replaceChildren(...ticks(x0, x1, xStep).flatMap((v) => [
      s("line", { class: "tc-axis", x1: sx(v).toFixed(1), x2: sx(v).toFixed(1), y1: bottom, y2: bottom + 5 }),
      s("text", { class: "tc-tick", x: sx(v).toFixed(1), y: bottom + 19, "text-anchor": "middle" }, num(v, xDec))]));
    el.axis.setAttribute("d", `M${left},${top - 6}V${bottom}H${width - right}`);
    setText(el.yLabel, d.y_label || "");
    setText(el.xLabel, d.x_label || "");
    el.xLabel.setAttribute("x", (left + pw / 2).toFixed(1));
    el.xLabel.setAttribute("y", HEIGHT - 6);
    const refs = d.references || [];
    const refYs = refs.map((r) => sy(Math.min(Math.max(r.value, y0), y1)));
    el.refs.replaceChildren(...refYs.map((y) => across("tc-ref", y)));
    el.markers.replaceChildren(...marks.map((m, k) => s("line", { class: "tc-marker", x1: sx(m.x).toFixed(1),
      x2: sx(m.x).toFixed(1), y1: rowsTop + markAt[k][2] * (FONT + 4) + 4, y2: bottom })));
    const labelYs = labelPositions(refYs.map((y) => y - 5), top + FONT, bottom - 4, FONT + 3);
    el.labels.replaceChildren(
      ...refs.map((r, i) => s("text", { class: "tc-ref-label", x: width - right - 4, y: labelYs[i].toFixed(1),
        "text-anchor": "end" }, `${r.name} = ${fmt(r.value)}`)),
      ...marks.map((m, k) => {
        const [x, end, row] = markAt[k];
        return s("text", { class: "tc-marker-label", x: x.toFixed(1), y: rowsTop + FONT + row * (FONT + 4),
          "text-anchor": end ? "end" : null }, m.label);
      }));
  }

  // the series: one path each (every k-th point and the last) and a shape on its last point
  const groups = el.series.children;
  while (groups.length > d.series.length) groups[groups.length - 1].remove();
  d.series.forEach((series, i) => {
    let g = groups[i];
    if (!g) {
      g = s("g", { class: `tc-s${i}` }, s("path", { class: "tc-line", "stroke-dasharray": DASHES[i] || null }),
        s("path", { class: "tc-end" }));
      el.series.append(g);
    }
    const pts = thin(series.points, DRAW_POINTS);
    let path = "";
    for (let k = 0; k < pts.length; k += 1) {
      path += `${k ? "L" : "M"}${sx(pts[k][0]).toFixed(1)},${sy(pts[k][1]).toFixed(1)}`;
    }
    const lastPoint = pts[pts.length - 1];
    g.firstChild.setAttribute("d", path || "M0,0");
    g.lastChild.setAttribute("d", lastPoint ? shapePath(SHAPES[i], sx(lastPoint[0]), sy(lastPoint[1])) : "M0,0");
    g.setAttribute("visibility", lastPoint ? "visible" : "hidden");
  });
}

function announce(state, d, first) {
  const done = d.done === true;
  const now = Date.now();
  if (first) {
    state.lastSpoken = now;
  } else if ((done && !state.wasDone) || (!done && now - state.lastSpoken >= ANNOUNCE_MS)) {
    state.lastSpoken = now;
    const values = d.series.filter((series) => series.points.length)
      .map((series) => `${series.name} ${fmt(series.points[series.points.length - 1][1])}`).join("，");
    state.el.live.textContent = `${done ? "训练结束。" : ""}${d.status || values}`;
  }
  state.wasDone = done;
}

function update(state, d) {
  const first = state.data === null;
  state.data = d;
  const { el } = state;
  setText(el.title, d.title || DEFAULT_TITLE);
  setText(el.svgTitle, d.title || DEFAULT_TITLE);
  setText(el.svgDesc, summary(d));
  fillLegend(state, d);
  draw(state, d);
  setText(el.status, d.status || "");
  el.root.classList.toggle("is-done", d.done === true);
  if (el.details.open) fillTable(state, d);
  announce(state, d, first);
}

function showProblem(root, body, message) {
  states.delete(root);
  body.replaceChildren(h("p", { class: "tc-problem" }, `无法画出训练曲线：${message}。`));
}

export function mount(root, data) {
  const body = root.querySelector(".widget-body") || root;
  try {
    const problem = problemOf(data);
    if (problem) {
      showProblem(root, body, problem);
      return;
    }
    let state = states.get(root);
    if (!state || !body.contains(state.el.root)) {
      state = create(root, body);
      states.set(root, state);
    }
    update(state, data);
  } catch (err) {
    showProblem(root, body, `出了意外（${err && err.message ? err.message : err}）`);
  }
}
