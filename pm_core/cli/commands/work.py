"""Orientation commands: next and context (ranked, budgeted by the SDK).

Declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`): they run without click.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from pm_core.cli.argspec import Opt, Spec, limit_opt, specs
from pm_core.cli.state import CliState
from pm_core.cli.state import warn as state_warn


def run_next(
    state: CliState,
    limit: int | None,
    parent: str | None,
    ready_only: bool,
    include_decisions: bool,
    token_budget: int | None,
    claim: bool = False,
) -> None:
    """Recommend what to work on next, with reasons (``--claim``: and claim it)."""
    from pm_core.tracker.query.ranking import next_items

    options: dict[str, Any] = {
        "limit": limit or 5,
        "parent": parent,
        "ready_only": ready_only,
        "include_decisions": include_decisions,
        "token_budget": token_budget,
    }
    chosen = state.tracker.claim_next if claim else partial(next_items, state.tracker)
    result = chosen(**options)
    from pm_core.cli import human

    if human.wanted(state.json, state.output_format()):
        from pm_core.cli.output import write

        write(human.next_lines(result))
        state_warn(result)
        return
    state.emit(result, exact=limit is not None or token_budget is not None)


def run_context(
    state: CliState,
    depth: str,
    limit: int | None,
    parent: str | None,
    section: str | None,
    token_budget: int | None,
) -> None:
    """Ranked working context: what matters now, and around it."""
    from pm_core.tracker.query.ranking import context

    result = context(
        state.tracker,
        depth=depth,
        limit=limit or 10,
        parent=parent,
        section=section,
        token_budget=token_budget,
    )
    state.emit(result, exact=limit is not None or token_budget is not None)


_PARENT = Opt("--parent", dest="parent", metavar="ID", help="Only work under ID.")
_BUDGET = Opt(
    "--token-budget",
    dest="token_budget",
    kind="int",
    metavar="N",
    help="Token budget of the result.",
)

SPECS = specs(
    Spec(
        "next",
        run_next,
        opts=(
            limit_opt("Rows per bucket (default 5)."),
            _PARENT,
            Opt("--ready-only", dest="ready_only", kind="flag", help="Leave out blocked items."),
            Opt(
                "--include-decisions",
                dest="include_decisions",
                kind="flag",
                help="Rank Decision items with the rest.",
            ),
            _BUDGET,
            Opt(
                "--claim",
                dest="claim",
                kind="flag",
                help="Claim the recommended item in the same step (lease rules of `pm claim`).",
            ),
        ),
    ),
    Spec(
        "context",
        run_context,
        opts=(
            Opt(
                "--depth",
                dest="depth",
                default="brief",
                show_default=True,
                help="brief, standard, deep, full.",
            ),
            limit_opt("Rows per list (default 10)."),
            _PARENT,
            Opt(
                "--section",
                dest="section",
                metavar="NAME",
                help="Only one section (hierarchy, activity, ...).",
            ),
            _BUDGET,
        ),
    ),
)
