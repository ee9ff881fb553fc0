"""The session focus: one item an agent or person is centred on.

Focus is session state, not tracker history: it lives in
``runtime/session.json`` (gitignored) as ``{"focus": "<id>"}`` and other keys
in that file are kept as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.errors import NotFoundError

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

SESSION_FILE = "session.json"


def _session_path(tracker: Tracker) -> Path:
    return tracker.store.runtime_dir / SESSION_FILE


def _read_session(tracker: Tracker) -> dict[str, Any]:
    try:
        data = json.loads(_session_path(tracker).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        # A missing or damaged cache is rebuildable state: start empty.
        return {}
    return data if isinstance(data, dict) else {}


def _write_session(tracker: Tracker, data: dict[str, Any]) -> None:
    from pm_core.tracker.storage.workspace import write_json

    write_json(_session_path(tracker), data)


def focus_id(tracker: Tracker) -> str | None:
    """The focused id, if one is set and the item still exists."""
    value = _read_session(tracker).get("focus")
    if not isinstance(value, str) or not value:
        return None
    return value if tracker.exists(value) else None


def get_focus(tracker: Tracker) -> dict[str, Any]:
    """``{focus: id|None, item?: {id,title,type,status}, stale?: id}``."""
    raw = _read_session(tracker).get("focus")
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
    data = _read_session(tracker)
    previous = data.get("focus")
    data["focus"] = target
    _write_session(tracker, data)
    result = get_focus(tracker)
    result["previous"] = previous if isinstance(previous, str) else None
    return result


def clear_focus(tracker: Tracker) -> dict[str, Any]:
    """Forget the focus (no effect when none is set)."""
    data = _read_session(tracker)
    previous = data.pop("focus", None)
    if previous is not None:
        _write_session(tracker, data)
    return {"focus": None, "previous": previous if isinstance(previous, str) else None}
