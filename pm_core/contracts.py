"""Frozen contract objects that cross the plugin boundary.

Hooks return these; adapters (CLI, MCP) read them. Nothing here imports the
MCP SDK, click, or the host: a plugin can depend on this module alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from pm_core.capabilities import FAMILIES as _FAMILIES

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

Tier = Literal["core", "standard", "full", "internal"]
TIERS: tuple[Tier, ...] = ("core", "standard", "full", "internal")
#: Advertised tiers in widening order; ``internal`` is never advertised.
TIER_RANK: Mapping[str, int] = {"core": 0, "standard": 1, "full": 2, "internal": 3}

Era = Literal["initialize", "modern"]

#: Capability families shared by commands, tools, discovery and docs (declared
#: with the command table).
FAMILIES: tuple[str, ...] = _FAMILIES


#: The tier each MCP tool profile advertises up to (``custom`` is an exact
#: allowlist, so every non-internal tier is reachable through it).
PROFILE_TIERS: Mapping[str, Tier] = {
    "core": "core",
    "standard": "standard",
    "full": "full",
    "custom": "full",
}


def profile_tier(profile: str) -> Tier:
    """The tier a profile advertises up to; unknown profiles see only ``core``."""
    return PROFILE_TIERS.get(profile, "core")


def tier_includes(profile_tier: str, command_tier: str) -> bool:
    """Whether a profile at ``profile_tier`` advertises a command at ``command_tier``."""
    if command_tier == "internal":
        return False
    return TIER_RANK.get(command_tier, 99) <= TIER_RANK.get(profile_tier, -1)


@attrs.frozen(slots=True)
class FieldDecl:
    """A custom item field declared in ``schema/fields.json``."""

    key: str
    type: str = "string"
    commands: tuple[str, ...] = ()
    description: str = ""
    value_schema: Mapping[str, Any] | None = None


@attrs.frozen(slots=True)
class WorkspaceContracts:
    """The live, per-workspace facts that tool schemas are projected from."""

    types: tuple[str, ...]
    statuses: tuple[str, ...]
    fields: tuple[FieldDecl, ...] = ()
    open_status: str = "open"
    close_status: str = "closed"
    canceled_status: str = "canceled"


@attrs.frozen(slots=True)
class RequestContext:
    """What one request negotiated. Built by the adapter, per request.

    ``extensions`` holds the client's declared extension settings *for this
    request* (initialize-era: from ``initialize``; 2026-07-28: from the
    request's ``_meta``).
    """

    era: Era = "initialize"
    protocol_version: str = ""
    extensions: Mapping[str, Any] = attrs.field(factory=dict)
    client_name: str | None = None
    #: The server's tool profile (``PM_MCP_PROFILE``) and, for ``custom``, the
    #: exact allowlist (``PM_MCP_TOOLS``).
    profile: str = "core"
    tool_allowlist: tuple[str, ...] | None = None
    workspace: Path | None = None
    #: Commands the operator withheld (read-only mode, deny list): no tool and
    #: no ``pm_run`` action reaches them.
    withheld_commands: frozenset[str] = frozenset()
    #: Operator settings that change negotiation, e.g. ``{"skills": "open"}``
    #: from ``PM_MCP_SKILLS`` (serve the Final Skills text to undeclared clients).
    options: Mapping[str, str] = attrs.field(factory=dict)

    def extension(self, identifier: str) -> Mapping[str, Any] | None:
        """The client's settings for ``identifier``, or None when not declared."""
        value = self.extensions.get(identifier)
        return value if isinstance(value, Mapping) else None


@attrs.frozen(slots=True)
class ToolContext:
    """Handed to a tool or command handler: a bound SDK client and the request.

    ``tools`` is the set of tools this request may call (profile-selected,
    projected for the workspace), for handlers that reason about the surface
    itself (``pm_discover``, ``pm_profile``, ``pm_run``).
    """

    tracker: Tracker
    request: RequestContext
    author: str | None = None
    tools: tuple[ToolDescriptor, ...] = ()
    commands: Mapping[str, CommandSpec] = attrs.field(factory=dict)


@attrs.frozen(slots=True)
class ParamSpec:
    """One parameter of an extension command."""

    name: str
    type: Literal["string", "integer", "number", "boolean"] = "string"
    required: bool = False
    repeatable: bool = False
    default: Any = None
    help: str = ""


def _names(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen(slots=True)
class CommandEffects:
    """What running a command does to the world, as MCP tool annotations state it.

    ``read_only``: changes nothing (``readOnlyHint``). ``destructive``: may
    overwrite or remove what is there, not only add (``destructiveHint``; only
    meaningful for a write). ``idempotent``: the same call again has no further
    effect (``idempotentHint``). ``open_world``: reaches beyond the tracker, by
    running a process or talking to a remote (``openWorldHint``). A command that
    declares none is treated as the MCP defaults say: a destructive, repeatable,
    open-world write.

    ``writes_with`` names the commands a read may also do when asked
    (``next`` claims with ``claim: true``): the tool is then annotated as a
    write (``readOnlyHint`` false, the other hints for that write), while
    ``read_only`` keeps it served in read-only mode, where those commands are
    refused and the tool is annotated as the read it then is.
    """

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True
    writes_with: tuple[str, ...] = attrs.field(default=(), converter=_names)

    @property
    def read_only_hint(self) -> bool:
        """``readOnlyHint``: changes nothing, whatever the call asks."""
        return self.read_only and not self.writes_with


#: The MCP defaults: what an undeclared command is assumed to do.
UNDECLARED_EFFECTS = CommandEffects()


@attrs.frozen(slots=True)
class CommandSpec:
    """A command: tier and capability family, and (for extensions) a handler.

    Built-in commands are declared with ``handler=None``: their behaviour lives
    in the CLI and the tracker SDK; the spec only records tier and family so
    every projection (CLI help, MCP profiles, generated docs) agrees.
    """

    name: str
    summary: str
    tier: Tier = "standard"
    family: str = "extensions"
    params: tuple[ParamSpec, ...] = ()
    handler: Callable[..., Any] | None = None
    examples: tuple[str, ...] = ()
    builtin: bool = False
    #: A short human title (MCP ``title`` annotation); the name when empty.
    title: str = ""
    #: What the command does to the world; None means undeclared (MCP defaults).
    effects: CommandEffects | None = None


@attrs.frozen(slots=True)
class ToolResult:
    """A tool handler's result with warnings (e.g. an argument that may be ignored).

    Handlers may also return a plain JSON value; failures raise
    :class:`pm_core.tracker.model.errors.PmError` (its exit code becomes the result's
    ``code``).
    """

    result: Any
    warnings: tuple[str, ...] = ()


class ConfigurationError(Exception):
    """A server configuration that cannot work (unknown profile, empty allowlist).

    ``pm-mcp`` exits 64 at start-up with this message.
    """


ToolHandler = Callable[[ToolContext, Mapping[str, Any]], Any]
SchemaBuilder = Callable[[WorkspaceContracts], Mapping[str, Any]]
#: A per-request schema projection: workspace contracts, every command, the request.
RequestSchemaBuilder = Callable[
    [WorkspaceContracts, Mapping[str, CommandSpec], RequestContext], Mapping[str, Any]
]


@attrs.frozen(slots=True)
class ToolSpec:
    """An MCP tool: its input schema is built from the live workspace contracts."""

    name: str
    description: str
    command: str
    input_schema: SchemaBuilder
    handler: ToolHandler
    family: str = "orientation"
    #: When set, listing for a request uses this instead of ``input_schema``
    #: (``pm_run``'s action enum depends on the request's profile tier).
    request_schema: RequestSchemaBuilder | None = None
    #: Argument keys the tool accepts beyond those its listed schema shows (a
    #: compact schema in the core and standard profiles); never warned about.
    accepts: Callable[[WorkspaceContracts], Sequence[str]] | None = None
    #: The tool's result schema, projected like ``input_schema`` (hook for output schemas).
    output_schema: SchemaBuilder | None = None


@attrs.frozen(slots=True)
class ToolDescriptor:
    """A tool as listed to one client: schema already projected, meta decorated."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    command: str
    tier: Tier
    family: str
    meta: Mapping[str, Any] | None = None
    #: Keys accepted though not listed (not on the wire; see ``ToolSpec.accepts``).
    accepts: tuple[str, ...] = ()
    #: ``ToolSpec.output_schema`` projected for the workspace (``None``: not declared).
    output_schema: Mapping[str, Any] | None = None
    #: The backing command's title and effects (the tool's MCP annotations).
    title: str = ""
    effects: CommandEffects = UNDECLARED_EFFECTS

    def with_meta(self, meta: Mapping[str, Any]) -> ToolDescriptor:
        """A copy whose ``_meta`` merges ``meta`` over the current one."""
        merged = dict(self.meta or {})
        merged.update(meta)
        return attrs.evolve(self, meta=merged)


@attrs.frozen(slots=True)
class ResourceEntry:
    """One listed resource."""

    uri: str
    name: str
    mime_type: str = "text/plain"
    description: str = ""
    meta: Mapping[str, Any] | None = None


@attrs.frozen(slots=True)
class ResourceTemplateEntry:
    """One ``resources/templates/list`` entry: an RFC 6570 URI template."""

    uri_template: str
    name: str
    mime_type: str = "application/json"
    description: str = ""


@attrs.frozen(slots=True)
class ResourceContent:
    """The body of a resource read: ``text`` or base64 ``blob``."""

    uri: str
    mime_type: str
    text: str | None = None
    blob: str | None = None
    meta: Mapping[str, Any] | None = None


@attrs.frozen(slots=True)
class ServeContext:
    """What a resource provider or extension method gets for one request.

    ``skill_origins()`` returns the origins every plugin contributed for the
    workspace (collected by the host once per server).
    """

    request: RequestContext
    tracker: Tracker
    skill_origins: Callable[[], Sequence[SkillOrigin]] = lambda: ()


@attrs.frozen(slots=True)
class ResourceProvider:
    """Serves every resource URI starting with ``prefix``.

    ``gate(request)`` says whether this request may see the provider at all:
    a gated-off provider is absent from ``resources/list`` and its reads fail
    closed (the provider's ``denied(request)`` error, or -32602 not found, per SEP-2164).
    """

    prefix: str
    list: Callable[[ServeContext], list[ResourceEntry]]
    read: Callable[[ServeContext, str], ResourceContent]
    gate: Callable[[RequestContext], bool] = lambda _request: True
    #: Raised instead of "not found" when a gated-off read is attempted.
    denied: Callable[[RequestContext], ProtocolError] | None = None
    #: URI templates under ``prefix`` (``resources/templates/list``), gated like the rest.
    templates: tuple[ResourceTemplateEntry, ...] = ()


@attrs.frozen(slots=True)
class PromptArgument:
    """A prompt argument."""

    name: str
    description: str = ""
    required: bool = False


@attrs.frozen(slots=True)
class PromptSpec:
    """A prompt template; ``render`` receives validated arguments."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[[Mapping[str, str]], str]
    #: The text for a client that can call only these tool names (the request's
    #: profile); when set, adapters use it so a prompt never names a tool the
    #: client cannot call.
    render_for: Callable[[Mapping[str, str], frozenset[str]], str] | None = None
    #: Whether following the prompt changes the tracker (a read-only server says so).
    mutates: bool = False


@attrs.frozen(slots=True)
class SkillOrigin:
    """A directory of skills (one sub-directory per skill)."""

    name: str
    kind: Literal["package", "workspace"]
    root: Path
    version: str = ""
    #: When two origins provide a skill of the same name, the higher precedence
    #: wins (workspace skills, 100, override package skills, 0).
    precedence: int = 0


@attrs.frozen(slots=True)
class ExtensionMethod:
    """An extra JSON-RPC method contributed by a protocol extension.

    ``handler(ctx, params)`` returns the JSON result or raises
    :class:`ProtocolError`; it checks its own per-request negotiation.
    """

    method: str
    handler: Callable[[ServeContext, Mapping[str, Any]], Mapping[str, Any]]


@attrs.frozen(slots=True)
class ProtocolExtension:
    """An MCP extension: identifier, advertised settings, extra methods.

    ``pointer_results``: when a request negotiated this extension, tool results
    carry a short pointer text and ``structuredContent.result`` is the single
    canonical result (progressive discovery).
    """

    identifier: str
    settings: Mapping[str, Any]
    methods: tuple[ExtensionMethod, ...] = ()
    pointer_results: bool = False


class ProtocolError(Exception):
    """A JSON-RPC error raised by plugin code; the adapter puts it on the wire."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
INVALID_PARAMS = -32602
