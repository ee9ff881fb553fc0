"""Read commands: get, list, search, focus (no field flags to build: they start fast).

Their arguments are declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`),
so an everyday read runs without importing click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import Arg, Opt, Spec, limit_opt, specs
from pm_core.cli.state import CliState, parse_assignments, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.query.budget import Elided

#: Fixed value sets, written here so the start-up path imports no query module
#: (``tests/unit/test_cli_help_values.py`` checks them against the query modules').
SEARCH_MODES = ("keyword", "bm25", "hybrid")
SEARCH_MATCHES = ("or", "and", "exact")
LIST_SORTS = ("default", "priority", "updated", "created", "id", "title", "status", "deadline")


def get(tracker: Tracker, item_id: str, fields: str | None, at: str | None) -> dict[str, Any]:
    """``{item}`` from the declared values (the CLI's and ``pm_get``'s)."""
    item = tracker.version(item_id, at) if at else tracker.get(item_id)
    record = item.to_record()
    if fields:
        from pm_core.tracker.query.budget import project

        record = project(record, split_commas([fields]))
    return {"item": record}


def run_get(state: CliState, item_id: str, fields: str | None, at: str | None) -> None:
    """Show one item."""
    state.emit(get(state.tracker, item_id, fields, at), exact=bool(fields))


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


def run_list(state: CliState, **values: Any) -> None:
    """List items (open work unless --all); always reports the total."""
    from pm_core.tracker.query.listing import list_head, list_items

    options = list_options(**values)
    exact = values.get("limit") is not None
    tracker = state.tracker
    if exact or state.json:
        state.emit(list_items(tracker, **options), exact=exact)
        return
    # Shrunk to the token ceiling: only the rows that can be shown are built.
    from pm_core.cli.output import render_head, write

    def fetch(head: int | None) -> tuple[dict[str, Any], Elided | None]:
        if head is None:
            return list_items(tracker, **options), None
        return list_head(tracker, head, **options)

    write(render_head(fetch, fmt=state.output_format(), settings=state.output_settings()))


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


def run_search(state: CliState, **values: Any) -> None:
    """Search every item by words (inline filters: tag:x status:y type:z)."""
    state.emit(search(state.tracker, **values), exact=values.get("limit") is not None)


def run_focus(state: CliState, item_id: str | None, clear: bool) -> None:
    """Show, set (ID) or --clear the session's focus item."""
    from pm_core.tracker.ops import focus

    if clear and item_id:
        from pm_core.tracker.model.errors import UsageError

        raise UsageError("an id and --clear together", hint="pass one of them")
    if clear:
        result = focus.clear_focus(state.tracker)
    elif item_id:
        result = focus.set_focus(state.tracker, item_id)
    else:
        result = focus.get_focus(state.tracker)
    state.emit(result, kind="mutation" if (clear or item_id) else "read")


_STATUS = "--status", "-s"

SPECS = specs(
    Spec(
        "get",
        run_get,
        args=(Arg("item_id"),),
        opts=(
            Opt(
                "--fields",
                dest="fields",
                metavar="A,B",
                help="Only these fields (id is always kept).",
            ),
            Opt(
                "--at",
                dest="at",
                metavar="VERSION|TIME",
                help="The item as it was then (from history).",
            ),
        ),
    ),
    Spec(
        "list",
        run_list,
        opts=(
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
    ),
    Spec(
        "search",
        run_search,
        args=(Arg("query", variadic=True, help="Words; tag:/status:/type: narrow."),),
        opts=(
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
    ),
    Spec(
        "focus",
        run_focus,
        args=(Arg("item_id", required=False),),
        opts=(Opt("--clear", dest="clear", kind="flag", help="Forget the focus."),),
    ),
)
