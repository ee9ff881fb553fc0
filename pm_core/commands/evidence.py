"""Evidence commands, declared: comments, notes, learnings, files, docs.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.evidence`) and the tools ``pm_comments``,
``pm_notes``, ``pm_learnings``, ``pm_files`` and ``pm_docs`` read it, and call
the functions here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: Log kind -> the noun of one entry.
LOG_KINDS = {"comments": "comment", "notes": "note", "learnings": "learning"}
LINK_KINDS = ("files", "docs")
#: Where a linked path lives (``Tracker.link`` checks it).
LINK_SCOPES = ("project", "global")


def list_log(tracker: Tracker, kind: str, item_id: str, limit: int | None) -> dict[str, Any]:
    """``{id, <kind>: the last limit entries, total}`` (``limit`` 0: none, ``None``: all)."""
    entries = tracker.logs(kind, item_id)
    shown = entries if limit is None else (entries[-limit:] if limit else [])
    return {"id": tracker.normalize_id(item_id), kind: shown, "total": len(entries)}


def change_link(
    tracker: Tracker,
    kind: str,
    item_id: str,
    add: str | None,
    remove: str | None,
    scope: str | None,
    note: str | None,
) -> dict[str, Any] | None:
    """Link ``add`` or unlink ``remove`` (the receipt); ``None`` when neither is given."""
    if add is not None:
        return tracker.link(kind, item_id, add, scope=scope or "project", note=note)
    if remove is not None:
        return tracker.unlink(kind, item_id, remove)
    return None


def _log_params(noun: str) -> tuple[Param, ...]:
    return (
        Arg("item_id", help="The item's id (prefix optional)."),
        Arg("text_arg", required=False, metavar="[TEXT]", tool=None, help=f"The {noun} to add."),
        Opt("--add", dest="text", metavar="TEXT", tool="add", help=f"Add a {noun} (or pass TEXT)."),
        Opt(
            "--stdin",
            dest="stdin",
            kind="flag",
            role="io",
            help=f"Read the {noun} to add from stdin.",
        ),
        Opt(
            "--data",
            dest="data",
            kind="json",
            metavar="JSON",
            help=f"Structured data stored with the {noun}.",
        ),
        Opt(
            "--limit",
            dest="limit",
            kind="int",
            minimum=0,
            role="filter",
            help="Only the last N when listing.",
        ),
    )


def _link_params() -> tuple[Param, ...]:
    return (
        Arg("item_id", help="The item's id (prefix optional)."),
        Opt("--add", dest="add", metavar="PATH", help="Link PATH."),
        Opt("--remove", dest="remove", metavar="PATH", help="Unlink PATH."),
        Opt(
            "--scope",
            dest="scope",
            default="project",
            show_default=True,
            choices=LINK_SCOPES,
            help="project (inside the repository) or global.",
        ),
        Opt("--note", dest="note", help="Why this path matters."),
    )


PARAMS: dict[str, tuple[Param, ...]] = {
    **{kind: _log_params(noun) for kind, noun in LOG_KINDS.items()},
    **{kind: _link_params() for kind in LINK_KINDS},
}
