"""Item commands: init, create, update, delete, copy, append.

Declared in :mod:`pm_core.commands.items` (see :mod:`pm_core.cli.argspec`): they
run without click, and the tools read the same declarations.
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.fieldopts import collect_values
from pm_core.cli.state import CliState, read_text, split_commas
from pm_core.commands.items import PARAMS, delete, init
from pm_core.tracker.model.errors import UsageError


def run_init(
    state: CliState, prefix: str | None, id_prefix: str | None, no_merge_fence: bool = False
) -> None:
    """Create the tracker at the repository root (safe to run again)."""
    state.emit(init(state.tracker, prefix, id_prefix, no_merge_fence), kind="mutation")


def run_create(
    state: CliState, /, title_arg: str | None, second_arg: str | None, **params: Any
) -> None:
    """Create an item: `pm create [TYPE] [TITLE]`; prints its receipt (id, status, changed fields)."""
    values = collect_values(params)
    if second_arg is not None:  # `pm create Task "Title"`, as the TypeScript pm reads it
        assert title_arg is not None  # click and the fast path fill positionals in order
        if values.get("type") not in (None, title_arg):
            raise UsageError("the type was given twice", hint="pass TYPE or --type, not both")
        values["type"] = title_arg
        title_arg = second_arg
    if title_arg is not None:
        if values.get("title") not in (None, title_arg):
            raise UsageError("the title was given twice", hint="pass TITLE or --title, not both")
        values["title"] = title_arg
    receipt = state.tracker.create(
        values,
        allow_unresolved_deps=bool(params.get("allow_unresolved_deps")),
        message=params.get("message"),
    )
    state.emit(receipt, kind="mutation")


def run_update(state: CliState, /, item_id: str, **params: Any) -> None:
    """Change fields of an item (``--status closed`` closes it, with a reason)."""
    values = collect_values(params)
    if params.get("reason"):
        values["close_reason"] = params["reason"]
    add_tags = split_commas(params.get("add_tag") or ())
    remove_tags = split_commas(params.get("remove_tag") or ())
    remove_deps = list(params.get("dep_remove") or ())
    unset = split_commas(params.get("unset") or ())
    receipt = state.tracker.update(
        item_id,
        values,
        unset=unset,
        add_tags=add_tags,
        remove_tags=remove_tags,
        remove_deps=remove_deps,
        allow_unresolved_deps=bool(params.get("allow_unresolved_deps")),
        message=params.get("message"),
    )
    state.emit(receipt, kind="mutation")


def run_delete(state: CliState, item_id: str) -> None:
    """Delete an item (its history is kept; `pm restore` brings it back)."""
    state.emit(delete(state.tracker, item_id), kind="mutation")


def run_copy(state: CliState, item_id: str, title: str | None) -> None:
    """Create a new open item from an existing one."""
    state.emit(state.tracker.copy(item_id, title=title), kind="mutation")


def run_append(
    state: CliState, item_id: str, text: str | None, stdin: bool, body_file: str | None
) -> None:
    """Append a paragraph to an item's body."""
    value = read_text(text, stdin=stdin, file=body_file)
    if value is None:
        raise UsageError("nothing to append", hint="pass TEXT, --stdin or --body-file")
    state.emit(state.tracker.append(item_id, value), kind="mutation")


SPECS = specs(
    *(
        Spec(name, run, params=PARAMS[name])
        for name, run in (
            ("init", run_init),
            ("create", run_create),
            ("update", run_update),
            ("delete", run_delete),
            ("copy", run_copy),
            ("append", run_append),
        )
    ),
)
