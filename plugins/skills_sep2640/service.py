"""The wire-facing side of skills: per-request negotiation, registry cache, results.

One service answers the extension methods and ``skill://`` reads from one cached
registry, so a listed digest is always the digest of what is read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
from pm_plugins.skills_sep2640.capability import (
    MCP_PROTOCOL_VERSIONS,
    SKILLS_EXTENSION_ID,
    SKILLS_SERVER_CAPABILITY,
    SkillsText,
    assert_skills_capability,
    final_meta,
    missing_capability_error,
    negotiated,
    skills_text,
)
from pm_plugins.skills_sep2640.limits import DEFAULT_LIST_LIMIT

from pm_core.contracts import (
    INVALID_PARAMS,
    ExtensionMethod,
    ProtocolError,
    ProtocolExtension,
    RequestContext,
    ResourceContent,
    ResourceEntry,
    ResourceProvider,
    ServeContext,
    SkillOrigin,
)

if TYPE_CHECKING:
    from pm_plugins.skills_sep2640.registry import SkillRegistry

#: SEP-2549 hints on 2026-07-28 results. The registry never changes while the
#: server runs, so the hint only bounds how long a client trusts its copy.
TTL_MS: Final = 60_000
#: Workspace skills may be private to the repository; never share caches.
CACHE_SCOPE: Final = "private"

OriginKey = tuple[tuple[str, str, str, int, str], ...]


def origin_key(origins: Sequence[SkillOrigin]) -> OriginKey:
    """The cache key of a set of origins: kind, root, precedence, name, version."""
    return tuple((o.kind, str(o.root), o.name, o.precedence, o.version) for o in origins)


class RegistryCache:
    """Registries by set of origins, loaded once each, least recently used out.

    Loading holds a lock, so concurrent first requests load once.
    """

    def __init__(self, maxsize: int = 8) -> None:
        self._maxsize = maxsize
        self._entries: OrderedDict[OriginKey, SkillRegistry] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0

    def get(self, origins: Sequence[SkillOrigin]) -> SkillRegistry:
        """The registry for ``origins``, loading it on first use only."""
        key = origin_key(origins)
        with self._lock:
            registry = self._entries.get(key)
            if registry is None:
                # Imported on first use: YAML parsing and hashing are only
                # needed once a client actually asks for skills.
                from pm_plugins.skills_sep2640.registry import SkillRegistry

                registry = SkillRegistry.load(origins)
                self.loads += 1
                self._entries[key] = registry
                while len(self._entries) > self._maxsize:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
            return registry


def _optional_str(params: Mapping[str, Any], field: str) -> str | None:
    value = params.get(field)
    if value is None or isinstance(value, str):
        return value
    raise ProtocolError(INVALID_PARAMS, f"Parameter {field!r} must be a string.", {"field": field})


def _required_str(params: Mapping[str, Any], field: str) -> str:
    value = params.get(field)
    if isinstance(value, str) and value:
        return value
    raise ProtocolError(
        INVALID_PARAMS, f"Parameter {field!r} is required and must be a string.", {"field": field}
    )


def _with_era(request: RequestContext, result: dict[str, Any]) -> dict[str, Any]:
    if request.era == "modern":
        result["resultType"] = "complete"
        result["ttlMs"] = TTL_MS
        result["cacheScope"] = CACHE_SCOPE
    return result


def _final_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A skill entry as the Final text has it: prefixed ``_meta``, Final compatibility."""
    meta = dict(entry.get("_meta") or {})
    meta["compatibility"] = {
        "extension": SKILLS_EXTENSION_ID,
        "status": "final",
        "mcpProtocolVersions": list(MCP_PROTOCOL_VERSIONS),
    }
    return {**entry, "_meta": final_meta(meta)}


def _as_text(text: SkillsText, result: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a draft-shaped result for the Final text (a no-op for the draft)."""
    if text == "draft":
        return result
    if "skills" in result:
        result["skills"] = [_final_entry(e) for e in result["skills"]]
    if "skill" in result:
        result["skill"] = _final_entry(result["skill"])
    if "resources" in result:
        result["resources"] = [
            {**r, "_meta": final_meta(r["_meta"])} if r.get("_meta") else r
            for r in result["resources"]
        ]
    return result


def _params(params: object) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ProtocolError(INVALID_PARAMS, "Params must be an object.", {"field": "params"})
    return params


class SkillsService:
    """The ``skills/*`` methods and the ``skill://`` resource provider."""

    def __init__(self, cache: RegistryCache | None = None) -> None:
        self.cache = cache if cache is not None else RegistryCache()

    def registry(self, ctx: ServeContext) -> SkillRegistry:
        """The registry for the origins the host collected."""
        return self.cache.get(tuple(ctx.skill_origins()))

    # --- extension methods ---------------------------------------------------

    def skills_list(self, ctx: ServeContext, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """``skills/list {cursor?, limit?}``."""
        text = assert_skills_capability(ctx.request)
        args = _params(params)
        limit = args.get("limit")
        if limit is None:
            limit = DEFAULT_LIST_LIMIT
        result = self.registry(ctx).list(_optional_str(args, "cursor"), limit)
        return _with_era(ctx.request, _as_text(text, result))

    def skills_get(self, ctx: ServeContext, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """``skills/get {uri}``."""
        text = assert_skills_capability(ctx.request)
        result = self.registry(ctx).get(_required_str(_params(params), "uri"))
        return _with_era(ctx.request, _as_text(text, result))

    def directory_read(self, ctx: ServeContext, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """``resources/directory/read {uri, cursor?}`` (needs ``directoryRead``)."""
        text = assert_skills_capability(ctx.request, directory_read=True)
        args = _params(params)
        result = _as_text(
            text,
            self.registry(ctx).read_directory(
                _required_str(args, "uri"),
                _optional_str(args, "cursor"),
            ),
        )
        if ctx.request.era == "modern":
            result["resultType"] = "complete"
        return result

    # --- resources -----------------------------------------------------------

    def list_resources(self, ctx: ServeContext) -> list[ResourceEntry]:
        """Every skill file, for a request served under either text; else none."""
        text = skills_text(ctx.request)
        if text is None:
            return []
        entries = self.registry(ctx).resource_entries()
        if text == "draft":
            return entries
        return [attrs.evolve(e, meta=final_meta(e.meta)) if e.meta else e for e in entries]

    def read_resource(self, ctx: ServeContext, uri: str) -> ResourceContent:
        """One ``skill://`` file, failing closed without negotiation."""
        text = assert_skills_capability(ctx.request)
        content = self.registry(ctx).read(uri)
        if text == "final" and content.meta:
            return attrs.evolve(content, meta=final_meta(content.meta))
        return content

    # --- contributions -------------------------------------------------------

    def protocol_extension(self) -> ProtocolExtension:
        """The extension contract: identifier, advertised settings, methods."""
        return ProtocolExtension(
            identifier=SKILLS_EXTENSION_ID,
            settings=dict(SKILLS_SERVER_CAPABILITY),
            methods=(
                ExtensionMethod("skills/list", self.skills_list),
                ExtensionMethod("skills/get", self.skills_get),
                ExtensionMethod("resources/directory/read", self.directory_read),
            ),
        )

    def resource_provider(self) -> ResourceProvider:
        """The ``skill://`` provider, gated per request (draft revision or Final text)."""
        return ResourceProvider(
            prefix="skill://",
            list=self.list_resources,
            read=self.read_resource,
            gate=_gate,
            denied=_denied,
        )


def _gate(request: RequestContext) -> bool:
    return negotiated(request)


def _denied(_request: RequestContext) -> ProtocolError:
    return missing_capability_error()
