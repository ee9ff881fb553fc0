"""Tracker summaries: ``pm stats`` (counts and open-work age) and ``pm activity``.

``stats`` counts every readable item by status, type, priority and holder, and
says how old the open work is (days since ``created_at`` of each non-terminal
item: median, oldest, and buckets). ``activity`` folds the history feed of
:func:`pm_core.tracker.ops.admin.events` into one row per item that changed,
newest first: how many changes, by whom, which operations.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from statistics import median
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import parse_iso
from pm_core.tracker.model.item import PRIORITY_NAMES

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

#: Open-work age buckets: label -> upper bound in days (exclusive).
AGE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("under_1d", 1),
    ("1d_to_7d", 7),
    ("7d_to_30d", 30),
    ("30d_to_90d", 90),
    ("over_90d", float("inf")),
)


def _counts(values: list[str]) -> dict[str, int]:
    """Counts, largest first (ties by name)."""
    return dict(sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0])))


def stats(tracker: Tracker, *, now: datetime | None = None) -> dict[str, Any]:
    """Counts by status, type, priority and assignee; the age of the open work."""
    moment = now or datetime.now(UTC)
    items = tracker.items()
    open_items = [i for i in items if not tracker.is_terminal(i)]
    ages: list[float] = []
    for item in open_items:
        try:
            created = parse_iso(item.created_at)
        except (ValueError, TypeError):
            continue
        ages.append(max(0.0, (moment - created).total_seconds() / 86400))
    buckets = dict.fromkeys((label for label, _ in AGE_BUCKETS), 0)
    for age in ages:
        label = next(lbl for lbl, bound in AGE_BUCKETS if age < bound)
        buckets[label] += 1
    oldest = max(
        (i for i in open_items if i.created_at),
        key=lambda i: (-_stamp(i.created_at), i.id),
        default=None,
    )
    return {
        "total": len(items),
        "open": len(open_items),
        "terminal": len(items) - len(open_items),
        "by_status": _counts([i.status for i in items]),
        "by_type": _counts([i.type for i in items]),
        "by_priority": {
            f"{p}:{PRIORITY_NAMES[p]}": n
            for p, n in sorted(Counter(i.priority for i in items).items())
            if 0 <= p < len(PRIORITY_NAMES)
        },
        "by_assignee": _counts(
            [i.claim_principal or i.assignee or "unassigned" for i in open_items]
        ),
        "open_age_days": {
            "median": round(median(ages), 1) if ages else None,
            "max": round(max(ages), 1) if ages else None,
            "oldest": None if oldest is None else {"id": oldest.id, "title": oldest.title},
            "buckets": buckets,
        },
    }


def _stamp(text: str) -> float:
    try:
        return parse_iso(text).timestamp()
    except (ValueError, TypeError):
        return float("inf")


def activity(tracker: Tracker, *, since: str | None = "7d", limit: int = 20) -> dict[str, Any]:
    """One row per item changed since ``since`` (newest change first), at most ``limit``."""
    from pm_core.tracker.ops.admin import MAX_EVENTS, events

    feed = events(tracker, since=since, limit=MAX_EVENTS)
    rows: dict[str, dict[str, Any]] = {}
    for event in feed["events"]:  # newest first
        key = str(event["id"])
        row = rows.get(key)
        if row is None:
            row = rows[key] = {
                "id": key,
                "last_at": event["ts"],
                "last_op": event.get("op"),
                "changes": 0,
                "ops": Counter(),
                "authors": [],
            }
        row["changes"] += 1
        row["ops"][str(event.get("op"))] += 1
        author = event.get("author")
        if author and author not in row["authors"]:
            row["authors"].append(author)
    shown = list(rows.values())[:limit]
    for row in shown:
        row["ops"] = dict(sorted(row["ops"].items(), key=lambda kv: (-kv[1], kv[0])))
        try:
            item = tracker.get(row["id"])
        except Exception:  # deleted items and workspace entries have no file
            continue
        row["title"] = item.title
        row["status"] = item.status
    return {
        "since": feed["since"],
        "items": shown,
        "items_changed": len(rows),
        "events": feed["total"],
        "has_more": len(rows) > len(shown) or feed["has_more"],
    }
