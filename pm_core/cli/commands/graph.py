"""Graph and planning commands: deps, graph, plan."""

from __future__ import annotations

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState
from pm_core.tracker.model.errors import UsageError


@click.command("deps")
@click.argument("item_id")
@click.option("--add", "add", metavar="ID[:KIND]", help="Add a dependency (kind blocked_by).")
@click.option("--remove", "remove", metavar="ID[:KIND]", help="Remove a dependency.")
@click.option("--allow-unresolved-deps", is_flag=True, help="Allow a target that does not exist.")
@click.option("--depth", type=click.IntRange(min=1), help="How far the tree goes (default 32).")
@json_option
@pass_state
def cmd_deps(
    state: CliState,
    item_id: str,
    add: str | None,
    remove: str | None,
    allow_unresolved_deps: bool,
    depth: int | None,
) -> None:
    """Show an item's dependency tree, or --add / --remove one link."""
    tracker = state.tracker
    if add and remove:
        raise UsageError("--add and --remove together", hint="run them one at a time")
    if add:
        # ID, ID:KIND or KIND:ID: the SDK parses and canonicalises the kind.
        receipt = tracker.add_dependency(item_id, add, allow_unresolved=allow_unresolved_deps)
        state.emit(receipt, kind="mutation")
        return
    if remove:
        state.emit(tracker.remove_dependency(item_id, remove), kind="mutation")
        return
    from pm_core.tracker.query.graph import deps_tree

    result = deps_tree(tracker, item_id) if depth is None else deps_tree(tracker, item_id, depth)
    state.emit(result)


@click.command("graph")
@click.argument("subcommand", metavar="SUBCOMMAND")
@click.argument("item_id", required=False)
@click.argument("target", required=False)
@click.option("--depth", type=click.IntRange(min=1), help="How far to walk (default 32).")
@click.option("--max-nodes", type=click.IntRange(min=1), help="Node cap (default 200).")
@click.option("--max-edges", type=click.IntRange(min=1), help="Edge cap (default 400).")
@json_option
@pass_state
def cmd_graph(
    state: CliState,
    subcommand: str,
    item_id: str | None,
    target: str | None,
    depth: int | None,
    max_nodes: int | None,
    max_edges: int | None,
) -> None:
    """Graph analyses: ancestors, descendants, blockers, dependents ID; path ID TARGET; cycles."""
    from pm_core.tracker.query.graph import graph

    bounds = {
        key: value
        for key, value in (("depth", depth), ("max_nodes", max_nodes), ("max_edges", max_edges))
        if value is not None
    }
    state.emit(graph(state.tracker, subcommand, item_id, target, **bounds))


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
