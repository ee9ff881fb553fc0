"""Strict parsing of ``SKILL.md`` frontmatter: only YAML that maps one-to-one onto JSON.

The listing carries frontmatter verbatim as JSON, so anchors, aliases, merge keys,
duplicate or non-string keys and binary or set values are refused.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import yaml
from pm_plugins.skills_sep2640.limits import (
    MAX_DESCRIPTION_LENGTH,
    MAX_FRONTMATTER_BYTES,
    SkillRejected,
    valid_skill_name,
)
from yaml.nodes import MappingNode, Node, ScalarNode

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that refuses every YAML feature JSON cannot mirror."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            raise SkillRejected("frontmatter uses a YAML alias")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if getattr(event, "anchor", None) is not None:
            raise SkillRejected("frontmatter uses a YAML anchor")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[str] = set()
        for key_node, _value in node.value:
            if key_node.tag == _MERGE_TAG:
                raise SkillRejected("frontmatter uses a YAML merge key")
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise SkillRejected(f"frontmatter has a non-string key {key!r}")
            if key in seen:
                raise SkillRejected(f"frontmatter has a duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _timestamp_as_text(loader: yaml.SafeLoader, node: Node) -> str:
    assert isinstance(node, ScalarNode)
    return str(loader.construct_scalar(node))


_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)


def split_frontmatter(text: str) -> str:
    """The YAML between the opening and closing ``---`` lines of ``SKILL.md``."""
    # Only LF (optionally after CR) ends a line here, as in YAML; str.splitlines
    # would also split on form feeds and Unicode separators inside values.
    lines = text.split("\n")
    if lines[0].removesuffix("\r") != "---":
        raise SkillRejected("SKILL.md does not begin with a '---' frontmatter fence")
    for index in range(1, len(lines)):
        if lines[index].removesuffix("\r") == "---":
            return "\n".join(lines[1:index]) + "\n"
    raise SkillRejected("SKILL.md frontmatter has no closing '---' fence")


def _check_json(value: Any, where: str) -> None:
    """Refuse values that have no exact JSON rendering."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise SkillRejected(f"frontmatter value at {path} is not a finite number")
            continue
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}") for k, v in item.items())
            continue
        if isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
            continue
        raise SkillRejected(
            f"frontmatter value at {path} is a {type(item).__name__}, which JSON cannot carry"
        )


def parse_frontmatter(skill_md: bytes, directory_name: str) -> dict[str, Any]:
    """Parse and validate the frontmatter of a ``SKILL.md`` body.

    Raises :class:`SkillRejected` naming the problem: not UTF-8, no fences,
    oversized or invalid YAML, a non-mapping document, a ``name`` that is
    invalid or differs from ``directory_name``, a missing ``description``.
    """
    try:
        text = skill_md.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillRejected("SKILL.md is not valid UTF-8") from exc
    block = split_frontmatter(text)
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise SkillRejected(f"frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes")
    try:
        # A SafeLoader subclass: no arbitrary object construction.
        data = yaml.load(block, Loader=_StrictLoader)
        _check_json(data, "frontmatter")
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillRejected(f"frontmatter is not valid YAML: {problem}") from exc
    except RecursionError as exc:
        raise SkillRejected("frontmatter is nested too deeply") from exc
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise SkillRejected(f"frontmatter is {kind}, not a mapping")
    name = data.get("name")
    if not isinstance(name, str) or not valid_skill_name(name):
        raise SkillRejected(f"frontmatter name {name!r} is not a valid skill name")
    if name != directory_name:
        raise SkillRejected(
            f"frontmatter name {name!r} does not match the directory name {directory_name!r}"
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillRejected("frontmatter has no description")
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise SkillRejected(
            f"frontmatter description is longer than {MAX_DESCRIPTION_LENGTH} characters"
        )
    return data
