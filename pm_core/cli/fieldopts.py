"""Item field flags shared by ``pm create`` and ``pm update``.

Common fields are declared by hand; the rest are generated from the SDK's settable
fields, so a new field needs no CLI change.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from pm_core.cli.argspec import Opt
from pm_core.cli.state import parse_assignments, read_text
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.fields import SETTABLE
from pm_core.tracker.model.item import COLLECTION_FIELDS, FIELD_ORDER

#: Fields with hand-written flags, or set only through their own commands.
_NOT_GENERATED = frozenset(
    {
        "title",
        "description",
        "type",
        "status",
        "priority",
        "tags",
        "parent",
        "acceptance_criteria",
        "body",
        "deadline",
        "estimated_minutes",
        "assignee",
        "author",
        "close_reason",
        "duplicate_of",
        "type_options",
        "plan_status",
        "plan_validation",
        *COLLECTION_FIELDS,
    }
)

#: Generated flags, in file order: field name -> flag.
GENERATED: dict[str, str] = {
    key: "--" + key.replace("_", "-")
    for key in FIELD_ORDER
    if key in SETTABLE and key not in _NOT_GENERATED
}

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


#: Every field flag, hand-written ones first (their order is the help's).
FIELD_OPTS: tuple[Opt, ...] = (
    Opt("--title", "-t", dest="title", help="Title (required on create)."),
    Opt("--description", "-d", dest="description", help="One-paragraph description."),
    Opt("--type", dest="type", help="Item type: Task (default), Epic, Feature, Issue..."),
    Opt("--status", dest="status", help="draft, open, in_progress, blocked, ..."),
    Opt("--priority", "-p", dest="priority", help="0-4 or critical/high/medium/low/minimal."),
    Opt("--tags", dest="tags", multiple=True, help="Tags, comma separated; repeatable."),
    Opt("--parent", dest="parent", metavar="ID", help="Parent item."),
    Opt(
        "--dep",
        dest="dependencies",
        multiple=True,
        metavar="ID[:KIND]",
        help="Dependency (kind blocked_by unless given); repeatable.",
    ),
    Opt(
        "--ac",
        "--acceptance-criteria",
        dest="acceptance_criteria",
        multiple=True,
        help="An acceptance criterion; repeatable.",
    ),
    Opt("--deadline", dest="deadline", help="ISO date/time or +1d, +4h, +2w."),
    Opt("--estimate", "--estimated-minutes", dest="estimated_minutes", help="Minutes."),
    Opt("--assignee", dest="assignee", metavar="NAME", help="Assignee."),
    Opt("--body", dest="body", help="Body text (markdown)."),
    Opt(
        "--body-file",
        dest="body_file",
        metavar="FILE",
        help="Read the body from FILE (- is stdin).",
    ),
    Opt(
        "--field",
        dest="custom",
        multiple=True,
        metavar="KEY=VALUE",
        help="A custom field (declared with `pm schema add field`); repeatable.",
    ),
    Opt("--stdin-json", dest="stdin_json", kind="flag", help="Read field values as a JSON object."),
    Opt(
        "--allow-unresolved-deps",
        dest="allow_unresolved_deps",
        kind="flag",
        help="Allow links to ids that do not exist.",
    ),
    *(Opt(flag, dest=key, metavar="TEXT", help=f"Set {key}.") for key, flag in GENERATED.items()),
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
