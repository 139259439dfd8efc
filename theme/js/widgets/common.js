// Shared helpers of the widgets: element building (text is always set as text, never parsed as HTML),
// number formatting, and the sequential colour scale (the colours themselves live in widgets.css so they
// follow dark mode; a cell only carries its weight as --w).

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

/** Whole percent, halves rounded up (the build's fallback tables use the same rule). */
export const pct = (w) => Math.round(w * 100);
export const pctText = (w) => `${pct(w)}%`;

/** Fixed decimals with a real minus sign; "-0.00" becomes "0.00". */
export function num(x, decimals = 2) {
  const text = x.toFixed(decimals);
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text.replace("-", "−");
}

export const vec = (v, decimals = 2) => `[${v.map((x) => num(x, decimals)).join(", ")}]`;

/** Above this weight the cell is dark enough (light mode) / light enough (dark mode) for the other text
 * colour: the palette in widgets.css is tuned so both sides keep about 4.5:1 contrast. */
export const HIGH = 0.52;

/** Paint an element with the heat scale: --w drives the colour-mix in CSS; dark text flips on dark cells. */
export function shade(el, w) {
  el.style.setProperty("--w", w.toFixed(2)); // 1% steps, as the build writes them (builder/widgets/fallback.py SHADE_DECIMALS)
  el.classList.toggle("is-high", w >= HIGH);
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
