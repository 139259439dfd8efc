"""markdown-it plugins for our own syntax: one module per extension, each `xxx_plugin(md, *, render=...)`."""
