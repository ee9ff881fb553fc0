"""Assurance commands: validate, health, test.

Declared in :mod:`pm_core.commands.assurance` (see :mod:`pm_core.cli.argspec`):
the tools ``pm_validate``, ``pm_health`` and ``pm_test`` read the same
declarations, so every option here is a tool key there (``pm test``'s approval
switches are for a person at this clone's terminal only).
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState, split_commas
from pm_core.commands.assurance import PARAMS, timeout_seconds
from pm_core.tracker.model.errors import PmError, UsageError


def _failing_ids(report: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for check in report.get("checks", []):
        for failure in check.get("failures", []):
            ident = str(failure.get("id") or failure.get("path") or check.get("name"))
            if ident not in ids:
                ids.append(ident)
    return ids


def run_validate(state: CliState, checks: tuple[str, ...], fix: bool) -> None:
    """Check every item; exit 1 naming each failing item when a check fails."""
    from pm_core.tracker.query.validate import repair_history, validate

    repaired = repair_history(state.tracker) if fix else None
    report = validate(state.tracker, split_commas(checks) or None)
    if repaired is not None:
        report = {**report, "repair": repaired}
    state.emit(report, kind="governance")
    if not report["ok"]:
        ids = _failing_ids(report)
        raise PmError(
            f"validation failed for {len(ids)} item(s): {', '.join(ids)}",
            hint="each failure above names the file, the problem and its fix",
        )


def run_health(state: CliState) -> None:
    """Check the workspace (settings, schema, folders, locks, skills); exit 1 when unhealthy."""
    from pm_core.host import build_host
    from pm_core.sdk import with_skills_check
    from pm_core.tracker.query.validate import health

    report = health(state.tracker)
    # Skills come from plugins, which the SDK never loads: the host finds them.
    origins = build_host().skill_origins(state.tracker.root.parent.parent)
    report = with_skills_check(report, origins)
    state.emit(report, kind="governance")
    if not report.get("ok", True):
        failing = [c.get("name", "?") for c in report.get("checks", []) if not c.get("ok", True)]
        raise PmError(
            f"workspace checks failed: {', '.join(map(str, failing)) or 'see above'}",
            hint="each failing check above has its remediation",
        )


def run_test(
    state: CliState,
    item_id: str | None,
    add: str | None,
    remove: str | None,
    run: bool,
    approve: bool,
    all_items: bool,
    yes: bool,
    timeout: float | None,
    note: str | None,
) -> None:
    """List, link or unlink an item's tests; --run runs them (exit 1 when one fails).

    A linked command runs only when this clone approved its exact text:
    linking it here with --add approves it; a command that arrived through git
    (pull, merge, checkout) or a hand edit waits for --approve.
    """
    tracker = state.tracker
    if sum(bool(x) for x in (add, remove, run, approve)) > 1:
        raise UsageError(
            "--add, --remove, --run and --approve go one at a time", hint="run them separately"
        )
    if (all_items or yes) and not approve:
        raise UsageError("--all and --yes go with --approve", hint="pm test --approve --all")
    if approve:
        _approve(state, item_id, all_items=all_items, yes=yes)
        return
    if item_id is None:
        raise UsageError("missing ITEM_ID", hint="pm test <id> [--add|--remove|--run]")
    if add:
        options: dict[str, Any] = {"note": note}
        if timeout is not None:
            options["timeout_seconds"] = timeout_seconds(timeout)
        state.emit(tracker.test_add(item_id, add, **options), kind="mutation")
    elif remove:
        state.emit(tracker.test_remove(item_id, remove), kind="mutation")
    elif run:
        result = tracker.test_run(item_id, timeout_seconds=timeout)
        from pm_core.cli import human

        if human.wanted(state.json, state.output_format()) and "runs" in result:
            from pm_core.cli.output import write

            write(human.test_lines(result))
        else:
            state.emit(result)
        failed = int(result.get("summary", {}).get("failed", 0))
        if failed:
            raise PmError(
                f"{failed} linked test(s) of {result.get('id', item_id)} failed",
                hint="the runs above show each command's exit code and output tail",
            )
    else:
        state.emit(tracker.test_list(item_id))


def _interactive() -> bool:
    """A person can answer prompts: both ends are terminals and this is not CI."""
    import os
    import sys

    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return not ci and sys.stdin.isatty() and sys.stderr.isatty()


def _approve(state: CliState, item_id: str | None, *, all_items: bool, yes: bool) -> None:
    """Show each unapproved linked command, then approve it (prompted, or ``--yes``)."""
    import click

    from pm_core.tracker.gate import approvals

    tracker = state.tracker
    if item_id is None and not all_items:
        raise UsageError(
            "--approve needs an item id or --all", hint="pm test <id> --approve, or --approve --all"
        )
    if item_id is not None and all_items:
        raise UsageError("pass an item id or --all, not both")
    pending = approvals.unapproved(tracker, None if all_items else [item_id or ""])
    # One text linked to several items is one approval: show it once, with its items.
    commands: dict[str, list[str]] = {}
    for pending_row in pending:
        commands.setdefault(pending_row["command"], []).append(pending_row["id"])
    interactive = not yes and _interactive()
    if commands and not yes and not interactive:
        for command, ids in commands.items():
            click.echo(f"not approved, linked by {', '.join(ids)}:\n    {command}", err=True)
        raise UsageError(
            f"{len(commands)} unapproved command(s); not approving without --yes when "
            "not on a terminal (or when CI=true)",
            hint="read them in details, then run again with --yes to approve them all",
            details={"unapproved": [{"command": c, "ids": ids} for c, ids in commands.items()]},
        )
    repo = tracker.root.parent.parent
    approved: list[dict[str, Any]] = []
    declined: list[dict[str, Any]] = []
    for command, ids in commands.items():
        row: dict[str, Any] = {
            "command": command,
            "ids": ids,
            "sha256": approvals.command_hash(command),
        }
        click.echo(f"linked by {', '.join(ids)}:\n    {command}", err=True)
        if interactive and not click.confirm("approve this command?", default=False, err=True):
            declined.append(row)
            continue
        approvals.approve(repo, command, via="pm test --approve")
        approved.append(row)
    state.emit(
        {"approved": approved, "declined": declined, "store": str(approvals.store_dir(repo))},
        kind="mutation",
    )


SPECS = specs(
    Spec("validate", run_validate, params=PARAMS["validate"]),
    Spec("health", run_health, params=PARAMS["health"]),
    Spec("test", run_test, params=PARAMS["test"]),
)
