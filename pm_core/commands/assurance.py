"""Assurance commands, declared: validate, health, test.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.assurance`) and the tools ``pm_validate`` (keys in
its ``options`` object), ``pm_health`` and ``pm_test`` read it.
"""

from __future__ import annotations

from pm_core.params import Arg, Opt, Param

#: The checks of ``pm validate``, written here so the start-up path imports no
#: query module (``tests/unit/test_cli_help_values.py`` checks them against
#: ``pm_core.tracker.query.validate.CHECKS``).
VALIDATE_CHECKS = (
    "parse",
    "metadata",
    "lifecycle",
    "dependencies",
    "history",
    "duplicates",
    "claims",
    "storage_integrity",
)


def timeout_seconds(timeout: float | None) -> int | float | None:
    """A linked test's timeout as stored: a whole number of seconds is an integer."""
    if timeout is None:
        return None
    return int(timeout) if float(timeout).is_integer() else timeout


PARAMS: dict[str, tuple[Param, ...]] = {
    "validate": (
        Opt(
            "--check",
            dest="checks",
            multiple=True,
            metavar="NAME",
            choices=VALIDATE_CHECKS,
            role="filter",
            help="Only these checks (parse, metadata, lifecycle, dependencies, history, "
            "duplicates, claims, storage_integrity).",
        ),
        Opt(
            "--fix",
            "--repair-history",
            dest="fix",
            kind="flag",
            help="First repair histories that drifted from their files (the file is kept).",
        ),
    ),
    "health": (),
    "test": (
        Arg("item_id", required=False, help="The item's id (prefix optional)."),
        Opt(
            "--add",
            dest="add",
            metavar="COMMAND",
            help="Link a test command (approves it here).",
        ),
        Opt(
            "--remove",
            dest="remove",
            metavar="COMMAND|N",
            help="Unlink a test (command or number).",
        ),
        Opt(
            "--run",
            dest="run",
            kind="flag",
            help="Run the linked commands and record the results.",
        ),
        # Approving linked commands is for someone at this clone's terminal
        # (docs/security.md), never for an MCP client: no tool keys.
        Opt(
            "--approve",
            dest="approve",
            kind="flag",
            tool=None,
            help="Show the linked commands this clone has not approved and approve them "
            "(one prompt per command on a terminal).",
        ),
        Opt(
            "--all",
            dest="all_items",
            kind="flag",
            tool=None,
            help="With --approve: every item's commands.",
        ),
        Opt(
            "--yes",
            dest="yes",
            kind="flag",
            tool=None,
            help="With --approve: approve every command shown without prompting "
            "(required when not on a terminal or when CI=true).",
        ),
        Opt(
            "--timeout",
            dest="timeout",
            kind="float",
            minimum=1,
            metavar="SECONDS",
            tool="timeoutSeconds",
            help="Timeout per command.",
        ),
        Opt("--note", dest="note", help="Why this test matters (with --add)."),
    ),
}
