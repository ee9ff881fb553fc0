"""Extension commands: ``pm <name>`` for every command an installed plugin contributes.

The CLI's one hook point into the plugin host, reached only for a name that is not
built in (or to list commands in ``pm --help``). Handlers run through
:func:`pm_core.hosting.call_command`, as from ``pm_run`` and the SDK.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pm_core.contracts import CommandSpec, ParamSpec
    from pm_core.host import Host


def installed_host() -> Host:
    """The host of the installed plugins, built once per process on first need.

    The tracker's ``extensions`` settings (``--path``, ``PM_PATH`` or the
    enclosing repository) narrow what loads, as they do for ``pm-mcp``.
    """
    return _host_for(_workspace())


def _workspace() -> Path:
    import os

    from pm_core.cli.state import CliState
    from pm_core.tracker.storage.workspace import find_root

    ctx = click.get_current_context(silent=True)
    state = ctx.find_object(CliState) if ctx is not None else None
    if state is not None and state.path:
        try:
            return Path(state.path).expanduser().resolve()
        except (OSError, RuntimeError, ValueError):  # the tracker reports a bad --path
            pass
    return find_root(Path.cwd(), os.environ)


@lru_cache(maxsize=4)
def _host_for(workspace: Path) -> Host:
    from pm_core.host import PluginLoadError, build_host
    from pm_core.tracker.model.errors import PmError

    try:
        return build_host(workspace=workspace)
    except PluginLoadError as exc:  # PM_PLUGINS_STRICT asked for a broken plugin to be fatal
        raise PmError(
            str(exc), hint="fix or uninstall it, or unset PM_PLUGINS_STRICT; see pm-plugins list -v"
        ) from None


def extension_specs(host: Host | None = None) -> dict[str, CommandSpec]:
    """Every extension command (not built in, with a handler), by name."""
    host = host or installed_host()
    return {
        name: spec
        for name, spec in host.commands().items()
        if not spec.builtin and spec.handler is not None
    }


def all_commands(host: Host | None = None) -> list[CommandSpec]:
    """Every command the host knows: built-in declarations and extensions."""
    return list((host or installed_host()).commands().values())


def extension_names(host: Host | None = None) -> list[str]:
    """Names of the extension commands ``pm --help`` lists (tier ``internal`` hidden)."""
    return sorted(n for n, s in extension_specs(host).items() if s.tier != "internal")


def extension_rows(host: Host | None = None) -> list[tuple[str, str, str]]:
    """``(name, tier, summary)`` of each listed extension command (``internal`` hidden)."""
    specs = extension_specs(host)
    return [(name, specs[name].tier, specs[name].summary) for name in extension_names(host)]


def extension_command(name: str, host: Host | None = None) -> click.Command | None:
    """A click command that runs extension ``name``, or None when no plugin has it."""
    host = host or installed_host()
    spec = extension_specs(host).get(name)
    if spec is None:
        return None
    return command_from_spec(spec, host)


_TYPES: Mapping[str, Any] = {"string": click.STRING, "integer": click.INT, "number": click.FLOAT}


def _option(param: ParamSpec) -> click.Option:
    flag = "--" + param.name.replace("_", "-")
    if param.type == "boolean":
        decls = [f"{flag}/--no-{flag[2:]}"] if param.default else [flag]
        return click.Option(
            [*decls, param.name], is_flag=True, default=bool(param.default), help=param.help
        )
    options: dict[str, Any] = {}
    if param.default is not None:
        # An explicit None default would satisfy ``required`` in click 8.3+.
        options["default"] = param.default
        options["show_default"] = True
    return click.Option(
        [flag, param.name],
        type=_TYPES.get(param.type, click.STRING),
        required=param.required,
        multiple=param.repeatable,
        help=param.help,
        **options,
    )


def command_from_spec(spec: CommandSpec, host: Host) -> click.Command:
    """The click command for one extension: params become options, output as usual."""
    from pm_core.cli.clickstate import json_option
    from pm_core.cli.state import CliState

    def callback(**params: Any) -> None:
        from pm_core.contracts import RequestContext, ToolContext, ToolResult
        from pm_core.hosting import CLI_CLIENT, call_command

        state = click.get_current_context().find_object(CliState)
        assert state is not None  # the group always sets it
        tracker = state.tracker
        context = ToolContext(
            tracker=tracker,
            request=RequestContext(profile="full", client_name=CLI_CLIENT),
            author=tracker.author,
            commands=host.commands(),
        )
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        result = call_command(spec, context, values)
        if isinstance(result, ToolResult):
            for warning in result.warnings:
                sys.stderr.write(f"warning: {warning}\n")
            result = result.result
        payload = dict(result) if isinstance(result, Mapping) else {"result": result}
        state.emit(payload)

    command = click.Command(
        spec.name,
        callback=callback,
        params=[_option(p) for p in spec.params],
        help=spec.summary,
        short_help=spec.summary,
        epilog=_epilog(spec, host),
        hidden=spec.tier == "internal",
    )
    return json_option(command)


def _epilog(spec: CommandSpec, host: Host) -> str:
    """Tier, family and providing plugin, then the examples (kept unwrapped by ``\\b``)."""
    owner = host.command_owner(spec.name) or "?"
    record = host.records.get(owner)
    origin = " ".join(p for p in (record.source, record.version) if p) if record else ""
    lines = [f"Tier {spec.tier}, family {spec.family}; from plugin {owner} ({origin})."]
    if spec.examples:
        lines += ["", "\b", "Examples:", *(f"  {example}" for example in spec.examples)]
    return "\n".join(lines)
