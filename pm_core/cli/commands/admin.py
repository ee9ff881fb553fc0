"""Workspace commands: config, schema, contracts, events.

Declared in :mod:`pm_core.commands.admin` (see :mod:`pm_core.cli.argspec`); the
tools ``pm_config``, ``pm_schema``, ``pm_contracts`` and ``pm_events`` read the
same declarations.
"""

from __future__ import annotations

from typing import Any

from pm_core.cli.argspec import Group, Spec, specs
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


def run_schema_list(state: CliState) -> None:
    """Types, statuses (with roles), custom fields and workflows."""
    from pm_core.tracker.ops.admin import schema_list

    state.emit(schema_list(state.tracker))


def run_schema_add_type(
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


def run_schema_add_status(state: CliState, name: str, roles: tuple[str, ...]) -> None:
    """Add a status with its roles (default: active)."""
    from pm_core.tracker.ops.admin import schema_add_status

    options: dict[str, Any] = {}
    if roles:
        options["roles"] = split_commas(roles)
    state.emit(schema_add_status(state.tracker, name, **options), kind="mutation")


def run_schema_add_field(
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
    Group(
        "schema",
        "List or extend the workspace schema: types, statuses, custom fields.",
        Spec("list", run_schema_list, params=PARAMS["schema list"]),
        Group(
            "add",
            "Add a type, a status or a custom field.",
            Spec("type", run_schema_add_type, params=PARAMS["schema add type"]),
            Spec("status", run_schema_add_status, params=PARAMS["schema add status"]),
            Spec("field", run_schema_add_field, params=PARAMS["schema add field"]),
        ),
    ),
    Spec("contracts", run_contracts, params=PARAMS["contracts"]),
    Spec("events", run_events, params=PARAMS["events"]),
)
