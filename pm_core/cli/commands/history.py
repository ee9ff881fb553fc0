"""History commands: history, restore, and mutate (several changes as one transaction)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState
from pm_core.tracker.model.errors import PmError, UsageError


@click.command("history")
@click.argument("item_id")
@click.option("--verify", is_flag=True, help="Check the hash chain against the item file.")
@click.option("--diff", is_flag=True, help="Include each entry's JSON patch.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the last N entries.")
@json_option
@pass_state
def cmd_history(state: CliState, item_id: str, verify: bool, diff: bool, limit: int | None) -> None:
    """Show an item's append-only history (version numbers feed `pm restore`)."""
    tracker = state.tracker
    if verify:
        from pm_core.tracker.storage.history import verify_item

        report = verify_item(tracker.store, tracker.normalize_id(item_id))
        state.emit(report, kind="governance")
        if not report["ok"]:
            raise PmError(
                f"history of {report['id']} does not verify: {report['problems'][0]}",
                hint="`pm validate` lists every failing item; `pm restore` rebuilds from history",
            )
        return
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
    payload = {"id": tracker.normalize_id(item_id), "entries": shown, "total": len(rows)}
    state.emit(payload, exact=limit is not None)


def _field_of(pointer: str) -> str:
    # "/metadata/status" -> "status"; "/body" -> "body"; "" (whole document) -> "".
    parts = [p for p in str(pointer).split("/") if p]
    if not parts:
        return ""
    if parts[0] == "metadata":
        return parts[1] if len(parts) > 1 else "metadata"
    return parts[0]


@click.command("restore")
@click.argument("item_id")
@click.argument("ref", metavar="VERSION|TIME")
@json_option
@pass_state
def cmd_restore(state: CliState, item_id: str, ref: str) -> None:
    """Rebuild an item as it was at a version or time (appends a restore entry)."""
    state.emit(state.tracker.restore(item_id, ref), kind="mutation")


@click.command("mutate")
@click.option("--file", "file", metavar="FILE", help="A JSON list of {op, id, options}.")
@click.option("--stdin", is_flag=True, help="Read the JSON list from stdin.")
@click.option("--dry-run", is_flag=True, help="Check every mutation, then change nothing.")
@json_option
@pass_state
def cmd_mutate(state: CliState, file: str | None, stdin: bool, dry_run: bool) -> None:
    """Apply several mutations as one transaction: all of them, or none."""
    if bool(file) == bool(stdin):
        raise UsageError("give the mutations one way", hint="pass --file FILE or --stdin")
    if stdin or file == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(str(file), encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"mutations are not valid JSON ({exc})", hint='pass [{"op": "update", ...}]'
        ) from None
    mutations = data.get("mutations") if isinstance(data, dict) else data
    if not isinstance(mutations, list) or not all(isinstance(m, dict) for m in mutations):
        raise UsageError(
            "mutations must be a JSON list of objects",
            hint='e.g. [{"op": "comment", "id": "pm-a1b2", "options": {"text": "..."}}]',
        )
    state.emit(state.tracker.mutate(mutations, dry_run=dry_run), kind="mutation")
