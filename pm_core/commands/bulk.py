"""Commands over many items, declared: update-many, close-many, test-all, stats, activity.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.bulk`), ``pm contracts`` and ``docs/generated/``
read it. The selection options every bulk command shares are ``list``'s
filters, spelled ``--filter-*`` so they never clash with a value being set.
"""

from __future__ import annotations

from typing import Any

from pm_core.commands.items import TAG_EDITS
from pm_core.params import Opt, Param, split_commas

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
