"""Workspace commands, declared: events, contracts, and the config group.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.admin`) and the tools ``pm_events``,
``pm_contracts`` and ``pm_config`` (which selects the subcommand by
``configAction``) read it. (``schema``, a group with a nested group, is still
declared with click.)
"""

from __future__ import annotations

from pm_core.params import Arg, Opt, Param, limit_opt

#: ``pm_config``'s actions: the config subcommands, in the order its schema lists them.
CONFIG_ACTIONS = ("get", "set", "unset", "list")
_KEY = Arg("key", help="Dotted key, e.g. governance.require_close_reason.")

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
    "config get": (_KEY,),
    "config set": (
        _KEY,
        Arg("value", kind="json", help="JSON when it parses (true, 5, [..]), else text."),
    ),
    "config unset": (_KEY,),
    "config list": (),
}
