"""Orientation commands: next and context (ranked, budgeted by the SDK).

Declared in :mod:`pm_core.commands.work` (see :mod:`pm_core.cli.argspec`): they
run without click, and the tools ``pm_next`` and ``pm_context`` read the same
declarations.
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.cli.state import warn as state_warn
from pm_core.commands.work import PARAMS, context, next_items


def run_next(state: CliState, **values: Any) -> None:
    """Recommend what to work on next, with reasons (``--claim``: and claim it)."""
    result = next_items(state.tracker, **values)
    from pm_core.cli import human

    if human.wanted(state.json, state.output_format()):
        from pm_core.cli.output import write

        write(human.next_lines(result))
        state_warn(result)
        return
    state.emit(
        result, exact=values.get("limit") is not None or values.get("token_budget") is not None
    )


def run_context(state: CliState, **values: Any) -> None:
    """Ranked working context: what matters now, and around it."""
    result = context(state.tracker, **values)
    state.emit(
        result, exact=values.get("limit") is not None or values.get("token_budget") is not None
    )


SPECS = specs(
    Spec("next", run_next, params=PARAMS["next"]),
    Spec("context", run_context, params=PARAMS["context"]),
)
