"""Commands over many items: update-many, close-many, test-all, stats, activity.

``update-many`` and ``close-many`` are the only commands that exit 6 (nothing
matched or nothing changed) and 7 (some items changed, some had nothing to do),
as the effect envelope's ``outcome``/``exit_code`` say; any error changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState, parse_assignments, split_commas
from pm_core.tracker.model.errors import PmError


def _filters(command: Callable[..., Any]) -> Callable[..., Any]:
    """The selection options every bulk command shares (``list``'s filters)."""
    for decorator in reversed(
        (
            click.option("--ids", multiple=True, help="Item ids, comma separated; repeatable."),
            click.option("--filter-status", multiple=True, help="Only items with this status."),
            click.option("--filter-type", multiple=True, help="Only items of this type."),
            click.option("--filter-tag", multiple=True, help="Only items with every tag given."),
            click.option("--filter-priority", multiple=True, help="Only items of this priority."),
            click.option(
                "--filter-assignee", help="Only items of this assignee (none: unassigned)."
            ),
            click.option("--filter-parent", metavar="ID", help="Only children of ID."),
        )
    ):
        command = decorator(command)
    return command


def _selection(params: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    ids = split_commas(params.pop("ids", ()) or ())
    filters = {
        "status": split_commas(params.pop("filter_status", ()) or ()) or None,
        "type": split_commas(params.pop("filter_type", ()) or ()) or None,
        "tags": split_commas(params.pop("filter_tag", ()) or ()),
        "priority": split_commas(params.pop("filter_priority", ()) or ()) or None,
        "assignee": params.pop("filter_assignee", None),
        "parent": params.pop("filter_parent", None),
    }
    return ids, filters


def _finish(state: CliState, envelope: dict[str, Any]) -> None:
    state.emit(envelope, kind="mutation")
    code = int(envelope.get("exit_code") or 0)
    if code:
        # The effect envelope is on stdout; stderr says in one line why the exit is not 0.
        from pm_core.cli.failure import fail

        matched = envelope.get("matched_count", 0)
        changed = envelope.get("updated_count", 0)
        reason = "nothing matched" if not matched else f"{changed} of {matched} items changed"
        fail(f"{envelope.get('outcome')}: {reason}", None, code, state.json)
        raise click.exceptions.Exit(code)


@click.command("update-many")
@_filters
@click.option("--status", help="Set this status (a terminal one closes, with --message).")
@click.option("--priority", "-p", help="Set this priority (0-4 or critical..minimal).")
@click.option("--assignee", metavar="NAME", help="New assignee for every matched item.")
@click.option("--add-tag", multiple=True, help="Add tags (comma separated); repeatable.")
@click.option("--remove-tag", multiple=True, help="Remove tags; repeatable.")
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Any other field, as FIELD=VALUE; repeatable.",
)
@click.option("-m", "--message", help="A note recorded in each item's history.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@json_option
@pass_state
def cmd_update_many(state: CliState, /, **params: Any) -> None:
    """Update every matching item in one all-or-nothing step (exit 6: none changed, 7: some)."""
    ids, filters = _selection(params)
    values: dict[str, Any] = parse_assignments(params["assignments"], "--set")
    for key in ("status", "priority", "assignee"):
        if params[key] is not None:
            values[key] = params[key]
    envelope = state.tracker.update_many(
        values,
        ids=ids,
        filters=filters,
        add_tags=split_commas(params["add_tag"]),
        remove_tags=split_commas(params["remove_tag"]),
        message=params["message"],
        dry_run=params["dry_run"],
    )
    _finish(state, envelope)


@click.command("close-many")
@_filters
@click.option("-r", "--reason", help="What was done, and the evidence (every item).")
@click.option("--canceled", is_flag=True, help="Cancel instead of completing.")
@click.option("--status", "close_status", help="The terminal status to close into.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@json_option
@pass_state
def cmd_close_many(state: CliState, /, **params: Any) -> None:
    """Close every matching item in one all-or-nothing step (exit 6: none changed, 7: some)."""
    ids, filters = _selection(params)
    envelope = state.tracker.close_many(
        params["reason"] or "",
        ids=ids,
        filters=filters,
        canceled=params["canceled"],
        status=params["close_status"],
        dry_run=params["dry_run"],
    )
    _finish(state, envelope)


@click.command("test-all")
@_filters
@click.option("--timeout", type=float, metavar="SECONDS", help="Timeout per command.")
@json_option
@pass_state
def cmd_test_all(state: CliState, /, timeout: float | None, **params: Any) -> None:
    """Run the linked tests of every matching item (default: open items); exit 1 when one fails."""
    ids, filters = _selection(params)
    given = {k: v for k, v in filters.items() if v not in (None, [], "")}
    result = state.tracker.test_all(ids=ids, filters=given, timeout_seconds=timeout)
    state.emit(result)
    failed = int(result["summary"]["failed"])
    if failed:
        raise PmError(
            f"{failed} linked test(s) failed",
            hint="the runs above show each command's exit code and output",
        )


@click.command("stats")
@json_option
@pass_state
def cmd_stats(state: CliState) -> None:
    """Counts by status, type, priority and assignee; how old the open work is."""
    state.emit(state.tracker.stats())


@click.command("activity")
@click.option("--since", default="7d", show_default=True, help="ISO time or 30m, 4h, 7d, 2w.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
@json_option
@pass_state
def cmd_activity(state: CliState, since: str, limit: int) -> None:
    """Recent changes across items: one row per changed item, newest first."""
    state.emit(state.tracker.activity(since=since, limit=limit), exact=True)
