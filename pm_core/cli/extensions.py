"""Extension commands: ``pm <name>`` for every command an installed plugin contributes.

This is the CLI's one hook point into the plugin host. It is reached only for
a name that is not a built-in command, or to list commands in ``pm --help``,
so ordinary commands never build the host (nor import pluggy).

An extension command is a :class:`~pm_core.contracts.CommandSpec` with a
handler; its ``params`` become ``--options`` and its handler is called as
``handler(ctx, **params)`` with a :class:`~pm_core.contracts.ToolContext`.
Commands at tier ``internal`` are callable but never listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pm_core.contracts import CommandSpec, ParamSpec
    from pm_core.host import Host


@lru_cache(maxsize=1)
def _host() -> Host:
    from pm_core.host import build_host

    return build_host()


def extension_specs() -> dict[str, CommandSpec]:
    """Every extension command (not built in, with a handler), by name."""
    return {
        name: spec
        for name, spec in _host().commands().items()
        if not spec.builtin and spec.handler is not None
    }


def all_commands() -> list[CommandSpec]:
    """Every command the host knows: built-in declarations and extensions."""
    return list(_host().commands().values())


def extension_names() -> list[str]:
    """Names of the extension commands ``pm --help`` lists (tier ``internal`` hidden)."""
    return sorted(n for n, s in extension_specs().items() if s.tier != "internal")


def command_summaries(builtin: set[str]) -> dict[str, str]:
    """One-line summary per listed command: built-ins from the capability table, then extensions."""
    from pm_core.capabilities import builtin_commands

    out = {spec.name: spec.summary for spec in builtin_commands() if spec.name in builtin}
    for name in builtin - set(out):
        out[name] = ""
    for name in extension_names():
        spec = extension_specs()[name]
        out.setdefault(name, f"{spec.summary} [{spec.tier}, extension]")
    return out


def extension_command(name: str) -> click.Command | None:
    """A click command that runs extension ``name``, or None when no plugin has it."""
    spec = extension_specs().get(name)
    if spec is None:
        return None
    return _adapt(spec)


_TYPES: Mapping[str, Any] = {"string": click.STRING, "integer": click.INT, "number": click.FLOAT}


def _option(param: ParamSpec) -> click.Option:
    flag = "--" + param.name.replace("_", "-")
    if param.type == "boolean":
        return click.Option(
            [flag, param.name], is_flag=True, default=bool(param.default), help=param.help
        )
    return click.Option(
        [flag, param.name],
        type=_TYPES.get(param.type, click.STRING),
        required=param.required,
        multiple=param.repeatable,
        default=param.default,
        help=param.help,
    )


def _adapt(spec: CommandSpec) -> click.Command:
    from pm_core.cli.state import CliState, json_option

    def callback(**params: Any) -> None:
        from pm_core.contracts import RequestContext, ToolContext

        state = click.get_current_context().find_object(CliState)
        assert state is not None  # the group always sets it
        context = ToolContext(
            tracker=state.tracker,
            request=RequestContext(),
            author=state.author,
            commands=_host().commands(),
        )
        assert spec.handler is not None
        result = spec.handler(context, **params)
        payload = dict(result) if isinstance(result, Mapping) else {"result": result}
        state.emit(payload)

    command = click.Command(
        spec.name,
        callback=callback,
        params=[_option(p) for p in spec.params],
        help=spec.summary,
        short_help=spec.summary,
    )
    return json_option(command)
