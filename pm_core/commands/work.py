"""Orientation commands, declared: next and context (ranked, budgeted by the SDK).

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.work`) and the tools ``pm_next`` and
``pm_context`` (whose keys sit in their ``options`` object) read it, and
call the functions here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Opt, Param, limit_opt

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: Fixed value sets, written here so the start-up path imports no query module
#: (``tests/unit/test_cli_help_values.py`` checks them against the query modules').
CONTEXT_DEPTHS = ("brief", "standard", "deep", "full")
CONTEXT_SECTIONS = (
    "hierarchy",
    "activity",
    "progress",
    "recently_created",
    "unparented",
    "workload",
    "blockers",
    "files",
    "staleness",
    "tests",
)
#: The smallest token budget the SDK accepts (``pm_core.tracker.query.shrink``).
MIN_TOKEN_BUDGET = 64


def next_items(
    tracker: Tracker,
    limit: int | None,
    parent: str | None,
    ready_only: bool,
    include_decisions: bool,
    token_budget: int | None,
    claim: bool = False,
) -> dict[str, Any]:
    """What to do next from the declared values (``claim``: and claim it, one step)."""
    chosen = tracker.claim_next if claim else tracker.next_items
    return chosen(
        limit=limit or 5,
        parent=parent,
        ready_only=ready_only,
        include_decisions=include_decisions,
        token_budget=token_budget,
    )


def context(
    tracker: Tracker,
    depth: str,
    limit: int | None,
    parent: str | None,
    section: str | None,
    token_budget: int | None,
) -> dict[str, Any]:
    """The ranked working context from the declared values."""
    return tracker.context(
        depth=depth or "brief",
        limit=limit or 10,
        parent=parent,
        section=section,
        token_budget=token_budget,
    )


_PARENT = Opt("--parent", dest="parent", metavar="ID", role="filter", help="Only work under ID.")
_BUDGET = Opt(
    "--token-budget",
    dest="token_budget",
    kind="int",
    metavar="N",
    tool_minimum=MIN_TOKEN_BUDGET,
    help="Token budget of the result.",
)

PARAMS: dict[str, tuple[Param, ...]] = {
    "next": (
        limit_opt("Rows per bucket (default 5)."),
        _PARENT,
        Opt(
            "--ready-only",
            dest="ready_only",
            kind="flag",
            role="filter",
            help="Leave out blocked items.",
        ),
        Opt(
            "--include-decisions",
            dest="include_decisions",
            kind="flag",
            role="filter",
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
    "context": (
        Opt(
            "--depth",
            dest="depth",
            default="brief",
            show_default=True,
            choices=CONTEXT_DEPTHS,
            help="brief, standard, deep, full.",
        ),
        limit_opt("Rows per list (default 10)."),
        _PARENT,
        Opt(
            "--section",
            dest="section",
            metavar="NAME",
            choices=CONTEXT_SECTIONS,
            help="Only one section (hierarchy, activity, ...).",
        ),
        _BUDGET,
    ),
}
