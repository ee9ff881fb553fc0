"""Item field flags shared by ``pm create`` and ``pm update``.

Every field a user may set gets a ``--flag``: the common ones are declared by
hand (with short names and help); the rest are generated from the SDK's list
of settable fields, so a new field needs no CLI change. Values go to the SDK
as given; it validates and normalises them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from pm_core.cli.state import parse_assignments, read_text
from pm_core.tracker.errors import UsageError
from pm_core.tracker.fields import SETTABLE
from pm_core.tracker.model import COLLECTION_FIELDS, FIELD_ORDER

F = TypeVar("F", bound=Callable[..., Any])

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


def field_options(func: F) -> F:
    """Decorate a command with every field flag (hand-written first in help)."""
    for key, flag in reversed(GENERATED.items()):
        func = click.option(flag, key, metavar="TEXT", help=f"Set {key}.")(func)
    hand_written = [
        click.option("--title", "-t", help="Title (required on create)."),
        click.option("--description", "-d", help="One-paragraph description."),
        click.option("--type", help="Item type: Task (default), Epic, Feature, Issue..."),
        click.option("--status", help="draft, open, in_progress, blocked, ..."),
        click.option("--priority", "-p", help="0-4 or critical/high/medium/low/minimal."),
        click.option("--tags", multiple=True, help="Tags, comma separated; repeatable."),
        click.option("--parent", metavar="ID", help="Parent item."),
        click.option(
            "--dep",
            "dependencies",
            multiple=True,
            metavar="ID[:KIND]",
            help="Dependency (kind blocked_by unless given); repeatable.",
        ),
        click.option(
            "--ac",
            "--acceptance-criteria",
            "acceptance_criteria",
            multiple=True,
            help="An acceptance criterion; repeatable.",
        ),
        click.option("--deadline", help="ISO date/time or +1d, +4h, +2w."),
        click.option("--estimate", "--estimated-minutes", "estimated_minutes", help="Minutes."),
        click.option("--assignee", metavar="NAME", help="Assignee."),
        click.option("--body", help="Body text (markdown)."),
        click.option("--body-file", metavar="FILE", help="Read the body from FILE (- is stdin)."),
        click.option(
            "--field",
            "custom",
            multiple=True,
            metavar="KEY=VALUE",
            help="A custom field (declared with `pm schema add field`); repeatable.",
        ),
        click.option("--stdin-json", is_flag=True, help="Read field values as a JSON object."),
        click.option(
            "--allow-unresolved-deps", is_flag=True, help="Allow links to ids that do not exist."
        ),
    ]
    for decorator in reversed(hand_written):
        func = decorator(func)
    return func


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
