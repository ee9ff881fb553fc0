"""Read commands: get, list, search, focus (no field flags to build: they start fast).

Their arguments are declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`),
so an everyday read runs without importing click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import Arg, Opt, Spec, limit_opt, specs
from pm_core.cli.state import CliState, parse_assignments, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.query.budget import Elided


def run_get(state: CliState, item_id: str, fields: str | None, at: str | None) -> None:
    """Show one item."""
    tracker = state.tracker
    item = tracker.version(item_id, at) if at else tracker.get(item_id)
    record = item.to_record()
    if fields:
        from pm_core.tracker.query.budget import project

        record = project(record, split_commas([fields]))
    state.emit({"item": record}, exact=bool(fields))


def run_list(
    state: CliState,
    status: tuple[str, ...],
    type_: tuple[str, ...],
    tag: tuple[str, ...],
    priority: tuple[str, ...],
    assignee: str | None,
    parent: str | None,
    include_all: bool,
    limit: int | None,
    offset: int,
    fields: str | None,
    sort: str,
    custom: tuple[str, ...],
) -> None:
    """List items (open work unless --all); always reports the total."""
    from pm_core.tracker.query.listing import list_head, list_items

    options: dict[str, Any] = {
        "status": split_commas(status) or None,
        "type": split_commas(type_) or None,
        "tags": split_commas(tag),
        "priority": split_commas(priority) or None,
        "assignee": assignee,
        "parent": parent,
        "include_terminal": include_all,
        "fields": split_commas([fields]) if fields else None,
        "limit": limit,
        "offset": offset,
        "sort": sort,
        "field_filters": parse_assignments(custom, "--field"),
    }
    tracker = state.tracker
    if limit is not None or state.json:
        state.emit(list_items(tracker, **options), exact=limit is not None)
        return
    # Shrunk to the token ceiling: only the rows that can be shown are built.
    from pm_core.cli.output import render_head, write

    def fetch(head: int | None) -> tuple[dict[str, Any], Elided | None]:
        if head is None:
            return list_items(tracker, **options), None
        return list_head(tracker, head, **options)

    write(render_head(fetch, fmt=state.output_format(), settings=state.output_settings()))


def run_search(
    state: CliState,
    query: tuple[str, ...],
    mode: str,
    match: str,
    limit: int | None,
    min_score: float,
    open_only: bool,
    status: tuple[str, ...],
    type_: tuple[str, ...],
    tag: tuple[str, ...],
) -> None:
    """Search every item by words (inline filters: tag:x status:y type:z)."""
    from pm_core.tracker.query.search import search

    filters = {
        key: split_commas(values)
        for key, values in (("status", status), ("type", type_), ("tag", tag))
        if values
    }
    result = search(
        state.tracker,
        " ".join(query),
        mode=mode,
        match=match,
        limit=limit or 50,
        min_score=min_score,
        include_terminal=not open_only,
        filters=filters,
    )
    state.emit(result, exact=limit is not None)


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
                help="Status(es), comma separated; repeatable.",
            ),
            Opt("--type", dest="type_", multiple=True, help="Type(s); repeatable."),
            Opt(
                "--tag", dest="tag", multiple=True, help="Items having every tag given; repeatable."
            ),
            Opt(
                "--priority",
                "-p",
                dest="priority",
                multiple=True,
                help="Priority(ies): 0-4 or names.",
            ),
            Opt(
                "--assignee",
                dest="assignee",
                metavar="NAME",
                help="Held by NAME (none: unassigned).",
            ),
            Opt("--parent", dest="parent", metavar="ID", help="Children of ID."),
            Opt(
                "--all", dest="include_all", kind="flag", help="Include closed and canceled items."
            ),
            limit_opt("At most N rows (exactly N).", minimum=0),
            Opt(
                "--offset",
                dest="offset",
                kind="int",
                minimum=0,
                default=0,
                help="Skip the first N rows.",
            ),
            Opt(
                "--fields",
                dest="fields",
                metavar="A,B",
                help="Row fields (default: a short summary).",
            ),
            Opt(
                "--sort",
                dest="sort",
                default="default",
                show_default=True,
                help="priority, updated, ...",
            ),
            Opt(
                "--field",
                dest="custom",
                multiple=True,
                metavar="KEY=VALUE",
                help="Custom field match.",
            ),
        ),
    ),
    Spec(
        "search",
        run_search,
        args=(Arg("query", variadic=True),),
        opts=(
            Opt(
                "--mode",
                dest="mode",
                default="keyword",
                show_default=True,
                help="keyword, bm25 or hybrid.",
            ),
            Opt("--match", dest="match", default="or", show_default=True, help="or, and, exact."),
            limit_opt("At most N hits (default 50)."),
            Opt(
                "--min-score",
                dest="min_score",
                kind="float",
                default=0.0,
                help="Drop hits scoring below this.",
            ),
            Opt(
                "--open", dest="open_only", kind="flag", help="Leave out closed and canceled items."
            ),
            Opt(*_STATUS, dest="status", multiple=True, help="Only these statuses."),
            Opt("--type", dest="type_", multiple=True, help="Only these types."),
            Opt("--tag", dest="tag", multiple=True, help="Only items with these tags."),
        ),
    ),
    Spec(
        "focus",
        run_focus,
        args=(Arg("item_id", required=False),),
        opts=(Opt("--clear", dest="clear", kind="flag", help="Forget the focus."),),
    ),
)
