"""The session focus: one item an agent or person is centred on; get, set and clear it.

The focus is kept in the session file (:mod:`pm_core.tracker.storage.session`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.errors import NotFoundError
from pm_core.tracker.storage.session import read_session, write_session

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


def get_focus(tracker: Tracker) -> dict[str, Any]:
    """``{focus: id|None, item?: {id,title,type,status}, stale?: id}``."""
    raw = read_session(tracker).get("focus")
    if not isinstance(raw, str) or not raw:
        return {"focus": None}
    if not tracker.exists(raw):
        return {"focus": None, "stale": raw}
    item = tracker.get(raw)
    return {
        "focus": item.id,
        "item": {"id": item.id, "title": item.title, "type": item.type, "status": item.status},
    }


def set_focus(tracker: Tracker, item_id: str) -> dict[str, Any]:
    """Focus on an existing item."""
    target = tracker.normalize_id(item_id)
    if not tracker.exists(target):
        raise NotFoundError(f"item {target} not found", hint="focus on an existing item")
    data = read_session(tracker)
    previous = data.get("focus")
    data["focus"] = target
    write_session(tracker, data)
    result = get_focus(tracker)
    result["previous"] = previous if isinstance(previous, str) else None
    return result


def clear_focus(tracker: Tracker) -> dict[str, Any]:
    """Forget the focus (no effect when none is set)."""
    data = read_session(tracker)
    previous = data.pop("focus", None)
    if previous is not None:
        write_session(tracker, data)
    return {"focus": None, "previous": previous if isinstance(previous, str) else None}
