"""Plans: step lifecycle, derived plan status, dependency gating, decisions, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import DependencyError, NoEffectError, NotFoundError, UsageError
from pm_core.tracker.ops.plan import (
    plan_add_step,
    plan_create,
    plan_decision,
    plan_show,
    plan_step,
    validate_steps,
)
from tests.support.trackers import add, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def test_plan_is_created_with_numbered_pending_steps(t: Tracker) -> None:
    receipt = plan_create(t, "Ship search", ["index", "rank", "docs"])
    shown = plan_show(t, receipt["id"])
    assert shown["plan"]["plan_status"] == "draft"
    assert [(s["id"], s["title"], s["status"]) for s in shown["steps"]] == [
        ("s1", "index", "pending"),
        ("s2", "rank", "pending"),
        ("s3", "docs", "pending"),
    ]
    assert shown["validation"] == {"ok": True, "problems": []}
    assert t.get(receipt["id"]).type == "Plan"


def test_step_lifecycle_drives_plan_status_to_completed(t: Tracker) -> None:
    plan = plan_create(t, "Two steps", ["one", "two"])["id"]
    assert plan_step(t, plan, "s1", "in_progress")["plan_status"] == "active"
    assert plan_step(t, plan, "1", "done")["plan_status"] == "active"
    assert plan_step(t, plan, "two", "skipped")["plan_status"] == "completed"
    ops = [e.op for e in t.history(plan)]
    assert ops == ["create", "plan_step", "plan_step", "plan_step"]


def test_a_step_cannot_start_before_its_dependencies_finish(t: Tracker) -> None:
    plan = plan_create(t, "Ordered", ["build"])["id"]
    added = plan_add_step(t, plan, "release", depends_on=["s1"])
    assert added["step"] == "s2"
    with pytest.raises(DependencyError, match="waits on s1"):
        plan_step(t, plan, "s2", "in_progress")
    plan_step(t, plan, "s1", "done")
    plan_step(t, plan, "s2", "done")
    assert plan_show(t, plan)["next_step"] is None


def test_step_can_be_inserted_after_another(t: Tracker) -> None:
    plan = plan_create(t, "Insert", ["first", "last"])["id"]
    plan_add_step(t, plan, "middle", after="s1", note="found late")
    steps = plan_show(t, plan)["steps"]
    assert [s["title"] for s in steps] == ["first", "middle", "last"]
    assert steps[1] == {"id": "s3", "title": "middle", "status": "pending", "note": "found late"}


def test_decisions_are_recorded_with_author_and_time(t: Tracker) -> None:
    plan = plan_create(t, "Decide", [])["id"]
    assert plan_decision(t, plan, "Use SQLite FTS5")["decisions"] == 1
    (decision,) = plan_show(t, plan)["decisions"]
    assert decision["author"] == "alice" and decision["text"] == "Use SQLite FTS5"
    assert decision["created_at"].endswith("Z")
    with pytest.raises(UsageError, match="empty decision"):
        plan_decision(t, plan, "  ")


def test_plan_operations_refuse_items_that_are_not_plans(t: Tracker) -> None:
    task = add(t, "A task")
    with pytest.raises(UsageError, match="not a Plan"):
        plan_show(t, task)
    with pytest.raises(UsageError, match="not a Plan"):
        plan_step(t, task, "s1", "done")


def test_bad_step_references_and_statuses_are_named(t: Tracker) -> None:
    plan = plan_create(t, "Refs", ["only"])["id"]
    with pytest.raises(NotFoundError, match="no step 's9'"):
        plan_step(t, plan, "s9", "done")
    with pytest.raises(UsageError, match="unknown step status"):
        plan_step(t, plan, "s1", "finished-ish")
    plan_step(t, plan, "s1", "done")
    with pytest.raises(NoEffectError):
        plan_step(t, plan, "s1", "done")
    with pytest.raises(UsageError, match="empty title"):
        plan_create(t, "Bad", ["ok", " "])


def test_validation_reports_broken_step_graphs() -> None:
    problems = validate_steps(
        [
            {"id": "s1", "title": "a", "status": "done", "depends_on": ["s2"]},
            {"id": "s2", "title": "b", "status": "pending", "depends_on": ["s1"]},
            {"id": "s2", "title": "c", "status": "weird", "depends_on": ["s7"]},
        ]
    )
    assert "step id s2 is used twice" in problems
    assert "step s1 is done but its dependency s2 is not" in problems
    assert "step s2 depends on unknown step s7" in problems
    assert any("unknown status 'weird'" in p for p in problems)
    assert any(p.startswith("steps depend on each other in a cycle") for p in problems)
