"""The plugin host: the only code that touches the pluggy manager.

``build_host()`` loads the core and :data:`BUILTIN_PLUGINS`, then entry points,
each on its own, so a broken plugin is an ``error`` row. Every hook is called
through pluggy and every contribution is recorded with its plugin.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import attrs
import pluggy

from pm_core import hookspecs
from pm_core.capabilities import tier_problem
from pm_core.contracts import (
    UNDECLARED_EFFECTS,
    CommandSpec,
    PromptSpec,
    ProtocolExtension,
    RequestContext,
    ResourceProvider,
    SkillOrigin,
    ToolDescriptor,
    ToolSpec,
    WorkspaceContracts,
)

_C = TypeVar("_C")

ENTRY_POINT_GROUP = "pm.plugins"
#: The built-in plugins, named in code and registered before any entry point
#: (as datasette's ``DEFAULT_PLUGINS`` or tox's internal plugins): they load
#: with no installed metadata, and an installed plugin can never displace one.
#: ``core`` (:mod:`pm_core.defaults`) comes first, then these, in this order.
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("apps_ui", "pm_plugins.apps_ui"),
    ("profiles", "pm_plugins.profiles"),
    ("progressive_discovery", "pm_plugins.progressive_discovery"),
    ("skills_sep2640", "pm_plugins.skills_sep2640"),
    ("tracker_tools", "pm_plugins.tracker_tools"),
    ("workspace_resources", "pm_plugins.workspace_resources"),
)


class PluginLoadError(RuntimeError):
    """Raised in strict mode when a plugin fails to load or conflicts."""


@attrs.define(slots=True)
class PluginRecord:
    """What the host knows about one plugin: a row of ``pm-plugins list``."""

    name: str
    source: str
    version: str
    status: str = "ok"  # ok | blocked | error | conflict
    module: str = ""
    hooks: list[str] = attrs.field(factory=list)
    contributions: dict[str, list[str]] = attrs.field(factory=dict)
    errors: list[str] = attrs.field(factory=list)

    def contribute(self, kind: str, name: str) -> None:
        """Record that this plugin contributed ``name`` of ``kind``."""
        self.contributions.setdefault(kind, []).append(name)

    def fail(self, status: str, message: str) -> None:
        """Mark the plugin ``error``/``conflict`` with a message (error wins)."""
        if self.status != "error":
            self.status = status
        self.errors.append(message)

    def as_json(self, verbose: bool = False) -> dict[str, Any]:
        """The stable JSON row of ``pm-plugins list --json``."""
        row: dict[str, Any] = {
            "name": self.name,
            "source": self.source,
            "version": self.version,
            "status": self.status,
            "hooks": sorted(self.hooks),
            "contributes": {k: list(v) for k, v in sorted(self.contributions.items())},
        }
        if verbose:
            row["module"] = self.module
            row["error"] = "\n".join(self.errors) or None
        return row


@attrs.frozen(slots=True)
class HostSettings:
    """Environment escape hatches, read once per host."""

    disabled: frozenset[str] = frozenset()
    allowlist: frozenset[str] | None = None
    strict: bool = False
    trace: bool = False
    #: The workspace's own allowlist of installed plugins (``extensions.enabled``);
    #: ``None`` when it names none.
    workspace_allowlist: frozenset[str] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> HostSettings:
        """Read ``PM_DISABLE_PLUGINS``, ``PM_LOAD_PLUGINS``, ``PM_PLUGINS_STRICT``, ``PM_TRACE_PLUGINS``."""

        def names(value: str) -> frozenset[str]:
            return frozenset(n.strip() for n in value.split(",") if n.strip())

        allow = env.get("PM_LOAD_PLUGINS")
        return cls(
            disabled=names(env.get("PM_DISABLE_PLUGINS", "")),
            allowlist=None if allow is None else names(allow),
            strict=env.get("PM_PLUGINS_STRICT", "") not in ("", "0", "false"),
            trace=env.get("PM_TRACE_PLUGINS", "") not in ("", "0", "false"),
        )

    def with_workspace(self, root: Path | None) -> HostSettings:
        """These settings narrowed by the workspace's ``settings.json`` (see :func:`workspace_extensions`)."""
        enabled, disabled = workspace_extensions(root)
        return attrs.evolve(
            self, disabled=self.disabled | disabled, workspace_allowlist=enabled or None
        )


def workspace_extensions(root: Path | None) -> tuple[frozenset[str], frozenset[str]]:
    """``(enabled, disabled)`` plugin names of the tracker at ``root`` (its ``settings.json``).

    ``extensions.disabled`` names plugins this workspace does not load (as
    ``PM_DISABLE_PLUGINS`` does); a non-empty ``extensions.enabled`` is the only
    installed plugins it loads (as ``PM_LOAD_PLUGINS``; built-ins always load).
    Each is a list of names or one comma-separated string. A workspace can only
    narrow what is installed, never add to it; unreadable settings narrow nothing
    (the tracker reports them).
    """
    if root is None:
        return frozenset(), frozenset()
    import json

    try:
        settings = json.loads((root / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset(), frozenset()
    group = settings.get("extensions") if isinstance(settings, dict) else None
    if not isinstance(group, dict):
        return frozenset(), frozenset()

    def names(value: object) -> frozenset[str]:
        parts = value.split(",") if isinstance(value, str) else value
        if not isinstance(parts, list):
            return frozenset()
        return frozenset(p.strip() for p in parts if isinstance(p, str) and p.strip())

    return names(group.get("enabled")), names(group.get("disabled"))


def installed_plugins() -> tuple[tuple[str, str, str, str], ...]:
    """``(name, target, distribution, version)`` of every installed ``pm.plugins`` entry point.

    What a new :func:`build_host` would load: a change means a plugin was
    installed, removed or upgraded. Caches of the import system are dropped
    first, so a distribution installed since the last look is seen.
    """
    importlib.invalidate_caches()
    return _fingerprint(_entry_point_sources())


def _fingerprint(sources: Iterable[PluginSource]) -> tuple[tuple[str, str, str, str], ...]:
    return tuple(sorted((src.name, src.module, src.source, src.version) for src in sources))


@attrs.frozen(slots=True)
class PluginSource:
    """A plugin to load: from an entry point (lazy) or an object (tests)."""

    name: str
    source: str
    version: str
    load: Callable[[], object]
    module: str = ""


def _builtin_sources() -> list[PluginSource]:
    version = _version()
    return [
        PluginSource(name, "builtin", version, partial(importlib.import_module, module), module)
        for name, module in BUILTIN_PLUGINS
    ]


def _entry_point_sources() -> list[PluginSource]:
    """Installed third-party plugins, by name (the built-ins are not entry points)."""
    sources: list[PluginSource] = []
    for ep in md.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        dist_name = dist.metadata["Name"] if dist is not None else "unknown"
        version = dist.version if dist is not None else ""
        sources.append(
            PluginSource(
                name=ep.name,
                source=str(dist_name),
                version=version,
                load=ep.load,
                module=ep.value,
            )
        )
    # By name: which of two plugins claiming one name is the conflict must
    # not depend on the order distributions are found in.
    sources.sort(key=lambda s: s.name)
    return sources


class Host:
    """A typed facade over the plugin manager. Build it with :func:`build_host`."""

    def __init__(self, settings: HostSettings) -> None:
        self.settings = settings
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self._tools: dict[str, tuple[str, ToolSpec]] | None = None
        self._commands: dict[str, tuple[str, CommandSpec]] | None = None
        self._providers: list[tuple[str, ResourceProvider]] | None = None
        self._prompts: dict[str, tuple[str, PromptSpec]] | None = None
        self._extensions: list[tuple[str, ProtocolExtension]] | None = None
        #: The installed entry points this host was built from (:func:`installed_plugins`).
        self.installed: tuple[tuple[str, str, str, str], ...] = ()

    # --- loading -----------------------------------------------------------

    def load(self, sources: Iterable[PluginSource]) -> None:
        """Load and register each source on its own; failures become rows."""
        builtin_names = {s.name for s in sources if s.source == "builtin"}
        for src in sources:
            record = PluginRecord(src.name, src.source, src.version, module=src.module)
            self.records[src.name] = record
            # The allowlists filter installed third-party plugins; built-ins and
            # plugins handed to build_host() by the embedding program always load.
            installed = src.source not in ("builtin", "local")
            if src.name in self.settings.disabled or (
                installed
                and any(
                    allowed is not None and src.name not in allowed
                    for allowed in (self.settings.allowlist, self.settings.workspace_allowlist)
                )
            ):
                record.status = "blocked"
                continue
            if src.source != "builtin" and src.name in builtin_names:
                record.fail("conflict", f"plugin name {src.name!r} is taken by a built-in")
                continue
            try:
                plugin = src.load()
                self._pm.register(plugin, name=src.name)
            except Exception as exc:
                record.fail("error", "".join(traceback.format_exception_only(exc)).strip())
                if self.settings.strict:
                    raise PluginLoadError(f"plugin {src.name!r} failed to load: {exc}") from exc
                continue
            if not record.module and isinstance(plugin, ModuleType):
                record.module = plugin.__name__
            record.hooks = [
                h.name for h in self._pm.get_hookcallers(plugin) or [] if h.name.startswith("pm_")
            ]
        self._check_unknown_hooks()
        if self.settings.trace:
            self._pm.trace.root.setwriter(lambda s: sys.stderr.write(s))
            self._pm.enable_tracing()

    def _check_unknown_hooks(self) -> None:
        """A hook implementation without a spec (a misspelt name) makes its plugin an ``error``.

        pluggy's ``check_pending()`` stops at the first one; this records every
        offender so ``pm-plugins list`` can show them all.
        """
        for name, caller in vars(self._pm.hook).items():
            if name.startswith("_") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if impl.optionalhook:
                    continue
                message = f"hook {name!r} is not a pm hook (misspelt? see pm_core.hookspecs)"
                self._record(impl.plugin_name).fail("error", message)
                if self.settings.strict:
                    raise PluginLoadError(f"plugin {impl.plugin_name!r}: {message}")

    # --- collection hooks: called through pluggy, once per plugin --------------

    def _collect(self, hook_name: str, contract: type[_C], **kwargs: Any) -> list[tuple[str, _C]]:
        """Call a collection hook once per plugin, each call through pluggy.

        A subset hook caller holding only one plugin's implementations runs
        them as pluggy defines, that plugin's wrappers included, so an
        exception or a result that is not a sequence of ``contract`` is that
        plugin's ``error`` row and drops only its contributions to this hook.
        """
        caller = getattr(self._pm.hook, hook_name)
        out: list[tuple[str, _C]] = []
        # Registration order (built-ins first, then installed plugins by name):
        # on a name clash the first contribution stays, so an installed plugin
        # can never displace a built-in command, tool or prompt.
        for plugin, name in _implementers(caller):
            if self.settings.trace:
                sys.stderr.write(f"pm-plugins: calling {hook_name} on {name}\n")
            others = [p for p in self._pm.get_plugins() if p is not plugin]
            try:
                results = self._pm.subset_hook_caller(hook_name, others)(**kwargs)
                items = _contributions(results, contract)
            except Exception as exc:
                self._record(name).fail("error", f"{hook_name}: {exc!r}")
                if self.settings.strict:
                    raise PluginLoadError(f"plugin {name!r} failed in {hook_name}: {exc}") from exc
                continue
            out.extend((name, item) for item in items)
        return out

    def _record(self, name: str) -> PluginRecord:
        if name not in self.records:
            self.records[name] = PluginRecord(name, "local", "")
        return self.records[name]

    def _conflict(self, kind: str, name: str, owner: str, loser: str) -> None:
        message = f"{kind} {name!r} is already provided by {owner!r}; this one was dropped"
        self._record(loser).fail("conflict", message)
        if self.settings.strict:
            raise PluginLoadError(f"plugin {loser!r}: {message}")

    def commands(self) -> dict[str, CommandSpec]:
        """Every command by name (built-in and extension), conflicts dropped."""
        if self._commands is None:
            found: dict[str, tuple[str, CommandSpec]] = {}
            for plugin, spec in self._collect("pm_register_commands", CommandSpec):
                if spec.name in found:
                    self._conflict("command", spec.name, found[spec.name][0], plugin)
                    continue
                problem = tier_problem(spec.tier, spec.family)
                if problem is not None:
                    # Unreachable from every profile, or a family no projection knows.
                    message = f"command {spec.name!r}: {problem}; the command was dropped"
                    self._record(plugin).fail("error", message)
                    if self.settings.strict:
                        raise PluginLoadError(f"plugin {plugin!r}: {message}")
                    continue
                found[spec.name] = (plugin, spec)
                self._record(plugin).contribute("commands", f"{spec.name} ({spec.tier})")
            self._commands = found
        return {name: spec for name, (_, spec) in self._commands.items()}

    def command_owner(self, name: str) -> str | None:
        """The plugin that contributed command ``name``."""
        self.commands()
        assert self._commands is not None
        entry = self._commands.get(name)
        return entry[0] if entry else None

    def tools(self) -> dict[str, ToolSpec]:
        """Every tool by name, conflicts dropped."""
        if self._tools is None:
            found: dict[str, tuple[str, ToolSpec]] = {}
            for plugin, spec in self._collect("pm_register_tools", ToolSpec):
                if spec.name in found:
                    self._conflict("tool", spec.name, found[spec.name][0], plugin)
                    continue
                found[spec.name] = (plugin, spec)
                self._record(plugin).contribute("tools", spec.name)
            self._tools = found
        return {name: spec for name, (_, spec) in self._tools.items()}

    def resource_providers(self) -> list[ResourceProvider]:
        """Every resource provider."""
        if self._providers is None:
            self._providers = self._collect("pm_resource_providers", ResourceProvider)
            for plugin, provider in self._providers:
                self._record(plugin).contribute("resources", provider.prefix)
        return [p for _, p in self._providers]

    def prompts(self) -> dict[str, PromptSpec]:
        """Every prompt by name, conflicts dropped."""
        if self._prompts is None:
            found: dict[str, tuple[str, PromptSpec]] = {}
            for plugin, spec in self._collect("pm_register_prompts", PromptSpec):
                if spec.name in found:
                    self._conflict("prompt", spec.name, found[spec.name][0], plugin)
                    continue
                found[spec.name] = (plugin, spec)
                self._record(plugin).contribute("prompts", spec.name)
            self._prompts = found
        return {name: spec for name, (_, spec) in self._prompts.items()}

    def protocol_extensions(self) -> list[ProtocolExtension]:
        """Every protocol extension."""
        if self._extensions is None:
            self._extensions = self._collect("pm_protocol_extensions", ProtocolExtension)
            for plugin, ext in self._extensions:
                self._record(plugin).contribute("protocol_extensions", ext.identifier)
        return [e for _, e in self._extensions]

    def skill_origins(self, workspace: Path | None) -> list[SkillOrigin]:
        """Every skill origin for ``workspace``."""
        found = self._collect("pm_skill_origins", SkillOrigin, workspace=workspace)
        for plugin, origin in found:
            names = self._record(plugin).contributions.setdefault("skill_origins", [])
            if origin.name not in names:
                names.append(origin.name)
        return [o for _, o in found]

    def describe_contributions(self, workspace: Path | None = None) -> None:
        """Run every collection hook once so records list all contributions."""
        self.commands()
        self.tools()
        self.resource_providers()
        self.prompts()
        self.protocol_extensions()
        self.skill_origins(workspace)

    # --- per-request hooks --------------------------------------------------

    def catalog(
        self, contracts: WorkspaceContracts, request: RequestContext | None = None
    ) -> list[ToolDescriptor]:
        """Every tool projected for the workspace (and, when given, the request)."""
        commands = self.commands()
        reachable = commands
        if request is not None and request.withheld_commands:
            reachable = {n: c for n, c in commands.items() if n not in request.withheld_commands}
        out: list[ToolDescriptor] = []
        tools = self.tools()
        assert self._tools is not None  # filled by self.tools()
        for name, spec in tools.items():
            command = commands.get(spec.command)
            tier = command.tier if command else "full"
            family = command.family if command else spec.family
            refine = spec.request_schema
            try:
                schema = (
                    refine(contracts, reachable, request)
                    if refine is not None and request is not None
                    else spec.input_schema(contracts)
                )
                output = spec.output_schema(contracts) if spec.output_schema else None
            except Exception as exc:
                # One broken schema builder drops its tool, not the whole list.
                owner = self._tools[name][0]
                message = f"schema of tool {name!r} failed: {exc!r}"
                if message not in self._record(owner).errors:
                    self._record(owner).fail("error", message)
                if self.settings.strict:
                    raise PluginLoadError(f"plugin {owner!r}: {message}") from exc
                continue
            out.append(
                ToolDescriptor(
                    name=spec.name,
                    description=spec.description,
                    input_schema=schema,
                    command=spec.command,
                    tier=tier,
                    family=family,
                    accepts=tuple(spec.accepts(contracts)) if spec.accepts else (),
                    output_schema=output,
                    title=(command.title if command else "") or spec.name,
                    effects=(command.effects if command else None) or UNDECLARED_EFFECTS,
                )
            )
        out.sort(key=lambda d: d.name)
        return out

    def select_tools(
        self, catalog: Sequence[ToolDescriptor], request: RequestContext, purpose: str
    ) -> list[ToolDescriptor]:
        """The tools this request may list or call (``purpose``)."""
        result = self._pm.hook.pm_select_tools(
            catalog=catalog, request=request, purpose=purpose, commands=self.commands()
        )
        return list(catalog if result is None else result)

    def decorate_tools(
        self, tools: Sequence[ToolDescriptor], request: RequestContext
    ) -> list[ToolDescriptor]:
        """Listed tools with per-request ``_meta`` added by decorators."""
        result = self._pm.hook.pm_decorate_tools(tools=tools, request=request)
        return list(tools if result is None else result)


def build_host(
    env: Mapping[str, str] | None = None,
    *,
    plugins: Sequence[tuple[str, object]] = (),
    entry_points: bool = True,
    workspace: Path | None = None,
) -> Host:
    """Build a host: entry-point plugins (built-in and installed), plus ``plugins``.

    ``plugins`` are extra ``(name, object)`` pairs registered as local plugins;
    tests use them through :mod:`pm_core.testing`. ``workspace`` (a tracker
    root) narrows the installed plugins by its ``extensions`` settings
    (:func:`workspace_extensions`).
    """
    settings = HostSettings.from_env(os.environ if env is None else env).with_workspace(workspace)
    host = Host(settings)
    sources: list[PluginSource] = []
    from pm_core import defaults  # the core's own default hook implementations

    sources.append(PluginSource("core", "builtin", _version(), lambda: defaults))
    if entry_points:
        sources.extend(_builtin_sources())
        installed = _entry_point_sources()
        host.installed = _fingerprint(installed)
        sources.extend(installed)
    for name, obj in plugins:
        sources.append(PluginSource(name, "local", "", _constant(obj)))
    host.load(sources)
    return host


def _implementers(caller: pluggy.HookCaller) -> list[tuple[object, str]]:
    """The plugins implementing a hook, each once, in registration order."""
    seen: dict[str, object] = {}
    for impl in caller.get_hookimpls():
        seen.setdefault(impl.plugin_name, impl.plugin)
    return [(plugin, name) for name, plugin in seen.items()]


def _contributions(results: object, contract: type[_C]) -> list[_C]:
    """The ``contract`` objects of one plugin's call; a TypeError names a bad shape.

    pluggy hands back a list with one result per implementation; a wrapper
    may replace it, so its shape is checked here rather than trusted.
    """
    kind = contract.__name__
    if not isinstance(results, list):
        raise TypeError(
            f"the hook call returned a {type(results).__name__}, not the list of results "
            "a wrapper receives from its yield"
        )
    items: list[_C] = []
    for result in results:
        if isinstance(result, str | bytes | Mapping) or not isinstance(result, Iterable):
            raise TypeError(f"an implementation returned a {type(result).__name__}, not {kind}s")
        for item in result:
            if not isinstance(item, contract):
                raise TypeError(f"an implementation returned a {type(item).__name__} among {kind}s")
            items.append(item)
    return items


def _constant(obj: object) -> Callable[[], object]:
    return lambda: obj


def _version() -> str:
    from pm_core import __version__

    return __version__
