"""``pm-mcp``: a thin adapter from the MCP SDK's low-level ``Server`` to the host.

Each request becomes a :class:`~pm_core.contracts.RequestContext`, then a host
call, then wire objects; business rules live in the SDK and the plugins.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import structlog
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from pydantic import ValidationError

from pm_core import __version__
from pm_core.contracts import (
    Era,
    ProtocolError,
    RequestContext,
    ServeContext,
    SkillOrigin,
    ToolContext,
    ToolDescriptor,
    ToolResult,
)
from pm_core.host import Host, workspace_extensions
from pm_core.mcp.changes import ChangeWatcher, subscribable
from pm_core.mcp.config import DEFAULT_MAX_RESPONSE_BYTES as DEFAULT_MAX_RESPONSE_BYTES
from pm_core.mcp.config import HANDSHAKE_VERSIONS as HANDSHAKE_VERSIONS
from pm_core.mcp.config import INSTRUCTIONS as INSTRUCTIONS
from pm_core.mcp.config import MODERN_VERSIONS as MODERN_VERSIONS
from pm_core.mcp.config import SKILLS_MODES as SKILLS_MODES
from pm_core.mcp.config import ServerConfig as ServerConfig
from pm_core.mcp.config import byte_limit as byte_limit
from pm_core.mcp.config import check_startup as _check_startup
from pm_core.mcp.config import instructions_for as instructions_for
from pm_core.mcp.config import profile_tools as _profile_tools
from pm_core.mcp.config import skills_mode as skills_mode
from pm_core.mcp.results import output_schema
from pm_core.tracker.api import Tracker
from pm_core.tracker.gate import execution
from pm_core.tracker.model.errors import PmError, UsageError

log = structlog.get_logger("pm.mcp")

#: Tool-level usage errors (unselected tool, bad discovery input) carry this code.
USAGE_CODE = 64
#: Resource not found: -32602 since SEP-2164 (-32002 is retired and never reused).
RESOURCE_NOT_FOUND = -32602
POINTER_TEXT = (
    "The canonical result is structuredContent.result (negotiated "
    "progressive discovery); this text carries no other data."
)


class PmMcp:
    """The server: holds the host, the workspace and the low-level SDK server."""

    def __init__(self, host: Host, config: ServerConfig) -> None:
        self.host = host
        self.config = config
        self._skill_origins: list[SkillOrigin] | None = None
        self._max_response_bytes: int | None = None
        self.command_policy = config.operator.command_policy()
        self._withheld: frozenset[str] | None = None
        self._options: Mapping[str, str] | None = None
        # What the host was built from, without a second scan of the installed distributions.
        self._plugins: PluginState = (host.installed, workspace_extensions(config.root))
        self.changes = ChangeWatcher(config.root, tools_check=self.refresh_host)
        self.server: Server[Any] = Server(
            "pm-mcp",
            version=__version__,
            instructions=self.instructions(),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_resource_templates=self._list_resource_templates,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        for extension in host.protocol_extensions():
            self.server.extensions[extension.identifier] = dict(extension.settings)
            for method in extension.methods:
                self.server.add_request_handler(
                    method.method, types.RequestParams, self._extension_handler(method.handler)
                )
        self.server.add_request_handler("server/discover", types.RequestParams, self._discover)
        self.server.middleware.insert(0, self._sanitize_errors)
        self.server.middleware.append(self._advertise_extensions)

    def refresh_host(self) -> bool:
        """Rebuild the host when installed plugins or the workspace's extension settings changed.

        Called by the change watcher when a ``sys.path`` folder or the settings
        changed. Returns whether the tool surface changed (a tool or command
        came, went or changed its declaration), so sessions are told
        ``notifications/tools/list_changed``. Protocol extensions stay as the
        server started with them (their request handlers are registered once).
        """
        found = installed_plugins_of(self.config.root)
        if found == self._plugins:
            return False
        from pm_core.host import PluginLoadError, build_host

        try:
            host = build_host(self.config.env, workspace=self.config.root)
        except PluginLoadError as exc:  # strict mode: keep serving what was loaded
            log.warning("plugin_reload_failed", error=str(exc))
            return False
        before = _surface(self.host)
        self.host, self._plugins = host, found
        self._withheld = None
        self._skill_origins = None
        self.server.instructions = self.instructions()
        log.info("plugins_reloaded", plugins=[name for name, *_ in found[0]])
        return _surface(host) != before

    def profile_tools(self, request: RequestContext | None = None) -> frozenset[str]:
        """The tool names a client at the server's profile (or ``request``'s) can call."""
        return _profile_tools(self.host, self.config, request)

    def instructions(self) -> str:
        """The server instructions for this server's profile."""
        return instructions_for(self.profile_tools())

    # ------------------------------------------------------------ per request

    def request_context(self, ctx: ServerRequestContext[Any, Any]) -> RequestContext:
        """The negotiated facts of this one request."""
        caps = ctx.session.client_capabilities
        extensions = dict(caps.extensions or {}) if caps is not None else {}
        client_name = None
        params = ctx.session.client_params
        if params is not None and params.client_info is not None:
            client_name = params.client_info.name
        era: Era = "modern" if ctx.protocol_version in MODERN_VERSIONS else "initialize"
        if era == "initialize":
            self.changes.seen(connection_of(ctx))  # it hears of tool list changes from now on
        return RequestContext(
            era=era,
            protocol_version=ctx.protocol_version,
            extensions=extensions,
            client_name=client_name,
            profile=self.config.profile,
            tool_allowlist=self.config.tool_allowlist,
            workspace=self.config.root.parent.parent,
            options=self.options,
            withheld_commands=self.withheld_commands,
        )

    @property
    def withheld_commands(self) -> frozenset[str]:
        """Commands the operator's read-only mode or deny list keeps from every door."""
        if self._withheld is None:
            self._withheld = self.config.operator.commands_withheld(
                self.host.commands(), {n: t.command for n, t in self.host.tools().items()}
            )
        return self._withheld

    def select_tools(
        self, request: RequestContext, tracker: Tracker, purpose: str
    ) -> list[ToolDescriptor]:
        """The profile's tools for ``purpose``, minus those the operator removed."""
        selected = self.host.select_tools(self.catalog(request, tracker), request, purpose)
        return self.config.operator.select(selected)

    @property
    def options(self) -> Mapping[str, str]:
        """Operator settings that change negotiation (ConfigurationError if invalid)."""
        if self._options is None:
            self._options = {"skills": skills_mode(self.config.env)}
        return self._options

    def tracker(self, args: Mapping[str, Any] | None = None) -> Tracker:
        """A tracker for this call: the server's root, the call's author."""
        author = self.config.author
        root = self.config.root
        if args:
            if isinstance(args.get("author"), str) and args["author"].strip():
                author = args["author"].strip()
            if isinstance(args.get("path"), str) and args["path"].strip():
                root = _tracker_root(args["path"])
        return Tracker(root, author=author, env=self.config.env)

    def skill_origins(self) -> list[SkillOrigin]:
        """Skill origins for the workspace, collected once per server."""
        if self._skill_origins is None:
            self._skill_origins = self.host.skill_origins(self.config.root.parent.parent)
        return self._skill_origins

    def serve_context(self, request: RequestContext) -> ServeContext:
        """What resource providers and extension methods receive."""
        return ServeContext(
            request=request, tracker=self.tracker(), skill_origins=self.skill_origins
        )

    def catalog(self, request: RequestContext, tracker: Tracker) -> list[ToolDescriptor]:
        """Every tool projected from the live workspace contracts."""
        return self.host.catalog(tracker.schema.contracts(), request=request)

    @property
    def max_response_bytes(self) -> int:
        """The tool result cap, ``PM_MCP_MAX_RESPONSE_BYTES`` (ConfigurationError if invalid)."""
        if self._max_response_bytes is None:
            self._max_response_bytes = byte_limit(
                self.config.env, "PM_MCP_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES
            )
        return self._max_response_bytes

    def check_startup(self) -> None:
        """Validate the profile configuration and limits (raises ConfigurationError)."""
        _ = self.max_response_bytes
        _ = self.options
        _check_startup(self.host, self.config)

    # ------------------------------------------------------------ tools

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        request = self.request_context(ctx)

        def build() -> list[ToolDescriptor]:
            tracker = self.tracker()
            selected = self.select_tools(request, tracker, "list")
            return self.host.decorate_tools(selected, request)

        tools = await anyio.to_thread.run_sync(build)
        return types.ListToolsResult(tools=[wire_tool(t) for t in tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = self.request_context(ctx)
        pointer = self.pointer_results(request)
        args = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(
            lambda: self.call(request, params.name, args, pointer)
        )

    def call(
        self, request: RequestContext, name: str, args: dict[str, Any], pointer: bool
    ) -> types.CallToolResult:
        """Run one tool call; failures become ``isError`` results with the pm exit code.

        A tool this request cannot call (unknown, or outside its profile) is a
        protocol error, -32602, as the specification has it: there is no
        execution whose failure a result could report.
        """
        try:
            tracker = self.tracker(args)
            callable_tools = self.select_tools(request, tracker, "call")
            withheld = next(
                (
                    self.config.operator.withheld(t)
                    for t in self.catalog(request, tracker)
                    if t.name == name
                ),
                None,
            )
        except PmError as exc:
            return error_result(exc.to_json(), pointer)
        by_name = {t.name: t for t in callable_tools}
        if name not in by_name:
            known = name in self.host.tools()
            why = withheld or (
                f"tool {name} is not enabled in the {request.profile} profile"
                if known
                else f"unknown tool {name}"
            )
            raise MCPError(
                types.INVALID_PARAMS,
                f"{why}; call tools/list for the tools you may use",
                {"field": "name", "tool": name},
            )
        try:
            descriptor = by_name[name]
            warnings = undeclared_arguments(descriptor, args)
            spec = self.host.tools()[name]
            tool_ctx = ToolContext(
                tracker=tracker,
                request=request,
                author=tracker.author,
                tools=tuple(callable_tools),
                commands={
                    n: c
                    for n, c in self.host.commands().items()
                    if n not in request.withheld_commands
                },
            )
            with execution.policy(self.command_policy):
                outcome = spec.handler(tool_ctx, args)
        except PmError as exc:
            return error_result(exc.to_json(), pointer)
        except Exception as exc:
            code = getattr(exc, "code", None)
            if isinstance(code, int) and not isinstance(exc, MCPError):
                body = {"error": str(exc), "code": code}
                details = getattr(exc, "details", None)
                if details is not None:
                    body["details"] = details
                return error_result(body, pointer)
            log.error("tool_failed", tool=name, error=repr(exc))
            raise MCPError(types.INTERNAL_ERROR, "Internal error") from None
        if isinstance(outcome, ToolResult):
            warnings.extend(outcome.warnings)
            result = outcome.result
        else:
            result = outcome
        return success_result(result, warnings, pointer, max_bytes=self.max_response_bytes)

    def pointer_results(self, request: RequestContext) -> bool:
        """Whether this request negotiated an extension that wants pointer texts."""
        return any(
            ext.pointer_results and request.extension(ext.identifier) is not None
            for ext in self.host.protocol_extensions()
            if request.era == "modern"
        )

    # ------------------------------------------------------------ resources

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        request = self.request_context(ctx)

        def build() -> list[types.Resource]:
            serve = self.serve_context(request)
            out: list[types.Resource] = []
            for provider in self.host.resource_providers():
                if not provider.gate(request):
                    continue
                for entry in provider.list(serve):
                    out.append(
                        types.Resource(
                            uri=entry.uri,
                            name=entry.name,
                            mime_type=entry.mime_type,
                            description=entry.description or None,
                            _meta=dict(entry.meta) if entry.meta else None,
                        )
                    )
            return out

        return types.ListResourcesResult(resources=await self._run(build))

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        request = self.request_context(ctx)
        templates = [
            types.ResourceTemplate(
                uri_template=t.uri_template,
                name=t.name,
                mime_type=t.mime_type,
                description=t.description or None,
            )
            for provider in self.host.resource_providers()
            if provider.templates and provider.gate(request)
            for t in provider.templates
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        self.request_context(ctx)
        if not subscribable(uri):
            raise MCPError(
                types.INVALID_PARAMS,
                f"updates of {uri} are not watched; subscribe to pm://workspace/context, "
                "claims, focus, agent-guide, pm://items/{id} or pm://items/{id}/history",
                {"field": "uri", "uri": uri},
            )
        self.changes.subscribe(connection_of(ctx), uri)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self.changes.unsubscribe(connection_of(ctx), str(params.uri))
        return types.EmptyResult()

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        request = self.request_context(ctx)
        uri = str(params.uri)

        def read() -> types.ReadResourceResult:
            for provider in self.host.resource_providers():
                if not uri.startswith(provider.prefix):
                    continue
                if not provider.gate(request):
                    if provider.denied is not None:
                        raise provider.denied(request)
                    break
                content = provider.read(self.serve_context(request), uri)
                meta = dict(content.meta) if content.meta else None
                item: types.TextResourceContents | types.BlobResourceContents
                if content.blob is not None:
                    item = types.BlobResourceContents(
                        uri=content.uri, mime_type=content.mime_type, blob=content.blob, _meta=meta
                    )
                else:
                    item = types.TextResourceContents(
                        uri=content.uri,
                        mime_type=content.mime_type,
                        text=content.text or "",
                        _meta=meta,
                    )
                return types.ReadResourceResult(contents=[item])
            raise ProtocolError(RESOURCE_NOT_FOUND, f"resource not found: {uri}", {"uri": uri})

        result: types.ReadResourceResult = await self._run(read)
        return result

    # ------------------------------------------------------------ prompts

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        operator = self.config.operator
        prompts = [
            types.Prompt(
                name=spec.name,
                description=_with_note(spec.description, operator.prompt_note(spec.mutates)),
                arguments=[
                    types.PromptArgument(
                        name=a.name, description=a.description, required=a.required
                    )
                    for a in spec.arguments
                ],
            )
            for spec in self.host.prompts().values()
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        spec = self.host.prompts().get(params.name)
        if spec is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown prompt {params.name!r}; known: {', '.join(sorted(self.host.prompts()))}",
            )
        args = {k: str(v) for k, v in (params.arguments or {}).items()}
        missing = [
            a.name for a in spec.arguments if a.required and not args.get(a.name, "").strip()
        ]
        if missing:
            raise MCPError(
                types.INVALID_PARAMS,
                f"prompt {spec.name} is missing required argument(s): {', '.join(missing)}",
                {"missing": missing},
            )
        request = self.request_context(ctx)
        tools = self.profile_tools(request)
        note = self.config.operator.prompt_note(spec.mutates)
        rendered = spec.render_for(args, tools) if spec.render_for else spec.render(args)
        text = _with_note(rendered, note, "\n\n")
        return types.GetPromptResult(
            description=_with_note(spec.description, note),
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    # ------------------------------------------------------------ extensions

    def _extension_handler(self, handler: Any) -> Any:
        async def run(
            ctx: ServerRequestContext[Any, Any], params: types.RequestParams
        ) -> dict[str, Any]:
            request = self.request_context(ctx)
            raw = dict(ctx.params or {})
            raw.pop("_meta", None)
            result: dict[str, Any] = await self._run(
                lambda: dict(handler(self.serve_context(request), raw))
            )
            return result

        return run

    async def _discover(
        self, ctx: ServerRequestContext[Any, Any], params: types.RequestParams
    ) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=[*MODERN_VERSIONS, *HANDSHAKE_VERSIONS],
            capabilities=self.server.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=self.instructions(),
        )

    async def _run(self, fn: Any) -> Any:
        """Run blocking SDK work in a thread; ProtocolError becomes a wire error."""
        try:
            return await anyio.to_thread.run_sync(fn)
        except ProtocolError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        except PmError as exc:
            raise MCPError(types.INVALID_PARAMS, exc.message, exc.to_json()) from None

    # ------------------------------------------------------------ middleware

    async def _sanitize_errors(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Unexpected exceptions become -32603 without internals (SDK bug: code 0)."""
        try:
            return await call_next(ctx)
        except (MCPError, ValidationError):
            raise
        except ProtocolError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        except Exception as exc:
            log.error("request_failed", method=ctx.method, error=repr(exc))
            raise MCPError(types.INTERNAL_ERROR, "Internal error") from None

    async def _advertise_extensions(
        self, ctx: ServerRequestContext[Any, Any], call_next: Any
    ) -> Any:
        """Put ``capabilities.extensions`` back into ``initialize`` (SDK bug: dropped),
        and declare ``tools.listChanged``: initialize-era sessions are told (changes.py)."""
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            caps = result.setdefault("capabilities", {})
            if self.server.extensions:
                caps.setdefault("extensions", copy.deepcopy(self.server.extensions))
            if isinstance(caps.get("tools"), dict):
                caps["tools"]["listChanged"] = True
        return result


PluginState = tuple[tuple[tuple[str, str, str, str], ...], tuple[frozenset[str], frozenset[str]]]


def installed_plugins_of(root: Path) -> PluginState:
    """What the host of a server at ``root`` is built from: installed plugins, extension settings."""
    from pm_core.host import installed_plugins

    return (installed_plugins(), workspace_extensions(root))


def _surface(host: Host) -> tuple[object, ...]:
    """The tools and commands ``host`` contributes (names, owners, tiers): what tools/list projects."""
    tools = sorted((name, spec.command, spec.description) for name, spec in host.tools().items())
    commands = sorted(
        (name, spec.tier, spec.family, spec.summary, str(spec.params))
        for name, spec in host.commands().items()
    )
    records = sorted((r.name, r.status, r.version) for r in host.records.values())
    return (tuple(tools), tuple(commands), tuple(records))


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The client connection behind a request: one per stdio process or HTTP session.

    ``ctx.session`` is built afresh for every request; the connection outlives
    it and sends on the session's standalone channel (the SDK keeps it on the
    session as ``_connection``; a session is the fallback).
    """
    return getattr(ctx.session, "_connection", ctx.session)


def _tracker_root(raw: str) -> Path:
    if "\x00" in raw:
        raise UsageError(
            "path contains a NUL byte", hint="pass the repository or tracker directory"
        )
    path = Path(raw).expanduser()
    if path.name == "pm" and path.parent.name == ".agents":
        return path.resolve()
    return (path / ".agents" / "pm").resolve()


def wire_tool(tool: ToolDescriptor) -> types.Tool:
    """A descriptor as the SDK's Tool model, annotated from its command's effects."""
    effects = tool.effects
    return types.Tool(
        name=tool.name,
        title=tool.title or None,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=output_schema(tool.name, tool.output_schema),
        annotations=types.ToolAnnotations(
            title=tool.title or None,
            read_only_hint=effects.read_only_hint,
            destructive_hint=effects.destructive,
            idempotent_hint=effects.idempotent,
            open_world_hint=effects.open_world,
        ),
        _meta=dict(tool.meta) if tool.meta else None,
    )


def _with_note(text: str, note: str | None, gap: str = " ") -> str:
    """``text`` led by the operator's ``note`` (read-only mode), when there is one."""
    return f"{note}{gap}{text}" if note else text


def undeclared_arguments(tool: ToolDescriptor, args: Mapping[str, Any]) -> list[str]:
    """Warnings for top-level arguments the tool's schema does not declare."""
    properties = tool.input_schema.get("properties") or {}
    return [
        f"argument {key!r} is not declared by {tool.name}; its value may be ignored"
        for key in args
        if key not in properties and key != "_meta" and key not in tool.accepts
    ]


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _wire_bytes(texts: Sequence[str], structured: Mapping[str, Any]) -> int:
    """About what a result costs on the wire: the texts plus ``structuredContent``."""
    return sum(len(t.encode("utf-8")) for t in texts) + len(_dump(structured).encode("utf-8"))


def success_result(
    result: Any, warnings: Sequence[str], pointer: bool, *, max_bytes: int | None = None
) -> types.CallToolResult:
    """``structuredContent: {result, warnings?}`` plus JSON text (or a pointer).

    The first text content is always the result itself (the same JSON as
    ``structuredContent.result``, whether or not there are warnings); warnings
    follow as a second text, ``{"warnings": [...]}``, for clients that read
    only text. With ``max_bytes``, a result larger than that on the wire is
    replaced by an ``isError`` result saying so: an agent can narrow the call,
    but cannot do anything useful with a response its client drops or truncates.
    """
    structured: dict[str, Any] = {"result": result}
    if warnings:
        structured["warnings"] = list(warnings)
    texts = [POINTER_TEXT if pointer else _dump(result)]
    if warnings and not pointer:
        texts.append(_dump({"warnings": list(warnings)}))
    if max_bytes is not None:
        size = _wire_bytes(texts, structured)
        if size > max_bytes:
            return error_result(
                {
                    "error": f"the result is about {size} bytes, over the {max_bytes}-byte "
                    "response cap (PM_MCP_MAX_RESPONSE_BYTES)",
                    "code": USAGE_CODE,
                    "hint": "narrow the request: pass limit, fields or filters "
                    "(status, type, tag), or read one item at a time",
                    "details": {"bytes": size, "limit": max_bytes},
                },
                pointer,
            )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=t) for t in texts],
        structured_content=structured,
    )


def error_result(body: Mapping[str, Any], pointer: bool) -> types.CallToolResult:
    """A tool failure as an ``isError`` result carrying the pm exit code."""
    structured = {"result": None, **body}
    text = POINTER_TEXT if pointer else _dump(dict(body))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=True,
    )
