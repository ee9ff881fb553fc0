"""The core-tier tools: read, orient, author and run the claim/close loop.

Each tool is a schema builder and a handler. Handlers read and check their
arguments, call the tracker SDK (``ctx.tracker``) and return what it returns;
every rule about items lives in the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import ToolContext, WorkspaceContracts
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.fields import canonical_key

Schema = dict[str, Any]

#: Options of pm_update that steer the update rather than set a field.
_UPDATE_CONTROLS = ("unset", "add_tags", "remove_tags", "remove_deps", "allow_unresolved_deps")
_MUTATION_OPS = (
    "create",
    "update",
    "close",
    "reopen",
    "claim",
    "release",
    "comment",
    "note",
    "learning",
    "append",
    "dep",
)


# ------------------------------------------------------------------ helpers


def field_options(ctx: ToolContext, args: Mapping[str, Any], command: str) -> dict[str, Any]:
    """The option bag with custom-field arguments moved in from the top level.

    A custom field declared for ``command`` is listed as a top-level
    property; its value belongs in the options the SDK reads. Giving the same
    field both ways with different values is ambiguous, so it is refused.
    """
    options = a.bag(args)
    for field in s.custom_fields(ctx.tracker.schema.contracts(), command):
        if field.key not in args or field.key in ("id", "options", *s.COMMON_ARGUMENTS):
            continue
        value = args[field.key]
        if field.key in options and options[field.key] != value:
            raise UsageError(
                f"custom field {field.key!r} is given twice with different values",
                hint="pass it either as a top-level argument or in options, not both",
            )
        options[field.key] = value
    return options


def _controls(options: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """Pop the steering options (any spelling) out of ``options``."""
    found: dict[str, Any] = {}
    for key in list(options):
        name = canonical_key(key)
        if name in names:
            found[name] = options.pop(key)
    return found


# ------------------------------------------------------------------ pm_get


def get_schema(_c: WorkspaceContracts) -> Schema:
    """``{id}``."""
    return s.tool({"id": s.item_id()}, ["id"])


def get_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """``{item}``: the full item record, body included."""
    return {"item": ctx.tracker.get(a.required_text(args, "id")).to_record()}


# ------------------------------------------------------------------ pm_search


def search_schema(_c: WorkspaceContracts) -> Schema:
    """``{query, mode?, match?, limit?}``."""
    from pm_core.tracker.query.search import MATCHES, MODES

    return s.tool(
        {
            "query": s.string("Words; tag:/status:/type: narrow."),
            "mode": s.choice(MODES),
            "match": s.choice(MATCHES),
            "limit": s.integer(1, 500),
        },
        ["query"],
    )


def search_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Ranked hits over every item."""
    return ctx.tracker.search(
        a.required_text(args, "query"),
        mode=a.text(args, "mode") or "keyword",
        match=a.text(args, "match") or "or",
        limit=a.integer(args, "limit", minimum=1, maximum=500) or 50,
    )


# ------------------------------------------------------------------ pm_create / pm_update


def create_schema(c: WorkspaceContracts) -> Schema:
    """``{options: {title, ...}}`` plus the custom fields declared for create."""
    options = s.obj(s.item_fields(c), ["title"], open_ended=True)
    return s.with_custom_fields(s.tool({"options": options}, ["options"]), c, "create")


def create_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The creation receipt."""
    options = field_options(ctx, args, "create")
    controls = _controls(options, ("allow_unresolved_deps",))
    return ctx.tracker.create(
        options, allow_unresolved_deps=a.flag(controls, "allow_unresolved_deps")
    )


def update_schema(c: WorkspaceContracts) -> Schema:
    """``{id, options}`` plus the custom fields declared for update."""
    fields = s.item_fields(c)
    fields.update(
        unset=s.strings(),
        addTags=s.strings(),
        removeTags=s.strings(),
        removeDeps=s.strings(),
    )
    options = s.obj(fields, open_ended=True)
    return s.with_custom_fields(
        s.tool({"id": s.item_id(), "options": options}, ["id"]), c, "update"
    )


def update_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The update receipt (closing statuses are routed through close by the SDK)."""
    item = a.required_text(args, "id")
    options = field_options(ctx, args, "update")
    controls = _controls(options, _UPDATE_CONTROLS)
    return ctx.tracker.update(
        item,
        options,
        unset=a.text_list(controls, "unset"),
        add_tags=a.text_list(controls, "add_tags"),
        remove_tags=a.text_list(controls, "remove_tags"),
        remove_deps=a.text_list(controls, "remove_deps"),
        allow_unresolved_deps=a.flag(controls, "allow_unresolved_deps"),
    )


# ------------------------------------------------------------------ lifecycle


def close_schema(_c: WorkspaceContracts) -> Schema:
    """``{id, reason, duplicateOf?}``."""
    return s.tool(
        {
            "id": s.item_id(),
            "reason": s.string("What was done, with evidence."),
            "duplicateOf": s.item_id(),
        },
        ["id"],
    )


def close_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The close receipt with the dependents it unblocked."""
    return ctx.tracker.close(
        a.required_text(args, "id"),
        a.text(args, "reason") or "",
        duplicate_of=a.text(args, "duplicateOf"),
    )


def claim_schema(_c: WorkspaceContracts) -> Schema:
    """``{id, force?, renew?, local?}``."""
    return s.tool(
        {"id": s.item_id(), "force": s.boolean(), "renew": s.boolean(), "local": s.boolean()},
        ["id"],
    )


def release_schema(_c: WorkspaceContracts) -> Schema:
    """``{id, force?, local?}``."""
    return s.tool({"id": s.item_id(), "force": s.boolean(), "local": s.boolean()}, ["id"])


def claim_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The claim lease receipt; held by another author is a conflict unless forced."""
    return ctx.tracker.claim(
        a.required_text(args, "id"),
        force=a.flag(args, "force"),
        renew=a.flag(args, "renew"),
        **_local(args),
    )


def release_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The release receipt; only the holder releases unless forced."""
    return ctx.tracker.release(
        a.required_text(args, "id"), force=a.flag(args, "force"), **_local(args)
    )


def _local(args: Mapping[str, Any]) -> dict[str, bool]:
    """``local=True`` only when asked, so the SDK's own default applies otherwise."""
    return {"local": True} if a.flag(args, "local") else {}


# ------------------------------------------------------------------ pm_mutate


def mutate_schema(_c: WorkspaceContracts) -> Schema:
    """``{mutations: [{op, id?, options}], dryRun?}``."""
    mutation = s.obj(
        {"op": s.choice(_MUTATION_OPS), "id": s.item_id(), "options": {"type": "object"}},
        ["op"],
    )
    return s.tool(
        {"mutations": {"type": "array", "items": mutation, "minItems": 1}, "dryRun": s.boolean()},
        ["mutations"],
    )


def mutate_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """All mutations applied as one transaction, or none (``dryRun`` rolls back)."""
    raw = args.get("mutations")
    if not isinstance(raw, list) or not all(isinstance(m, Mapping) for m in raw):
        raise UsageError(
            "mutations must be a list of objects", hint='pass [{"op": "update", "id": ..., ...}]'
        )
    return ctx.tracker.mutate([dict(m) for m in raw], dry_run=a.flag(args, "dryRun"))


# ------------------------------------------------------------------ pm_list


def list_schema(c: WorkspaceContracts) -> Schema:
    """``{options: {status, type, tag, assignee, parent, all, priority, fields, sort, limit, offset}}``."""
    from pm_core.tracker.query.listing import SORTS

    options = s.obj(
        {
            "status": s.choice(c.statuses),
            "type": s.choice(c.types),
            "tag": s.strings(),
            "assignee": s.string(),
            "parent": s.item_id(),
            "priority": s.priority(),
            "all": s.boolean(),
            "fields": s.strings(),
            "sort": s.choice(SORTS),
            "limit": s.integer(1),
            "offset": s.integer(0),
        }
    )
    return s.tool({"options": options})


_LIST_OPTIONS = (
    "status",
    "type",
    "tag",
    "tags",
    "assignee",
    "parent",
    "priority",
    "all",
    "include_terminal",
    "fields",
    "sort",
    "limit",
    "offset",
)


def list_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Matching rows (non-terminal unless ``all``), paged."""
    options, warnings = a.known_options(a.bag(args), _LIST_OPTIONS, "pm_list")
    tags = a.text_list(options, "tag") + a.text_list(options, "tags")
    fields = a.text_list(options, "fields")
    value = ctx.tracker.list_items(
        status=a.one_or_many(options, "status"),
        type=a.one_or_many(options, "type"),
        tags=tags,
        assignee=a.text(options, "assignee"),
        parent=a.text(options, "parent"),
        priority=options.get("priority"),
        include_terminal=a.flag(options, "all") or a.flag(options, "include_terminal"),
        fields=fields or None,
        sort=a.text(options, "sort") or "default",
        limit=a.integer(options, "limit", minimum=1),
        offset=a.integer(options, "offset", minimum=0) or 0,
    )
    return a.result(value, warnings)
