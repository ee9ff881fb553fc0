"""Turning user input (CLI flags, MCP options) into validated item field values.

One place for the rules, so the CLI and the MCP tools cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import now_iso, resolve_when
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.item import (
    COLLECTION_FIELDS,
    FIELD_ORDER,
    normalize_dependency_kind,
    normalize_priority,
    normalize_status,
    normalize_tags,
)

if TYPE_CHECKING:
    # Only a type: the schema is loaded by storage and handed in.
    from pm_core.tracker.storage.workspace import Schema

#: Fields a user may set through create/update (lifecycle stamps are the SDK's).
SETTABLE: frozenset[str] = frozenset(FIELD_ORDER) - {
    "id",
    "created_at",
    "updated_at",
    "closed_at",
    "completed_at",
    "claim_principal",
    "claim_expires_at",
    "comments",
    "notes",
    "learnings",
    "test_runs",
    "pm_format_version",
} | {"body"}

_STRING_LIST_JOIN = {"acceptance_criteria": "; "}
_RISKS = ("low", "medium", "high", "critical")
_TIME_FIELDS = ("deadline",)

#: Common spellings accepted as field names (camelCase from MCP options, CLI dashes).
FIELD_ALIASES: Mapping[str, str] = {
    "ac": "acceptance_criteria",
    "acceptanceCriteria": "acceptance_criteria",
    "estimate": "estimated_minutes",
    "estimatedMinutes": "estimated_minutes",
    "dep": "dependencies",
    "deps": "dependencies",
    "tag": "tags",
    "closeReason": "close_reason",
    "duplicateOf": "duplicate_of",
    "definitionOfReady": "definition_of_ready",
    "whyNow": "why_now",
    "blockedBy": "blocked_by",
    "blockedReason": "blocked_reason",
    "unblockNote": "unblock_note",
    "externalRef": "external_ref",
    "reproSteps": "repro_steps",
    "affectedVersion": "affected_version",
    "fixedVersion": "fixed_version",
    "customerImpact": "customer_impact",
    "expectedResult": "expected_result",
    "actualResult": "actual_result",
}


def canonical_key(key: str) -> str:
    """A field name from a flag or option spelling (``why-now``, ``whyNow``)."""
    if key in FIELD_ALIASES:
        return FIELD_ALIASES[key]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key).replace("-", "_")
    return FIELD_ALIASES.get(snake, snake)


def parse_dependency(value: Any, author: str) -> dict[str, Any]:
    """A dependency entry from ``"id"``, ``"id:kind"``, ``"kind:id"`` or a mapping."""
    if isinstance(value, Mapping):
        target = str(value.get("id", "")).strip()
        kind = str(value.get("kind", "blocked_by"))
        extra = {k: v for k, v in value.items() if k not in ("id", "kind")}
    else:
        text = str(value).strip()
        target, kind, extra = text, "blocked_by", {}
        if "=" in text:
            parts = dict(p.split("=", 1) for p in text.split(",") if "=" in p)
            target = parts.pop("id", "").strip()
            kind = parts.pop("kind", "blocked_by")
            extra = parts
        elif ":" in text:
            left, right = (s.strip() for s in text.split(":", 1))
            try:
                kind = normalize_dependency_kind(left)
                target = right
            except ValueError:
                target, kind = left, right
    if not target:
        raise UsageError(f"dependency {value!r} has no target id", hint="use ID or ID:KIND")
    try:
        kind = normalize_dependency_kind(kind)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    entry: dict[str, Any] = {"id": target, "kind": kind, "created_at": now_iso()}
    entry.update({k: v for k, v in extra.items() if k in ("author", "source_kind")})
    entry.setdefault("author", author)
    return entry


def coerce_field(key: str, value: Any, schema: Schema, author: str) -> Any:
    """Validate and normalise one field value; UsageError naming field and fix."""
    if value is None:
        return None
    try:
        if key == "status":
            return normalize_status(str(value), schema.status_names)
        if key == "priority":
            return normalize_priority(value)
        if key == "type":
            return schema.type_by_name(str(value)).name
        if key == "tags":
            return normalize_tags(_as_list(value))
        if key in _TIME_FIELDS:
            return resolve_when(str(value))
        if key in ("estimated_minutes", "order"):
            return _as_int(key, value)
        if key == "confidence":
            return _confidence(value)
        if key == "risk":
            risk = str(value).strip().lower()
            if risk not in _RISKS:
                raise ValueError(f"invalid risk {value!r}; expected one of: {', '.join(_RISKS)}")
            return risk
        if key == "regression":
            return _as_bool(key, value)
        if key in _STRING_LIST_JOIN:
            if isinstance(value, list | tuple):
                return _STRING_LIST_JOIN[key].join(str(v) for v in value)
            return str(value)
        if key == "dependencies":
            return [parse_dependency(v, author) for v in _as_list(value, split=False)]
        if key in COLLECTION_FIELDS:
            entries = _as_list(value, split=False)
            if not all(isinstance(e, Mapping) for e in entries):
                raise ValueError(f"{key} takes a list of objects")
            return [dict(e) for e in entries]
    except ValueError as exc:
        raise UsageError(str(exc), hint=f"fix the value of {key}") from None
    declared = schema.field(key)
    if declared is not None:
        return _custom(declared.key, declared.type, value)
    if key in SETTABLE:
        return str(value)
    raise UsageError(
        f"unknown field {key!r}",
        hint="declare it with `pm schema add field "
        f"{key} --type string --commands create,update` or check the spelling",
    )


def _as_list(value: Any, *, split: bool = True) -> list[Any]:
    if isinstance(value, list | tuple):
        out: list[Any] = []
        for v in value:
            out.extend(_as_list(v, split=split) if isinstance(v, str) and split else [v])
        return out
    if isinstance(value, str) and split:
        return [p.strip() for p in value.split(",") if p.strip()]
    return [value]


def _as_int(key: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{key} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be an integer, got {value!r}") from None


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"{key} must be true or false, got {value!r}")


def _confidence(value: Any) -> int | str:
    text = str(value).strip().lower()
    if text in ("low", "medium", "high"):
        return text
    number = _as_int("confidence", value)
    if not 0 <= number <= 100:
        raise ValueError(f"confidence must be 0-100 or low/medium/high, got {value!r}")
    return number


def _custom(key: str, kind: str, value: Any) -> Any:
    try:
        if kind == "number":
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
            number = float(str(value))
            return int(number) if number.is_integer() else number
        if kind == "boolean":
            return _as_bool(key, value)
        if kind == "string_array":
            return [str(v) for v in _as_list(value)]
        if kind == "array":
            return list(value) if isinstance(value, list | tuple) else _as_list(value)
        if kind == "object":
            if isinstance(value, Mapping):
                return dict(value)
            import json

            parsed = json.loads(str(value))
            if not isinstance(parsed, dict):
                raise ValueError("not an object")
            return parsed
    except ValueError:
        raise UsageError(
            f"custom field {key!r} expects {kind}, got {value!r}", hint="fix the value"
        ) from None
    return str(value)


def coerce_fields(
    values: Mapping[str, Any], schema: Schema, author: str, command: str
) -> dict[str, Any]:
    """Validate a set of field values for ``command`` (create/update)."""
    out: dict[str, Any] = {}
    for raw_key, value in values.items():
        key = canonical_key(raw_key)
        declared = schema.field(key)
        if declared is not None and declared.commands and command not in declared.commands:
            raise UsageError(
                f"custom field {key!r} is not declared for {command}",
                hint=f"it is declared for: {', '.join(declared.commands)}",
            )
        out[key] = coerce_field(key, value, schema, author)
    return out
