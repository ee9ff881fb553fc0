"""Commands over many items: update-many, close-many, test-all, stats, activity.

Declared in :mod:`pm_core.commands.bulk` (see :mod:`pm_core.cli.argspec`).
``update-many`` and ``close-many`` are the only commands that exit 6 (nothing
matched or nothing changed) and 7 (some items changed, some had nothing to do),
as the effect envelope's ``outcome``/``exit_code`` say; any error changes nothing.
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.bulk import (
    PARAMS,
    activity,
    close_many,
    stats,
    test_all,
    update_many,
)
from pm_core.tracker.model.errors import PmError


def _finish(state: CliState, envelope: dict[str, Any]) -> int:
    state.emit(envelope, kind="mutation")
    code = int(envelope.get("exit_code") or 0)
    if code:
        # The effect envelope is on stdout; stderr says in one line why the exit is not 0.
        from pm_core.cli.failure import fail

        matched = envelope.get("matched_count", 0)
        changed = envelope.get("updated_count", 0)
        reason = "nothing matched" if not matched else f"{changed} of {matched} items changed"
        fail(f"{envelope.get('outcome')}: {reason}", None, code, state.json)
    return code


def run_update_many(state: CliState, /, **params: Any) -> int:
    """Update every matching item in one all-or-nothing step (exit 6: none changed, 7: some)."""
    return _finish(state, update_many(state.tracker, **params))


def run_close_many(state: CliState, /, **params: Any) -> int:
    """Close every matching item in one all-or-nothing step (exit 6: none changed, 7: some)."""
    return _finish(state, close_many(state.tracker, **params))


def run_test_all(state: CliState, /, timeout: float | None, **params: Any) -> None:
    """Run the linked tests of every matching item (default: open items); exit 1 when one fails."""
    result = test_all(state.tracker, timeout, **params)
    state.emit(result)
    failed = int(result["summary"]["failed"])
    if failed:
        raise PmError(
            f"{failed} linked test(s) failed",
            hint="the runs above show each command's exit code and output",
        )


def run_stats(state: CliState) -> None:
    """Counts by status, type, priority and assignee; how old the open work is."""
    state.emit(stats(state.tracker))


def run_activity(state: CliState, since: str, limit: int) -> None:
    """Recent changes across items: one row per changed item, newest first."""
    state.emit(activity(state.tracker, since, limit), exact=True)


SPECS = specs(
    Spec("update-many", run_update_many, params=PARAMS["update-many"]),
    Spec("close-many", run_close_many, params=PARAMS["close-many"]),
    Spec("test-all", run_test_all, params=PARAMS["test-all"]),
    Spec("stats", run_stats, params=PARAMS["stats"]),
    Spec("activity", run_activity, params=PARAMS["activity"]),
)
