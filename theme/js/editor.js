// Entry of assets/editor.js: CodeMirror and the autocomplete for the code cells. assets/cells.js loads it
// only when a reader is about to edit or run code (focus, 运行, or an idle moment once the cells are near),
// so the first view ships the server-highlighted <pre> instead of ~300 KB of editor. It is a classic
// script that registers itself on Course.editor because file:// pages cannot import() or fetch() scripts.
import { createEditor, setCode, setErrorLine } from "./cells/editor.js";
import { courseCompletionSource, loadCompletionData } from "./cells/completions.js";
import { part } from "./shared/course.js";

Object.assign(part("editor"), { createEditor, setCode, setErrorLine, courseCompletionSource, loadCompletionData });
