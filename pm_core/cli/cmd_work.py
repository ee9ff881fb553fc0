"""Orientation commands: next and context (ranked, budgeted by the SDK)."""

from __future__ import annotations

import click

from pm_core.cli.state import CliState, json_option, pass_state


@click.command("next")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Rows per bucket (default 5).")
@click.option("--parent", metavar="ID", help="Only work under ID.")
@click.option("--ready-only", is_flag=True, help="Leave out blocked items.")
@click.option("--include-decisions", is_flag=True, help="Rank Decision items with the rest.")
@click.option("--token-budget", type=int, metavar="N", help="Token budget of the result.")
@json_option
@pass_state
def cmd_next(
    state: CliState,
    limit: int | None,
    parent: str | None,
    ready_only: bool,
    include_decisions: bool,
    token_budget: int | None,
) -> None:
    """Recommend what to work on next, with reasons."""
    from pm_core.tracker.ranking import next_items

    result = next_items(
        state.tracker,
        limit=limit or 5,
        parent=parent,
        ready_only=ready_only,
        include_decisions=include_decisions,
        token_budget=token_budget,
    )
    state.emit(result, exact=limit is not None or token_budget is not None)


@click.command("context")
@click.option("--depth", default="brief", show_default=True, help="brief, standard, deep, full.")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Rows per list (default 10).")
@click.option("--parent", metavar="ID", help="Only work under ID.")
@click.option("--section", metavar="NAME", help="Only one section (hierarchy, activity, ...).")
@click.option("--token-budget", type=int, metavar="N", help="Token budget of the result.")
@json_option
@pass_state
def cmd_context(
    state: CliState,
    depth: str,
    limit: int | None,
    parent: str | None,
    section: str | None,
    token_budget: int | None,
) -> None:
    """Ranked working context: what matters now, and around it."""
    from pm_core.tracker.ranking import context

    result = context(
        state.tracker,
        depth=depth,
        limit=limit or 10,
        parent=parent,
        section=section,
        token_budget=token_budget,
    )
    state.emit(result, exact=limit is not None or token_budget is not None)
