"""Typed shapes of the entries inside an item's collections, checked with cattrs.

Only ``pm validate`` structures entries (so a malformed one is reported with field
and index); cattrs is imported only here because it is slow to import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from pm_core.tracker.model.item import DEPENDENCY_ALIASES, DEPENDENCY_KINDS, Item


def _kind(_: Any, __: Any, value: str) -> None:
    # An alias is a kind the format accepts (the TypeScript pm writes related_to).
    if value not in DEPENDENCY_KINDS and value not in DEPENDENCY_ALIASES:
        raise ValueError(f"unknown kind {value!r}")


def _nonempty(_: Any, attribute: Any, value: str) -> None:
    if not value.strip():
        raise ValueError(f"{attribute.name} is empty")


@attrs.frozen
class Dependency:
    """``dependencies[]``: a typed link to another item."""

    id: str = attrs.field(validator=_nonempty)
    kind: str = attrs.field(validator=_kind)
    created_at: str | None = None
    author: str | None = None
    source_kind: str | None = None


@attrs.frozen
class LogEntry:
    """``comments[]``, ``notes[]``, ``learnings[]``."""

    created_at: str
    author: str
    text: str
    data: Any = None


@attrs.frozen
class PathLink:
    """``files[]``, ``docs[]``."""

    path: str = attrs.field(validator=_nonempty)
    scope: str = "project"
    note: str | None = None


@attrs.frozen
class TestLink:
    """``tests[]``: a command or a path to run."""

    command: str | None = None
    path: str | None = None
    scope: str = "project"
    timeout_seconds: int | None = None
    note: str | None = None


@attrs.frozen
class TestRun:
    """``test_runs[]``: one recorded run."""

    command: str | None = None
    exit_code: int | None = None
    passed: bool | None = None


@attrs.frozen
class Reminder:
    """``reminders[]``."""

    at: str
    text: str


@attrs.frozen
class PlanStep:
    """``plan_steps[]``."""

    title: str
    id: str | None = None
    status: str = "pending"
    depends_on: list[str] = attrs.field(factory=list)


ENTRY_TYPES: Mapping[str, type] = {
    "dependencies": Dependency,
    "comments": LogEntry,
    "notes": LogEntry,
    "learnings": LogEntry,
    "files": PathLink,
    "docs": PathLink,
    "tests": TestLink,
    "test_runs": TestRun,
    "reminders": Reminder,
    "plan_steps": PlanStep,
}


def _converter() -> Any:
    import cattrs

    # Unknown nested keys are allowed (they are preserved on disk); wrong types are not.
    return cattrs.Converter(forbid_extra_keys=False)


def entry_problems(item: Item, converter: Any = None) -> list[str]:
    """Every malformed collection entry of ``item``, as ``field[index]: problem``."""
    import cattrs

    conv = converter or _converter()
    problems: list[str] = []
    for field, cls in ENTRY_TYPES.items():
        for index, entry in enumerate(getattr(item, field)):
            try:
                value = conv.structure(dict(entry), cls)
            except cattrs.BaseValidationError as exc:
                details = "; ".join(_describe(e) for e in exc.exceptions)
                problems.append(f"{field}[{index}]: {details}")
                continue
            except (TypeError, ValueError) as exc:
                problems.append(f"{field}[{index}]: {exc}")
                continue
            if isinstance(value, TestLink) and not (value.command or value.path):
                problems.append(f"{field}[{index}]: needs a command or a path")
    return problems


def _describe(exc: BaseException) -> str:
    import cattrs

    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(_describe(e) for e in exc.exceptions)
    note = getattr(exc, "__notes__", None)
    where = f" ({note[0]})" if note else ""
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}{where}"
    return f"{exc}{where}"


def checker() -> Any:
    """A converter to reuse across many items."""
    return _converter()
