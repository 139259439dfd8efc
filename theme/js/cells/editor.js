// The CodeMirror 6 editor of one cell: Python highlighting in the theme's colours, line numbers, bracket
// matching, autocomplete, Ctrl/⌘+Enter to run and Shift+Enter to run and go to the next cell.
// Tab indents (indentWithTab), so there is an escape hatch: Esc, then Tab moves focus on (built into
// CodeMirror's tab-focus mode) — the editor never traps keyboard users.
import { EditorView, Decoration, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  highlightSpecialChars } from "@codemirror/view";
import { EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python, pythonLanguage } from "@codemirror/lang-python";
import { bracketMatching, forceParsing, indentOnInput, indentUnit, syntaxHighlighting, HighlightStyle } from "@codemirror/language";
import { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { tags as t } from "@lezer/highlight";

// Same colour variables as the build-time Pygments highlighting (theme/css/base.css), so nothing
// changes colour when the editor replaces the static code.
const courseHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword, t.operatorKeyword, t.bool, t.null,
    t.self], color: "var(--hl-kw)", fontWeight: "500" },
  { tag: [t.string, t.special(t.string), t.docString], color: "var(--hl-str)" },
  { tag: [t.number, t.integer, t.float], color: "var(--hl-num)" },
  { tag: [t.comment, t.lineComment, t.blockComment], color: "var(--hl-com)", fontStyle: "italic" },
  { tag: [t.function(t.definition(t.variableName)), t.function(t.variableName), t.definition(t.className),
    t.standard(t.variableName)], color: "var(--hl-fn)" },
  { tag: [t.operator, t.arithmeticOperator, t.compareOperator, t.logicOperator, t.updateOperator],
    color: "var(--hl-op)" },
]);

const courseTheme = EditorView.theme({
  "&": { color: "var(--fg)", backgroundColor: "var(--code-bg)", fontSize: ".88rem" },
  "&.cm-focused": { outline: "none" },
  ".cm-scroller": { fontFamily: "var(--font-mono)", lineHeight: "1.55" },
  ".cm-content": { padding: ".9rem 0", caretColor: "var(--fg)" },
  ".cm-line": { padding: "0 1rem 0 .5rem" },
  ".cm-gutters": { backgroundColor: "var(--code-bg)", color: "var(--muted)", border: "none",
    borderRight: "1px solid var(--border)" },
  ".cm-gutterElement": { padding: "0 .5rem 0 .75rem !important" },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--accent-2) 7%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "color-mix(in srgb, var(--accent-2) 12%, transparent)", color: "var(--fg)" },
  "&.cm-focused .cm-cursor": { borderLeftColor: "var(--fg)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection":
    { backgroundColor: "color-mix(in srgb, var(--accent-2) 28%, transparent) !important" },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: "color-mix(in srgb, var(--accent-3) 30%, transparent)",
    outline: "1px solid var(--accent-3)" },
  "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: "color-mix(in srgb, var(--danger) 25%, transparent)" },
  ".cm-tooltip": { backgroundColor: "var(--surface)", color: "var(--fg)", border: "1px solid var(--border)",
    borderRadius: "8px", boxShadow: "var(--shadow)" },
  ".cm-tooltip-autocomplete > ul": { fontFamily: "var(--font-mono)", maxHeight: "14em" },
  ".cm-tooltip-autocomplete > ul > li": { padding: "2px .6em" },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": { backgroundColor: "var(--accent-2)", color: "var(--bg)" },
  ".cm-completionDetail": { color: "inherit", opacity: ".75", fontStyle: "normal", marginLeft: ".8em" },
  ".cm-completionInfo": { fontFamily: "var(--font-sans)", whiteSpace: "pre-wrap", maxWidth: "26rem", padding: ".4rem .6rem",
    lineHeight: "1.5" },
  ".cm-errorLine": { backgroundColor: "color-mix(in srgb, var(--danger) 14%, transparent)" },
});

// The line that raised in the last run, highlighted until the code changes or the next run.
const setErrorLineEffect = StateEffect.define();
const errorLineMark = Decoration.line({ class: "cm-errorLine" });
const errorLineField = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    for (const e of tr.effects) {
      if (e.is(setErrorLineEffect)) {
        return e.value ? Decoration.set([errorLineMark.range(tr.state.doc.line(e.value).from)]) : Decoration.none;
      }
    }
    return tr.docChanged ? Decoration.none : deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** Highlight line `line` (1-based) as the one that raised; null clears it. */
export function setErrorLine(view, line) {
  const valid = line && line >= 1 && line <= view.state.doc.lines ? line : null;
  view.dispatch({ effects: setErrorLineEffect.of(valid) });
}

/**
 * Create an editor in place of `pre` (same font, line height and padding → same height, no layout shift).
 * handlers: {run(), runAndNext(), change(code)}; completionSource: a CodeMirror CompletionSource.
 */
export function createEditor({ pre, code, readOnly, label, handlers, completionSource }) {
  const runKeys = Prec.highest(keymap.of([
    { key: "Mod-Enter", run: () => { handlers.run(); return true; } },
    { key: "Shift-Enter", run: () => { handlers.runAndNext(); return true; } },
  ]));
  const extensions = [
    runKeys,
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    indentOnInput(),
    indentUnit.of("    "),
    bracketMatching(),
    closeBrackets(),
    highlightActiveLine(),
    python(),
    pythonLanguage.data.of({ autocomplete: completionSource }),
    autocompletion({ activateOnTyping: true, icons: false, maxRenderedOptions: 200 }),
    syntaxHighlighting(courseHighlight),
    courseTheme,
    errorLineField,
    keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, indentWithTab]),
    // tabindex: the scroller around it must hold focusable content (axe scrollable-region-focusable).
    EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
    EditorView.updateListener.of((update) => { if (update.docChanged) handlers.change(update.state.doc.toString()); }),
  ];
  if (readOnly) extensions.push(EditorState.readOnly.of(true));
  const view = new EditorView({ doc: code, extensions });
  // The whole cell highlighted before it is shown: CodeMirror parses within a small time budget and, on a
  // slow or busy machine, highlighted the rest a moment later, re-rendering lines the reader already saw
  // (a layout shift; cells are short, so this is a few ms at most).
  forceParsing(view, view.state.doc.length, 1000);
  pre.replaceWith(view.dom);
  return view;
}

export function setCode(view, code) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
}
