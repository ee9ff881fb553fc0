"""The plan command group: an item with ordered steps, step status and decisions.

Still declared with click (a group); ``pm_plan`` reads the same subcommands
through its ``subcommand`` key.
"""

from __future__ import annotations

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState


@click.group("plan")
def cmd_plan() -> None:
    """Plans: an item with ordered steps, step status and decisions."""


@cmd_plan.command("create")
@click.argument("title")
@click.option("--step", "steps", multiple=True, metavar="TITLE", help="A step, in order.")
@click.option("--parent", metavar="ID", help="Parent item.")
@click.option("--description", "-d", default="", help="What the plan is for.")
@json_option
@pass_state
def plan_create_cmd(
    state: CliState, title: str, steps: tuple[str, ...], parent: str | None, description: str
) -> None:
    """Create a Plan item with its steps (all pending)."""
    from pm_core.tracker.ops.plan import plan_create

    receipt = plan_create(state.tracker, title, list(steps), parent=parent, description=description)
    state.emit(receipt, kind="mutation")


@cmd_plan.command("show")
@click.argument("plan_id")
@json_option
@pass_state
def plan_show_cmd(state: CliState, plan_id: str) -> None:
    """Show a plan: steps, their status, decisions and problems."""
    from pm_core.tracker.ops.plan import plan_show

    state.emit(plan_show(state.tracker, plan_id))


@cmd_plan.command("step")
@click.argument("plan_id")
@click.argument("step_ref", metavar="STEP")
@click.argument("status")
@click.option("--note", help="A note on this change.")
@json_option
@pass_state
def plan_step_cmd(
    state: CliState, plan_id: str, step_ref: str, status: str, note: str | None
) -> None:
    """Move a step (id, number or title) to a status."""
    from pm_core.tracker.ops.plan import plan_step

    state.emit(plan_step(state.tracker, plan_id, step_ref, status, note=note), kind="mutation")


@cmd_plan.command("add-step")
@click.argument("plan_id")
@click.argument("title")
@click.option("--depends-on", multiple=True, metavar="STEP", help="A step it waits on.")
@click.option("--after", metavar="STEP", help="Insert after this step (default: at the end).")
@click.option("--note", help="A note on the step.")
@json_option
@pass_state
def plan_add_step_cmd(
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


@cmd_plan.command("decision")
@click.argument("plan_id")
@click.argument("text")
@json_option
@pass_state
def plan_decision_cmd(state: CliState, plan_id: str, text: str) -> None:
    """Record a decision taken on a plan."""
    from pm_core.tracker.ops.plan import plan_decision

    state.emit(plan_decision(state.tracker, plan_id, text), kind="mutation")
