"""The core-tier tools: read, orient, author and run the claim/close loop.

Each tool is a schema builder and a handler. Handlers read and check their
arguments, call the tracker SDK (``ctx.tracker``) and return what it returns;
every rule about items lives in the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import declared as d
from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import CommandSpec, RequestContext, ToolContext, WorkspaceContracts
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.model.fields import canonical_key

Schema = dict[str, Any]

#: Options of pm_update that steer the update rather than set a field.
_UPDATE_CONTROLS = (
    "unset",
    "add_tags",
    "remove_tags",
    "add_tag",
    "remove_tag",
    "remove_deps",
    "allow_unresolved_deps",
    "reason",
    "message",
)
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


get_schema, get_request_schema, get_accepts = d.builders("get", ["id"])


def get_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """``{item}``: the full item record, body included (``fields``/``at`` as ``pm get``)."""
    from pm_core.commands.read import get

    return get(ctx.tracker, **d.values("get", args))


# ------------------------------------------------------------------ pm_search


search_schema, search_request_schema, search_accepts = d.builders("search", ["query"])


def search_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Ranked hits over every item, with every ``pm search`` filter."""
    from pm_core.commands.read import search

    values = d.values("search", args)
    if not " ".join(values["query"]).strip():
        raise UsageError("missing required argument 'query'", hint="pass query")
    if (values["limit"] or 0) > 500:
        raise UsageError(f"limit must be at most 500, got {values['limit']}")
    return search(ctx.tracker, **values)


# ------------------------------------------------------------------ pm_create / pm_update


def _bag_schema(command: str, c: WorkspaceContracts, compact: bool) -> Schema:
    """``{id?, options}``: ``command``'s declared parameters in the option bag, custom fields on top."""
    props = d.properties(command, c, compact=compact, skip=("id",))
    options = s.obj(props, ["title"] if command == "create" else [], open_ended=True)
    top: dict[str, Schema] = {"options": options}
    if command == "update":
        top = {"id": s.item_id(), **top}
    schema = s.tool(top, ["options"] if command == "create" else ["id"])
    return s.with_custom_fields(schema, c, command)


def create_schema(c: WorkspaceContracts) -> Schema:
    """``{options: {title, ...every pm create option}}`` plus the custom fields declared for create."""
    return _bag_schema("create", c, False)


def update_schema(c: WorkspaceContracts) -> Schema:
    """``{id, options: {...every pm update option}}`` plus the custom fields declared for update."""
    return _bag_schema("update", c, False)


def create_request_schema(
    c: WorkspaceContracts, _commands: Mapping[str, CommandSpec], request: RequestContext
) -> Schema:
    """The compact option bag outside the ``full`` profile (the rest still accepted)."""
    return _bag_schema("create", c, d.compact_for(request))


def update_request_schema(
    c: WorkspaceContracts, _commands: Mapping[str, CommandSpec], request: RequestContext
) -> Schema:
    """The compact option bag outside the ``full`` profile (the rest still accepted)."""
    return _bag_schema("update", c, d.compact_for(request))


def bag_accepts(_c: WorkspaceContracts) -> list[str]:
    """Top level: only ``id``/``options`` and custom fields (which the schema lists)."""
    return ["id", "options"]


def create_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The creation receipt."""
    options = field_options(ctx, args, "create")
    controls = _controls(options, ("allow_unresolved_deps", "message"))
    return ctx.tracker.create(
        options,
        allow_unresolved_deps=a.flag(controls, "allow_unresolved_deps"),
        message=a.text(controls, "message"),
    )


def update_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The update receipt (closing statuses are routed through close by the SDK)."""
    item = a.required_text(args, "id")
    options = field_options(ctx, args, "update")
    controls = _controls(options, _UPDATE_CONTROLS)
    for old, new in (("add_tag", "add_tags"), ("remove_tag", "remove_tags")):
        if old in controls:
            controls[new] = a.text_list(controls, new) + a.text_list(controls, old)
    if "reason" in controls:
        options["close_reason"] = controls["reason"]
    return ctx.tracker.update(
        item,
        options,
        unset=a.text_list(controls, "unset"),
        add_tags=a.text_list(controls, "add_tags"),
        remove_tags=a.text_list(controls, "remove_tags"),
        remove_deps=a.text_list(controls, "remove_deps"),
        allow_unresolved_deps=a.flag(controls, "allow_unresolved_deps"),
        message=a.text(controls, "message"),
    )


# ------------------------------------------------------------------ lifecycle


close_schema, close_request_schema, close_accepts = d.builders("close", ["id"])
claim_schema, claim_request_schema, claim_accepts = d.builders("claim", ["id"])
release_schema, release_request_schema, release_accepts = d.builders("release", ["id"])


def close_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The close receipt with the dependents it unblocked (every ``pm close`` option)."""
    from pm_core.commands.lifecycle import close

    return close(ctx.tracker, **d.values("close", args))


def claim_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The claim lease receipt; held by another author is a conflict unless forced."""
    from pm_core.commands.lifecycle import claim

    return claim(ctx.tracker, **d.values("claim", args))


def release_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The release receipt; only the holder releases unless forced."""
    from pm_core.commands.lifecycle import release

    return release(ctx.tracker, **d.values("release", args))


# ------------------------------------------------------------------ pm_mutate


def mutate_schema(c: WorkspaceContracts) -> Schema:
    """``{mutations: [{op, id?, options}], dryRun?}``."""
    mutation = s.obj(
        {"op": s.choice(_MUTATION_OPS), "id": s.item_id(), "options": {"type": "object"}},
        ["op"],
    )
    mutations = {"type": "array", "items": mutation, "minItems": 1}
    # The CLI reads the mutations from --file or --stdin; the tool takes them as a value.
    return s.tool(
        {"mutations": mutations, **d.properties("mutate", c, compact=False)}, ["mutations"]
    )


def mutate_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """All mutations applied as one transaction, or none (``dryRun`` rolls back)."""
    raw = args.get("mutations")
    if not isinstance(raw, list) or not all(isinstance(m, Mapping) for m in raw):
        raise UsageError(
            "mutations must be a list of objects", hint='pass [{"op": "update", "id": ..., ...}]'
        )
    dry_run = d.values("mutate", args)["dry_run"]
    return ctx.tracker.mutate([dict(m) for m in raw], dry_run=dry_run)


# ------------------------------------------------------------------ pm_list


#: Spellings pm_list has always accepted for its options, beside the declared keys.
_LIST_ALIASES = {"tags": "tag", "include_terminal": "all", "includeTerminal": "all"}


def list_schema(c: WorkspaceContracts) -> Schema:
    """``{options: {...every pm list option}}``."""
    return s.tool({"options": s.obj(d.properties("list", c, compact=False))})


def list_request_schema(
    c: WorkspaceContracts, _commands: Mapping[str, CommandSpec], request: RequestContext
) -> Schema:
    """``{options}``: the compact set outside the ``full`` profile (the rest still accepted)."""
    return s.tool({"options": s.obj(d.properties("list", c, compact=d.compact_for(request)))})


def list_accepts(_c: WorkspaceContracts) -> list[str]:
    """Only ``options`` at the top level."""
    return ["options"]


def list_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Matching rows (non-terminal unless ``all``), paged; unknown options named in warnings."""
    from pm_core.commands.read import listing
    from pm_core.params import tool_keys

    options: dict[str, Any] = {}
    for key, value in a.bag(args).items():
        options[_LIST_ALIASES.get(key, key)] = value
    known = set(tool_keys(d.params("list")))
    warnings = [
        f"option {key!r} is not known to pm_list; it was ignored (known: {', '.join(sorted(known))})"
        for key in options
        if key not in known and a.snake(key) not in {a.snake(k) for k in known}
    ]
    return a.result(listing(ctx.tracker, **d.values("list", options)), warnings)
