"""Tool schemas and argument reading projected from the commands' declarations.

A tool backed by a declared command (:func:`pm_core.params.declared`)
lists one property per parameter with a tool key, and reads every one of
them through :func:`pm_core.params.from_tool` into the keyword values the
CLI passes, so the tool and the command honour the same options. The
``full`` profile lists every parameter; ``core`` and ``standard`` list the
compact set (``Opt.compact``) and still accept the rest, which
``pm_contracts`` lists per command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import CommandSpec, RequestContext, WorkspaceContracts
from pm_core.params import (
    Param,
    ToolArgumentError,
    declared,
    declared_subcommands,
    from_tool,
    tool_keys,
    tool_properties,
)
from pm_core.tracker.model.errors import UsageError

Schema = dict[str, Any]
Extra = Callable[[WorkspaceContracts], Mapping[str, Schema]]


def params(command: str) -> tuple[Param, ...]:
    """The declared parameters of built-in ``command``."""
    return declared(command)


def workspace(contracts: WorkspaceContracts) -> dict[str, Iterable[str]]:
    """The allowed-value sources a declaration may name."""
    return {"types": contracts.types, "statuses": contracts.statuses}


def compact_for(request: RequestContext | None) -> bool:
    """Whether ``request`` gets the compact schemas (every profile but ``full``)."""
    return request is not None and request.profile != "full"


def properties(
    command: str, contracts: WorkspaceContracts, *, compact: bool, skip: Iterable[str] = ()
) -> dict[str, Schema]:
    """The tool properties of ``command``'s parameters (minus ``skip`` keys)."""
    props = tool_properties(params(command), workspace(contracts), compact=compact)
    for key in skip:
        props.pop(key, None)
    return props


def builders(
    command: str, required: Sequence[str] = (), extra: Extra | None = None
) -> tuple[
    Callable[[WorkspaceContracts], Schema],
    Callable[[WorkspaceContracts, Mapping[str, CommandSpec], RequestContext], Schema],
    Callable[[WorkspaceContracts], list[str]],
]:
    """``(input_schema, request_schema, accepts)`` of a tool whose arguments are ``command``'s."""

    def build(contracts: WorkspaceContracts, compact: bool) -> Schema:
        props = properties(command, contracts, compact=compact)
        if extra is not None:
            props.update(extra(contracts))
        return s.tool(props, required)

    def input_schema(contracts: WorkspaceContracts) -> Schema:
        return build(contracts, False)

    def request_schema(
        contracts: WorkspaceContracts,
        _commands: Mapping[str, CommandSpec],
        request: RequestContext,
    ) -> Schema:
        return build(contracts, compact_for(request))

    def accepts(_contracts: WorkspaceContracts) -> list[str]:
        return sorted(tool_keys(params(command)))

    return input_schema, request_schema, accepts


def group_properties(
    command: str,
    contracts: WorkspaceContracts,
    subcommands: Sequence[str],
    notes: Mapping[str, str] | None = None,
    selector: str = "subcommand",
) -> dict[str, Schema]:
    """``{subcommand, ...}``: a group tool's keys, the union of its subcommands' parameters.

    ``selector`` is the key naming the subcommand; ``notes`` describe keys that
    mean something different per subcommand.
    """
    props: dict[str, Schema] = {selector: s.choice(subcommands)}
    for params in declared_subcommands(command).values():
        for key, schema in tool_properties(params, workspace(contracts)).items():
            props.setdefault(key, schema)
    for key, note in (notes or {}).items():
        props[key] = {**props[key], "description": note}
    return props


def values(command: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The CLI keyword values of ``command`` from a tool call; a bad type is a UsageError."""
    try:
        return from_tool(params(command), args)
    except ToolArgumentError as exc:
        raise UsageError(str(exc), hint="see the tool's input schema or pm_contracts") from None
