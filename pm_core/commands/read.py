"""Read commands, declared: get, list, search, focus (parameters and what each does).

Each ``PARAMS`` entry is the one declaration of a command's parameters; the
CLI (:mod:`pm_core.cli.commands.read`) and the MCP tools read it. The
functions turn declared values into the tracker's answer, for both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param, limit_opt, parse_assignments, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: Fixed value sets, written here so the start-up path imports no query module
#: (``tests/unit/test_cli_help_values.py`` checks them against the query modules').
SEARCH_MODES = ("keyword", "bm25", "hybrid")
SEARCH_MATCHES = ("or", "and", "exact")
LIST_SORTS = ("default", "priority", "updated", "created", "id", "title", "status", "deadline")
_STATUS = "--status", "-s"


def get(tracker: Tracker, item_id: str, fields: str | None, at: str | None) -> dict[str, Any]:
    """``{item}`` from the declared values (the CLI's and ``pm_get``'s)."""
    item = tracker.version(item_id, at) if at else tracker.get(item_id)
    record = item.to_record()
    if fields:
        from pm_core.tracker.query.budget import project

        record = project(record, split_commas([fields]))
    return {"item": record}


def list_options(
    status: tuple[str, ...],
    type_: tuple[str, ...],
    tag: tuple[str, ...],
    priority: tuple[str, ...],
    assignee: str | None,
    parent: str | None,
    include_all: bool,
    limit: int | None,
    offset: int,
    fields: tuple[str, ...],
    sort: str,
    custom: tuple[str, ...],
) -> dict[str, Any]:
    """The listing options from the declared values (``limit`` -1: no limit)."""
    return {
        "status": split_commas(status) or None,
        "type": split_commas(type_) or None,
        "tags": split_commas(tag),
        "priority": split_commas(priority) or None,
        "assignee": assignee,
        "parent": parent,
        "include_terminal": include_all,
        "fields": split_commas(fields) or None,
        "limit": None if limit == -1 else limit,
        "offset": offset,
        "sort": sort,
        "field_filters": parse_assignments(custom, "--field"),
    }


def listing(tracker: Tracker, **values: Any) -> dict[str, Any]:
    """Matching rows from the declared values (``pm_list``'s)."""
    from pm_core.tracker.query.listing import list_items

    return list_items(tracker, **list_options(**values))


def search(
    tracker: Tracker,
    query: tuple[str, ...],
    mode: str,
    match: str,
    limit: int | None,
    min_score: float,
    open_only: bool,
    status: tuple[str, ...],
    type_: tuple[str, ...],
    tag: tuple[str, ...],
) -> dict[str, Any]:
    """Ranked hits from the declared values (the CLI's and ``pm_search``'s)."""
    from pm_core.tracker.query.search import search as run

    filters = {
        key: split_commas(values)
        for key, values in (("status", status), ("type", type_), ("tag", tag))
        if values
    }
    return run(
        tracker,
        " ".join(query),
        mode=mode,
        match=match,
        limit=limit or 50,
        min_score=min_score,
        include_terminal=not open_only,
        filters=filters,
    )


PARAMS: dict[str, tuple[Param, ...]] = {
    "get": (
        Arg("item_id", help="The item's id (prefix optional)."),
        Opt(
            "--fields", dest="fields", metavar="A,B", help="Only these fields (id is always kept)."
        ),
        Opt(
            "--at",
            dest="at",
            metavar="VERSION|TIME",
            help="The item as it was then (from history).",
        ),
    ),
    "list": (
        Opt(
            *_STATUS,
            dest="status",
            multiple=True,
            choices="statuses",
            role="filter",
            help="Status(es), comma separated; repeatable.",
        ),
        Opt(
            "--type",
            dest="type_",
            multiple=True,
            choices="types",
            role="filter",
            help="Type(s); repeatable.",
        ),
        Opt(
            "--tag",
            dest="tag",
            multiple=True,
            role="filter",
            help="Items having every tag given; repeatable.",
        ),
        Opt(
            "--priority",
            "-p",
            dest="priority",
            multiple=True,
            choices="priorities",
            role="filter",
            help="Priority(ies), 0-4 or a name; repeatable.",
        ),
        Opt(
            "--assignee",
            dest="assignee",
            metavar="NAME",
            role="filter",
            help="Held by NAME (none: unassigned).",
        ),
        Opt("--parent", dest="parent", metavar="ID", role="filter", help="Children of ID."),
        Opt(
            "--all",
            dest="include_all",
            kind="flag",
            tool="all",
            role="filter",
            help="Include closed and canceled items.",
        ),
        limit_opt("At most N rows (exactly N; -1: no limit).", minimum=-1),
        Opt(
            "--offset",
            dest="offset",
            kind="int",
            minimum=0,
            default=0,
            role="filter",
            help="Skip the first N rows.",
        ),
        Opt(
            "--fields",
            dest="fields",
            metavar="A,B",
            multiple=True,
            help="Row fields (default: a short summary); repeatable.",
        ),
        Opt(
            "--sort",
            dest="sort",
            default="default",
            show_default=True,
            choices=LIST_SORTS,
            help="Row order.",
        ),
        Opt(
            "--field",
            dest="custom",
            multiple=True,
            metavar="KEY=VALUE",
            tool="fieldFilters",
            role="filter",
            compact=False,
            help="Custom field match; repeatable.",
        ),
    ),
    "search": (
        Arg("query", variadic=True, help="Words; tag:/status:/type: narrow."),
        Opt(
            "--mode",
            dest="mode",
            default="keyword",
            show_default=True,
            choices=SEARCH_MODES,
            help="Ranking.",
        ),
        Opt(
            "--match",
            dest="match",
            default="or",
            show_default=True,
            choices=SEARCH_MATCHES,
            help="How query words combine.",
        ),
        limit_opt("At most N hits (default 50)."),
        Opt(
            "--min-score",
            dest="min_score",
            kind="float",
            default=0.0,
            role="filter",
            compact=False,
            help="Drop hits scoring below this.",
        ),
        Opt(
            "--open",
            dest="open_only",
            kind="flag",
            tool="open",
            role="filter",
            help="Leave out closed and canceled items.",
        ),
        Opt(
            *_STATUS,
            dest="status",
            multiple=True,
            choices="statuses",
            role="filter",
            help="Only these statuses.",
        ),
        Opt(
            "--type",
            dest="type_",
            multiple=True,
            choices="types",
            role="filter",
            help="Only these types.",
        ),
        Opt("--tag", dest="tag", multiple=True, role="filter", help="Only these tags."),
    ),
    "focus": (
        Arg("item_id", required=False),
        Opt("--clear", dest="clear", kind="flag", help="Forget the focus."),
    ),
}
