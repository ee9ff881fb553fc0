"""Shrunk listings and SQL-scored keyword search: the index answers as the file scan does.

``pm list`` under a token ceiling builds only the rows that can be shown and
sizes the rest in SQL; ``pm search`` (keyword) scores in SQL and loads only
the best documents. Both must print exactly what the scan of every file gives
(``PM_INDEX=off``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pm_core.cli.output import render, render_head
from pm_core.tracker.api import Tracker
from pm_core.tracker.query.listing import list_head, list_items
from pm_core.tracker.query.search import search

#: A ceiling small enough that the 300-item workspace's listings shrink.
SETTINGS = {"output": {"token_budgets": {"read": {"toon": 400, "json": 500}}}}


def _tracker(root: Path, index: bool) -> Tracker:
    return Tracker(root, author="alice", env={} if index else {"PM_INDEX": "off"})


def _printed(tracker: Tracker, fmt: str, **options: Any) -> str:
    def fetch(head: int | None) -> Any:
        if head is None:
            return list_items(tracker, **options), None
        return list_head(tracker, head, **options)

    return render_head(fetch, fmt=fmt, settings=SETTINGS)


def _awkward_titles(root: Path) -> None:
    """Titles whose JSON needs escapes or multi-byte characters, and an assignee."""
    tracker = _tracker(root, index=True)
    ids = [row["id"] for row in list_items(tracker, limit=4)["items"]]
    titles = ['Quote " and \\ back', "Tab\there, bell \x07", "Ünïcödé ✓ 🚀", "x" * 300]
    for item_id, title in zip(ids, titles, strict=True):
        tracker.update(item_id, {"title": title, "assignee": "zoë"})


LISTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "all": {"include_terminal": True},
    "offset": {"offset": 7},
    "by title": {"sort": "title"},
    "by priority, tag": {"sort": "priority", "tags": ["api"], "include_terminal": True},
    "fields": {"fields": ["title", "status"]},
}


@pytest.mark.parametrize("fmt", ["toon", "json"])
@pytest.mark.parametrize("name", sorted(LISTINGS))
def test_shrunk_listing_prints_the_same_with_and_without_index(
    root: Path, name: str, fmt: str
) -> None:
    _awkward_titles(root)
    options = LISTINGS[name]
    indexed = _printed(_tracker(root, index=True), fmt, **options)
    scanned = _printed(_tracker(root, index=False), fmt, **options)
    whole = render(list_items(_tracker(root, index=False), **options), fmt=fmt, settings=SETTINGS)
    assert indexed == scanned == whole
    assert "token_budget" in indexed, "the listing should have been shrunk"


def test_shrunk_listing_counts_every_row_it_did_not_build(root: Path) -> None:
    _awkward_titles(root)
    tracker = _tracker(root, index=True)
    result, elided = list_head(tracker, 20, include_terminal=True)
    assert elided is not None and len(result["items"]) == 20
    whole = list_items(tracker, include_terminal=True)
    assert result["returned"] == whole["returned"] == 20 + elided.rows
    rest = whole["items"][20:]
    size = len(json.dumps(rest, ensure_ascii=False, separators=(",", ":")).encode()) - 1
    assert elided == ("items", len(rest), size)
    assert result == {**whole, "items": whole["items"][:20]}


QUERIES: dict[str, dict[str, Any]] = {
    "broad": {"query": "deadlock replica"},
    "repeated word": {"query": "replica replica cache"},
    "and": {"query": "cache index", "match": "and"},
    "exact": {"query": "cache index", "match": "exact"},
    "min score": {"query": "deadlock replica", "min_score": 2.0},  # BM25F: above the median
    "short token": {"query": "db api", "limit": 7},
    "open only": {"query": "rollback", "include_terminal": False, "filters": {"type": "Task"}},
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_keyword_search_scored_in_sql_equals_file_scan(root: Path, name: str) -> None:
    options = dict(QUERIES[name])
    query = options.pop("query")
    indexed = search(_tracker(root, index=True), query, **options)
    scanned = search(_tracker(root, index=False), query, **options)
    assert indexed == scanned
    assert indexed["hits"], "the query should find something"


def test_keyword_search_with_fractional_weights_and_pins_equals_file_scan(root: Path) -> None:
    settings = root / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("search", {})["tuning"] = {"title": 0.3, "body": 1.7, "comments": 0.1}
    settings.write_text(json.dumps(data))
    pinned = list_items(_tracker(root, index=False), limit=1)["items"][0]["id"]
    query = f"{pinned} deadlock replica cache"
    indexed = search(_tracker(root, index=True), query)
    scanned = search(_tracker(root, index=False), query)
    assert indexed == scanned
    assert indexed["hits"][0]["id"] == pinned
    assert any(hit["score"] != int(hit["score"]) for hit in indexed["hits"])
