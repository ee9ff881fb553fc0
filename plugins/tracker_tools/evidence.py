"""Standard-tier tools that attach evidence to one item.

``pm_append``, ``pm_comments``/``pm_notes``/``pm_learnings``,
``pm_files``/``pm_docs``, ``pm_test``, ``pm_deps`` and ``pm_copy``: each reads
an item's collection, or changes it through the SDK and returns the receipt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import declared as d
from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import ToolContext, WorkspaceContracts
from pm_core.tracker.model.errors import UsageError

Schema = dict[str, Any]
Handler = Callable[[ToolContext, Mapping[str, Any]], Any]


# ------------------------------------------------------------------ pm_append


append_schema, _append_request_schema, _append_accepts = d.builders("append", ["id", "text"])


def append_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Append a paragraph to the item's body (``text``: what ``pm append`` reads from TEXT)."""
    values = d.values("append", args)
    return ctx.tracker.append(values["item_id"], a.required_text(args, "text"))


# ------------------------------------------------------------------ comments, notes, learnings


def log_schema(c: WorkspaceContracts) -> Schema:
    """``{id, add?, data?, limit?}``: list the entries (the last ``limit``), or add one.

    The three log tools take the same parameters (``pm comments`` declares them).
    """
    return s.tool(d.properties("comments", c, compact=False), ["id"])


def log_handler(kind: str) -> Handler:
    """A handler listing or adding ``kind`` (comments, notes, learnings), as ``pm <kind>`` does."""

    def handle(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        from pm_core.commands.evidence import list_log

        values = d.values(kind, args)
        item, text, data = values["item_id"], values["text"], values["data"]
        if text is not None:
            return ctx.tracker.add_log(kind, item, text, data=data)
        if data is not None:
            raise UsageError(f"data needs an entry to add to {kind}", hint="pass add too")
        listed = list_log(ctx.tracker, kind, item, values["limit"])
        return {"id": listed["id"], kind: listed[kind], "count": listed["total"]}

    handle.__doc__ = f"List the item's {kind}, or add one."
    return handle


# ------------------------------------------------------------------ files, docs


def link_schema(c: WorkspaceContracts) -> Schema:
    """``{id, add?, remove?, scope?, note?}`` (``pm files`` and ``pm docs`` declare them)."""
    return s.tool(d.properties("files", c, compact=False), ["id"])


def link_handler(kind: str) -> Handler:
    """A handler listing, linking or unlinking ``kind`` (files, docs)."""

    def handle(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
        from pm_core.commands.evidence import change_link

        values = d.values(kind, args)
        item, add, remove = values["item_id"], values["add"], values["remove"]
        if add is not None and remove is not None:
            raise UsageError("pass add or remove, not both", hint="make two calls")
        receipt = change_link(ctx.tracker, kind, item, add, remove, values["scope"], values["note"])
        if receipt is not None:
            return receipt
        links = ctx.tracker.get(item).get_field(kind)
        return {"id": ctx.tracker.normalize_id(item), kind: links, "count": len(links)}

    handle.__doc__ = f"List, link or unlink the item's {kind}."
    return handle


# ------------------------------------------------------------------ pm_test


test_schema, _test_request_schema, _test_accepts = d.builders("test", ["id"])


def test_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """List, link, unlink or run the item's test commands (runs are recorded)."""
    from pm_core.commands.assurance import timeout_seconds

    values = d.values("test", args)
    item = a.required_text(args, "id")
    add, remove, run, note = values["add"], values["remove"], values["run"], values["note"]
    timeout = timeout_seconds(values["timeout"])
    chosen = [name for name, on in (("add", add), ("remove", remove), ("run", run)) if on]
    if len(chosen) > 1:
        raise UsageError(f"pass one of add, remove, run (got {', '.join(chosen)})")
    # Only what the caller gave is passed on, so the SDK's own defaults apply.
    timing: dict[str, Any] = {} if timeout is None else {"timeout_seconds": timeout}
    if add is not None:
        return ctx.tracker.test_add(item, add, note=note, **timing)
    if note is not None:
        raise UsageError("note applies to add", hint="pass add too")
    if remove is not None:
        if timing:
            raise UsageError("timeoutSeconds applies to add or run", hint="drop it")
        return ctx.tracker.test_remove(item, remove)
    if run:
        return ctx.tracker.test_run(item, **timing)
    if timing:
        raise UsageError("timeoutSeconds applies to add or run", hint="pass add or run too")
    return ctx.tracker.test_list(item)


# ------------------------------------------------------------------ pm_deps


def _deps_kind(_c: WorkspaceContracts) -> dict[str, Schema]:
    """``kind``: the tool's own spelling of what ``pm deps --add ID:KIND`` writes inside the value."""
    from pm_core.tracker.model.item import DEPENDENCY_KINDS

    return {"kind": s.choice(DEPENDENCY_KINDS)}


deps_schema, _deps_request_schema, _deps_accepts = d.builders("deps", ["id"], extra=_deps_kind)


def deps_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Show the bounded dependency tree, or add/remove one dependency (every ``pm deps`` option)."""
    from pm_core.commands.graph import deps

    values = d.values("deps", args)
    kind = a.text(args, "kind")
    if values["add"] is not None and values["remove"] is not None:
        raise UsageError("pass add or remove, not both", hint="make two calls")
    if kind is not None and not (values["add"] or values["remove"]):
        raise UsageError("kind applies to add or remove", hint="pass add or remove too")
    return deps(ctx.tracker, **values, kind=kind)


# ------------------------------------------------------------------ pm_copy


copy_schema, _copy_request_schema, _copy_accepts = d.builders("copy", ["id"])


def copy_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The new item's receipt (open, unclaimed, no comments or history)."""
    values = d.values("copy", args)
    return ctx.tracker.copy(values["item_id"], title=values["title"])
