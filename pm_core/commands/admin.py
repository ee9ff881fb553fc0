"""Workspace commands, declared: events and contracts.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.admin`) and the tools ``pm_events`` and
``pm_contracts`` read it. (``config`` and ``schema``, command groups, are
still declared with click; their tools select the subcommand by a key.)
"""

from __future__ import annotations

from pm_core.params import Opt, Param, limit_opt

PARAMS: dict[str, tuple[Param, ...]] = {
    "events": (
        Opt(
            "--since",
            dest="since",
            metavar="TIME",
            role="filter",
            help="Only entries after this ISO time.",
        ),
        limit_opt("At most N entries (default 100)."),
    ),
    "contracts": (),
}
