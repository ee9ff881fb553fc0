"""The CLI doors to MCP tools, declared: discover, profile, run; and help.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.tools`), ``pm contracts`` and ``docs/generated/``
read it. Each command calls its tool (``pm_discover``, ``pm_profile``,
``pm_run``) as a client at ``--profile`` would, so the tool keys are the ones
those tools take; ``--profile`` is the server's choice, no tool key.
"""

from __future__ import annotations

from pm_core.params import Arg, Opt, Param, limit_opt

#: The tiers a listing can be narrowed to (``pm_core.capabilities.TIERS`` less ``internal``).
LISTED_TIERS = ("core", "standard", "full")

_PROFILE = Opt(
    "--profile",
    dest="profile",
    tool=None,
    help="MCP profile to answer for: core, standard, full (default PM_MCP_PROFILE, else full).",
)

PARAMS: dict[str, tuple[Param, ...]] = {
    "discover": (
        Arg("query", variadic=True, help="The intent, in words."),
        Opt("--family", dest="family", role="filter", help="Only this capability family."),
        Opt(
            "--tier",
            dest="tier",
            choices=LISTED_TIERS,
            strict=True,
            role="filter",
            help="Only this tier.",
        ),
        limit_opt("At most N tools."),
        Opt(
            "--include-schema",
            dest="include_schema",
            kind="flag",
            help="Include each tool's input schema.",
        ),
        _PROFILE,
    ),
    "profile": (_PROFILE,),
    "run": (
        Arg("action", help="The command to run (an extension's too)."),
        Arg("positional", variadic=True, tool="args", help="Positional arguments, in order."),
        Opt(
            "--arg",
            dest="pairs",
            multiple=True,
            metavar="KEY=VALUE",
            tool=None,
            help="An argument; repeatable.",
        ),
        Opt(
            "--args-json",
            dest="args_json",
            metavar="JSON",
            role="io",
            help="Arguments as one JSON object.",
        ),
        _PROFILE,
    ),
    "help": (
        Arg("command", required=False, tool=None, help="The command to show help for."),
        Opt(
            "--all", dest="show_all", kind="flag", tool=None, help="List every command, all tiers."
        ),
    ),
}
