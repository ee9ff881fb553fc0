"""Merge commands: ``pm merge install|report|reconcile|driver`` and ``pm history-repair``."""

from __future__ import annotations

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState
from pm_core.tracker.model.errors import PmError, UsageError


@click.group("merge")
def cmd_merge() -> None:
    """Git merge drivers for tracker files, and the post-merge gate."""


@cmd_merge.command("install")
@click.option("--dry-run", is_flag=True, help="Show what would be written; change nothing.")
@json_option
@pass_state
def merge_install_cmd(state: CliState, dry_run: bool) -> None:
    """Write the .gitattributes merge fence and this clone's driver config (idempotent)."""
    from pm_core.tracker.merge.install import install

    tracker = state.tracker
    state.emit(install(tracker.root, tracker.schema.folders(), dry_run=dry_run), kind="mutation")


@cmd_merge.command("report")
@click.option("--include-reconciled", is_flag=True, help="Also list receipts already reconciled.")
@json_option
@pass_state
def merge_report_cmd(state: CliState, include_reconciled: bool) -> None:
    """List merge receipts: fields a merge decided, with the discarded values kept locally."""
    from pm_core.tracker.merge.receipts import is_blocking, list_receipts

    found = list_receipts(state.tracker.root, include_reconciled=include_reconciled)
    pending = [r for r in found if r.get("status") != "reconciled"]
    state.emit(
        {
            "receipts": found,
            "counts": {
                "receipts": len(found),
                "pending": len(pending),
                "blocking": sum(1 for r in pending if is_blocking(r)),
            },
            "next_steps": ["pm merge reconcile --dry-run", "pm merge reconcile [--force]"]
            if pending
            else [],
        },
        kind="governance",
    )


@cmd_merge.command("reconcile")
@click.option(
    "--dry-run", is_flag=True, help="Report drifted histories and receipts; change nothing."
)
@click.option(
    "--force", is_flag=True, help="Accept reviewed merge decisions that discarded a value."
)
@click.option("--message", "-m", help="A note recorded on each reconcile entry.")
@json_option
@pass_state
def merge_reconcile_cmd(state: CliState, dry_run: bool, force: bool, message: str | None) -> None:
    """Post-merge gate: record merged histories, clear receipts; exit 1 while anything is red."""
    from pm_core.tracker.merge.reconcile import reconcile

    report = reconcile(state.tracker, dry_run=dry_run, force=force, message=message)
    state.emit(report, kind="governance")
    if not report["ok"]:
        if report.get("refused"):
            raise PmError(
                "merge reconcile refused: unreviewed merge decisions",
                hint=str(report["reason"]),
            )
        raise PmError(
            "merge reconcile: the tracker is not reconciled yet",
            hint="`pm merge reconcile` applies the listed repairs; `pm validate` names what stays red"
            if dry_run
            else "`pm validate` names each remaining failure and its fix",
        )


@cmd_merge.command(
    "driver", context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def merge_driver_cmd(args: tuple[str, ...]) -> None:
    """Git's merge driver: KIND BASE OURS THEIRS [--item-path PATH] (git runs it)."""
    from pm_core.tracker.merge.driver import USAGE, parse_args, run

    parsed = parse_args(list(args))
    if parsed is None:
        raise UsageError("merge driver needs a kind and git's three files", hint=USAGE)
    result = run(*parsed)
    if result.code == 2:
        raise UsageError(result.message, hint=USAGE)
    if result.code:
        # Git reads only the exit status: non-zero keeps the path conflicted.
        raise PmError(result.message, hint="`pm merge report` lists the merge decisions")


@click.command("history-repair")
@click.argument("item_id", required=False)
@click.option("--all", "all_items", is_flag=True, help="Every item whose history does not verify.")
@click.option("--dry-run", is_flag=True, help="Say what would be repaired; change nothing.")
@click.option("--message", "-m", help="A note recorded on the audit entry.")
@json_option
@pass_state
def cmd_history_repair(
    state: CliState, item_id: str | None, all_items: bool, dry_run: bool, message: str | None
) -> None:
    """Re-anchor a history chain (after a hand-resolved merge) with an audit entry."""
    from pm_core.tracker.merge.reconcile import repair_all, repair_chain

    if bool(item_id) == all_items:
        raise UsageError("name one item or pass --all", hint="pm history-repair <id> | --all")
    if all_items:
        report = repair_all(state.tracker, dry_run=dry_run, message=message)
        state.emit(report, kind="mutation")
        if not report["ok"]:
            raise PmError(
                f"{len(report['failed'])} history(ies) could not be repaired",
                hint="each failure above names its fix",
            )
        return
    state.emit(
        repair_chain(state.tracker, str(item_id), message=message, dry_run=dry_run), kind="mutation"
    )
