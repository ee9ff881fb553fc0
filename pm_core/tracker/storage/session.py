"""Session state in ``runtime/session.json`` (gitignored): the focused item and other keys.

Focus is session state, not tracker history; keys this version does not know are kept.
Read by the query and index layers; changed through :mod:`pm_core.tracker.ops.focus`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.storage.workspace import write_json

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

SESSION_FILE = "session.json"


def session_path(tracker: Tracker) -> Path:
    """Where the session state of ``tracker`` lives."""
    return tracker.store.runtime_dir / SESSION_FILE


def read_session(tracker: Tracker) -> dict[str, Any]:
    """The session state, or empty when the file is missing or damaged."""
    try:
        data = json.loads(session_path(tracker).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        # A missing or damaged cache is rebuildable state: start empty.
        return {}
    return data if isinstance(data, dict) else {}


def write_session(tracker: Tracker, data: dict[str, Any]) -> None:
    """Replace the session file with ``data``."""
    write_json(session_path(tracker), data)


def focus_id(tracker: Tracker) -> str | None:
    """The focused id, if one is set and the item still exists."""
    value = read_session(tracker).get("focus")
    if not isinstance(value, str) or not value:
        return None
    return value if tracker.exists(value) else None
