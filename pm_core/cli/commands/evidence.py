"""Evidence commands: comments, notes, learnings, files, docs."""

from __future__ import annotations

import json
from typing import Any

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState, read_text
from pm_core.tracker.model.errors import UsageError


def _log_command(kind: str, noun: str) -> click.Command:
    @click.command(kind)
    @click.argument("item_id")
    @click.argument("text_arg", metavar="[TEXT]", required=False)
    @click.option("--add", "text", metavar="TEXT", help=f"Add a {noun} (or pass TEXT).")
    @click.option("--stdin", is_flag=True, help=f"Read the {noun} to add from stdin.")
    @click.option("--data", metavar="JSON", help=f"Structured data stored with the {noun}.")
    @click.option("--limit", type=click.IntRange(min=0), help="Only the last N when listing.")
    @json_option
    @pass_state
    def command(
        state: CliState,
        item_id: str,
        text_arg: str | None,
        text: str | None,
        stdin: bool,
        data: str | None,
        limit: int | None,
    ) -> None:
        if text_arg is not None and text is not None and text_arg != text:
            raise UsageError(f"two different {noun}s given", hint="pass TEXT or --add, not both")
        value = read_text(text if text is not None else text_arg, stdin=stdin)
        if value is None:
            if data is not None:
                raise UsageError(f"--data needs a {noun} to add", hint="pass --add TEXT too")
            entries = state.tracker.logs(kind, item_id)
            shown = entries[-limit:] if limit else entries
            if limit == 0:
                shown = []
            payload = {
                "id": state.tracker.normalize_id(item_id),
                kind: shown,
                "total": len(entries),
            }
            state.emit(payload, exact=limit is not None)
            return
        parsed: Any = None
        if data is not None:
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                raise UsageError(f"--data is not valid JSON ({exc})", hint="pass JSON") from None
        state.emit(state.tracker.add_log(kind, item_id, value, data=parsed), kind="mutation")

    command.help = f"List an item's {kind}, or add one: `pm {kind} ID TEXT` (or --add, --stdin)."
    return command


cmd_comments = _log_command("comments", "comment")
cmd_notes = _log_command("notes", "note")
cmd_learnings = _log_command("learnings", "learning")


def _link_command(kind: str) -> click.Command:
    @click.command(kind)
    @click.argument("item_id")
    @click.option("--add", "add", metavar="PATH", help="Link PATH.")
    @click.option("--remove", "remove", metavar="PATH", help="Unlink PATH.")
    @click.option(
        "--scope",
        default="project",
        show_default=True,
        help="project (inside the repository) or global.",
    )
    @click.option("--note", help="Why this path matters.")
    @json_option
    @pass_state
    def command(
        state: CliState,
        item_id: str,
        add: str | None,
        remove: str | None,
        scope: str,
        note: str | None,
    ) -> None:
        tracker = state.tracker
        if add and remove:
            raise UsageError("--add and --remove together", hint="run them one at a time")
        if add:
            state.emit(tracker.link(kind, item_id, add, scope=scope, note=note), kind="mutation")
        elif remove:
            state.emit(tracker.unlink(kind, item_id, remove), kind="mutation")
        else:
            item = tracker.get(item_id)
            links = getattr(item, kind)
            state.emit({"id": item.id, kind: links, "total": len(links)})

    command.help = f"List an item's linked {kind}, or --add / --remove a path."
    return command


cmd_files = _link_command("files")
cmd_docs = _link_command("docs")
