"""Workspace commands: config, schema, contracts, events.

``config``, ``contracts`` and ``events`` are declared in
:mod:`pm_core.commands.admin` (see :mod:`pm_core.cli.argspec`); ``schema`` is a
click group.
"""

from __future__ import annotations

from typing import Any

import click

from pm_core.cli.argspec import Group, Spec, specs
from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState, split_commas
from pm_core.commands.admin import PARAMS


def run_config_get(state: CliState, key: str) -> None:
    """One setting (dotted key, e.g. locks.wait_ms)."""
    from pm_core.tracker.ops.admin import config_get

    state.emit(config_get(state.tracker, key))


def run_config_set(state: CliState, key: str, value: str) -> None:
    """Set one setting; VALUE is JSON when it parses (true, 5, [..]), else text."""
    state.emit(state.tracker.config_set(key, value), kind="mutation")


def run_config_unset(state: CliState, key: str) -> None:
    """Remove a setting from settings.json (its default applies again)."""
    state.emit(state.tracker.config_unset(key), kind="mutation")


def run_config_list(state: CliState) -> None:
    """Every setting, as dotted keys."""
    from pm_core.tracker.ops.admin import config_list

    state.emit(config_list(state.tracker))


@click.group("schema")
def cmd_schema() -> None:
    """List or extend the workspace schema: types, statuses, custom fields."""


@cmd_schema.command("list")
@json_option
@pass_state
def schema_list_cmd(state: CliState) -> None:
    """Types, statuses (with roles), custom fields and workflows."""
    from pm_core.tracker.ops.admin import schema_list

    state.emit(schema_list(state.tracker))


@cmd_schema.group("add")
def schema_add_group() -> None:
    """Add a type, a status or a custom field."""


@schema_add_group.command("type")
@click.argument("name")
@click.option("--folder", help="Folder of its items (default: lowercase plural).")
@click.option("--alias", "aliases", multiple=True, help="Another name accepted as input.")
@click.option("--default-status", default="open", show_default=True)
@click.option("--description", default="")
@json_option
@pass_state
def schema_add_type_cmd(
    state: CliState,
    name: str,
    folder: str | None,
    aliases: tuple[str, ...],
    default_status: str,
    description: str,
) -> None:
    """Add an item type."""
    from pm_core.tracker.ops.admin import schema_add_type

    result = schema_add_type(
        state.tracker,
        name,
        folder=folder,
        aliases=split_commas(aliases),
        default_status=default_status,
        description=description,
    )
    state.emit(result, kind="mutation")


@schema_add_group.command("status")
@click.argument("name")
@click.option(
    "--role", "roles", multiple=True, help="active, blocked, draft, terminal...; repeatable."
)
@json_option
@pass_state
def schema_add_status_cmd(state: CliState, name: str, roles: tuple[str, ...]) -> None:
    """Add a status with its roles (default: active)."""
    from pm_core.tracker.ops.admin import schema_add_status

    options: dict[str, Any] = {}
    if roles:
        options["roles"] = split_commas(roles)
    state.emit(schema_add_status(state.tracker, name, **options), kind="mutation")


@schema_add_group.command("field")
@click.argument("name")
@click.option(
    "--type",
    "field_type",
    default="string",
    show_default=True,
    help="string, number, boolean, string_array, array, object.",
)
@click.option("--commands", metavar="A,B", help="Commands that accept it (create,update,...).")
@click.option("--description", default="")
@json_option
@pass_state
def schema_add_field_cmd(
    state: CliState, name: str, field_type: str, commands: str | None, description: str
) -> None:
    """Declare a custom field."""
    from pm_core.tracker.ops.admin import schema_add_field

    options: dict[str, Any] = {"field_type": field_type, "description": description}
    if commands:
        options["commands"] = split_commas([commands])
    state.emit(schema_add_field(state.tracker, name, **options), kind="mutation")


def run_contracts(state: CliState) -> None:
    """The machine-readable contract: commands (with extensions), fields, schema, exit codes."""
    from pm_core.cli.extensions import all_commands
    from pm_core.tracker.ops.admin import contracts

    state.emit(contracts(state.tracker, commands=all_commands()))


def run_events(state: CliState, since: str | None, limit: int | None) -> None:
    """Recent history entries across every item and the workspace, newest first."""
    from pm_core.tracker.ops.admin import events

    result = events(state.tracker, since=since, limit=limit or 100)
    state.emit(result, exact=limit is not None)


SPECS = specs(
    Group(
        "config",
        "Read and change settings (settings.json, over the defaults).",
        Spec("get", run_config_get, params=PARAMS["config get"]),
        Spec("set", run_config_set, params=PARAMS["config set"]),
        Spec("unset", run_config_unset, params=PARAMS["config unset"]),
        Spec("list", run_config_list, params=PARAMS["config list"]),
    ),
    Spec("contracts", run_contracts, params=PARAMS["contracts"]),
    Spec("events", run_events, params=PARAMS["events"]),
)
