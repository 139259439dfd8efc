// Autocomplete for the code cells, without Python: NumPy's and the course packages' members come from
// assets/numpy-completions.js (generated at build time from the installed NumPy by builder/runtime/completions.py),
// and names defined anywhere on the page come from the cells' current text.

import { part } from "../shared/course.js";

let loading = null;

/** Inject the completions script once (a <script>, because fetch() is blocked on file://); it sets
 * Course.editor.completions. */
export function loadCompletionData(url) {
  if (part("editor").completions) return Promise.resolve(part("editor").completions);
  if (!url) return Promise.resolve(null);
  if (!loading) {
    loading = new Promise((resolve) => {
      const s = document.createElement("script");
      s.src = url;
      s.onload = () => resolve(part("editor").completions || null);
      s.onerror = () => { loading = null; resolve(null); };
      document.head.appendChild(s);
    });
  }
  return loading;
}

const TYPE = { function: "function", class: "class", namespace: "namespace", constant: "constant", variable: "variable" };

/** What names on the page refer to: import aliases, Generators, arrays (a cheap, regex-level guess). `packages`:
 *  the top-level modules the completion data lists (NumPy and the course's browser packages). */
export function pageBindings(sources, packages = ["numpy"]) {
  const text = sources.join("\n");
  const aliases = new Map([["np", "numpy"], ...packages.map((p) => [p, p])]);
  const names = packages.map((p) => p.replace(/[.$]/g, "\\$&")).join("|");
  for (const m of text.matchAll(new RegExp(`^\\s*import\\s+((?:${names})(?:\\.\\w+)?)\\s+as\\s+(\\w+)`, "gm"))) aliases.set(m[2], m[1]);
  for (const m of text.matchAll(/^\s*from\s+numpy\s+import\s+(linalg|random|fft)(?:\s+as\s+(\w+))?/gm)) {
    aliases.set(m[2] || m[1], `numpy.${m[1]}`);
  }
  const modules = [...aliases.keys()].map((k) => k.replace(/[.$]/g, "\\$&")).join("|");
  const classes = new Map();
  // rng = np.random.default_rng(0)  → Generator
  for (const m of text.matchAll(new RegExp(`^\\s*(\\w+)\\s*=\\s*(?:${modules})\\.random\\.default_rng\\(`, "gm"))) {
    classes.set(m[1], "numpy.random.Generator");
  }
  // X = np.zeros(...), Q = rng.normal(...), A, B = ... @ ...  → ndarray (when not already a Generator)
  const producers = [...aliases.keys(), ...classes.keys()].map((k) => k.replace(/[.$]/g, "\\$&")).join("|");
  for (const m of text.matchAll(new RegExp(`^\\s*([\\w\\s,]+?)\\s*=\\s*(?:(?:${producers})\\.|.*@)`, "gm"))) {
    for (const name of m[1].split(",").map((s) => s.trim())) {
      if (/^[A-Za-z_]\w*$/.test(name) && !classes.has(name) && !aliases.has(name)) classes.set(name, "numpy.ndarray");
    }
  }
  return { aliases, classes };
}

/** Top-level names defined in the page's cells (assignments, def, class, for, import). */
export function definedNames(sources) {
  const names = new Map();
  const add = (name, type) => { if (/^[A-Za-z_]\w*$/.test(name) && !names.has(name)) names.set(name, type); };
  for (const src of sources) {
    for (const m of src.matchAll(/^\s*def\s+(\w+)/gm)) add(m[1], "function");
    for (const m of src.matchAll(/^\s*class\s+(\w+)/gm)) add(m[1], "class");
    for (const m of src.matchAll(/^\s*(?:import\s+[\w.]+\s+as\s+(\w+)|import\s+(\w+)|from\s+[\w.]+\s+import\s+([\w, ]+))/gm)) {
      if (m[1] || m[2]) add(m[1] || m[2], "namespace");
      else for (const part of m[3].split(",")) add(part.trim().split(/\s+as\s+/).pop(), "variable");
    }
    for (const m of src.matchAll(/^\s*(?:for\s+)?([A-Za-z_][\w\s,]*?)\s*(?:=(?!=)|\s+in\s)/gm)) {
      for (const name of m[1].split(",")) add(name.trim(), "variable");
    }
  }
  return names;
}

function optionFor(entry) {
  const option = { label: entry.name, type: TYPE[entry.kind] || "variable" };
  if (entry.sig) option.detail = entry.sig.length > 48 ? entry.sig.slice(0, 47) + "…)" : entry.sig;
  const info = [entry.sig ? `${entry.name}${entry.sig}` : "", entry.doc || ""].filter(Boolean).join("\n\n");
  if (info) option.info = info;
  if (entry.kind === "namespace") option.boost = 1;
  return option;
}

function membersFor(data, path, bindings) {
  const parts = path.split(".");
  const head = parts[0];
  let key = bindings.aliases.get(head) || (bindings.classes.has(head) ? bindings.classes.get(head) : null);
  if (!key) return null;
  for (const part of parts.slice(1)) key = `${key}.${part}`;
  return data.modules[key] || data.classes[key] || null;
}

/**
 * A CodeMirror completion source. `getSources()` returns the current text of every cell on the page
 * (names defined in earlier cells are completed in later ones).
 */
export function courseCompletionSource(getSources, completionsURL) {
  return async (context) => {
    const dotted = context.matchBefore(/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.\w*$/);
    if (dotted) {
      const data = await loadCompletionData(completionsURL);
      if (!data) return null;
      const dot = dotted.text.lastIndexOf(".");
      const packages = Object.keys(data.modules).filter((m) => !m.includes("."));
      const members = membersFor(data, dotted.text.slice(0, dot), pageBindings(getSources(), packages));
      if (!members) return null;
      return { from: dotted.from + dot + 1, options: members.map(optionFor), validFor: /^\w*$/ };
    }
    const word = context.matchBefore(/[A-Za-z_]\w*$/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const names = definedNames(getSources());
    const options = [...names].map(([label, type]) => ({ label, type }));
    return options.length ? { from: word.from, options, validFor: /^\w*$/ } : null;
  };
}
