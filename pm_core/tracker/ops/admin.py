"""Workspace administration: settings, schema, the machine contract, events.

Settings and schema changes are atomic under the ``_workspace`` lock and recorded
in ``history/_workspace.jsonl`` like item changes.
"""

from __future__ import annotations

import heapq
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import format_iso, now_iso, parse_iso
from pm_core.tracker.model.errors import ConflictError, NoEffectError, NotFoundError, UsageError
from pm_core.tracker.model.item import (
    BUILTIN_TYPES,
    COLLECTION_FIELDS,
    DEPENDENCY_ALIASES,
    DEPENDENCY_KINDS,
    FIELD_ORDER,
    KNOWN_FIELDS,
    PRIORITY_NAMES,
    REQUIRED_ALWAYS,
)
from pm_core.tracker.storage import history as hist
from pm_core.tracker.storage.locks import item_lock
from pm_core.tracker.storage.workspace import (
    DEFAULT_SETTINGS,
    FIELD_COMMANDS,
    FIELD_TYPES,
    normalize_prefix,
    type_folder,
    write_json,
)

if TYPE_CHECKING:
    from pm_core.contracts import CommandSpec
    from pm_core.tracker.api import Tracker

WORKSPACE_HISTORY = hist.WORKSPACE_STREAM
_KEY_PART = re.compile(r"^[A-Za-z0-9_-]+$")
_TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_LOWER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_FOLDER = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
RESERVED_FOLDERS = frozenset(
    {"schema", "history", "locks", "runtime", "search", "extensions", "checkpoints"}
)
STATUS_ROLES = (
    "draft",
    "active",
    "blocked",
    "terminal",
    "terminal_done",
    "terminal_canceled",
    "default_open",
    "default_close",
    "default_cancel",
)
EXIT_CODES: Mapping[str, int] = {
    "ok": 0,
    "generic": 1,
    "usage": 2,
    "not_found": 3,
    "conflict": 4,
    "dependency": 5,
    "no_effect": 6,
    "partial": 7,
    "mcp_usage": 64,
}
MAX_EVENTS = 1000

# ---------------------------------------------------------------- shared write path


def workspace_document(documents: dict[str, Any], created_at: str) -> dict[str, Any]:
    """The state ``history/_workspace.jsonl`` records: every governed file's JSON by path.

    The TypeScript pm's shape (an item-like document whose ``documents`` maps
    a tracker-relative path to that file's content), so either implementation
    replays, verifies and extends the other's workspace history.
    """
    return {
        "metadata": {
            "id": WORKSPACE_HISTORY,
            "title": "Workspace state",
            "description": "Audited singleton workspace document state.",
            "type": "Chore",
            "status": "open",
            "priority": 2,
            "tags": ["workspace-history"],
            "created_at": created_at,
            "updated_at": created_at,
            "documents": documents,
        },
        "body": "",
    }


def _record(tracker: Tracker, op: str, target: str, before: Any, after: Any, **extra: Any) -> None:
    history_dir = tracker.store.history_dir
    read = hist.read_history(history_dir, WORKSPACE_HISTORY)
    try:
        prior = hist.replay(read.entries) if read.entries else hist.EMPTY_DOCUMENT
    except hist.PatchError:
        prior = hist.EMPTY_DOCUMENT  # an unreplayable stream: validate names it
    raw_metadata = prior.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    raw_documents = metadata.get("documents")
    documents: dict[str, Any] = raw_documents if isinstance(raw_documents, dict) else {}
    now = now_iso()
    raw_created = metadata.get("created_at")
    created = raw_created if isinstance(raw_created, str) else now
    entry = hist.build_entry(
        ts=now,
        author=tracker.author,
        op=op,
        before=prior if read.entries else hist.EMPTY_DOCUMENT,
        after=workspace_document({**documents, target: after}, created),
        extra={"target": target, **extra},
    )
    hist.append_entry(history_dir, WORKSPACE_HISTORY, entry)


def _workspace_lock(tracker: Tracker) -> Any:
    locks = tracker.settings.get("locks", {})
    return item_lock(
        tracker.store.locks_dir,
        WORKSPACE_HISTORY,
        tracker.author,
        ttl_seconds=int(locks.get("ttl_seconds", 1800)),
        wait_ms=int(locks.get("wait_ms", 3000)),
    )


def _read_raw(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"cannot read {path.name}: {exc}", hint=f"fix {path} (it must be JSON)"
        ) from exc


# ---------------------------------------------------------------- config


def _split_key(key: str) -> list[str]:
    parts = key.strip().split(".")
    if not key.strip() or not all(_KEY_PART.match(p) for p in parts):
        raise UsageError(
            f"invalid setting key {key!r}",
            hint="use dotted names, e.g. governance.ownership_enforcement",
        )
    return parts


def _lookup(settings: Mapping[str, Any], parts: Sequence[str]) -> tuple[bool, Any]:
    current: Any = settings
    for part in parts:
        if not isinstance(current, Mapping) or part not in current:
            return False, None
        current = current[part]
    return True, current


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(value):
        full = f"{prefix}{key}"
        if isinstance(value[key], Mapping) and value[key]:
            out.update(_flatten(value[key], full + "."))
        else:
            out[full] = value[key]
    return out


def parse_value(raw: Any) -> Any:
    """A setting value: JSON when it parses (``true``, ``5``, ``[..]``), else the text."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _check_setting(key: str, value: Any) -> Any:
    """Validate known settings; returns the value to store."""

    def need(ok: bool, expected: str) -> None:
        if not ok:
            raise UsageError(f"{key} expects {expected}, got {value!r}")

    is_int = isinstance(value, int) and not isinstance(value, bool)
    if key == "id_prefix":
        need(isinstance(value, str), "a prefix such as pm")
        return normalize_prefix(str(value))
    if key == "id_token_length":
        need(is_int and 4 <= value <= 12, "an integer from 4 to 12")
    elif key == "item_format":
        need(value == "toon", '"toon" (the only format this version writes)')
    elif key == "governance.ownership_enforcement":
        need(value in ("none", "warn", "strict"), "none, warn or strict")
    elif key == "governance.require_close_reason":
        need(isinstance(value, bool), "true or false")
    elif key in ("locks.ttl_seconds", "locks.wait_ms", "search.max_results"):
        need(is_int and value > 0, "a positive integer")
    elif key == "search.score_threshold":
        need(isinstance(value, int | float) and not isinstance(value, bool), "a number")
    elif key == "output.default_format":
        need(value in ("toon", "json"), "toon or json")
    return value


def config_get(tracker: Tracker, key: str) -> dict[str, Any]:
    """One setting (defaults included) and where it comes from."""
    parts = _split_key(key)
    found, value = _lookup(tracker.settings, parts)
    if not found:
        raise NotFoundError(f"no setting {key!r}", hint="`pm config list` shows every setting")
    in_file, _ = _lookup(_read_raw(tracker.root / "settings.json", {}), parts)
    return {"key": key, "value": value, "source": "settings.json" if in_file else "default"}


def config_list(tracker: Tracker) -> dict[str, Any]:
    """Every setting as dotted keys, and which of them the file overrides."""
    raw = _read_raw(tracker.root / "settings.json", {})
    return {
        "values": _flatten(tracker.settings),
        "overrides": sorted(_flatten(raw if isinstance(raw, Mapping) else {})),
    }


def config_set(tracker: Tracker, key: str, value: Any) -> dict[str, Any]:
    """Set one setting (value parsed as JSON when it parses); recorded in workspace history."""

    parts = _split_key(key)
    path = tracker.root / "settings.json"
    _refuse_unknown_key(key, _read_raw(path, {}))
    stored = _check_setting(key, parse_value(value))
    with _workspace_lock(tracker):
        before = _read_raw(path, {})
        after = json.loads(json.dumps(before))
        node = after
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UsageError(
                    f"{part} in {key} is not a group of settings", hint="pick another key"
                )
            node = child
        previous = node.get(parts[-1])
        if parts[-1] in node and previous == stored:
            raise NoEffectError(f"{key} is already {stored!r}", warning="noop_config_unchanged")
        node[parts[-1]] = stored
        write_json(path, after)
        _record(tracker, "config_set", "settings.json", before, after, key=key)
    tracker.reload()
    return {"key": key, "value": stored, "previous": previous}


#: Settings read by pm that ``DEFAULT_SETTINGS`` does not spell out.
EXTRA_SETTING_KEYS = ("index.enabled", "index.verify", "search.tuning")
#: Groups whose keys are free (extension configuration, per-field search weights).
OPEN_SETTING_GROUPS = ("extensions.", "search.tuning.")


def known_setting_keys(raw: Any) -> list[str]:
    """Every key ``config set`` accepts: built-in, read by pm, or already in settings.json."""

    keys = set(_flatten(DEFAULT_SETTINGS)) | set(EXTRA_SETTING_KEYS)
    if isinstance(raw, Mapping):
        keys |= set(_flatten(raw))
    return sorted(keys)


def _refuse_unknown_key(key: str, raw: Any) -> None:
    """A misspelt key would be written and never read: refuse it, naming the known keys."""
    known = known_setting_keys(raw)
    if key in known or key.startswith(OPEN_SETTING_GROUPS):
        return
    import difflib

    close = difflib.get_close_matches(key, known, n=3, cutoff=0.75)
    raise UsageError(
        f"unknown setting {key!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""),
        hint="known keys: " + ", ".join(known) + "; extension settings go under extensions.NAME",
    )


def config_unset(tracker: Tracker, key: str) -> dict[str, Any]:
    """Remove a setting from the file (its default applies again)."""

    parts = _split_key(key)
    path = tracker.root / "settings.json"
    with _workspace_lock(tracker):
        before = _read_raw(path, {})
        after = json.loads(json.dumps(before))
        found, previous = _lookup(after, parts)
        if not found:
            raise NoEffectError(f"{key} is not set in settings.json", warning="noop_config_unset")
        node = after
        for part in parts[:-1]:
            node = node[part]
        del node[parts[-1]]
        write_json(path, after)
        _record(tracker, "config_unset", "settings.json", before, after, key=key)
    tracker.reload()
    return {"key": key, "previous": previous}


# ---------------------------------------------------------------- schema


def schema_list(tracker: Tracker) -> dict[str, Any]:
    """Types, statuses (with roles), custom fields and workflows."""

    schema = tracker.schema
    return {
        "types": [
            {
                "name": t.name,
                "folder": t.folder,
                "aliases": list(t.aliases),
                "default_status": t.default_status,
                "builtin": t.name in BUILTIN_TYPES,
            }
            for t in schema.types
        ],
        "statuses": [
            {"name": s.name, "roles": list(s.roles), "terminal": "terminal" in s.roles}
            for s in schema.statuses
        ],
        "fields": [
            {
                "key": f.key,
                "type": f.type,
                "commands": list(f.commands),
                "description": f.description,
            }
            for f in schema.fields
        ],
        "workflows": dict(schema.workflows),
    }


def schema_add(tracker: Tracker, kind: str, name: str, **options: Any) -> dict[str, Any]:
    """Add a ``type``, ``status`` or ``field`` to the workspace schema."""
    adders: dict[str, Callable[..., dict[str, Any]]] = {
        "type": schema_add_type,
        "status": schema_add_status,
        "field": schema_add_field,
    }
    if kind not in adders:
        raise UsageError(
            f"cannot add {kind!r} to the schema: it takes a type, status or field",
            hint="pm schema add type|status|field NAME",
        )
    return adders[kind](tracker, name, **options)


def _append_definition(
    tracker: Tracker, file: str, list_key: str, definition: dict[str, Any]
) -> None:
    path = tracker.root / "schema" / file
    with _workspace_lock(tracker):
        before = _read_raw(path, {list_key: []})
        after = json.loads(json.dumps(before))
        if isinstance(after, list):
            after.append(definition)
        else:
            if not isinstance(after, dict):
                raise UsageError(
                    f"schema/{file} must hold a JSON object", hint=f"fix schema/{file}"
                )
            key = next(
                (k for k in ("definitions", list_key) if isinstance(after.get(k), list)), list_key
            )
            after.setdefault(key, []).append(definition)
        write_json(path, after)
        _record(
            tracker,
            "schema_add",
            f"schema/{file}",
            before,
            after,
            name=definition.get("name") or definition.get("key"),
        )
    tracker.reload()


def schema_add_type(
    tracker: Tracker,
    name: str,
    *,
    folder: str | None = None,
    aliases: Sequence[str] = (),
    default_status: str = "open",
    description: str = "",
) -> dict[str, Any]:
    """Add an item type (its folder defaults to the lowercase plural)."""

    clean = name.strip()
    if not _TYPE_NAME.match(clean):
        raise UsageError(
            f"invalid type name {name!r}", hint="use letters, digits and _, starting with a letter"
        )
    schema = tracker.schema
    taken = {t.name.lower() for t in schema.types} | {
        a.lower() for t in schema.types for a in t.aliases
    }
    for candidate in (clean, *aliases):
        if candidate.lower() in taken:
            raise ConflictError(
                f"type name or alias {candidate!r} already exists",
                hint="`pm schema list` shows the types",
            )
    chosen = (folder or type_folder(clean)).strip()
    if not _FOLDER.match(chosen) or chosen in RESERVED_FOLDERS:
        raise UsageError(
            f"invalid folder {chosen!r}",
            hint=f"use a lowercase name other than {', '.join(sorted(RESERVED_FOLDERS))}",
        )
    if chosen in schema.folders():
        raise ConflictError(f"folder {chosen}/ is used by another type", hint="pass --folder")
    if default_status not in schema.status_names or default_status in schema.terminal_statuses:
        raise UsageError(
            f"invalid default status {default_status!r}",
            hint="use a non-terminal status such as open or draft",
        )
    definition: dict[str, Any] = {
        "name": clean,
        "folder": chosen,
        "aliases": list(aliases),
        "default_status": default_status,
    }
    if description:
        definition["description"] = description
    _append_definition(tracker, "types.json", "definitions", definition)
    return {"added": "type", **definition}


def schema_add_status(
    tracker: Tracker, name: str, *, roles: Sequence[str] = ("active",)
) -> dict[str, Any]:
    """Add a status with its roles (active, blocked, terminal, ...)."""
    clean = name.strip()
    if not _LOWER_NAME.match(clean):
        raise UsageError(
            f"invalid status name {name!r}", hint="use lowercase letters, digits and _"
        )
    if clean in tracker.schema.status_names:
        raise ConflictError(f"status {clean!r} already exists")
    chosen = list(dict.fromkeys(r.strip() for r in roles if r.strip())) or ["active"]
    bad = [r for r in chosen if r not in STATUS_ROLES]
    if bad:
        raise UsageError(
            f"unknown role(s): {', '.join(bad)}", hint=f"use: {', '.join(STATUS_ROLES)}"
        )
    if (
        any(r.startswith("terminal_") or r in ("default_close", "default_cancel") for r in chosen)
        and "terminal" not in chosen
    ):
        chosen.append("terminal")
    definition = {"name": clean, "roles": chosen}
    _append_definition(tracker, "statuses.json", "definitions", definition)
    return {"added": "status", **definition}


def schema_add_field(
    tracker: Tracker,
    name: str,
    *,
    field_type: str = "string",
    commands: Sequence[str] = ("create", "update", "list", "search"),
    description: str = "",
) -> dict[str, Any]:
    """Declare a custom field and the commands that accept it."""

    key = name.strip()
    if not _LOWER_NAME.match(key):
        raise UsageError(f"invalid field key {name!r}", hint="use lowercase letters, digits and _")
    if key in KNOWN_FIELDS:
        raise ConflictError(f"{key!r} is a built-in item field", hint="pick another key")
    if tracker.schema.field(key) is not None:
        raise ConflictError(f"field {key!r} already exists")
    if field_type not in FIELD_TYPES:
        raise UsageError(
            f"invalid field type {field_type!r}", hint=f"use one of: {', '.join(FIELD_TYPES)}"
        )
    chosen = list(dict.fromkeys(c.strip() for c in commands if c.strip()))
    bad = [c for c in chosen if c not in FIELD_COMMANDS]
    if bad:
        raise UsageError(
            f"unknown command(s) for a field: {', '.join(bad)}",
            hint=f"use any of: {', '.join(FIELD_COMMANDS)}",
        )
    definition: dict[str, Any] = {"key": key, "type": field_type, "commands": chosen}
    if description:
        definition["description"] = description
    _append_definition(tracker, "fields.json", "fields", definition)
    return {"added": "field", **definition}


# ---------------------------------------------------------------- contracts


def _command_params(command: CommandSpec, workspace: Any) -> dict[str, Any]:
    """``{"params": [...]}`` from a built-in's declaration or an extension's ParamSpecs."""
    from pm_core.params import declared, declared_subcommands, describe

    if command.builtin:
        sources = {"types": workspace.types, "statuses": workspace.statuses}
        try:
            params = declared(command.name)
        except (KeyError, ModuleNotFoundError, AttributeError):
            groups = declared_subcommands(command.name)
            if not groups:
                return {}  # no parameters declared
            return {"subcommands": {sub: describe(p, sources) for sub, p in groups.items()}}
        return {"params": describe(params, sources)}
    return {
        "params": [
            {
                "name": p.name,
                "type": p.type,
                "required": p.required,
                "repeatable": p.repeatable,
                "tool": p.name,
                **({"default": p.default} if p.default is not None else {}),
                **({"help": p.help} if p.help else {}),
            }
            for p in command.params
        ]
    }


def contracts(tracker: Tracker, *, commands: Sequence[CommandSpec] | None = None) -> dict[str, Any]:
    """The machine-readable contract: commands, item fields, schema, kinds, exit codes.

    ``commands`` defaults to the built-in table; adapters pass the host's
    registry to include extension commands. ``internal`` commands are left
    out: they are callable, never advertised.
    """
    from pm_core.capabilities import builtin_commands

    specs = [
        c
        for c in (commands if commands is not None else builtin_commands())
        if c.tier != "internal"
    ]
    schema = tracker.schema
    roles = {s.name: s.roles for s in schema.statuses}

    def with_role(role: str, default: str) -> str:
        return next((n for n, r in roles.items() if role in r), default)

    return {
        "commands": [
            {
                "name": c.name,
                "tier": c.tier,
                "family": c.family,
                "summary": c.summary,
                **_command_params(c, schema.contracts()),
            }
            for c in sorted(specs, key=lambda c: c.name)
        ],
        "item": {
            "fields": [*FIELD_ORDER, "body"],
            "required": [f for f in FIELD_ORDER if f in REQUIRED_ALWAYS],
            "collections": list(COLLECTION_FIELDS),
        },
        "types": [t.name for t in schema.types],
        "statuses": [{"name": n, "roles": list(r)} for n, r in roles.items()],
        "open_status": with_role("default_open", "open"),
        "close_status": with_role("default_close", "closed"),
        "canceled_status": with_role("default_cancel", "canceled"),
        "custom_fields": [
            {"key": f.key, "type": f.type, "commands": list(f.commands)} for f in schema.fields
        ],
        "dependency_kinds": list(DEPENDENCY_KINDS),
        "dependency_aliases": dict(sorted(DEPENDENCY_ALIASES.items())),
        "priorities": {str(n): name for n, name in enumerate(PRIORITY_NAMES)},
        "exit_codes": dict(EXIT_CODES),
    }


# ---------------------------------------------------------------- events

_AGO = re.compile(r"^-?(\d+)([mhdw])$")


def _since(value: str | None) -> datetime | None:
    if not value:
        return None
    text = value.strip()
    match = _AGO.match(text)
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        span = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[unit]
        return datetime.now(UTC) - timedelta(**{span: amount})
    try:
        return parse_iso(text)
    except ValueError:
        raise UsageError(
            f"invalid since {value!r}", hint="use an ISO time or an age such as 2h, 3d, 1w"
        ) from None


def _changed_fields(patch: Any) -> list[str]:
    names: list[str] = []
    for op in patch if isinstance(patch, list) else []:
        parts = str(op.get("path", "")).split("/") if isinstance(op, dict) else []
        name = (
            parts[2]
            if len(parts) > 2 and parts[1] in ("metadata", "content")
            else parts[1]
            if len(parts) > 1
            else ""
        )
        if name and name not in names:
            names.append(name)
    return names[:10]


def _history_lines(
    history_dir: Path, since: datetime | None
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    try:
        names = sorted(n for n in os.listdir(history_dir) if n.endswith(".jsonl"))
    except FileNotFoundError:
        return
    floor = since.timestamp() - 1 if since else None
    for name in names:
        path = history_dir / name
        try:
            # A file last appended before `since` has nothing newer: skip reading it.
            if floor is not None and path.stat().st_mtime < floor:
                continue
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        for number, line in enumerate(text.splitlines()):
            try:
                raw = json.loads(line)
            except ValueError:
                continue
            if isinstance(raw, dict) and "ts" in raw:
                yield name[: -len(".jsonl")], number, raw


def events(tracker: Tracker, since: str | None = None, limit: int = 100) -> dict[str, Any]:
    """Recent history entries across every item and the workspace, newest first."""
    if isinstance(limit, bool) or not 1 <= limit <= MAX_EVENTS:
        raise UsageError(f"limit must be 1-{MAX_EVENTS}, got {limit}")
    moment = _since(since)
    total = 0
    rows: list[tuple[float, str, int, dict[str, Any]]] = []
    for item_id, number, raw in _history_lines(tracker.store.history_dir, moment):
        try:
            stamp = parse_iso(str(raw["ts"])).timestamp()
        except ValueError:
            continue
        if moment is not None and stamp < moment.timestamp():
            continue
        total += 1
        event: dict[str, Any] = {
            "ts": raw["ts"],
            "id": item_id,
            "op": raw.get("op"),
            "author": raw.get("author"),
        }
        if raw.get("message"):
            event["message"] = raw["message"]
        if raw.get("op") != "create":
            event["fields"] = _changed_fields(raw.get("patch"))
        for key in ("target", "key", "name"):
            if raw.get(key):
                event[key] = raw[key]
        rows.append((stamp, item_id, number, event))
    newest = heapq.nlargest(limit, rows, key=lambda r: (r[0], r[1], r[2]))
    return {
        "events": [r[3] for r in newest],
        "total": total,
        "returned": len(newest),
        "has_more": total > len(newest),
        "since": format_iso(moment) if moment else None,
    }
