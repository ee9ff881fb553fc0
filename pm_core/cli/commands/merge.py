"""Merge commands: ``pm merge install|report|reconcile|driver`` and ``pm history-repair``.

Declared in :mod:`pm_core.commands.merge` (see :mod:`pm_core.cli.argspec`);
``pm_run`` reads the same declaration.
"""

from __future__ import annotations

from pm_core.cli.argspec import Group, Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.merge import PARAMS, history_repair, install, reconcile, report
from pm_core.tracker.model.errors import PmError, UsageError


def run_install(state: CliState, dry_run: bool) -> None:
    """Write the .gitattributes merge fence and this clone's driver config (idempotent)."""
    state.emit(install(state.tracker, dry_run), kind="mutation")


def run_report(state: CliState, include_reconciled: bool) -> None:
    """List merge receipts: fields a merge decided, with the discarded values kept locally."""
    state.emit(report(state.tracker, include_reconciled), kind="governance")


def run_reconcile(state: CliState, dry_run: bool, force: bool, message: str | None) -> None:
    """Post-merge gate: record merged histories, clear receipts; exit 1 while anything is red."""
    outcome = reconcile(state.tracker, dry_run, force, message)
    state.emit(outcome, kind="governance")
    if not outcome["ok"]:
        if outcome.get("refused"):
            raise PmError(
                "merge reconcile refused: unreviewed merge decisions",
                hint=str(outcome["reason"]),
            )
        raise PmError(
            "merge reconcile: the tracker is not reconciled yet",
            hint="`pm merge reconcile` applies the listed repairs; `pm validate` names what stays red"
            if dry_run
            else "`pm validate` names each remaining failure and its fix",
        )


def run_driver(
    state: CliState,
    kind: str,
    base: str,
    ours: str,
    theirs: str,
    path: str | None,
    item_path: str | None,
) -> None:
    """Git's merge driver: KIND BASE OURS THEIRS [--item-path PATH] (git runs it)."""
    from pm_core.tracker.merge.driver import USAGE, run

    result = run(kind, base, ours, theirs, item_path or path or None)
    if result.code == 2:
        raise UsageError(result.message, hint=USAGE)
    if result.code:
        # Git reads only the exit status: non-zero keeps the path conflicted.
        raise PmError(result.message, hint="`pm merge report` lists the merge decisions")


def run_history_repair(
    state: CliState, item_id: str | None, all_items: bool, dry_run: bool, message: str | None
) -> None:
    """Re-anchor a history chain (after a hand-resolved merge) with an audit entry."""
    outcome = history_repair(state.tracker, item_id, all_items, dry_run, message)
    state.emit(outcome, kind="mutation")
    if all_items and not outcome["ok"]:
        raise PmError(
            f"{len(outcome['failed'])} history(ies) could not be repaired",
            hint="each failure above names its fix",
        )


SPECS = specs(
    Group(
        "merge",
        "Git merge drivers for tracker files, and the post-merge gate.",
        Spec("install", run_install, params=PARAMS["merge install"]),
        Spec("report", run_report, params=PARAMS["merge report"]),
        Spec("reconcile", run_reconcile, params=PARAMS["merge reconcile"]),
        Spec("driver", run_driver, params=PARAMS["merge driver"]),
    ),
    Spec("history-repair", run_history_repair, params=PARAMS["history-repair"]),
)
