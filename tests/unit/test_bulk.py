"""update-many / close-many (all or nothing, exit 6/7), test-all, stats, activity."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import DependencyError, UsageError
from tests.support.pm_cli import PmCli


def _new(tracker: Tracker, title: str, **fields: object) -> str:
    return str(tracker.create({"title": title, **fields})["id"])


def test_update_many_over_a_filter_with_dry_run_then_apply(tracker: Tracker) -> None:
    a = _new(tracker, "A", tags=["ui"])
    b = _new(tracker, "B", tags=["ui"])
    c = _new(tracker, "C")
    plan = tracker.update_many({"priority": 0}, filters={"tags": ["ui"]}, dry_run=True)
    assert plan["outcome"] == "effect" and [r["id"] for r in plan["rows"]] == sorted([a, b])
    assert tracker.get(a).priority == 2 and not plan["applied"]  # nothing written
    done = tracker.update_many({"priority": 0}, filters={"tags": ["ui"]})
    assert done["exit_code"] == 0 and done["updated_count"] == 2
    assert [tracker.get(i).priority for i in (a, b, c)] == [0, 0, 2]
    again = tracker.update_many({"priority": 0}, filters={"tags": ["ui"]})
    assert (again["outcome"], again["exit_code"]) == ("no_effect", 6)
    mixed = tracker.update_many({"priority": 0}, ids=[a, c])
    assert (mixed["outcome"], mixed["exit_code"], mixed["unchanged_count"]) == (
        "partial_effect",
        7,
        1,
    )


def test_a_failure_on_one_item_changes_none(tracker: Tracker) -> None:
    a = _new(tracker, "A")
    b = _new(tracker, "B")
    before = [tracker.get(i).to_record() for i in (a, b)]
    with pytest.raises(DependencyError, match="own parent"):
        # b cannot take the dependency on itself: a (first) is put back too
        tracker.update_many({"parent": b}, ids=[a, b])
    assert [tracker.get(i).to_record() for i in (a, b)] == before
    assert [e.op for e in tracker.history(a)] == ["create"]


def test_bulk_without_a_selection_is_refused(tracker: Tracker) -> None:
    _new(tracker, "A")
    with pytest.raises(UsageError, match="no items selected"):
        tracker.close_many("done")


def test_close_many_closes_into_a_status_and_counts_repeats(tracker: Tracker) -> None:
    a = _new(tracker, "A", type="Issue")
    b = _new(tracker, "B", type="Issue")
    tracker.close(b, "earlier")
    done = tracker.close_many("fixed", filters={"type": ["Issue"], "status": ["open", "closed"]})
    assert done["exit_code"] == 7 and tracker.get(a).close_reason == "fixed"
    assert tracker.get(b).close_reason == "earlier"


def test_cli_exit_codes_of_the_bulk_commands(tmp_path: Path) -> None:
    cli = PmCli.init(tmp_path)
    first = cli.create("One")
    cli.create("Two")
    result = cli("close-many", "--filter-status", "open", "--reason", "done", "--json")
    assert result.code == 0 and json.loads(result.out)["updated_count"] == 2, result
    again = cli("close-many", "--ids", first, "--reason", "done", "--json")
    assert again.code == 6 and json.loads(again.out)["outcome"] == "no_effect", again
    none = cli("update-many", "--filter-tag", "nothing-has-this", "--priority", "1", "--json")
    assert none.code == 6 and json.loads(none.out)["matched_count"] == 0, none


def test_test_all_runs_linked_tests_of_matching_items(tracker: Tracker) -> None:
    good = _new(tracker, "Good")
    bad = _new(tracker, "Bad")
    _new(tracker, "Untested")
    tracker.test_add(good, f'{sys.executable} -c "pass"')
    tracker.test_add(bad, f'{sys.executable} -c "raise SystemExit(3)"')
    tracker.test_add(bad, f'{sys.executable} -c "import time; time.sleep(30)"')
    result = tracker.test_all(timeout_seconds=1)
    assert result["summary"] == {"items": 2, "passed": 1, "failed": 2}
    runs = {r["id"]: r["runs"] for r in result["items"]}
    assert runs[bad][0]["exit_code"] == 3 and runs[bad][1]["timed_out"] is True
    assert len(result["without_tests"]) == 1
    assert len(tracker.get(good).test_runs) == 1  # recorded as test --run does


def test_stats_and_activity(tracker: Tracker) -> None:
    a = _new(tracker, "A", priority=0, type="Issue")
    _new(tracker, "B")
    tracker.claim(a)
    tracker.close(_new(tracker, "C"), "done")
    stats = tracker.stats()
    assert stats["total"] == 3 and stats["open"] == 2
    assert stats["by_status"] == {"closed": 1, "in_progress": 1, "open": 1}
    assert stats["by_type"] == {"Task": 2, "Issue": 1}
    assert stats["by_priority"]["0:critical"] == 1 and stats["by_assignee"]["tester"] == 1
    assert stats["open_age_days"]["buckets"]["under_1d"] == 2
    activity = tracker.activity(since="1h")
    rows = {r["id"]: r for r in activity["items"]}
    assert rows[a]["changes"] == 2 and rows[a]["ops"] == {"claim": 1, "create": 1}
    assert rows[a]["status"] == "in_progress" and activity["items_changed"] == 3


def test_bulk_stats_and_activity_through_pm_run(tracker: Tracker) -> None:
    from tests.support.toolhost import ToolHost, make_host

    tools = ToolHost(make_host(), tracker)
    a = _new(tracker, "A", tags=["ui"])
    envelope = tools.value(
        "pm_run",
        {"action": "update-many", "values": {"priority": 1}, "filterTag": ["ui"]},
    )
    assert envelope["updated_count"] == 1 and tracker.get(a).priority == 1
    closed = tools.value("pm_run", {"action": "close-many", "ids": [a], "reason": "done"})
    assert closed["outcome"] == "effect" and tracker.get(a).status == "closed"
    assert tools.value("pm_run", {"action": "stats"})["by_status"] == {"closed": 1}
    assert tools.value("pm_run", {"action": "activity"})["items"][0]["id"] == a
