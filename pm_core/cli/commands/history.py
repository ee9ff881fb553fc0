"""History commands: history, restore, and mutate (several changes as one transaction).

Declared in :mod:`pm_core.commands.history` (see :mod:`pm_core.cli.argspec`):
they run without click, and ``pm_mutate`` reads the same declaration.
"""

from __future__ import annotations

import json
import sys

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.history import PARAMS, history, restore
from pm_core.tracker.model.errors import PmError, UsageError


def run_history(state: CliState, item_id: str, verify: bool, diff: bool, limit: int | None) -> None:
    """Show an item's append-only history (version numbers feed `pm restore`)."""
    answer = history(state.tracker, item_id, verify, diff, limit)
    if verify:
        report = answer
        state.emit(report, kind="governance")
        if not report["ok"]:
            raise PmError(
                f"history of {report['id']} does not verify: {report['problems'][0]}",
                hint="`pm validate` lists every failing item; `pm restore` rebuilds from history",
            )
        return
    state.emit(answer, exact=limit is not None)


def run_restore(state: CliState, item_id: str, ref: str) -> None:
    """Rebuild an item as it was at a version or time (appends a restore entry)."""
    state.emit(restore(state.tracker, item_id, ref), kind="mutation")


def run_mutate(state: CliState, file: str | None, stdin: bool, dry_run: bool) -> None:
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


SPECS = specs(
    Spec("history", run_history, params=PARAMS["history"]),
    Spec("restore", run_restore, params=PARAMS["restore"]),
    Spec("mutate", run_mutate, params=PARAMS["mutate"]),
)
