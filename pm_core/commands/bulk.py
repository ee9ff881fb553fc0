"""Commands over many items, declared: update-many, close-many, test-all, stats, activity.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.bulk`), ``pm contracts`` and ``docs/generated/``
read it. The selection options every bulk command shares are ``list``'s
filters, spelled ``--filter-*`` so they never clash with a value being set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.commands.items import TAG_EDITS
from pm_core.params import Opt, Param, assignments, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

SELECTION: tuple[Opt, ...] = (
    Opt(
        "--ids",
        dest="ids",
        multiple=True,
        role="filter",
        help="Item ids, comma separated; repeatable.",
    ),
    Opt(
        "--filter-status",
        dest="filter_status",
        multiple=True,
        choices="statuses",
        role="filter",
        help="Only items with this status.",
    ),
    Opt(
        "--filter-type",
        dest="filter_type",
        multiple=True,
        choices="types",
        role="filter",
        help="Only items of this type.",
    ),
    Opt(
        "--filter-tag",
        dest="filter_tag",
        multiple=True,
        role="filter",
        help="Only items with every tag given.",
    ),
    Opt(
        "--filter-priority",
        dest="filter_priority",
        multiple=True,
        choices="priorities",
        role="filter",
        help="Only items of this priority.",
    ),
    Opt(
        "--filter-assignee",
        dest="filter_assignee",
        role="filter",
        help="Only items of this assignee (none: unassigned).",
    ),
    Opt(
        "--filter-parent",
        dest="filter_parent",
        metavar="ID",
        role="filter",
        help="Only children of ID.",
    ),
)
_DRY_RUN = Opt(
    "--dry-run", dest="dry_run", kind="flag", help="Show what would change; write nothing."
)


def selection(values: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """``(ids, filters)`` popped from the declared values of :data:`SELECTION`."""
    ids = split_commas(values.pop("ids", ()) or ())
    filters = {
        "status": split_commas(values.pop("filter_status", ()) or ()) or None,
        "type": split_commas(values.pop("filter_type", ()) or ()) or None,
        "tags": split_commas(values.pop("filter_tag", ()) or ()),
        "priority": split_commas(values.pop("filter_priority", ()) or ()) or None,
        "assignee": values.pop("filter_assignee", None),
        "parent": values.pop("filter_parent", None),
    }
    return ids, filters


def update_many(tracker: Tracker, /, **params: Any) -> dict[str, Any]:
    """Update every selected item in one all-or-nothing step: the effect envelope."""
    ids, filters = selection(params)
    values: dict[str, Any] = assignments(params["assignments"], "--set")
    for key in ("status", "priority", "assignee"):
        if params[key] is not None:
            values[key] = params[key]
    return tracker.update_many(
        values,
        ids=ids,
        filters=filters,
        add_tags=split_commas(params["add_tag"]),
        remove_tags=split_commas(params["remove_tag"]),
        message=params["message"],
        dry_run=params["dry_run"],
    )


def close_many(tracker: Tracker, /, **params: Any) -> dict[str, Any]:
    """Close every selected item in one all-or-nothing step: the effect envelope."""
    ids, filters = selection(params)
    return tracker.close_many(
        params["reason"] or "",
        ids=ids,
        filters=filters,
        canceled=params["canceled"],
        status=params["close_status"],
        dry_run=params["dry_run"],
    )


def test_all(tracker: Tracker, /, timeout: float | None, **params: Any) -> dict[str, Any]:
    """Run the linked tests of every selected item (default: open items): runs and summary."""
    ids, filters = selection(params)
    given = {k: v for k, v in filters.items() if v not in (None, [], "")}
    return tracker.test_all(ids=ids, filters=given, timeout_seconds=timeout)


def stats(tracker: Tracker) -> dict[str, Any]:
    """Counts by status, type, priority and assignee; how old the open work is."""
    return tracker.stats()


def activity(tracker: Tracker, since: str, limit: int) -> dict[str, Any]:
    """Recent changes across items, newest first."""
    return tracker.activity(since=since, limit=limit)


PARAMS: dict[str, tuple[Param, ...]] = {
    "update-many": (
        *SELECTION,
        Opt(
            "--status",
            dest="status",
            choices="statuses",
            role="field",
            help="Set this status (a terminal one closes, with --message).",
        ),
        Opt(
            "--priority",
            "-p",
            dest="priority",
            choices="priorities",
            role="field",
            help="Set this priority (0-4 or critical..minimal).",
        ),
        Opt(
            "--assignee",
            dest="assignee",
            metavar="NAME",
            role="field",
            help="New assignee for every matched item.",
        ),
        *TAG_EDITS,
        Opt(
            "--set",
            dest="assignments",
            multiple=True,
            metavar="FIELD=VALUE",
            tool="values",
            pairs=True,
            role="field",
            help="Any other field, as FIELD=VALUE; repeatable.",
        ),
        Opt("-m", "--message", dest="message", help="A note recorded in each item's history."),
        _DRY_RUN,
    ),
    "close-many": (
        *SELECTION,
        Opt("-r", "--reason", dest="reason", help="What was done, and the evidence (every item)."),
        Opt("--canceled", dest="canceled", kind="flag", help="Cancel instead of completing."),
        Opt(
            "--status",
            dest="close_status",
            tool="status",
            help="The terminal status to close into.",
        ),
        _DRY_RUN,
    ),
    "test-all": (
        *SELECTION,
        Opt(
            "--timeout",
            dest="timeout",
            kind="float",
            metavar="SECONDS",
            tool="timeoutSeconds",
            help="Timeout per command.",
        ),
    ),
    "stats": (),
    "activity": (
        Opt(
            "--since",
            dest="since",
            default="7d",
            show_default=True,
            role="filter",
            help="ISO time or 30m, 4h, 7d, 2w.",
        ),
        Opt(
            "--limit",
            "-n",
            dest="limit",
            kind="int",
            minimum=1,
            default=20,
            show_default=True,
            role="filter",
        ),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {
    "update-many": update_many,
    "close-many": close_many,
    "test-all": test_all,
    "stats": stats,
    "activity": activity,
}
