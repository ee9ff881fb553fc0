"""Workspace commands, declared: events, contracts, and the config group.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.admin`) and the tools ``pm_events``,
``pm_contracts`` and ``pm_config`` (which selects the subcommand by
``configAction``) read it, and the schema group (``schema list``,
``schema add type|status|field``), which ``pm_schema`` selects by
``subcommand`` (``add-type``, ...).
"""

from __future__ import annotations

from pm_core.params import Arg, Opt, Param, limit_opt

#: ``pm_config``'s actions: the config subcommands, in the order its schema lists them.
CONFIG_ACTIONS = ("get", "set", "unset", "list")
_KEY = Arg("key", help="Dotted key, e.g. governance.require_close_reason.")
#: ``pm_schema``'s subcommands: ``schema list`` and ``schema add <kind>`` as ``add-<kind>``.
SCHEMA_SUBCOMMANDS = ("list", "add-type", "add-status", "add-field")
#: Fixed value sets, written here so the start-up path imports no write path
#: (``tests/unit/test_cli_help_values.py`` checks them against the SDK's).
FIELD_TYPES = ("string", "number", "boolean", "string_array", "array", "object")
FIELD_COMMANDS = ("create", "update", "update_many", "list", "search", "calendar", "context")
STATUS_ROLES = (
    "draft",
    "active",
    "blocked",
    "terminal",
    "terminal_done",
    "terminal_canceled",
    "default_open",
    "default_close",
    "default_cancel",
)
_DESCRIPTION = Opt("--description", dest="description", default="")

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
    "schema list": (),
    "schema add field": (
        Arg("name", help="The field's key."),
        Opt(
            "--type",
            dest="field_type",
            default="string",
            show_default=True,
            choices=FIELD_TYPES,
            tool="fieldType",
            help="string, number, boolean, string_array, array, object.",
        ),
        # One comma-separated value on the CLI; pm_schema takes the list.
        Opt(
            "--commands",
            dest="commands",
            metavar="A,B",
            choices=FIELD_COMMANDS,
            help="Commands that accept it (create,update,...).",
        ),
        _DESCRIPTION,
    ),
    "schema add status": (
        Arg("name", help="The status."),
        Opt(
            "--role",
            dest="roles",
            multiple=True,
            choices=STATUS_ROLES,
            help="active, blocked, draft, terminal...; repeatable.",
        ),
    ),
    "schema add type": (
        Arg("name", help="The type."),
        Opt("--folder", dest="folder", help="Folder of its items (default: lowercase plural)."),
        Opt("--alias", dest="aliases", multiple=True, help="Another name accepted as input."),
        Opt("--default-status", dest="default_status", default="open", show_default=True),
        _DESCRIPTION,
    ),
}
