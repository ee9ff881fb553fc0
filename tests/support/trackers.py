"""Helpers for SDK unit tests: a real temporary tracker and terse item creation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pm_core.tracker.api import Tracker


def make_tracker(tmp_path: Path, author: str = "alice") -> Tracker:
    """A fresh, initialised tracker under ``tmp_path`` (the repository root)."""
    tracker = Tracker(tmp_path / ".agents" / "pm", author=author, env={})
    tracker.init()
    return tracker


def as_author(tracker: Tracker, author: str) -> Tracker:
    """The same tracker root seen by another author."""
    return Tracker(tracker.root, author=author, env={})


def add(tracker: Tracker, title: str, **fields: Any) -> str:
    """Create an item and return its id."""
    receipt = tracker.create({"title": title, **fields})
    return str(receipt["id"])


def hand_edit(tracker: Tracker, item_id: str, **fields: Any) -> None:
    """Change an item file directly, bypassing history (what a person with an editor does)."""
    item, path = tracker.store.read(item_id)
    for key, value in fields.items():
        item.set_field(key, value)
    tracker.store.write(item, path)
