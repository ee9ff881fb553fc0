"""Read commands: get, list, search, focus (no field flags to build: they start fast)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from pm_core.cli.state import CliState, json_option, parse_assignments, pass_state, split_commas

if TYPE_CHECKING:
    from pm_core.tracker.budget import Elided


@click.command("get")
@click.argument("item_id")
@click.option("--fields", metavar="A,B", help="Only these fields (id is always kept).")
@click.option("--at", "at", metavar="VERSION|TIME", help="The item as it was then (from history).")
@json_option
@pass_state
def cmd_get(state: CliState, item_id: str, fields: str | None, at: str | None) -> None:
    """Show one item."""
    tracker = state.tracker
    item = tracker.version(item_id, at) if at else tracker.get(item_id)
    record = item.to_record()
    if fields:
        from pm_core.tracker.budget import project

        record = project(record, split_commas([fields]))
    state.emit({"item": record}, exact=bool(fields))


@click.command("list")
@click.option("--status", "-s", multiple=True, help="Status(es), comma separated; repeatable.")
@click.option("--type", "type_", multiple=True, help="Type(s); repeatable.")
@click.option("--tag", multiple=True, help="Items having every tag given; repeatable.")
@click.option("--priority", "-p", multiple=True, help="Priority(ies): 0-4 or names.")
@click.option("--assignee", metavar="NAME", help="Held by NAME (none: unassigned).")
@click.option("--parent", metavar="ID", help="Children of ID.")
@click.option("--all", "include_all", is_flag=True, help="Include closed and canceled items.")
@click.option("--limit", "-n", type=click.IntRange(min=0), help="At most N rows (exactly N).")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip the first N rows.")
@click.option("--fields", metavar="A,B", help="Row fields (default: a short summary).")
@click.option("--sort", default="default", show_default=True, help="priority, updated, ...")
@click.option("--field", "custom", multiple=True, metavar="KEY=VALUE", help="Custom field match.")
@json_option
@pass_state
def cmd_list(
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
    from pm_core.tracker.listing import list_head, list_items

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

    write(render_head(fetch, fmt=state.output_format(), settings=state._settings()))


@click.command("search")
@click.argument("query", nargs=-1)
@click.option("--mode", default="keyword", show_default=True, help="keyword, bm25 or hybrid.")
@click.option("--match", default="or", show_default=True, help="or, and, exact.")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="At most N hits (default 50).")
@click.option("--min-score", type=float, default=0.0, help="Drop hits scoring below this.")
@click.option("--open", "open_only", is_flag=True, help="Leave out closed and canceled items.")
@click.option("--status", "-s", multiple=True, help="Only these statuses.")
@click.option("--type", "type_", multiple=True, help="Only these types.")
@click.option("--tag", multiple=True, help="Only items with these tags.")
@json_option
@pass_state
def cmd_search(
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
    from pm_core.tracker.search import search

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


@click.command("focus")
@click.argument("item_id", required=False)
@click.option("--clear", is_flag=True, help="Forget the focus.")
@json_option
@pass_state
def cmd_focus(state: CliState, item_id: str | None, clear: bool) -> None:
    """Show, set (ID) or --clear the session's focus item."""
    from pm_core.tracker import focus

    if clear and item_id:
        from pm_core.tracker.errors import UsageError

        raise UsageError("an id and --clear together", hint="pass one of them")
    if clear:
        result = focus.clear_focus(state.tracker)
    elif item_id:
        result = focus.set_focus(state.tracker, item_id)
    else:
        result = focus.get_focus(state.tracker)
    state.emit(result, kind="mutation" if (clear or item_id) else "read")
