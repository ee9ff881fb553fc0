"""pm next / pm context: readiness, containers, baseline order, signals, reasons, budgets, focus."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.clock import format_iso
from pm_core.tracker.model.errors import NotFoundError, UsageError
from pm_core.tracker.ops.focus import clear_focus, get_focus, set_focus
from pm_core.tracker.query.ranking import compute_signals, context, next_items
from pm_core.tracker.query.view import build_view
from tests.support.trackers import add, as_author, hand_edit, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def row_ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def test_single_ready_leaf_is_recommended_with_status_and_priority_reasons(t: Tracker) -> None:
    item = add(t, "Only thing", priority=1)
    result = next_items(t)
    assert result["recommended"]["id"] == item
    assert result["recommended"]["reasons"][:2] == ["status open", "priority 1 (high)"]
    assert row_ids(result["ready"]) == [item]


def test_item_with_open_blocker_is_blocked_and_names_the_blocker(t: Tracker) -> None:
    blocker = add(t, "Blocker")
    waiting = add(t, "Waiting", dependencies=[f"{blocker}:blocked_by"])
    result = next_items(t)
    assert row_ids(result["ready"]) == [blocker]
    assert row_ids(result["blocked"]) == [waiting]
    assert f"blocked by {blocker} (open)" in result["blocked"][0]["reasons"]
    assert "unblocks 1 item" in result["recommended"]["reasons"]


def test_blocks_link_on_the_blocker_blocks_the_other_item(t: Tracker) -> None:
    waiting = add(t, "Waiting")
    blocker = add(t, "Blocker", dependencies=[f"{waiting}:blocks"])
    result = next_items(t)
    assert row_ids(result["ready"]) == [blocker]
    assert row_ids(result["blocked"]) == [waiting]


def test_closing_the_blocker_makes_the_item_ready_with_blockers_cleared(t: Tracker) -> None:
    blocker = add(t, "Blocker")
    waiting = add(t, "Waiting", dependencies=[f"{blocker}:blocked_by"])
    t.close(blocker, "done")
    result = next_items(t)
    assert row_ids(result["ready"]) == [waiting]
    assert f"blockers cleared: {blocker}" in result["recommended"]["reasons"]


def test_missing_blocker_target_counts_as_unresolved(t: Tracker) -> None:
    waiting = add(t, "Waiting")
    t.add_dependency(waiting, "pm-gone", "blocked_by", allow_unresolved=True)
    result = next_items(t)
    assert row_ids(result["blocked"]) == [waiting]
    assert "blocked by pm-gone (missing)" in result["blocked"][0]["reasons"]


def test_blocked_status_without_blockers_is_blocked_and_says_how_to_fix(t: Tracker) -> None:
    stuck = add(t, "Stuck", status="blocked")
    result = next_items(t)
    assert row_ids(result["blocked"]) == [stuck]
    assert any("unblock it" in r for r in result["blocked"][0]["reasons"])


def test_containers_with_open_children_are_skipped(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    leaf = add(t, "Leaf", parent=epic)
    result = next_items(t)
    assert row_ids(result["ready"]) == [leaf]
    assert result["counts"]["containers_skipped"] == 1


def test_container_whose_children_are_all_done_ranks_after_open_leaves(t: Tracker) -> None:
    epic = add(t, "Finished epic", type="Epic", priority=0)
    child = add(t, "Child", parent=epic)
    t.close(child, "done")
    leaf = add(t, "Plain leaf", priority=4)
    hand_edit(t, epic, updated_at=format_iso(datetime(2026, 1, 1, tzinfo=UTC)))
    hand_edit(t, leaf, updated_at=format_iso(datetime(2026, 1, 1, tzinfo=UTC)))
    assert row_ids(next_items(t)["ready"]) == [leaf, epic]


def test_in_progress_ranks_before_open_and_higher_priority_first(t: Tracker) -> None:
    low = add(t, "Low", priority=3)
    high = add(t, "High", priority=1)
    started = add(t, "Started", priority=3)
    t.update(started, {"status": "in_progress"})
    stamp = format_iso(datetime(2026, 1, 1, tzinfo=UTC))
    for item in (low, high, started):
        hand_edit(t, item, updated_at=stamp)
    assert row_ids(next_items(t)["ready"]) == [started, high, low]


def test_decisions_go_to_decision_needed(t: Tracker) -> None:
    decision = add(t, "Pick a database", type="Decision")
    task = add(t, "Task")
    result = next_items(t)
    assert row_ids(result["decision_needed"]) == [decision]
    assert row_ids(result["ready"]) == [task]
    assert decision in row_ids(next_items(t, include_decisions=True)["ready"])


def test_items_claimed_by_another_author_are_held_by_others(t: Tracker) -> None:
    theirs = add(t, "Theirs", priority=0)
    mine = add(t, "Mine", priority=3)
    as_author(t, "bob").claim(theirs)
    result = next_items(t)
    assert result["recommended"]["id"] == mine
    assert row_ids(result["held_by_others"]) == [theirs]
    assert "claimed by bob" in result["held_by_others"][0]["reasons"]


def test_my_claim_lifts_an_item_with_claim_focus(t: Tracker) -> None:
    stamp = format_iso(datetime(2026, 1, 1, tzinfo=UTC))
    other = add(t, "Other", priority=2)
    claimed = add(t, "Claimed", priority=2)
    t.claim(claimed)
    t.update(claimed, {"status": "open"})  # same status rank as the other item
    for item in (other, claimed):
        hand_edit(t, item, updated_at=stamp)
    result = next_items(t)
    assert result["recommended"]["id"] == claimed
    assert "claimed by you" in result["recommended"]["reasons"]


def test_drafts_are_not_candidates(t: Tracker) -> None:
    add(t, "Idea", status="draft")
    result = next_items(t)
    assert result["recommended"] is None
    assert result["counts"]["candidates"] == 0


def test_parent_filter_limits_to_that_subtree(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    inside = add(t, "Inside", parent=epic)
    add(t, "Outside")
    assert row_ids(next_items(t, parent=epic)["ready"]) == [inside]
    with pytest.raises(NotFoundError):
        next_items(t, parent="pm-none")


def test_overdue_deadline_outranks_a_later_one(t: Tracker) -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    later = add(t, "Later", deadline=format_iso(now + timedelta(days=30)))
    overdue = add(t, "Overdue", deadline=format_iso(now - timedelta(days=1)))
    result = next_items(t, now=now)
    assert row_ids(result["ready"]) == [overdue, later]
    assert any(r.startswith("overdue since") for r in result["recommended"]["reasons"])


def test_signals_without_information_are_left_out(t: Tracker) -> None:
    add(t, "One")
    add(t, "Two")
    view = build_view(t)
    signals = compute_signals(view, view.item_list(), focus=None, now=datetime.now(UTC))
    assert "deadline_pressure" not in signals
    assert "risk_pressure" not in signals
    assert "claim_focus" not in signals
    assert {"structural", "priority_pressure", "author_affinity"} <= set(signals)


def test_next_never_exceeds_its_budget_and_names_what_it_cut(t: Tracker) -> None:
    for n in range(12):
        add(t, f"A long enough title for item number {n} to cost tokens", priority=n % 5)
    result = next_items(t, limit=10)
    cost = result["token_cost"]
    assert cost["budget"] == max(192, 10 * 128)
    assert cost["estimated_tokens"] <= cost["budget"]
    tight = next_items(t, limit=10, token_budget=300)
    assert tight["token_cost"]["estimated_tokens"] <= 300
    assert tight["omissions"] and all(o["reason"] == "token_budget" for o in tight["omissions"])
    assert tight["recommended"] is not None
    with pytest.raises(UsageError, match="too small"):
        next_items(t, token_budget=10)


# ---------------------------------------------------------------- context


def test_context_splits_high_level_and_low_level_work(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    feature = add(t, "Feature", type="Feature", parent=epic)
    leaf = add(t, "Leaf", parent=feature)
    blocked = add(t, "Blocked", dependencies=[f"{leaf}:blocked_by"])
    result = context(t)
    assert set(row_ids(result["high_level"])) == {epic, feature}
    assert row_ids(result["low_level"]) == [leaf]
    assert row_ids(result["blocked_fallback"]) == [blocked]
    assert result["summary"] == {
        "total": 4,
        "by_status": {"open": 4},
        "by_type": {"Epic": 1, "Feature": 1, "Task": 2},
    }
    assert result["sections"] == {}


def test_context_depths_add_their_sections(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    add(t, "Leaf", parent=epic)
    standard = context(t, depth="standard")["sections"]
    assert list(standard) == [
        "hierarchy",
        "activity",
        "progress",
        "recently_created",
        "unparented",
        "workload",
    ]
    assert standard["hierarchy"][0] == {
        "id": epic,
        "title": "Epic",
        "type": "Epic",
        "status": "open",
        "done": 0,
        "total": 1,
    }
    deep = context(t, depth="deep")["sections"]
    assert {"blockers", "files", "staleness", "tests"} <= set(deep)
    assert context(t, depth="full")["token_cost"]["budget"] is None
    assert list(context(t, section="workload")["sections"]) == ["workload"]


def test_context_over_budget_drops_sections_first_with_receipts(t: Tracker) -> None:
    for n in range(8):
        add(t, f"Item {n} with a title long enough to matter")
    result = context(t, depth="deep", token_budget=400)
    assert result["token_cost"]["estimated_tokens"] <= 400
    sections = result["omissions"][0]
    assert sections["what"] == "sections"
    assert sections["names"][0] == "tests"  # the deepest section goes first
    assert sections["count"] == len(sections["names"])
    assert all(o["recover"] for o in result["omissions"])
    assert result["low_level"], "at least one work row survives"


def test_context_agenda_lists_deadlines_soonest_first(t: Tracker) -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    later = add(t, "Later", deadline=format_iso(now + timedelta(days=5)))
    sooner = add(t, "Sooner", deadline=format_iso(now - timedelta(days=1)))
    agenda = context(t, now=now)["agenda"]
    assert [a["id"] for a in agenda] == [sooner, later]
    assert agenda[0]["overdue"] is True


def test_context_rejects_unknown_depth_and_section(t: Tracker) -> None:
    with pytest.raises(UsageError, match="unknown depth"):
        context(t, depth="huge")
    with pytest.raises(UsageError, match="unknown section"):
        context(t, section="gossip")


# ---------------------------------------------------------------- focus


def test_focus_is_session_state_that_shapes_context(t: Tracker) -> None:
    near = add(t, "Near")
    far = add(t, "Far")
    stamp = format_iso(datetime(2026, 1, 1, tzinfo=UTC))
    for item in (near, far):
        hand_edit(t, item, updated_at=stamp)
    assert get_focus(t) == {"focus": None}
    assert set_focus(t, near)["focus"] == near
    assert (t.root / "runtime" / "session.json").is_file()
    assert not (t.root / "history" / "_workspace.jsonl").exists()
    result = context(t)
    assert result["focus"]["id"] == near
    assert next_items(t)["recommended"]["id"] == near
    assert clear_focus(t) == {"focus": None, "previous": near}
    assert get_focus(t) == {"focus": None}


def test_focus_on_a_missing_item_is_not_found(t: Tracker) -> None:
    with pytest.raises(NotFoundError):
        set_focus(t, "pm-nope")
