"""History commands, declared: history, restore, and mutate.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.history`) and the tool ``pm_mutate`` read it
(``pm_mutate`` takes the mutations as a value where the CLI reads a file or
stdin), and ``pm contracts`` and ``docs/generated/`` list it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

_ITEM = Arg("item_id", help="The item's id (prefix optional).")


def history(
    tracker: Tracker, item_id: str, verify: bool, diff: bool, limit: int | None
) -> dict[str, Any]:
    """The item's numbered history (:func:`history_rows`), or with ``verify`` its chain report."""
    if verify:
        from pm_core.tracker.storage.history import verify_item

        report: dict[str, Any] = verify_item(tracker.store, tracker.normalize_id(item_id))
        return report
    return history_rows(tracker, item_id, diff, limit)


def restore(tracker: Tracker, item_id: str, ref: str) -> dict[str, Any]:
    """Rebuild an item as it was at a version or time."""
    return tracker.restore(item_id, ref)


def history_rows(tracker: Tracker, item_id: str, diff: bool, limit: int | None) -> dict[str, Any]:
    """``{id, entries, total}``: numbered history entries (the last ``limit``), patches with ``diff``."""
    entries = tracker.history(item_id)
    rows: list[dict[str, Any]] = []
    for number, entry in enumerate(entries, start=1):
        row: dict[str, Any] = {"version": number, "ts": entry.ts, "author": entry.author}
        row["op"] = entry.op
        if entry.message:
            row["message"] = entry.message
        row["changed"] = sorted({_field_of(op.get("path", "")) for op in entry.patch} - {""})
        if diff:
            row["patch"] = entry.patch
        rows.append(row)
    shown = rows[-limit:] if limit else rows
    return {"id": tracker.normalize_id(item_id), "entries": shown, "total": len(rows)}


def _field_of(pointer: str) -> str:
    # "/metadata/status" -> "status"; "/body" -> "body"; "" (whole document) -> "".
    parts = [p for p in str(pointer).split("/") if p]
    if not parts:
        return ""
    if parts[0] == "metadata":
        return parts[1] if len(parts) > 1 else "metadata"
    return parts[0]


PARAMS: dict[str, tuple[Param, ...]] = {
    "history": (
        _ITEM,
        Opt(
            "--verify",
            dest="verify",
            kind="flag",
            help="Check the hash chain against the item file.",
        ),
        Opt("--diff", dest="diff", kind="flag", help="Include each entry's JSON patch."),
        Opt(
            "--limit",
            dest="limit",
            kind="int",
            minimum=1,
            role="filter",
            help="Only the last N entries.",
        ),
    ),
    "restore": (
        _ITEM,
        Arg("ref", metavar="VERSION|TIME", help="A version number from `pm history`, or a time."),
    ),
    "mutate": (
        Opt(
            "--file",
            dest="file",
            metavar="FILE",
            role="io",
            help="A JSON list of {op, id, options}.",
        ),
        Opt("--stdin", dest="stdin", kind="flag", role="io", help="Read the JSON list from stdin."),
        Opt(
            "--dry-run",
            dest="dry_run",
            kind="flag",
            help="Check every mutation, then change nothing.",
        ),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {"history": history, "restore": restore}
