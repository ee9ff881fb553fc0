"""Commands whose work is an MCP tool's: discover, profile, run; and ``pm help``.

``pm discover``, ``pm profile`` and ``pm run`` call the same tool handler
``pm-mcp`` calls (``pm_discover``, ``pm_profile``, ``pm_run``), in process,
at the profile given by ``--profile`` (default ``PM_MCP_PROFILE``, else
``full``), so the CLI and the server cannot answer differently. Their
parameters are declared in :mod:`pm_core.commands.tools`, with ``pm help``'s.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState, parse_assignments
from pm_core.commands.tools import PARAMS
from pm_core.tracker.model.errors import PmError, UsageError


def call_tool(state: CliState, tool: str, args: Mapping[str, Any], profile: str | None) -> Any:
    """Run MCP tool ``tool`` with ``args`` as a client at ``profile`` would."""
    from pm_core.cli.extensions import installed_host
    from pm_core.contracts import PROFILE_TIERS, RequestContext, ToolContext, ToolResult
    from pm_core.hosting import CLI_CLIENT

    chosen = profile or os.environ.get("PM_MCP_PROFILE") or "full"
    if chosen not in PROFILE_TIERS or chosen == "custom":
        raise UsageError(f"unknown profile {chosen!r}", hint="use one of: core, standard, full")
    host = installed_host()
    tracker = state.tracker
    request = RequestContext(profile=chosen, client_name=CLI_CLIENT)
    catalog = host.catalog(tracker.schema.contracts(), request=request)
    callable_tools = host.select_tools(catalog, request, "call")
    spec = host.tools().get(tool)
    if spec is None:
        raise UsageError(f"tool {tool} is not installed", hint="`pm-plugins list -v` says why")
    ctx = ToolContext(
        tracker=tracker,
        request=request,
        author=tracker.author,
        tools=tuple(callable_tools),
        commands=host.commands(),
    )
    try:
        outcome = spec.handler(ctx, args)
    except PmError:
        raise
    except Exception as exc:
        # A plugin's input error carries an exit code (as pm-mcp reads it): an error line.
        code = getattr(exc, "code", None)
        if not isinstance(code, int):
            raise
        details = getattr(exc, "details", None)
        if code == 64:  # the MCP side's usage code is the CLI's usage error (exit 2)
            raise UsageError(str(exc), details=details) from None
        error = PmError(str(exc), details=details)
        error.code = code
        raise error from None
    if isinstance(outcome, ToolResult):
        import sys

        for warning in outcome.warnings:
            sys.stderr.write(f"warning: {warning}\n")
        outcome = outcome.result
    return outcome


def _emit(state: CliState, outcome: Any) -> None:
    state.emit(dict(outcome) if isinstance(outcome, Mapping) else {"result": outcome})


def run_discover(
    state: CliState,
    query: tuple[str, ...],
    family: str | None,
    tier: str | None,
    limit: int | None,
    include_schema: bool,
    profile: str | None,
) -> None:
    """Find the tools for an intent, ranked (what `pm_discover` answers)."""
    args: dict[str, Any] = {"query": " ".join(query)}
    for key, value in (("family", family), ("tier", tier), ("limit", limit)):
        if value is not None:
            args[key] = value
    if include_schema:
        args["includeSchema"] = True
    _emit(state, call_tool(state, "pm_discover", args, profile))


def run_profile(state: CliState, profile: str | None) -> None:
    """The MCP tool profiles and which tools each selects (what `pm_profile` answers)."""
    _emit(state, call_tool(state, "pm_profile", {}, profile))


def run_run(
    state: CliState,
    action: str,
    positional: tuple[str, ...],
    pairs: tuple[str, ...],
    args_json: str | None,
    profile: str | None,
) -> None:
    """Run any command by action name, as `pm_run` does (extension commands too)."""
    args: dict[str, Any] = {}
    if args_json:
        try:
            loaded = json.loads(args_json)
        except ValueError as exc:
            raise UsageError(
                f"--args-json: not valid JSON ({exc})", hint='e.g. {"id": "pm-1"}'
            ) from None
        if not isinstance(loaded, dict):
            raise UsageError("--args-json expects a JSON object", hint='e.g. {"id": "pm-1"}')
        args.update(loaded)
    args.update(parse_assignments(pairs, "--arg"))
    args["action"] = action
    if positional:
        args["args"] = list(positional)
    _emit(state, call_tool(state, "pm_run", args, profile))


def run_help(state: CliState, command: str | None, show_all: bool) -> None:
    """Show help: core and standard commands, or --all of them, or one COMMAND's."""
    import click

    from pm_core.cli.app import cli
    from pm_core.cli.output import write

    with click.Context(cli, info_name="pm", obj=state, **cli.context_settings) as root:
        if command:
            found = cli.get_command(root, command)
            if found is None:
                raise UsageError(f"no such command {command!r}", hint="run `pm help --all`")
            with click.Context(found, info_name=command, parent=root) as sub:
                write(found.get_help(sub) + "\n")
            return
        root.meta["pm.help_all"] = show_all
        write(cli.get_help(root) + "\n")


SPECS = specs(
    Spec("discover", run_discover, params=PARAMS["discover"]),
    Spec("profile", run_profile, params=PARAMS["profile"]),
    Spec("run", run_run, params=PARAMS["run"]),
    Spec("help", run_help, params=PARAMS["help"], json=False),
)
