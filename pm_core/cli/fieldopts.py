"""Item field flags shared by ``pm create`` and ``pm update``.

Common fields are declared by hand; the rest are generated from the SDK's settable
fields, so a new field needs no CLI change.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from pm_core.cli.state import parse_assignments, read_text
from pm_core.commands.items import FIELD_OPTS, GENERATED
from pm_core.tracker.model.errors import UsageError

__all__ = ["FIELD_OPTS", "FIELD_PARAMS", "GENERATED", "collect_values"]

#: Every keyword argument that carries a field value.
FIELD_PARAMS: frozenset[str] = frozenset(
    {
        "title",
        "description",
        "type",
        "status",
        "priority",
        "tags",
        "parent",
        "dependencies",
        "acceptance_criteria",
        "deadline",
        "estimated_minutes",
        "assignee",
        *GENERATED,
    }
)


def collect_values(params: Mapping[str, Any]) -> dict[str, Any]:
    """Field values from the parsed flags: ``--stdin-json`` first, flags over it."""
    values: dict[str, Any] = {}
    if params.get("stdin_json"):
        values.update(_stdin_object())
    for key in FIELD_PARAMS:
        value = params.get(key)
        if value is None or value == ():
            continue
        values[key] = list(value) if isinstance(value, tuple) else value
    body = read_text(params.get("body"), file=params.get("body_file"))
    if body is not None:
        values["body"] = body
    values.update(parse_assignments(params.get("custom") or (), "--field"))
    return values


def _stdin_object() -> dict[str, Any]:
    text = sys.stdin.read()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"--stdin-json: not valid JSON ({exc})", hint="pipe a JSON object of field values"
        ) from None
    if not isinstance(data, dict):
        raise UsageError("--stdin-json expects a JSON object", hint='e.g. {"title": "..."}')
    return data
