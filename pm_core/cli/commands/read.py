"""Read commands: get, list, search, focus (no field flags to build: they start fast).

Their arguments are declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`),
so an everyday read runs without importing click.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.read import PARAMS, get, list_options, search

if TYPE_CHECKING:
    from pm_core.tracker.query.budget import Elided


def run_get(state: CliState, item_id: str, fields: str | None, at: str | None) -> None:
    """Show one item."""
    state.emit(get(state.tracker, item_id, fields, at), exact=bool(fields))


def run_list(state: CliState, **values: Any) -> None:
    """List items (open work unless --all); always reports the total."""
    from pm_core.tracker.query.listing import list_head, list_items

    options = list_options(**values)
    exact = values.get("limit") is not None
    tracker = state.tracker
    from pm_core.cli import human

    if human.wanted(state.json, state.output_format()):
        from pm_core.cli.output import write

        limit = values.get("limit")
        write(human.list_lines(list_items(tracker, **{**options, "limit": limit or 200})))
        return
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


def run_search(state: CliState, **values: Any) -> None:
    """Search every item by words (inline filters: tag:x status:y type:z)."""
    from pm_core.cli import human

    result = search(state.tracker, **values)
    if human.wanted(state.json, state.output_format()):
        from pm_core.cli.output import write

        write(human.search_lines(result))
        return
    state.emit(result, exact=values.get("limit") is not None)


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


SPECS = specs(
    Spec("get", run_get, params=PARAMS["get"]),
    Spec("list", run_list, params=PARAMS["list"]),
    Spec("search", run_search, params=PARAMS["search"]),
    Spec("focus", run_focus, params=PARAMS["focus"]),
)
