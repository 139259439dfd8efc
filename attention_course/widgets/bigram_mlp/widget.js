// The MLP language model of module 04 (widget.py): the loss curves, the two models' samples and
// the embedding map are drawn at build time (inline SVG with <title>/<desc>, lists and a coordinates table), so the
// widget reads the same with or without JavaScript; there is nothing to change after the build.
export function mount() {}
