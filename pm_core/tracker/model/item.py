"""The item model: every field of the on-disk format, in its canonical order.

Custom fields and unknown keys live in ``extra`` and are written back where they
were; nested entries stay plain mappings so unknown nested keys survive too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

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


#: Item attributes in constructor order (``Item(*values)`` rebuilds an item). The
#: read index stores items as these values in this order: reordering them means
#: a new index schema version.
ITEM_FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "description",
    "type",
    "status",
    "priority",
    "tags",
    "created_at",
    "updated_at",
    "assignee",
    "claim_principal",
    "claim_expires_at",
    "author",
    "closed_at",
    "completed_at",
    "close_reason",
    "duplicate_of",
    "resolution",
    "expected_result",
    "actual_result",
    "deadline",
    "estimated_minutes",
    "acceptance_criteria",
    "definition_of_ready",
    "order",
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
    "design",
    "external_ref",
    "type_options",
    "pm_format_version",
    "reporter",
    "severity",
    "environment",
    "repro_steps",
    "affected_version",
    "fixed_version",
    "component",
    "regression",
    "customer_impact",
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
    "plan_status",
    "plan_steps",
    "plan_decisions",
    "plan_validation",
    "body",
    "extra",
    "extra_after",
)


class Item:
    """One work item. Field names and order follow the on-disk format.

    A plain slotted class rather than attrs: every ``pm`` command builds items,
    and importing attrs with its generated classes would slow every start.
    Equality covers every field but ``extra_after``.
    """

    __slots__ = ITEM_FIELDS

    def __init__(
        self,
        id: str,
        title: str,
        description: str = "",
        type: str = "Task",
        status: str = "open",
        priority: int = 2,
        tags: list[str] | None = None,
        created_at: str = "",
        updated_at: str = "",
        assignee: str | None = None,
        claim_principal: str | None = None,
        claim_expires_at: str | None = None,
        author: str | None = None,
        closed_at: str | None = None,
        completed_at: str | None = None,
        close_reason: str | None = None,
        duplicate_of: str | None = None,
        resolution: str | None = None,
        expected_result: str | None = None,
        actual_result: str | None = None,
        deadline: str | None = None,
        estimated_minutes: int | None = None,
        acceptance_criteria: str | None = None,
        definition_of_ready: str | None = None,
        order: int | None = None,
        goal: str | None = None,
        objective: str | None = None,
        value: str | None = None,
        impact: str | None = None,
        outcome: str | None = None,
        why_now: str | None = None,
        parent: str | None = None,
        reviewer: str | None = None,
        risk: str | None = None,
        confidence: int | str | None = None,
        sprint: str | None = None,
        release: str | None = None,
        blocked_by: str | None = None,
        blocked_reason: str | None = None,
        unblock_note: str | None = None,
        design: str | None = None,
        external_ref: str | None = None,
        type_options: Any = None,
        pm_format_version: Any = None,
        reporter: str | None = None,
        severity: str | None = None,
        environment: str | None = None,
        repro_steps: str | None = None,
        affected_version: str | None = None,
        fixed_version: str | None = None,
        component: str | None = None,
        regression: bool | None = None,
        customer_impact: str | None = None,
        dependencies: list[Entry] | None = None,
        comments: list[Entry] | None = None,
        notes: list[Entry] | None = None,
        learnings: list[Entry] | None = None,
        files: list[Entry] | None = None,
        docs: list[Entry] | None = None,
        tests: list[Entry] | None = None,
        test_runs: list[Entry] | None = None,
        reminders: list[Entry] | None = None,
        events: list[Entry] | None = None,
        plan_status: str | None = None,
        plan_steps: list[Entry] | None = None,
        plan_decisions: list[Entry] | None = None,
        plan_validation: Any = None,
        body: str = "",
        extra: dict[str, Any] | None = None,
        extra_after: dict[str, str | None] | None = None,
    ) -> None:
        self.id: str = id
        self.title: str = title
        self.description: str = description
        self.type: str = type
        self.status: str = status
        self.priority: int = priority
        self.tags: list[str] = [] if tags is None else tags
        self.created_at: str = created_at
        self.updated_at: str = updated_at
        self.assignee: str | None = assignee
        self.claim_principal: str | None = claim_principal
        self.claim_expires_at: str | None = claim_expires_at
        self.author: str | None = author
        self.closed_at: str | None = closed_at
        self.completed_at: str | None = completed_at
        self.close_reason: str | None = close_reason
        self.duplicate_of: str | None = duplicate_of
        self.resolution: str | None = resolution
        self.expected_result: str | None = expected_result
        self.actual_result: str | None = actual_result
        self.deadline: str | None = deadline
        self.estimated_minutes: int | None = estimated_minutes
        self.acceptance_criteria: str | None = acceptance_criteria
        self.definition_of_ready: str | None = definition_of_ready
        self.order: int | None = order
        self.goal: str | None = goal
        self.objective: str | None = objective
        self.value: str | None = value
        self.impact: str | None = impact
        self.outcome: str | None = outcome
        self.why_now: str | None = why_now
        self.parent: str | None = parent
        self.reviewer: str | None = reviewer
        self.risk: str | None = risk
        self.confidence: int | str | None = confidence
        self.sprint: str | None = sprint
        self.release: str | None = release
        self.blocked_by: str | None = blocked_by
        self.blocked_reason: str | None = blocked_reason
        self.unblock_note: str | None = unblock_note
        self.design: str | None = design
        self.external_ref: str | None = external_ref
        self.type_options: Any = type_options
        self.pm_format_version: Any = pm_format_version
        self.reporter: str | None = reporter
        self.severity: str | None = severity
        self.environment: str | None = environment
        self.repro_steps: str | None = repro_steps
        self.affected_version: str | None = affected_version
        self.fixed_version: str | None = fixed_version
        self.component: str | None = component
        self.regression: bool | None = regression
        self.customer_impact: str | None = customer_impact
        self.dependencies: list[Entry] = [] if dependencies is None else dependencies
        self.comments: list[Entry] = [] if comments is None else comments
        self.notes: list[Entry] = [] if notes is None else notes
        self.learnings: list[Entry] = [] if learnings is None else learnings
        self.files: list[Entry] = [] if files is None else files
        self.docs: list[Entry] = [] if docs is None else docs
        self.tests: list[Entry] = [] if tests is None else tests
        self.test_runs: list[Entry] = [] if test_runs is None else test_runs
        self.reminders: list[Entry] = [] if reminders is None else reminders
        self.events: list[Entry] = [] if events is None else events
        self.plan_status: str | None = plan_status
        self.plan_steps: list[Entry] = [] if plan_steps is None else plan_steps
        self.plan_decisions: list[Entry] = [] if plan_decisions is None else plan_decisions
        self.plan_validation: Any = plan_validation
        self.body: str = body
        # Custom and unknown keys, in file order, and for each of them the key
        # it followed in the file (None: first).
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.extra_after: dict[str, str | None] = {} if extra_after is None else extra_after

    __hash__ = None  # type: ignore[assignment]  # mutable: compared by value, never hashed

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _COMPARED)
        return f"Item({shown})"

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
        """The current epoch's :func:`~pm_core.tracker.model.itemhash.item_hash` of this item."""
        return document_hash({"metadata": self.metadata(), "body": self.body})

    def copy(self) -> Item:
        """A deep copy (safe to mutate)."""
        return item_from_record(json.loads(json.dumps(self.to_record())))


REQUIRED_ALWAYS: frozenset[str] = frozenset(
    {"id", "title", "description", "type", "status", "priority", "tags", "created_at", "updated_at"}
)


#: The fields equality and repr cover: all but where extra keys were placed.
_COMPARED: tuple[str, ...] = tuple(name for name in ITEM_FIELDS if name != "extra_after")


def _is_unset(key: str, value: Any) -> bool:
    if key in REQUIRED_ALWAYS:
        return False
    if value is None:
        return True
    return key in COLLECTION_FIELDS and not value


def document_hash(document: Mapping[str, Any]) -> str:
    """The hash a new history entry records for a ``{metadata, body}`` document.

    :func:`pm_core.tracker.model.itemhash.item_hash` in the current epoch
    (``item_hash_version: 2``, the TypeScript pm's canonical form).
    """
    from pm_core.tracker.model.itemhash import item_hash

    return item_hash(document)


#: Known fields holding text; a number or boolean the file holds there is kept
#: as its text. Every other field keeps the value the file holds (lists and
#: integers are checked in :func:`item_from_record`).
_TEXT_FIELDS: frozenset[str] = frozenset(
    name for name, kind in Item.__init__.__annotations__.items() if kind in ("str", "str | None")
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
    """Canonical status for a name or alias; raises ValueError naming the choices.

    A status the schema declares wins over an alias of the same spelling (a
    custom ``wontfix`` status is itself, not ``canceled``).
    """
    key = value.strip().lower().replace(" ", "_")
    allowed = list(statuses)
    if key not in allowed:
        key = STATUS_ALIASES.get(key, key)
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
