"""Evidence commands: comments, notes, learnings, files, docs.

Declared in :mod:`pm_core.commands.evidence` (see :mod:`pm_core.cli.argspec`):
the tools ``pm_comments``, ``pm_notes``, ``pm_learnings``, ``pm_files`` and
``pm_docs`` read the same declarations, so every option here is a tool key there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState, read_text
from pm_core.commands.evidence import LINK_KINDS, LOG_KINDS, PARAMS, change_link, list_log
from pm_core.tracker.model.errors import UsageError


def _log_runner(kind: str, noun: str) -> Callable[..., None]:
    def run(
        state: CliState,
        item_id: str,
        text_arg: str | None,
        text: str | None,
        stdin: bool,
        data: str | None,
        limit: int | None,
    ) -> None:
        if text_arg is not None and text is not None and text_arg != text:
            raise UsageError(f"two different {noun}s given", hint="pass TEXT or --add, not both")
        value = read_text(text if text is not None else text_arg, stdin=stdin)
        if value is None:
            if data is not None:
                raise UsageError(f"--data needs a {noun} to add", hint="pass --add TEXT too")
            state.emit(list_log(state.tracker, kind, item_id, limit), exact=limit is not None)
            return
        parsed: Any = None
        if data is not None:
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                raise UsageError(f"--data is not valid JSON ({exc})", hint="pass JSON") from None
        state.emit(state.tracker.add_log(kind, item_id, value, data=parsed), kind="mutation")

    run.__doc__ = f"List an item's {kind}, or add one: `pm {kind} ID TEXT` (or --add, --stdin)."
    return run


def _link_runner(kind: str) -> Callable[..., None]:
    def run(
        state: CliState,
        item_id: str,
        add: str | None,
        remove: str | None,
        scope: str,
        note: str | None,
    ) -> None:
        tracker = state.tracker
        if add and remove:
            raise UsageError("--add and --remove together", hint="run them one at a time")
        receipt = change_link(tracker, kind, item_id, add or None, remove or None, scope, note)
        if receipt is not None:
            state.emit(receipt, kind="mutation")
            return
        item = tracker.get(item_id)
        links = getattr(item, kind)
        state.emit({"id": item.id, kind: links, "total": len(links)})

    run.__doc__ = f"List an item's linked {kind}, or --add / --remove a path."
    return run


SPECS = specs(
    *(Spec(kind, _log_runner(kind, noun), params=PARAMS[kind]) for kind, noun in LOG_KINDS.items()),
    *(Spec(kind, _link_runner(kind), params=PARAMS[kind]) for kind in LINK_KINDS),
)
