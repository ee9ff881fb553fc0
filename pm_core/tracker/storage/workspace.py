"""The tracker root on disk: finding it, its settings and its schema.

Layout, shared with the TypeScript ``pm``: ``.agents/pm/`` holding ``settings.json``,
``schema/``, one folder per item type, ``history/``, and gitignored ``locks/`` and ``runtime/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.model.errors import NotFoundError, UsageError
from pm_core.tracker.model.item import BUILTIN_TYPES, STATUSES, TERMINAL_STATUSES

if TYPE_CHECKING:
    # Imported where used: defining the contract classes costs start-up time
    # that plain reads (`pm get`, `pm list`) should not pay.
    from pm_core.contracts import FieldDecl, WorkspaceContracts

TRACKER_DIR = Path(".agents") / "pm"
FIELD_TYPES = ("string", "number", "boolean", "string_array", "array", "object")
FIELD_COMMANDS = ("create", "update", "update_many", "list", "search", "calendar", "context")

DEFAULT_SETTINGS: dict[str, Any] = {
    "version": 1,
    "id_prefix": "pm-",
    "id_token_length": 4,
    "author_default": "",
    "item_format": "toon",
    "locks": {"ttl_seconds": 1800, "wait_ms": 3000},
    "output": {"default_format": "toon"},
    "governance": {"require_close_reason": True, "ownership_enforcement": "none"},
    "claims": {"mode": "local", "remote": "origin", "lease_ttl_seconds": 7200},
    # The TypeScript pm's settings schema requires these keys (it falls back to
    # its defaults, with a warning on every command, when one is missing).
    "search": {
        "score_threshold": 0,
        "max_results": 50,
        "provider": "bm25",
        "embedding_model": "",
        "embedding_batch_size": 32,
        "scanner_max_batch_retries": 3,
    },
    "extensions": {"enabled": [], "disabled": []},
    "providers": {
        "openai": {"base_url": "", "api_key": "", "model": ""},
        "ollama": {"base_url": "", "model": ""},
    },
    "vector_store": {"qdrant": {"url": "", "api_key": ""}, "lancedb": {"path": ""}},
}

GITIGNORE_LINES = ("runtime/", "locks/")


def type_folder(name: str) -> str:
    """The folder of a built-in type: the lowercase plural."""
    lower = name.lower()
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


#: A shared empty mapping (read-only, so it can be every instance's default).
_NO_WORKFLOWS: Mapping[str, Any] = MappingProxyType({})


class TypeDef(NamedTuple):
    """An item type: its folder, aliases and default status."""

    name: str
    folder: str
    aliases: tuple[str, ...] = ()
    default_status: str = "open"
    description: str = ""


class StatusDef(NamedTuple):
    """A status and its roles (draft, active, blocked, terminal, ...)."""

    name: str
    roles: tuple[str, ...] = ()


def _default_status_defs() -> tuple[StatusDef, ...]:
    roles = {
        "draft": ("draft",),
        "open": ("active", "default_open"),
        "in_progress": ("active",),
        "blocked": ("blocked",),
        "closed": ("terminal", "terminal_done", "default_close"),
        "canceled": ("terminal", "terminal_canceled", "default_cancel"),
    }
    return tuple(StatusDef(s, roles[s]) for s in STATUSES)


class Schema(NamedTuple):
    """The workspace schema: built-in plus custom types, statuses, fields."""

    types: tuple[TypeDef, ...]
    statuses: tuple[StatusDef, ...]
    fields: tuple[FieldDecl, ...]
    workflows: Mapping[str, Any] = _NO_WORKFLOWS

    def type_by_name(self, value: str) -> TypeDef:
        """The type for a name or alias (case-insensitive); UsageError naming the choices."""
        key = value.strip().lower()
        for t in self.types:
            if t.name.lower() == key or key in (a.lower() for a in t.aliases):
                return t
        raise UsageError(
            f"unknown type {value!r}",
            hint=f"use one of: {', '.join(t.name for t in self.types)} "
            "(or add one with `pm schema add type NAME`)",
        )

    @property
    def status_names(self) -> tuple[str, ...]:
        """Every status name, in order."""
        return tuple(s.name for s in self.statuses)

    @property
    def terminal_statuses(self) -> frozenset[str]:
        """Statuses with the terminal role."""
        found = {s.name for s in self.statuses if "terminal" in s.roles}
        return frozenset(found) if found else TERMINAL_STATUSES

    def status_with_role(self, role: str, default: str) -> str:
        """The first status with ``role`` (``default_close``, ``default_cancel``, ...)."""
        return next((s.name for s in self.statuses if role in s.roles), default)

    def folders(self) -> tuple[str, ...]:
        """Every item folder, built-in and custom."""
        return tuple(dict.fromkeys(t.folder for t in self.types))

    def field(self, key: str) -> FieldDecl | None:
        """A declared custom field by key."""
        for f in self.fields:
            if f.key == key:
                return f
        return None

    def contracts(self) -> WorkspaceContracts:
        """The projection tool schemas are built from."""
        from pm_core.contracts import WorkspaceContracts

        return WorkspaceContracts(
            types=tuple(t.name for t in self.types),
            statuses=self.status_names,
            fields=self.fields,
        )


def find_root(start: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The tracker root: ``PM_PATH``, else walk up from ``start`` like git does.

    Returns the ``.agents/pm`` directory (which may not exist yet when no
    tracker is found: then the one under the git top level, or ``start``).
    """
    environ = os.environ if env is None else env
    override = environ.get("PM_PATH")
    if override:
        return Path(override).expanduser().resolve()
    here = (start or Path.cwd()).resolve()
    git_top: Path | None = None
    for folder in (here, *here.parents):
        if (folder / TRACKER_DIR / "settings.json").is_file():
            return folder / TRACKER_DIR
        if git_top is None and (folder / ".git").exists():
            git_top = folder
    return (git_top or here) / TRACKER_DIR


def require_root(root: Path) -> Path:
    """``root`` if it holds a tracker, else NotFoundError with the fix."""
    if not (root / "settings.json").is_file():
        raise NotFoundError(
            f"no tracker at {root}",
            hint="run `pm init` in the repository, or pass --path / set PM_PATH",
        )
    return root


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        # NotADirectoryError: the "root" is a file; require_root names that problem.
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"cannot read {path.name}: {exc}", hint=f"fix or restore {path} (it must be JSON)"
        ) from exc


def write_json(path: Path, value: Any) -> None:
    """Write JSON atomically (temp file, fsync, rename)."""
    from pm_core.tracker.storage.store import atomic_write

    atomic_write(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def load_settings(root: Path) -> dict[str, Any]:
    """Settings merged over the defaults (nested mappings merged key by key)."""
    raw = _read_json(root / "settings.json") or {}
    if not isinstance(raw, dict):
        raise UsageError("settings.json must hold a JSON object", hint="fix settings.json")
    return _merge(DEFAULT_SETTINGS, raw)


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _definitions(raw: Any, key: str) -> list[Mapping[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, Mapping):
        for name in ("definitions", key):
            value = raw.get(name)
            if isinstance(value, list):
                return [v for v in value if isinstance(v, Mapping)]
        return []
    if isinstance(raw, list):
        return [v for v in raw if isinstance(v, Mapping)]
    return []


def _safe_folder(folder: str, type_name: str) -> str:
    """A type folder from ``schema/types.json``: one plain name inside the tracker.

    The file is committed and may come from anyone: a folder such as
    ``../../x`` would make pm write item files outside the tracker.
    """
    bad = (
        not folder.strip()
        or folder in (".", "..")
        or folder.startswith(".")
        or any(c in folder for c in "/\\\x00")
        or folder != folder.strip()
    )
    if bad:
        raise UsageError(
            f"schema/types.json: type {type_name!r} has folder {folder!r}, which is not "
            "a plain folder name inside the tracker",
            hint="set its folder to one name such as 'bugs' (no '/', '\\' or leading '.')",
        )
    return folder


def load_schema(root: Path) -> Schema:
    """Built-in types and statuses plus the custom ones in ``schema/``."""
    schema_dir = root / "schema"
    types = [TypeDef(name, type_folder(name)) for name in BUILTIN_TYPES]
    for d in _definitions(_read_json(schema_dir / "types.json"), "types"):
        name = str(d.get("name", "")).strip()
        if not name:
            continue
        types = [t for t in types if t.name.lower() != name.lower()]
        types.append(
            TypeDef(
                name=name,
                folder=_safe_folder(str(d.get("folder") or type_folder(name)), name),
                aliases=tuple(str(a) for a in d.get("aliases", []) or []),
                default_status=str(d.get("default_status") or "open"),
                description=str(d.get("description") or ""),
            )
        )
    statuses = list(_default_status_defs())
    for d in _definitions(_read_json(schema_dir / "statuses.json"), "statuses"):
        name = str(d.get("name", "")).strip()
        if not name:
            continue
        statuses = [s for s in statuses if s.name != name]
        statuses.append(StatusDef(name, tuple(str(r) for r in d.get("roles", []) or ["active"])))
    fields: list[FieldDecl] = []
    for d in _definitions(_read_json(schema_dir / "fields.json"), "fields"):
        key = str(d.get("key", "")).strip()
        if not key:
            continue
        from pm_core.contracts import FieldDecl

        fields.append(
            FieldDecl(
                key=key,
                type=str(d.get("type") or "string"),
                commands=tuple(str(c) for c in d.get("commands", []) or []),
                description=str(d.get("description") or ""),
                value_schema=d.get("value_schema"),
            )
        )
    workflows = _read_json(schema_dir / "workflows.json") or {}
    return Schema(tuple(types), tuple(statuses), tuple(fields), workflows)


def init_workspace(root: Path, *, prefix: str | None = None) -> dict[str, Any]:
    """Create a tracker at ``root`` (idempotent). Returns what was created."""
    created: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    settings_path = root / "settings.json"
    if not settings_path.exists():
        settings = json.loads(json.dumps(DEFAULT_SETTINGS))
        if prefix:
            settings["id_prefix"] = normalize_prefix(prefix)
        write_json(settings_path, settings)
        created.append("settings.json")
    elif prefix:
        settings = _read_json(settings_path) or {}
        settings["id_prefix"] = normalize_prefix(prefix)
        write_json(settings_path, settings)
    schema_dir = root / "schema"
    schema_dir.mkdir(exist_ok=True)
    for name, key in (
        ("types", "definitions"),
        ("statuses", "definitions"),
        ("fields", "fields"),
        ("workflows", "workflows"),
    ):
        path = schema_dir / f"{name}.json"
        if not path.exists():
            write_json(path, {key: []})
            created.append(f"schema/{name}.json")
    for folder in ("history", "locks", "runtime"):
        (root / folder).mkdir(exist_ok=True)
    gitignore = root / ".gitignore"
    existing = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    missing = [line for line in GITIGNORE_LINES if line not in existing]
    if missing:
        with gitignore.open("a", encoding="utf-8") as fh:
            fh.write("".join(f"{line}\n" for line in missing))
        created.append(".gitignore")
    return {"root": str(root), "created": created}


def normalize_prefix(value: str) -> str:
    """Lowercase, punctuation to ``-``, one trailing ``-``."""
    cleaned = "".join(c if c.isalnum() else "-" for c in value.strip().lower()).strip("-")
    if not cleaned:
        raise UsageError(f"invalid id prefix {value!r}", hint="use letters or digits, e.g. pm")
    return cleaned + "-"


def is_terminal(status: str, schema: Schema) -> bool:
    """Whether ``status`` has the terminal role in ``schema``."""
    return status in schema.terminal_statuses


def tracker_relpath(root: Path, path: Path) -> str:
    """``path`` relative to the repository holding ``root`` (for messages)."""
    try:
        return str(path.relative_to(root.parent.parent))
    except ValueError:
        return str(path)
