"""Merge commands, declared: ``merge install|report|reconcile|driver`` and ``history-repair``.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.merge`), ``pm_run``, ``pm contracts`` and
``docs/generated/`` read it. The functions give both doors the same answer.
``merge driver`` is git's door only (it writes over the file git names), so
no tool reaches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: The driver kinds git's config names (``pm merge driver KIND ...``).
DRIVER_KINDS = ("item", "history", "relationship", "json")
#: The subcommands a tool may run (``driver`` is git's alone).
TOOL_SUBCOMMANDS = ("install", "report", "reconcile")

_DRY_RUN = Opt(
    "--dry-run", dest="dry_run", kind="flag", help="Show what would be written; change nothing."
)


def install(tracker: Tracker, dry_run: bool) -> dict[str, Any]:
    """Write the ``.gitattributes`` fence and this clone's driver config (idempotent)."""
    from pm_core.tracker.merge.install import install as write

    return write(tracker.root, tracker.schema.folders(), dry_run=dry_run)


def report(tracker: Tracker, include_reconciled: bool) -> dict[str, Any]:
    """``{receipts, counts, next_steps}``: the fields merges decided, pending first."""
    from pm_core.tracker.merge.receipts import is_blocking, list_receipts

    found = list_receipts(tracker.root, include_reconciled=include_reconciled)
    pending = [r for r in found if r.get("status") != "reconciled"]
    return {
        "receipts": found,
        "counts": {
            "receipts": len(found),
            "pending": len(pending),
            "blocking": sum(1 for r in pending if is_blocking(r)),
        },
        "next_steps": ["pm merge reconcile --dry-run", "pm merge reconcile [--force]"]
        if pending
        else [],
    }


def reconcile(tracker: Tracker, dry_run: bool, force: bool, message: str | None) -> dict[str, Any]:
    """The post-merge gate's report; ``ok`` is false while anything is red."""
    from pm_core.tracker.merge.reconcile import reconcile as gate

    return gate(tracker, dry_run=dry_run, force=force, message=message)


def history_repair(
    tracker: Tracker, item_id: str | None, all_items: bool, dry_run: bool, message: str | None
) -> dict[str, Any]:
    """Re-anchor one item's history chain, or (``all_items``) every one that does not verify."""
    from pm_core.tracker.merge.reconcile import repair_all, repair_chain
    from pm_core.tracker.model.errors import UsageError

    if bool(item_id) == all_items:
        raise UsageError("name one item or pass --all", hint="pm history-repair <id> | --all")
    if all_items:
        return repair_all(tracker, dry_run=dry_run, message=message)
    return repair_chain(tracker, str(item_id), message=message, dry_run=dry_run)


PARAMS: dict[str, tuple[Param, ...]] = {
    "merge install": (_DRY_RUN,),
    "merge report": (
        Opt(
            "--include-reconciled",
            dest="include_reconciled",
            kind="flag",
            role="filter",
            help="Also list receipts already reconciled.",
        ),
    ),
    "merge reconcile": (
        Opt(
            "--dry-run",
            dest="dry_run",
            kind="flag",
            help="Report drifted histories and receipts; change nothing.",
        ),
        Opt(
            "--force",
            dest="force",
            kind="flag",
            help="Accept reviewed merge decisions that discarded a value.",
        ),
        Opt("--message", "-m", dest="message", help="A note recorded on each reconcile entry."),
    ),
    "merge driver": (
        Arg("kind", choices=DRIVER_KINDS, tool=None, help="Which driver (git's config names it)."),
        Arg("base", tool=None, help="Git's file of the common ancestor."),
        Arg("ours", tool=None, help="Git's file of this side; the merge is written over it."),
        Arg("theirs", tool=None, help="Git's file of the other side."),
        Arg("path", required=False, tool=None, help="The path being merged (git's %P)."),
        Opt(
            "--item-path",
            dest="item_path",
            metavar="PATH",
            tool=None,
            help="The path being merged (the same as PATH).",
        ),
    ),
    "history-repair": (
        Arg("item_id", required=False, help="The item's id (prefix optional)."),
        Opt(
            "--all",
            dest="all_items",
            kind="flag",
            tool="all",
            help="Every item whose history does not verify.",
        ),
        Opt(
            "--dry-run",
            dest="dry_run",
            kind="flag",
            help="Say what would be repaired; change nothing.",
        ),
        Opt("--message", "-m", dest="message", help="A note recorded on the audit entry."),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs
#: these; ``merge driver`` is git's alone, so it has none).
ACTIONS = {
    "merge install": install,
    "merge report": report,
    "merge reconcile": reconcile,
    "history-repair": history_repair,
}
