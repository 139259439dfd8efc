// Shared helpers of the widgets: element building (text is always set as text, never parsed as HTML),
// number formatting, and the sequential colour scale (the colours themselves live in widgets.css so they
// follow dark mode; a cell only carries its weight as --w).

const SVG_NS = "http://www.w3.org/2000/svg";

/** Create an SVG element, like `h` (attributes and children only: the drawings need no handlers or styles). */
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined) el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Create an element: h("button", { class: "x", "aria-pressed": "true", onclick: fn }, "文字", child). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style") for (const [p, v] of Object.entries(value)) el.style.setProperty(p, v);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Whole percent, halves rounded up (the build's fallback tables use the same rule), for a lone number. */
export const pct = (w) => Math.round(w * 100);
export const pctText = (w) => `${pct(w)}%`;

/** Whole percents of a row of weights summing to its rounded total (100 for a softmax row): largest
 * remainder, ties to the leftmost — builder/widgets/fallback.py `percent_row`, step for step. */
export function pctRow(weights) {
  const scaled = weights.map((w) => w * 100);
  const floors = scaled.map(Math.floor);
  const target = Math.floor(scaled.reduce((a, b) => a + b, 0) + 0.5);
  const order = scaled.map((x, j) => j).sort((a, b) => (scaled[b] - floors[b]) - (scaled[a] - floors[a]) || a - b);
  let missing = target - floors.reduce((a, b) => a + b, 0);
  for (const j of order) {
    if (missing-- <= 0) break;
    floors[j] += 1;
  }
  return floors;
}

/** Two weights closer than this are the same number (fallback.py EQUAL_WEIGHTS). */
const EQUAL_WEIGHTS = 1e-9;

/** A row of weights as percent texts with `decimals` decimals ("34.5"): equal weights always show the same figure,
 * and the row adds up to its rounded total (100.0 for a softmax row) unless equal weights cannot share the last
 * steps — largest remainder handed to whole sets of equal weights, a set that does not fit passed over, and at the
 * end the first passed-over set whose rounding up brings the total nearer takes what is still missing.
 * builder/widgets/fallback.py `percent_row_even`, step for step. */
export function pctRowEven(weights, decimals = 1) {
  const scale = 10 ** (2 + decimals);
  const same = []; // the first index of each weight's set of equal weights
  weights.forEach((w, j) => {
    let k = 0;
    while (k < j && !(same[k] === k && Math.abs(weights[k] - w) <= EQUAL_WEIGHTS)) k++;
    same.push(k);
  });
  const scaled = weights.map((w, j) => weights[same[j]] * scale);
  const floors = scaled.map(Math.floor);
  let missing = Math.floor(weights.reduce((a, w) => a + w * scale, 0) + 0.5) - floors.reduce((a, b) => a + b, 0);
  const leaders = same.filter((k, j) => k === j && scaled[k] > floors[k])
    .sort((a, b) => (scaled[b] - floors[b]) - (scaled[a] - floors[a]) || a - b);
  const members = (k) => same.flatMap((s, j) => (s === k ? [j] : []));
  const passed = [];
  for (const k of leaders) {
    const set = members(k);
    if (set.length <= missing) {
      for (const j of set) floors[j] += 1;
      missing -= set.length;
    } else passed.push(k);
  }
  const up = passed.find((k) => missing > 0 && members(k).length - missing < missing);
  if (up !== undefined) for (const j of members(up)) floors[j] += 1;
  const unit = 10 ** decimals;
  return floors.map((steps) => (decimals
    ? `${Math.floor(steps / unit)}.${String(steps % unit).padStart(decimals, "0")}` : String(steps)));
}

/** Fixed decimals with a real minus sign; "-0.00" becomes "0.00". */
export function num(x, decimals = 2) {
  const text = x.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text.replace("-", "−");
}

export const vec = (v, decimals = 2) => `[${v.map((x) => num(x, decimals)).join(", ")}]`;

/** The heat scale's ends and text colours, light and dark: theme/css/widgets.css has the same values (a test
 * checks), builder/widgets/fallback.py HEAT_COLOURS too. */
export const HEAT_COLOURS = {
  light: { lo: "#f8fbfe", hi: "#061c42", text: "#000000", "text-high": "#ffffff" },
  dark: { lo: "#191e26", hi: "#b4d7ff", text: "#ffffff", "text-high": "#000000" },
};

const linear = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const hexRgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16) / 255);

function oklab(hex) {
  const [r, g, b] = hexRgb(hex).map(linear);
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s];
}

/** The 8-bit sRGB colour CSS draws for weight w (to 2 decimals, as --w is written): color-mix in OKLab. */
export function heatBackground(w, scheme) {
  const t = Number(w.toFixed(2));
  const lo = oklab(HEAT_COLOURS[scheme].lo);
  const hi = oklab(HEAT_COLOURS[scheme].hi);
  const [L, a, b] = hi.map((x, k) => x * t + lo[k] * (1 - t));
  const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
  const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
  const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
  return [4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
    -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
    -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s]
    .map((c) => (c <= 0.0031308 ? 12.92 * c : 1.055 * c ** (1 / 2.4) - 0.055))
    .map((c) => Math.round(Math.min(1, Math.max(0, c)) * 255));
}

const luminance = (rgb) => {
  const [r, g, b] = rgb.map((c) => linear(c / 255));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};

export function contrast(x, y) {
  const [a, b] = [luminance(x), luminance(y)].sort((p, q) => q - p);
  return (a + 0.05) / (b + 0.05);
}

/** The text colour of a heat cell is whichever of the scheme's two has the higher contrast on its background:
 * `is-high` selects --heat-text-high in the light scheme, `is-high-dark` in the dark one (fallback.py, same rule). */
export function inkClasses(w) {
  return [["is-high", "light"], ["is-high-dark", "dark"]].filter(([, scheme]) => {
    const bg = heatBackground(w, scheme);
    const rgb = (hex) => hexRgb(hex).map((c) => Math.round(c * 255));
    return contrast(bg, rgb(HEAT_COLOURS[scheme]["text-high"])) > contrast(bg, rgb(HEAT_COLOURS[scheme].text));
  }).map(([name]) => name);
}

/** Paint an element with the heat scale: --w drives the colour-mix in CSS; the text colour follows inkClasses. */
export function shade(el, w) {
  el.style.setProperty("--w", w.toFixed(2)); // 1% steps, as the build writes them (builder/widgets/fallback.py SHADE_DECIMALS)
  const ink = inkClasses(w);
  el.classList.toggle("is-high", ink.includes("is-high"));
  el.classList.toggle("is-high-dark", ink.includes("is-high-dark"));
}

/** A polite live region that announces changes to screen readers. */
export function liveRegion(className = "widget-live") {
  return h("p", { class: className, "aria-live": "polite", role: "status" });
}

/** Buttons acting as a single-choice group (aria-pressed); returns { el, select(i) }. */
export function choiceButtons(labels, { label, initial = 0, onSelect, className = "seg" }) {
  const buttons = labels.map((text, i) =>
    h("button", { type: "button", class: `${className}-btn`, "aria-pressed": String(i === initial),
      onclick: () => select(i, true) }, text));
  const el = h("div", { class: className, role: "group", "aria-label": label }, buttons);
  function select(i, fromUser) {
    buttons.forEach((b, k) => b.setAttribute("aria-pressed", String(k === i)));
    onSelect(i, fromUser);
  }
  return { el, buttons, select };
}

/** The example's note (the numbers are illustrative, 示意). */
export const note = (text) => h("p", { class: "widget-note" }, text);

/** Up to `decimals` decimals with trailing zeros dropped (for hand-checkable arithmetic: 0.4×2). */
export function short(x, decimals = 3) {
  const text = num(x, decimals).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  return text === "−0" ? "0" : text;
}

/** The keyboard and pointer behaviour of an n × n heat grid (role=grid): one cell in the tab order (roving
 * tabindex, starting at `active`), arrow keys, Home/End; hovering, focusing or clicking a cell calls `show(cell)`.
 * `cellAt(i, j)` finds a cell; `onActive([i, j])` hears where the tab stop moved (to keep it across redraws). */
export function wireGrid(table, n, { cellAt, show, active = [0, 0], onActive = () => {} }) {
  let current = active;
  cellAt(...current).tabIndex = 0;
  const focusCell = (i, j) => {
    cellAt(...current).tabIndex = -1;
    current = [i, j];
    onActive(current);
    const cell = cellAt(i, j);
    cell.tabIndex = 0;
    cell.focus();
  };
  const cellOf = (e) => e.target.closest("td[data-row]");
  table.addEventListener("mouseover", (e) => { const c = cellOf(e); if (c) show(c); });
  table.addEventListener("focusin", (e) => { const c = cellOf(e); if (c) show(c); });
  table.addEventListener("click", (e) => { const c = cellOf(e); if (c) focusCell(+c.dataset.row, +c.dataset.col); });
  table.addEventListener("keydown", (e) => {
    if (!cellOf(e)) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    let [i, j] = current;
    if (moves[e.key]) [i, j] = [i + moves[e.key][0], j + moves[e.key][1]];
    else if (e.key === "Home") j = 0;
    else if (e.key === "End") j = n - 1;
    else return;
    e.preventDefault();
    focusCell(Math.max(0, Math.min(n - 1, i)), Math.max(0, Math.min(n - 1, j)));
  });
}
