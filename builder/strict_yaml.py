"""YAML as the build reads it: PyYAML's safe loader, except that a key given twice in one mapping is an error.

Plain YAML keeps the last of two equal keys without a word (`title: A` … `title: B` publishes B), so a slip in
front matter, site.yml, glossary.yml or a widget's or quiz's body would silently drop what the author wrote first.
Here it raises a `yaml.constructor.ConstructorError` whose mark is the second key's line, which every caller
already reports as `path:line: … not valid YAML: duplicate key …`.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError


def _check_unique(node: yaml.MappingNode) -> None:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = (key_node.tag, key_node.value)
        first = seen.get(key)
        if first is not None:
            above = key_node.start_mark.line - first.start_mark.line
            where = f"{above} line{'s' if above != 1 else ''} above" if above > 0 else "earlier on this line"
            raise ConstructorError(
                None,
                None,
                f"duplicate key '{key_node.value}' (already set {where}; YAML would silently keep only the last)",
                key_node.start_mark,
            )
        seen[key] = key_node


class _Unique:
    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            _check_unique(node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class StrictLoader(_Unique, yaml.SafeLoader):
    """The pure-Python safe loader (its error messages are the ones reported)."""


FastStrictLoader: type = (
    type("FastStrictLoader", (_Unique, yaml.CSafeLoader), {}) if hasattr(yaml, "CSafeLoader") else StrictLoader
)
"""libyaml's safe loader (~10× faster), with the same duplicate-key check."""


def load(text: str) -> Any:
    """One YAML document as Python data; raises yaml.YAMLError (a duplicate key included)."""
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a safe loader


def compose_and_load(text: str, loader_class: type = StrictLoader) -> tuple[Any, Any]:
    """(node tree, Python data) of one YAML document, parsed once: the nodes keep every key's line."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return node, data


__all__ = ["FastStrictLoader", "StrictLoader", "compose_and_load", "load"]
