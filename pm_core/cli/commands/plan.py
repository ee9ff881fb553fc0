"""The plan command group: an item with ordered steps, step status and decisions.

Declared in :mod:`pm_core.commands.plan` (see :mod:`pm_core.cli.argspec`);
``pm_plan`` reads the same declarations, selecting the subcommand by its
``subcommand`` key.
"""

from __future__ import annotations

from pm_core.cli.argspec import Group, Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.plan import PARAMS


def run_create(
    state: CliState, title: str, steps: tuple[str, ...], parent: str | None, description: str
) -> None:
    """Create a Plan item with its steps (all pending)."""
    from pm_core.tracker.ops.plan import plan_create

    receipt = plan_create(state.tracker, title, list(steps), parent=parent, description=description)
    state.emit(receipt, kind="mutation")


def run_show(state: CliState, plan_id: str) -> None:
    """Show a plan: steps, their status, decisions and problems."""
    from pm_core.tracker.ops.plan import plan_show

    state.emit(plan_show(state.tracker, plan_id))


def run_step(state: CliState, plan_id: str, step_ref: str, status: str, note: str | None) -> None:
    """Move a step (id, number or title) to a status."""
    from pm_core.tracker.ops.plan import plan_step

    state.emit(plan_step(state.tracker, plan_id, step_ref, status, note=note), kind="mutation")


def run_add_step(
    state: CliState,
    plan_id: str,
    title: str,
    depends_on: tuple[str, ...],
    after: str | None,
    note: str | None,
) -> None:
    """Add a pending step to a plan."""
    from pm_core.tracker.ops.plan import plan_add_step

    receipt = plan_add_step(
        state.tracker, plan_id, title, depends_on=list(depends_on), note=note, after=after
    )
    state.emit(receipt, kind="mutation")


def run_decision(state: CliState, plan_id: str, text: str) -> None:
    """Record a decision taken on a plan."""
    from pm_core.tracker.ops.plan import plan_decision

    state.emit(plan_decision(state.tracker, plan_id, text), kind="mutation")


SPECS = specs(
    Group(
        "plan",
        "Plans: an item with ordered steps, step status and decisions.",
        *(
            Spec(name, run, params=PARAMS[f"plan {name}"])
            for name, run in (
                ("create", run_create),
                ("show", run_show),
                ("step", run_step),
                ("add-step", run_add_step),
                ("decision", run_decision),
            )
        ),
    )
)
