"""The result contract of each tool, and the ``outputSchema`` projected from it.

A successful tool call answers ``structuredContent: {"result": R, "warnings"?:
[...]}``; :data:`RESULTS` declares ``R`` for every built-in tool as the
top-level keys the tracker SDK's answer always carries (each with its JSON
type), one variant per shape the tool can answer (a listing, a mutation
receipt, ...). Nested objects are typed, not spelled out: the SDK's records
grow with the workspace's schema, and the tool list is paid for in tokens on
every ``tools/list``. A test calls every tool in every profile and validates
each ``structuredContent`` against the schema listed for it.

Plain Python, no MCP import: the ``contract`` projection and ``pm_discover``
may call :func:`output_schema` as well as the adapter. Every schema here is
portable (no ``type`` arrays, no untyped subschemas: ``any`` is an ``anyOf``
of the six JSON types).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

Schema = dict[str, Any]

_TYPES: Final = ("object", "array", "string", "number", "boolean", "null")


def _one(spec: str) -> Schema:
    """``"string"``, ``"integer?"`` (nullable), ``"any"`` -> a schema."""
    if spec == "any":
        return {"anyOf": [_typed(t) for t in _TYPES]}
    if spec.endswith("?"):
        return {"anyOf": [_typed(spec[:-1]), {"type": "null"}]}
    return _typed(spec)


def _typed(name: str) -> Schema:
    # Other keys stay allowed by JSON Schema's default; saying so costs tokens.
    return {"type": name}


def shape(required: Mapping[str, str], optional: Mapping[str, str] | None = None) -> Schema:
    """An object with these keys (``required`` always present), others allowed."""
    properties = {k: _one(v) for k, v in {**required, **(optional or {})}.items()}
    out: Schema = {"type": "object", "properties": properties}
    if required:
        out["required"] = sorted(required)
    return out


def variants(*schemas: Schema) -> Schema:
    """A result that takes one of several shapes."""
    return schemas[0] if len(schemas) == 1 else {"anyOf": list(schemas)}


#: A mutation's receipt (create, update, close, claim, add a comment, ...).
RECEIPT: Final = shape(
    {
        "id": "string",
        "status": "string",
        "changed_fields": "array",
        "changed_field_count": "integer",
    }
)
OBJECT: Final = _typed("object")
ANY: Final = _one("any")


def _evidence(key: str, count: str = "integer") -> Schema:
    """A listing of one kind of evidence, or the receipt of adding to it."""
    return variants(shape({"id": "string", key: "array", "count": count}), RECEIPT)


_PAGE = {"total": "integer", "returned": "integer", "has_more": "boolean"}
_RANKED = {"omissions": "array", "token_cost": "object"}

#: Tool name -> the schema of ``structuredContent.result`` on success.
RESULTS: Final[Mapping[str, Schema]] = {
    "pm_append": RECEIPT,
    "pm_claim": RECEIPT,
    "pm_close": RECEIPT,
    "pm_copy": RECEIPT,
    "pm_create": RECEIPT,
    "pm_release": RECEIPT,
    "pm_update": RECEIPT,
    "pm_get": shape({"item": "object"}),
    "pm_list": shape({"items": "array", "filters": "object", **_PAGE}),
    "pm_search": shape(
        {"query": "string", "mode": "string", "match": "string", "hits": "array"},
        {"filters": "object", **_PAGE},
    ),
    "pm_context": shape(
        {"summary": "object", "high_level": "array", "low_level": "array", **_RANKED},
        {"agenda": "array", "sections": "object", "blocked_fallback": "array"},
    ),
    "pm_next": shape(
        {"recommended": "object?", "ready": "array", "counts": "object", **_RANKED},
        {"blocked": "array", "decision_needed": "array", "held_by_others": "array"},
    ),
    "pm_plan": variants(RECEIPT, OBJECT),
    "pm_mutate": OBJECT,
    "pm_validate": shape({"ok": "boolean", "checks": "array", "counts": "object"}),
    "pm_health": shape(
        {"ok": "boolean", "checks": "array", "counts": "object"}, {"remediation_map": "object"}
    ),
    "pm_comments": _evidence("comments"),
    "pm_notes": _evidence("notes"),
    "pm_learnings": _evidence("learnings"),
    "pm_docs": _evidence("docs"),
    "pm_files": _evidence("files"),
    "pm_test": variants(
        shape({"id": "string", "tests": "array", "runs": "integer"}),
        shape({"id": "string", "runs": "array", "summary": "object"}),
        RECEIPT,
    ),
    "pm_config": variants(
        shape({"values": "object"}, {"overrides": "array"}),
        shape({"key": "string", "value": "any"}, {"source": "string"}),
        OBJECT,
    ),
    "pm_contracts": shape(
        {"commands": "array", "item": "object", "types": "array", "statuses": "array"},
        {"custom_fields": "array", "dependency_kinds": "array", "exit_codes": "object"},
    ),
    "pm_deps": variants(
        shape({"id": "string", "item": "object", "blocked_by": "array", "blocks": "array"}),
        RECEIPT,
    ),
    "pm_events": shape({"events": "array", "since": "string?", **_PAGE}),
    "pm_focus": shape({"focus": "string?"}, {"item": "object", "previous": "string?"}),
    "pm_graph": shape(
        {
            "subcommand": "string",
            "root": "string?",
            "counts": "object",
            "truncated": "boolean",
            "nodes": "array",
            "edges": "array",
        }
    ),
    "pm_profile": shape({"active": "string", "selected": "array", "profiles": "object"}),
    "pm_schema": variants(
        shape({"types": "array", "statuses": "array", "fields": "array"}), OBJECT
    ),
    # pm_run answers whatever the action it runs answers, extension actions included.
    "pm_run": ANY,
    "pm_discover": shape({"tools": "array", **_PAGE}, {"next_cursor": "string?"}),
}


def result_schema(tool: str) -> Schema:
    """The schema of ``structuredContent.result`` for ``tool`` (any JSON value if undeclared).

    Extension tools declare nothing here, so their result may be any value.
    """
    return copy.deepcopy(RESULTS.get(tool, ANY))


def output_schema(tool: str, declared: Mapping[str, Any] | None = None) -> Schema:
    """The tool's ``outputSchema``: ``{result: R, warnings?: [string]}``.

    ``declared`` is the result schema the tool's plugin declared
    (``ToolSpec.output_schema``); without one, the built-in contract above.
    """
    result = copy.deepcopy(dict(declared)) if declared is not None else result_schema(tool)
    return {
        "type": "object",
        "properties": {
            "result": result,
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["result"],
    }
