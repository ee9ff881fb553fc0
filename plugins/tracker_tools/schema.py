"""Small builders for the tools' compact JSON input schemas.

Clients pay for every listed byte, so schemas carry no redundant descriptions,
yet every parameter a handler reads is declared. Each builder returns a fresh dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pm_core.contracts import FieldDecl, WorkspaceContracts

Schema = dict[str, Any]

#: Top-level arguments every tool accepts; the MCP adapter acts on them
#: (tracker root and attribution), handlers never do.
COMMON_ARGUMENTS: tuple[str, ...] = ("path", "author")

#: JSON schema for each custom field type of ``schema/fields.json``.
_FIELD_TYPES: Mapping[str, Schema] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "string_array": {"type": "array", "items": {"type": "string"}},
    "array": {"type": "array"},
    "object": {"type": "object"},
}


def string(description: str | None = None, **extra: Any) -> Schema:
    """A string property."""
    out: Schema = {"type": "string", **extra}
    if description:
        out["description"] = description
    return out


def integer(minimum: int | None = None, maximum: int | None = None) -> Schema:
    """An integer property with optional bounds."""
    out: Schema = {"type": "integer"}
    if minimum is not None:
        out["minimum"] = minimum
    if maximum is not None:
        out["maximum"] = maximum
    return out


def boolean() -> Schema:
    """A boolean property."""
    return {"type": "boolean"}


def strings() -> Schema:
    """An array of strings."""
    return {"type": "array", "items": {"type": "string"}}


def choice(values: Iterable[str]) -> Schema:
    """A string restricted to ``values`` (workspace types, statuses, subcommands)."""
    return {"type": "string", "enum": list(values)}


def obj(
    properties: Mapping[str, Schema],
    required: Iterable[str] = (),
    *,
    open_ended: bool = False,
) -> Schema:
    """An object; ``open_ended`` says extra keys are passed on, not rejected."""
    out: Schema = {"type": "object", "properties": dict(properties)}
    needed = list(required)
    if needed:
        out["required"] = needed
    if open_ended:
        out["additionalProperties"] = True
    return out


def common() -> Schema:
    """The shared ``path``/``author`` properties every tool declares."""
    return {name: {"type": "string"} for name in COMMON_ARGUMENTS}


def tool(properties: Mapping[str, Schema], required: Iterable[str] = ()) -> Schema:
    """A tool's top-level input schema: its properties plus the shared ones."""
    merged = dict(properties)
    for name, prop in common().items():
        merged.setdefault(name, prop)
    return obj(merged, required, open_ended=True)


def item_id() -> Schema:
    """An item id (prefix optional)."""
    return {"type": "string"}


def priority() -> Schema:
    """Priority 0-4 or its name (critical, high, medium, low, minimal)."""
    # anyOf, not a type array: portable to single-type dialects (Inspector --strict).
    return {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def item_fields(contracts: WorkspaceContracts) -> dict[str, Schema]:
    """The option bag of create/update: the common item fields, enums projected."""
    return {
        "title": string(),
        "description": string(),
        "type": choice(contracts.types),
        "status": choice(contracts.statuses),
        "priority": priority(),
        "tags": strings(),
        "parent": item_id(),
        "deps": string_list("ID or ID:KIND (blocked_by, parent, related, ...)."),
        "acceptanceCriteria": string(),
        "assignee": string(),
        "body": string(),
        "deadline": string("ISO date/time or relative (+1d)."),
        "estimatedMinutes": integer(0),
        "allowUnresolvedDeps": boolean(),
    }


def string_list(description: str) -> Schema:
    """An array of strings with a description (for non-obvious formats)."""
    return {**strings(), "description": description}


def field_property(field: FieldDecl) -> Schema:
    """The schema of a custom field: its declared value schema, else by type."""
    if field.value_schema:
        prop: Schema = dict(field.value_schema)
    else:
        prop = dict(_FIELD_TYPES.get(field.type, {"type": "string"}))
    if field.description and "description" not in prop:
        prop["description"] = field.description
    return prop


def custom_fields(contracts: WorkspaceContracts, command: str) -> list[FieldDecl]:
    """Custom fields declared for ``command`` (create or update)."""
    return [f for f in contracts.fields if command in f.commands]


def with_custom_fields(schema: Schema, contracts: WorkspaceContracts, command: str) -> Schema:
    """Add ``command``'s custom fields as top-level properties.

    A field whose key is already a tool argument stays reachable through
    ``options`` only (a custom field never shadows ``id`` or ``options``).
    """
    props: dict[str, Any] = schema["properties"]
    for field in custom_fields(contracts, command):
        props.setdefault(field.key, field_property(field))
    return schema
