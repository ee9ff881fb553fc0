"""The optional sections of ``pm context``, and its summary and agenda.

Each section is a small, capped projection of the tracker view. ``standard``
adds the orientation sections, ``deep`` the assurance ones, and ``full``
shows every section uncapped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from pm_core.tracker.model.clock import parse_iso
from pm_core.tracker.model.item import Item
from pm_core.tracker.model.order import HIGH_LEVEL_TYPES
from pm_core.tracker.query.view import TrackerView, node

STANDARD_SECTIONS: tuple[str, ...] = (
    "hierarchy",
    "activity",
    "progress",
    "recently_created",
    "unparented",
    "workload",
)
DEEP_SECTIONS: tuple[str, ...] = ("blockers", "files", "staleness", "tests")
ALL_SECTIONS: tuple[str, ...] = STANDARD_SECTIONS + DEEP_SECTIONS
#: Rows per section at each depth (``full`` is uncapped).
SECTION_CAP: dict[str, int] = {"standard": 5, "deep": 8}

Scope = set[str] | None


def sections_for(depth: str) -> list[str]:
    """The sections a depth shows."""
    if depth == "brief":
        return []
    if depth == "standard":
        return list(STANDARD_SECTIONS)
    return list(ALL_SECTIONS)


def _scoped(view: TrackerView, scope: Scope) -> list[Item]:
    items = view.item_list()
    return items if scope is None else [i for i in items if i.id in scope]


def brief_node(view: TrackerView, item_id: str) -> dict[str, Any]:
    """``{id, title, type, status}`` plus the parent when there is one."""
    out = node(view, item_id)
    parent = view.parent_of.get(item_id)
    if parent:
        out["parent"] = parent
    return out


def summary(view: TrackerView, scope: Scope) -> dict[str, Any]:
    """Counts by status and type, and the total (terminal items included)."""
    items = _scoped(view, scope)
    return {
        "total": len(items),
        "by_status": dict(sorted(Counter(i.status for i in items).items())),
        "by_type": dict(sorted(Counter(i.type for i in items).items())),
    }


def agenda(view: TrackerView, scope: Scope, now: datetime, limit: int) -> list[dict[str, Any]]:
    """Deadlines, reminders and events of open items, soonest first (overdue included)."""
    rows: list[tuple[float, str, dict[str, Any]]] = []
    for item in _scoped(view, scope):
        if view.is_terminal(item):
            continue
        moments: list[tuple[str, str, str]] = []
        if item.deadline:
            moments.append(("deadline", item.deadline, ""))
        for reminder in item.reminders:
            moments.append(
                ("reminder", str(reminder.get("at") or ""), str(reminder.get("text") or ""))
            )
        for event in item.events:
            moments.append(
                ("event", str(event.get("start_at") or ""), str(event.get("title") or ""))
            )
        for kind, when, text in moments:
            try:
                stamp = parse_iso(when).timestamp()
            except ValueError:
                continue
            entry: dict[str, Any] = {"id": item.id, "title": item.title, "kind": kind, "at": when}
            if text:
                entry["text"] = text
            if stamp < now.timestamp():
                entry["overdue"] = True
            rows.append((stamp, item.id, entry))
    rows.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in rows[:limit]]


def _cap(rows: list[Any], cap: int | None) -> list[Any]:
    return rows if cap is None else rows[:cap]


def _newest(items: Iterable[Item], key: Callable[[Item], str]) -> list[Item]:
    return sorted(items, key=lambda i: (key(i), i.id), reverse=True)


def _hierarchy(view: TrackerView, items: list[Item], cap: int | None) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if view.is_terminal(item) or item.id not in view.children:
            continue
        below = [view.by_id[c] for c in view.descendants(item.id) if c in view.by_id]
        done = sum(1 for c in below if view.is_terminal(c))
        out.append({**node(view, item.id), "done": done, "total": len(below)})
    out.sort(key=lambda r: (-(r["total"] - r["done"]), r["id"]))
    return _cap(out, cap)


def _progress(view: TrackerView, items: list[Item]) -> dict[str, Any]:
    closed = sum(1 for i in items if view.is_terminal(i) and i.status != "canceled")
    canceled = sum(1 for i in items if i.status == "canceled")
    counted = len(items) - canceled
    return {
        "total": len(items),
        "done": closed,
        "canceled": canceled,
        "open": len(items) - closed - canceled,
        "percent_done": round(100 * closed / counted, 1) if counted else 0.0,
    }


def _workload(view: TrackerView, items: list[Item]) -> dict[str, int]:
    counts: Counter[str] = Counter(
        view.holder(i) or "unassigned" for i in items if not view.is_terminal(i)
    )
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _blockers(view: TrackerView, items: list[Item], cap: int | None) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if view.is_terminal(item):
            continue
        waiting = [
            d
            for d in view.dependents.get(item.id, ())
            if d in view.by_id and not view.is_terminal(view.by_id[d])
        ]
        if waiting:
            out.append(
                {**node(view, item.id), "blocks": len(waiting), "waiting": sorted(waiting)[:5]}
            )
    out.sort(key=lambda r: (-r["blocks"], r["id"]))
    return _cap(out, cap)


def _files(items: list[Item], cap: int | None) -> list[dict[str, Any]]:
    counts: Counter[str] = Counter()
    for item in items:
        for link in [*item.files, *item.docs]:
            if link.get("path"):
                counts[str(link["path"])] += 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return _cap([{"path": p, "items": n} for p, n in ordered], cap)


def _staleness(
    view: TrackerView, items: list[Item], now: datetime, cap: int | None
) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        if view.is_terminal(item):
            continue
        try:
            age = (now - parse_iso(item.updated_at)).total_seconds() / 86400
        except ValueError:
            continue
        rows.append(
            {**node(view, item.id), "updated_at": item.updated_at, "age_days": round(age, 1)}
        )
    rows.sort(key=lambda r: (-r["age_days"], r["id"]))
    return _cap(rows, cap)


def _tests(view: TrackerView, items: list[Item], cap: int | None) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        if not item.tests:
            continue
        last = item.test_runs[-1] if item.test_runs else None
        state = "never_run" if last is None else "passed" if last.get("passed") else "failed"
        rows.append({**node(view, item.id), "tests": len(item.tests), "last_run": state})
    order = {"failed": 0, "never_run": 1, "passed": 2}
    rows.sort(key=lambda r: (order[r["last_run"]], r["id"]))
    return _cap(rows, cap)


def build(name: str, view: TrackerView, scope: Scope, now: datetime, cap: int | None) -> Any:
    """One section's content."""
    items = _scoped(view, scope)
    if name == "hierarchy":
        return _hierarchy(view, items, cap)
    if name == "activity":
        recent = _newest(items, lambda i: i.updated_at)
        return [{**node(view, i.id), "updated_at": i.updated_at} for i in _cap(recent, cap)]
    if name == "progress":
        return _progress(view, items)
    if name == "recently_created":
        recent = _newest(items, lambda i: i.created_at)
        return [{**node(view, i.id), "created_at": i.created_at} for i in _cap(recent, cap)]
    if name == "unparented":
        loose = [
            i
            for i in items
            if not view.is_terminal(i)
            and i.type not in HIGH_LEVEL_TYPES
            and i.id not in view.parent_of
        ]
        return {"count": len(loose), "items": [node(view, i.id) for i in _cap(loose, cap)]}
    if name == "workload":
        return _workload(view, items)
    if name == "blockers":
        return _blockers(view, items, cap)
    if name == "files":
        return _files(items, cap)
    if name == "staleness":
        return _staleness(view, items, now, cap)
    if name == "tests":
        return _tests(view, items, cap)
    raise KeyError(name)


def drop_sections(order: list[str], dropped: list[str]) -> Callable[[dict[str, Any], int], int]:
    """A budget step that removes the last remaining section of ``order`` (noting its name)."""

    def step(result: dict[str, Any], _excess: int) -> int:
        sections = result.get("sections")
        if not isinstance(sections, dict):
            return 0
        for name in reversed(order):
            if name in sections:
                del sections[name]
                dropped.append(name)
                return 1
        return 0

    return step
