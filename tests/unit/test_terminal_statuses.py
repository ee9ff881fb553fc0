"""A terminal status added to the schema is terminal everywhere, not an alias of ``canceled``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import UsageError


def _wontfix_tracker(repo: Path, env: dict[str, str]) -> Tracker:
    tracker = Tracker(repo / ".agents" / "pm", author="tester", env=env)
    tracker.schema_add("status", "wontfix", roles=["terminal"])
    tracker.reload()
    return tracker


@pytest.mark.parametrize("env", [{}, {"PM_INDEX": "off"}], ids=["index", "scan"])
def test_update_to_a_custom_terminal_status_closes_into_it(repo: Path, env: dict[str, str]) -> None:
    tracker = _wontfix_tracker(repo, env)
    blocker = str(tracker.create({"title": "Blocker"})["id"])
    waiting = str(
        tracker.create(
            {"title": "Waiting", "status": "blocked", "dependencies": [f"{blocker}:blocked_by"]}
        )["id"]
    )
    receipt = tracker.update(blocker, {"status": "wontfix"}, message="not needed")
    item = tracker.get(blocker)
    # close semantics: the reason and the stamps, and the dependent unblocked
    assert receipt["status"] == "wontfix" and item.status == "wontfix"
    assert item.close_reason == "not needed" and item.closed_at and item.completed_at
    assert receipt["auto_unblocked"] == [waiting]
    # list leaves it out, next recommends the unblocked dependent, validate passes
    assert [i["id"] for i in tracker.list_items()["items"]] == [waiting]
    assert tracker.next_items()["recommended"]["id"] == waiting
    assert tracker.validate()["ok"] is True
    # it stays terminal: a second close finds nothing to do, reopen works
    assert tracker.reopen(blocker)["status"] == "open"
    assert tracker.close(blocker, "again", status="wontfix")["status"] == "wontfix"


def test_close_into_a_status_that_is_not_terminal_is_refused(tracker: Tracker) -> None:
    item_id = str(tracker.create({"title": "Task"})["id"])
    with pytest.raises(UsageError, match="not a terminal status"):
        tracker.close(item_id, "done", status="in_progress")
    assert tracker.get(item_id).status == "open"


def test_a_declared_status_wins_over_the_alias_of_its_name(repo: Path) -> None:
    tracker = _wontfix_tracker(repo, {})
    item_id = str(tracker.create({"title": "Task"})["id"])
    tracker.close(item_id, "no", canceled=True)
    assert tracker.get(item_id).status == "canceled"
    tracker.reopen(item_id)
    tracker.update(item_id, {"status": "wontfix"}, message="no")
    assert tracker.get(item_id).status == "wontfix"
    listed = tracker.list_items(status="wontfix")
    assert json.dumps([i["id"] for i in listed["items"]]) == json.dumps([item_id])
