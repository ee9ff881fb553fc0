"""Assurance commands: validate, health, test."""

from __future__ import annotations

from typing import Any

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState, split_commas
from pm_core.tracker.model.errors import PmError, UsageError


def _failing_ids(report: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for check in report.get("checks", []):
        for failure in check.get("failures", []):
            ident = str(failure.get("id") or failure.get("path") or check.get("name"))
            if ident not in ids:
                ids.append(ident)
    return ids


@click.command("validate")
@click.option(
    "--check",
    "checks",
    multiple=True,
    metavar="NAME",
    help="Only these checks (parse, metadata, lifecycle, dependencies, history, duplicates, "
    "claims, storage_integrity).",
)
@click.option(
    "--fix",
    "--repair-history",
    "fix",
    is_flag=True,
    help="First repair histories that drifted from their files (the file is kept).",
)
@json_option
@pass_state
def cmd_validate(state: CliState, checks: tuple[str, ...], fix: bool) -> None:
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


@click.command("health")
@json_option
@pass_state
def cmd_health(state: CliState) -> None:
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


@click.command("test")
@click.argument("item_id")
@click.option("--add", "add", metavar="COMMAND", help="Link a test command.")
@click.option("--remove", "remove", metavar="COMMAND|N", help="Unlink a test (command or number).")
@click.option("--run", is_flag=True, help="Run the linked commands and record the results.")
@click.option("--timeout", type=float, metavar="SECONDS", help="Timeout per command.")
@click.option("--note", help="Why this test matters (with --add).")
@json_option
@pass_state
def cmd_test(
    state: CliState,
    item_id: str,
    add: str | None,
    remove: str | None,
    run: bool,
    timeout: float | None,
    note: str | None,
) -> None:
    """List, link or unlink an item's tests; --run runs them (exit 1 when one fails)."""
    tracker = state.tracker
    if sum(bool(x) for x in (add, remove, run)) > 1:
        raise UsageError("--add, --remove and --run go one at a time", hint="run them separately")
    if add:
        options: dict[str, Any] = {"note": note}
        if timeout is not None:
            options["timeout_seconds"] = int(timeout) if float(timeout).is_integer() else timeout
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
