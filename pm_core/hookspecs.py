# mypy: disable-error-code="empty-body"
"""The pm plugin contract: one documented hookspec per concern.

Hooks are called with keywords and specs only grow by adding arguments;
``docs/plugins.md`` has one section per hook, kept in step by a test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from pm_core.contracts import (
        CommandSpec,
        PromptSpec,
        ProtocolExtension,
        RequestContext,
        ResourceProvider,
        SkillOrigin,
        ToolDescriptor,
        ToolSpec,
    )

PROJECT = "pm"
hookspec = pluggy.HookspecMarker(PROJECT)


# --- catalog: called once per host when it first needs the catalog -----------


@hookspec
def pm_register_tools() -> Sequence[ToolSpec]:
    """Contribute MCP tools.

    Called once per host, when the tool catalog is first built. Return the
    plugin's :class:`~pm_core.contracts.ToolSpec` objects (possibly empty).
    Each tool names its backing command; the command's tier decides which
    profiles list it. Two plugins contributing the same tool name is a
    ``conflict``: the later one is dropped and reported by ``pm-plugins list``.
    """


@hookspec
def pm_register_commands() -> Sequence[CommandSpec]:
    """Declare commands with a tier and a capability family.

    Called once per host. Built-in commands are declared without a handler;
    extension commands carry ``handler(ctx, **params)`` and become ``pm <name>``
    in the CLI and an action of ``pm_run`` in ``pm-mcp`` at every profile whose
    tier includes theirs (``internal``: callable, never advertised). A name that
    collides with an existing command is a ``conflict`` and is dropped.
    """


@hookspec
def pm_resource_providers() -> Sequence[ResourceProvider]:
    """Contribute resource providers, each owning a URI prefix.

    Called once per host. A provider's ``gate(request)`` decides, per request,
    whether it is listed and readable.
    """


@hookspec
def pm_register_prompts() -> Sequence[PromptSpec]:
    """Contribute prompt templates. Called once per host."""


@hookspec
def pm_skill_origins(workspace: Path | None) -> Sequence[SkillOrigin]:
    """Contribute directories of skills.

    Called when the skill registry is loaded for ``workspace`` (the tracker's
    repository root, or None when there is none). Return zero or more
    :class:`~pm_core.contracts.SkillOrigin`.
    """


@hookspec
def pm_protocol_extensions() -> Sequence[ProtocolExtension]:
    """Contribute MCP protocol extensions.

    Called once per host. Each extension's settings are advertised under
    ``capabilities.extensions`` by ``initialize`` and ``server/discover``; its
    methods are registered as extra JSON-RPC methods and must check their own
    per-request negotiation.
    """


# --- per request: called for every tools/list and tools/call ------------------


@hookspec(firstresult=True)
def pm_select_tools(
    catalog: Sequence[ToolDescriptor],
    request: RequestContext,
    purpose: str,
    commands: Mapping[str, CommandSpec],
) -> Sequence[ToolDescriptor] | None:
    """Choose the tools this request may see (``purpose="list"``) or call
    (``purpose="call"``).

    Called for every ``tools/list`` and ``tools/call``. ``catalog`` is every
    registered tool, projected for the workspace; ``commands`` is every
    registered command (an extension command at a visible tier makes
    ``pm_run`` part of the core and standard profiles). Stops at the first non-None
    result; the ``profiles`` plugin answers (``trylast``). A plugin that narrows
    the listed set further (progressive discovery) implements this hook as a
    ``wrapper=True`` and changes the result it receives when ``purpose`` is
    ``"list"``; tools it hides stay callable.
    """


@hookspec(firstresult=True)
def pm_decorate_tools(
    tools: Sequence[ToolDescriptor], request: RequestContext
) -> Sequence[ToolDescriptor] | None:
    """Add per-request ``_meta`` to listed tools.

    Called for every ``tools/list`` after selection. Stops at the first non-None
    result; the core's default returns ``tools`` unchanged (``trylast``).
    Decorators (MCP Apps) implement ``wrapper=True`` and return the decorated
    list.
    """
