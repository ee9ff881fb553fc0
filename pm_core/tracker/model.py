"""The item model: every field of the on-disk format, in its canonical order.

An :class:`Item` is an attrs class with one attribute per known field. Custom
fields (declared in ``schema/fields.json``) and keys this version does not know
live in ``extra`` and are written back where they were, never dropped. Nested
collection entries (dependencies, comments, ...) stay plain mappings so unknown
nested keys survive a round trip too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

#: Priorities 0..4 and their names.
PRIORITY_NAMES: tuple[str, ...] = ("critical", "high", "medium", "low", "minimal")

BUILTIN_TYPES: tuple[str, ...] = (
    "Epic",
    "Feature",
    "Task",
    "Chore",
    "Issue",
    "Decision",
    "Event",
    "Reminder",
    "Milestone",
    "Meeting",
    "Plan",
)

STATUSES: tuple[str, ...] = ("draft", "open", "in_progress", "blocked", "closed", "canceled")
TERMINAL_STATUSES: frozenset[str] = frozenset({"closed", "canceled"})
STATUS_ALIASES: Mapping[str, str] = {
    "in-progress": "in_progress",
    "inprogress": "in_progress",
    "doing": "in_progress",
    "active": "in_progress",
    "todo": "open",
    "new": "open",
    "done": "closed",
    "complete": "closed",
    "completed": "closed",
    "resolved": "closed",
    "cancelled": "canceled",
    "cancel": "canceled",
    "wontfix": "canceled",
}

#: Dependency kinds and the aliases canonicalised on write.
DEPENDENCY_KINDS: tuple[str, ...] = (
    "blocked_by",
    "blocks",
    "parent",
    "child",
    "related",
    "discovered_from",
    "implements",
    "incident_from",
    "recurs_from",
    "supersedes",
    "verifies",
)
DEPENDENCY_ALIASES: Mapping[str, str] = {
    "depends_on": "blocked_by",
    "child_of": "parent",
    "epic": "parent",
    "parent_child": "child",
    "task": "child",
    "related_to": "related",
}

#: The canonical key order of an item file, as the TypeScript ``pm`` writes it
#: (keys it does not know follow in name order; ``body`` is always last).
#: Matching it exactly is what lets an untouched item re-save byte for byte.
FIELD_ORDER: tuple[str, ...] = (
    "id",
    "title",
    "description",
    "type",
    "pm_format_version",
    "type_options",
    "status",
    "priority",
    "tags",
    "created_at",
    "updated_at",
    "deadline",
    "reminders",
    "events",
    "closed_at",
    "completed_at",
    "assignee",
    "claim_principal",
    "claim_expires_at",
    "author",
    "estimated_minutes",
    "acceptance_criteria",
    "design",
    "external_ref",
    "definition_of_ready",
    "order",
    # project context
    "goal",
    "objective",
    "value",
    "impact",
    "outcome",
    "why_now",
    "parent",
    "reviewer",
    "risk",
    "confidence",
    "sprint",
    "release",
    "blocked_by",
    "blocked_reason",
    "unblock_note",
    "reporter",
    "severity",
    "environment",
    "repro_steps",
    "resolution",
    "expected_result",
    "actual_result",
    "affected_version",
    "fixed_version",
    "component",
    "regression",
    "customer_impact",
    # collections
    "dependencies",
    "comments",
    "notes",
    "learnings",
    "files",
    "tests",
    "test_runs",
    "docs",
    "close_reason",
    "duplicate_of",
    # plan
    "plan_status",
    "plan_validation",
    "plan_decisions",
    "plan_steps",
)
KNOWN_FIELDS: frozenset[str] = frozenset((*FIELD_ORDER, "body"))
COLLECTION_FIELDS: tuple[str, ...] = (
    "dependencies",
    "comments",
    "notes",
    "learnings",
    "files",
    "docs",
    "tests",
    "test_runs",
    "reminders",
    "events",
    "plan_steps",
    "plan_decisions",
)
INT_FIELDS: frozenset[str] = frozenset({"priority", "estimated_minutes", "order"})
#: The ``risk`` field's levels as numbers (ranking weighs them; the read index stores them).
RISK_VALUES: Mapping[str, float] = {"low": 0.25, "medium": 0.5, "high": 0.75, "critical": 1.0}
BOOL_FIELDS: frozenset[str] = frozenset({"regression"})

Entry = dict[str, Any]


@attrs.define(slots=True, eq=True)
class Item:
    """One work item. Field names and order follow the on-disk format."""

    id: str
    title: str
    description: str = ""
    type: str = "Task"
    status: str = "open"
    priority: int = 2
    tags: list[str] = attrs.field(factory=list)
    created_at: str = ""
    updated_at: str = ""
    assignee: str | None = None
    claim_principal: str | None = None
    claim_expires_at: str | None = None
    author: str | None = None
    closed_at: str | None = None
    completed_at: str | None = None
    close_reason: str | None = None
    duplicate_of: str | None = None
    resolution: str | None = None
    expected_result: str | None = None
    actual_result: str | None = None
    deadline: str | None = None
    estimated_minutes: int | None = None
    acceptance_criteria: str | None = None
    definition_of_ready: str | None = None
    order: int | None = None
    goal: str | None = None
    objective: str | None = None
    value: str | None = None
    impact: str | None = None
    outcome: str | None = None
    why_now: str | None = None
    parent: str | None = None
    reviewer: str | None = None
    risk: str | None = None
    confidence: int | str | None = None
    sprint: str | None = None
    release: str | None = None
    blocked_by: str | None = None
    blocked_reason: str | None = None
    unblock_note: str | None = None
    design: str | None = None
    external_ref: str | None = None
    type_options: Any = None
    pm_format_version: Any = None
    reporter: str | None = None
    severity: str | None = None
    environment: str | None = None
    repro_steps: str | None = None
    affected_version: str | None = None
    fixed_version: str | None = None
    component: str | None = None
    regression: bool | None = None
    customer_impact: str | None = None
    dependencies: list[Entry] = attrs.field(factory=list)
    comments: list[Entry] = attrs.field(factory=list)
    notes: list[Entry] = attrs.field(factory=list)
    learnings: list[Entry] = attrs.field(factory=list)
    files: list[Entry] = attrs.field(factory=list)
    docs: list[Entry] = attrs.field(factory=list)
    tests: list[Entry] = attrs.field(factory=list)
    test_runs: list[Entry] = attrs.field(factory=list)
    reminders: list[Entry] = attrs.field(factory=list)
    events: list[Entry] = attrs.field(factory=list)
    plan_status: str | None = None
    plan_steps: list[Entry] = attrs.field(factory=list)
    plan_decisions: list[Entry] = attrs.field(factory=list)
    plan_validation: Any = None
    body: str = ""
    #: Custom and unknown keys, in file order, with the known key they followed.
    extra: dict[str, Any] = attrs.field(factory=dict)
    #: For each extra key, the key it followed in the file (None: first).
    extra_after: dict[str, str | None] = attrs.field(factory=dict, eq=False, repr=False)

    # ------------------------------------------------------------------ access

    def get_field(self, key: str) -> Any:
        """A field's value by on-disk key (custom fields included)."""
        if key in KNOWN_FIELDS:
            return getattr(self, key)
        return self.extra.get(key)

    def set_field(self, key: str, value: Any) -> None:
        """Set a field by on-disk key; ``None`` unsets an optional or custom field."""
        if key in KNOWN_FIELDS:
            if value is None and key in COLLECTION_FIELDS:
                value = []
            setattr(self, key, value)
        elif value is None:
            self.extra.pop(key, None)
            self.extra_after.pop(key, None)
        else:
            self.extra[key] = value

    @property
    def is_terminal(self) -> bool:
        """Closed or canceled."""
        return self.status in TERMINAL_STATUSES

    # ----------------------------------------------------------- serialisation

    def to_record(self) -> dict[str, Any]:
        """The ordered mapping written to disk: unset optionals omitted, body last."""
        out: dict[str, Any] = {}
        pending = dict(self.extra_after)
        placed: set[str] = set()

        def place_after(anchor: str | None) -> None:
            for key, after in list(pending.items()):
                if after == anchor and key in self.extra:
                    out[key] = self.extra[key]
                    placed.add(key)
                    del pending[key]
                    place_after(key)

        place_after(None)
        for key in FIELD_ORDER:
            value = getattr(self, key)
            if _is_unset(key, value):
                continue
            out[key] = value
            place_after(key)
        # Keys with no anchor (set by this program) go last in name order, as
        # the TypeScript writer orders keys it does not know.
        for key in sorted(k for k in self.extra if k not in placed):
            out[key] = self.extra[key]
        out["body"] = self.body
        return out

    def metadata(self) -> dict[str, Any]:
        """Everything but the body, as written."""
        record = self.to_record()
        record.pop("body", None)
        return record

    def content_hash(self) -> str:
        """SHA-256 hex of the canonical JSON of ``{metadata, body}``."""
        return document_hash({"metadata": self.metadata(), "body": self.body})

    def copy(self) -> Item:
        """A deep copy (safe to mutate)."""
        return item_from_record(json.loads(json.dumps(self.to_record())))


REQUIRED_ALWAYS: frozenset[str] = frozenset(
    {"id", "title", "description", "type", "status", "priority", "tags", "created_at", "updated_at"}
)


def _is_unset(key: str, value: Any) -> bool:
    if key in REQUIRED_ALWAYS:
        return False
    if value is None:
        return True
    return key in COLLECTION_FIELDS and not value


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def document_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 hex of a ``{metadata, body}`` document's canonical JSON."""
    # Imported here: reads that never hash (get, list) skip it. The builtin
    # module, where there is one: ``hashlib`` would also load OpenSSL.
    import importlib

    try:
        sha256 = importlib.import_module("_sha256").sha256
    except ImportError:  # pragma: no cover - Python 3.12 names it _sha2
        from hashlib import sha256

    return str(sha256(canonical_json(document).encode("utf-8")).hexdigest())


#: Known fields holding text; a number or boolean the file holds there is kept
#: as its text. Every other field keeps the value the file holds (lists and
#: integers are checked in :func:`item_from_record`).
_TEXT_FIELDS: frozenset[str] = frozenset(
    f.name for f in attrs.fields(Item) if str(f.type) in ("str", "str | None")
)


class ItemFormatError(ValueError):
    """An item record that cannot be an item (missing id, wrong shapes)."""


def item_from_record(record: Mapping[str, Any]) -> Item:
    """Build an :class:`Item` from a decoded file mapping, keeping unknown keys."""
    if not isinstance(record, Mapping):
        raise ItemFormatError("item file does not hold a key/value mapping")
    known: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    extra_after: dict[str, str | None] = {}
    previous: str | None = None
    for key, value in record.items():
        if key in KNOWN_FIELDS:
            known[key] = value
        else:
            extra[key] = value
            extra_after[key] = previous
        previous = key
    for required in ("id", "title"):
        if not isinstance(known.get(required), str) or not known.get(required):
            raise ItemFormatError(f"missing or empty required field '{required}'")
    for key in COLLECTION_FIELDS:
        value = known.get(key)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
            raise ItemFormatError(f"field '{key}' must be a list of objects")
        known[key] = [dict(e) for e in value]
    tags = known.get("tags")
    if tags is None:
        known["tags"] = []
    elif isinstance(tags, str):
        known["tags"] = [t for t in (s.strip() for s in tags.split(",")) if t]
    elif isinstance(tags, list):
        known["tags"] = [str(t) for t in tags]
    else:
        raise ItemFormatError("field 'tags' must be a list of strings")
    for key in INT_FIELDS:
        value = known.get(key)
        if value is not None and not isinstance(value, int):
            try:
                known[key] = int(value)
            except (TypeError, ValueError) as exc:
                raise ItemFormatError(f"field '{key}' must be an integer, got {value!r}") from exc
    for key in ("description", "body"):
        if known.get(key) is None:
            known[key] = ""
    for key in ("created_at", "updated_at"):
        if known.get(key) is None:
            known[key] = ""
    for key in _TEXT_FIELDS.intersection(known):
        value = known[key]
        if value is None or isinstance(value, str):
            continue
        if isinstance(value, dict | list):
            raise ItemFormatError(f"field '{key}' must be text, got {type(value).__name__}")
        known[key] = str(value)
    regression = known.get("regression")
    if regression is not None and not isinstance(regression, bool):
        raise ItemFormatError(f"field 'regression' must be true or false, got {regression!r}")
    item = Item(**known)
    item.extra = extra
    item.extra_after = extra_after
    return item


def normalize_status(value: str, statuses: Iterable[str] = STATUSES) -> str:
    """Canonical status for a name or alias; raises ValueError naming the choices."""
    key = value.strip().lower().replace(" ", "_")
    key = STATUS_ALIASES.get(key, key)
    allowed = list(statuses)
    if key not in allowed:
        raise ValueError(f"unknown status {value!r}; expected one of: {', '.join(allowed)}")
    return key


def normalize_priority(value: int | str) -> int:
    """Priority 0..4 from a number or a name (critical..minimal)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        text = str(value).strip().lower()
        if text in PRIORITY_NAMES:
            return PRIORITY_NAMES.index(text)
        if text.startswith("p") and text[1:].isdigit():
            text = text[1:]
        try:
            number = int(text)
        except ValueError:
            raise ValueError(
                f"invalid priority {value!r}; expected 0-4 or one of: {', '.join(PRIORITY_NAMES)}"
            ) from None
    if not 0 <= number <= 4:
        raise ValueError(f"invalid priority {value!r}; expected 0-4")
    return number


def normalize_dependency_kind(value: str) -> str:
    """Canonical dependency kind for a kind or alias."""
    key = value.strip().lower().replace("-", "_")
    key = DEPENDENCY_ALIASES.get(key, key)
    if key not in DEPENDENCY_KINDS:
        raise ValueError(
            f"unknown dependency kind {value!r}; expected one of: {', '.join(DEPENDENCY_KINDS)}"
        )
    return key


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Tags trimmed, de-duplicated and sorted."""
    return sorted({t.strip() for t in tags if t and t.strip()})
