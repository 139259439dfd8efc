// The three language models of the Tang poems and the Transformer's head gallery (poem_models/widget.py): tables
// and inline SVG drawn at build time, so the widget reads the same with or without JavaScript; nothing to change.
export function mount() {}
