"""Running extension commands and listing tools, for every door into pm.

CLI, ``pm_run`` and the SDK all run extension commands through
:func:`call_command`; :func:`list_tools` answers what ``tools/list`` would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.contracts import CommandSpec, ParamSpec, RequestContext, ToolContext, ToolDescriptor
from pm_core.tracker.model.errors import NotFoundError, PmError, UsageError

if TYPE_CHECKING:
    from pm_core.host import Host
    from pm_core.tracker.api import Tracker

#: ``RequestContext.client_name`` for a command run from the CLI or the SDK.
CLI_CLIENT = "pm-cli"
SDK_CLIENT = "pm-sdk"

_PYTHON_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _check_type(command: str, param: ParamSpec, value: Any) -> None:
    wanted = _PYTHON_TYPES.get(param.type, (object,))
    # bool is an int in Python, but a flag is not a count.
    wrong_bool = isinstance(value, bool) and param.type != "boolean"
    if wrong_bool or not isinstance(value, wanted):
        kind = f"{'an' if param.type == 'integer' else 'a'} {param.type}"
        each = "each value of " if param.repeatable else ""
        raise UsageError(
            f"{command}: {each}{param.name} must be {kind}, got {value!r}",
            hint=f"pass {param.name} as {kind}",
        )


def _given(param: ParamSpec, value: Any) -> bool:
    """``None`` and an empty repeatable value both mean "not given"."""
    if value is None:
        return False
    return not (param.repeatable and isinstance(value, list | tuple) and not value)


def call_command(spec: CommandSpec, ctx: ToolContext, params: Mapping[str, Any]) -> Any:
    """Call ``spec``'s handler as ``handler(ctx, **params)``: the one place a handler runs.

    ``params`` maps parameter names to values. An undeclared name, a missing
    required parameter or a value of the wrong type is a
    :class:`~pm_core.tracker.model.errors.UsageError` naming it. A parameter that
    was not given (``None``, or an empty repeatable) gets its declared
    ``default``, else is left out so the handler's own default applies.
    Repeatable values arrive as lists. A handler that raises something other
    than a ``PmError`` is reported as a ``PmError`` (exit code 1) naming the
    command; the original exception is its ``__cause__``.
    """
    if spec.handler is None:
        raise UsageError(
            f"{spec.name} is a built-in command without a handler",
            hint="call the matching Tracker method instead",
        )
    declared = {p.name: p for p in spec.params}
    unknown = [name for name in params if name not in declared]
    if unknown:
        raise UsageError(
            f"{spec.name} has no parameter {', '.join(repr(n) for n in unknown)}",
            hint=f"its parameters: {', '.join(declared) or 'none'}",
        )
    call: dict[str, Any] = {}
    missing: list[str] = []
    for param in spec.params:
        value = params.get(param.name)
        if not _given(param, value):
            if param.default is not None:
                call[param.name] = param.default
            elif param.required:
                missing.append(param.name)
            continue
        if param.repeatable:
            values = list(value) if isinstance(value, list | tuple) else [value]
            for one in values:
                _check_type(spec.name, param, one)
            call[param.name] = values
        else:
            _check_type(spec.name, param, value)
            call[param.name] = value
    if missing:
        raise UsageError(
            f"{spec.name} needs {', '.join(missing)}",
            hint=f"pass {', '.join(missing)} (see the command's help)",
        )
    from pm_core.tracker.gate.execution import extension_call

    try:
        # The command-execution gate: under pm-mcp with commands off, the
        # handler may start no process (pm_core.tracker.gate.execution).
        with extension_call(spec.name):
            return spec.handler(ctx, **call)
    except PmError:
        raise
    except Exception as exc:
        raise PmError(
            f"command {spec.name} failed: {type(exc).__name__}: {exc}",
            hint="the plugin that provides it raised unexpectedly; "
            "`pm-plugins list -v` names the plugin",
        ) from exc


def run_command(
    name: str,
    tracker: Tracker,
    params: Mapping[str, Any] | None = None,
    *,
    host: Host | None = None,
    request: RequestContext | None = None,
) -> Any:
    """Run extension command ``name`` against ``tracker``, at any tier (``internal`` too).

    ``params`` maps parameter names to values (see :func:`call_command`).
    ``host`` defaults to a host built from the installed plugins and the
    environment; ``request`` defaults to one whose ``client_name`` is
    ``"pm-sdk"`` and whose profile is ``full``. Returns what the handler
    returns. Raises :class:`~pm_core.tracker.model.errors.NotFoundError` for a name
    no plugin provides.
    """
    if host is None:
        from pm_core.host import build_host

        host = build_host()
    commands = host.commands()
    spec = commands.get(name)
    if spec is None or spec.handler is None:
        extensions = sorted(n for n, c in commands.items() if c.handler is not None)
        if spec is not None:
            raise UsageError(
                f"{name} is a built-in command, not an extension command",
                hint="call the matching Tracker method instead",
            )
        raise NotFoundError(
            f"no extension command {name!r} is installed",
            hint=f"installed: {', '.join(extensions) or 'none'}; `pm-plugins list` shows plugins",
        )
    ctx = ToolContext(
        tracker=tracker,
        request=request or RequestContext(profile="full", client_name=SDK_CLIENT),
        author=tracker.author,
        commands=commands,
    )
    return call_command(spec, ctx, dict(params or {}))


def tracker_root(workspace: Path | str | None) -> Path | None:
    """The ``.agents/pm`` directory for a repository root or a tracker directory."""
    if workspace is None:
        return None
    path = Path(workspace).expanduser()
    nested = path / ".agents" / "pm"
    return nested if nested.is_dir() else path


def list_tools(
    profile: str = "core",
    workspace: Path | str | None = None,
    *,
    allowlist: Sequence[str] | None = None,
    host: Host | None = None,
) -> list[ToolDescriptor]:
    """The tools ``pm-mcp`` lists at ``profile`` for ``workspace``, schemas projected.

    ``workspace`` is a repository root or its ``.agents/pm`` directory (default:
    found from ``PM_PATH`` or the current directory; a missing tracker means the
    built-in types and statuses). ``allowlist`` is the ``custom`` profile's
    tool list. The answer is what a client that negotiated no extensions sees.
    Raises :class:`~pm_core.contracts.ConfigurationError` for an unknown profile
    or a ``custom`` profile without an allowlist.
    """
    from pm_core.tracker.api import Tracker

    if host is None:
        from pm_core.host import build_host

        host = build_host()
    tracker = Tracker(tracker_root(workspace))
    request = RequestContext(
        profile=profile,
        tool_allowlist=None if allowlist is None else tuple(allowlist),
        workspace=tracker.root.parent.parent,
    )
    catalog = host.catalog(tracker.schema.contracts(), request=request)
    return host.decorate_tools(host.select_tools(catalog, request, "list"), request)
