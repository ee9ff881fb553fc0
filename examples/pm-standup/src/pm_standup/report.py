"""The stand-up reports, computed from the tracker SDK alone.

Handlers receive a :class:`~pm_core.contracts.ToolContext`; ``ctx.tracker`` is
the SDK client bound to the workspace and author of the call, whichever door
(CLI, ``pm_run``, SDK) it came through. These handlers only read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pm_core.contracts import ToolContext
    from pm_core.sdk import Item, Tracker

#: The largest page of history events the SDK returns. A window with more
#: events than this is reported with ``"complete": false``.
EVENT_PAGE = 1000

#: Item fields shown for each row of a report.
ROW_FIELDS = ("title", "status", "blocked_reason")


def _row(item: Item | Mapping[str, Any]) -> dict[str, Any]:
    """``id``, ``title``, ``status`` and, for a blocked item, why."""
    get = item.get if isinstance(item, Mapping) else item.get_field
    row = {"id": get("id"), "title": get("title"), "status": get("status")}
    if get("status") == "blocked" and get("blocked_reason"):
        row["blocked_reason"] = get("blocked_reason")
    return row


def _existing(tracker: Tracker, ids: Iterable[str]) -> dict[str, Item]:
    """The items that still exist, by id (a deleted item's events stay in history)."""
    from pm_core.sdk import PmError

    found: dict[str, Item] = {}
    for item_id in ids:
        try:
            found[item_id] = tracker.get(item_id)
        except PmError:
            continue
    return found


def standup(ctx: ToolContext, who: str | None = None, since: str = "1d") -> dict[str, Any]:
    """Stand-up for ``who`` (default: the author the tracker is bound to).

    ``in_progress`` and ``blocked``: items ``who`` holds (assignee or claim)
    in those statuses. ``done``: items ``who`` changed within ``since`` that
    are now closed or canceled. ``changed``: the other items ``who`` changed
    in that window and does not hold.
    A ``since`` the tracker cannot read is a usage error naming it.
    """
    tracker = ctx.tracker
    person = (who or "").strip() or tracker.author
    recent = tracker.events(since=since, limit=EVENT_PAGE)
    touched = dict.fromkeys(e["id"] for e in recent["events"] if e.get("author") == person)
    items = _existing(tracker, touched)
    held = tracker.list_items(
        status=["in_progress", "blocked"], assignee=person, fields=list(ROW_FIELDS)
    )["items"]
    holding = {r["id"] for r in held}
    return {
        "who": person,
        "since": recent["since"],
        "done": [_row(i) for i in items.values() if tracker.is_terminal(i)],
        "changed": [
            _row(i) for i in items.values() if not tracker.is_terminal(i) and i.id not in holding
        ],
        "in_progress": [_row(r) for r in held if r["status"] == "in_progress"],
        "blocked": [_row(r) for r in held if r["status"] == "blocked"],
        "complete": not recent["has_more"],
    }


def digest(ctx: ToolContext, since: str = "1w") -> dict[str, Any]:
    """Per author: history entries written, distinct items touched, and how many are now done."""
    tracker = ctx.tracker
    recent = tracker.events(since=since, limit=EVENT_PAGE)
    changes: dict[str, int] = {}
    touched: dict[str, set[str]] = {}
    for event in recent["events"]:
        author = str(event.get("author") or "unknown")
        changes[author] = changes.get(author, 0) + 1
        touched.setdefault(author, set()).add(str(event["id"]))
    every_id = sorted(set().union(*touched.values())) if touched else []
    items = _existing(tracker, every_id)
    done = {i for i, item in items.items() if tracker.is_terminal(item)}
    authors = [
        {
            "author": author,
            "changes": changes[author],
            "items": len(touched[author]),
            "done": len(touched[author] & done),
        }
        for author in sorted(changes, key=lambda a: (-changes[a], a))
    ]
    return {"since": recent["since"], "authors": authors, "complete": not recent["has_more"]}
