"""The merge rules, one by one: items, histories, JSON documents, markers, the fence."""

from __future__ import annotations

import json
from typing import Any

from pm_core.tracker.merge.events import merge_event_text
from pm_core.tracker.merge.install import committed_fence, fence_patterns, with_fence
from pm_core.tracker.merge.items import merge_appended_text, merge_records, union_entries
from pm_core.tracker.merge.jsondoc import merge_json
from pm_core.tracker.merge.markers import first_marker_line
from pm_core.tracker.merge.streams import merge_history_text, reanchor, split_conflict
from pm_core.tracker.storage import history as hist

BASE: dict[str, Any] = {
    "id": "pm-a1",
    "title": "t",
    "status": "open",
    "priority": 2,
    "tags": ["x"],
    "updated_at": "2026-01-01T00:00:00.000Z",
    "body": "intro\n",
}


def _with(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


def test_collections_take_the_union_and_updated_at_the_latest() -> None:
    ours = _with(
        comments=[{"created_at": "2026-01-02T00:00:00.000Z", "text": "o"}],
        updated_at="2026-01-02T00:00:00.000Z",
    )
    theirs = _with(
        comments=[{"created_at": "2026-01-03T00:00:00.000Z", "text": "t"}],
        updated_at="2026-01-03T00:00:00.000Z",
    )
    merged = merge_records(BASE, ours, theirs)
    assert [c["text"] for c in merged.record["comments"]] == ["o", "t"]
    assert merged.record["updated_at"] == "2026-01-03T00:00:00.000Z"
    assert merged.decisions == ()


def test_tags_merge_as_a_set_and_removals_stick() -> None:
    merged = merge_records(BASE, _with(tags=["a", "x"]), _with(tags=["b"]))
    assert merged.record["tags"] == ["a", "b"]


def test_one_side_changes_win_without_a_decision() -> None:
    merged = merge_records(BASE, _with(priority=0), _with(title="new"))
    assert merged.record["priority"] == 0 and merged.record["title"] == "new"
    assert merged.decisions == ()
    assert merged.fields_from_theirs == ("title",)


def test_a_scalar_set_two_ways_is_a_decision_the_same_either_way_round() -> None:
    one = merge_records(BASE, _with(priority=0), _with(priority=4))
    two = merge_records(BASE, _with(priority=4), _with(priority=0))
    assert one.record == two.record
    assert [d.field for d in one.decisions] == ["priority"]
    assert {one.decisions[0].retained, one.decisions[0].discarded} == {0, 4}


def test_status_close_and_claim_fields_move_together() -> None:
    closed = _with(
        status="closed",
        closed_at="2026-01-05T00:00:00.000Z",
        close_reason="done",
        updated_at="2026-01-05T00:00:00.000Z",
    )
    claimed = _with(
        status="in_progress",
        assignee="bob",
        claim_expires_at="2026-01-09T00:00:00.000Z",
        updated_at="2026-01-04T00:00:00.000Z",
    )
    merged = merge_records(BASE, claimed, closed).record
    assert merged["status"] == "closed" and "claim_expires_at" not in merged
    assert "assignee" not in merged and merged["close_reason"] == "done"


def test_bodies_appended_on_both_sides_keep_both_paragraphs() -> None:
    assert merge_appended_text("a\n", "a\nours\n", "a\ntheirs\n") == "a\nours\ntheirs\n"
    assert merge_appended_text("a\n", "b\n", "a\nc\n") is None
    merged = merge_records(BASE, _with(body="intro\nmore\n"), _with(body="rewritten\n"))
    assert [d.field for d in merged.decisions] == ["body"]


def test_union_keeps_one_sides_order_and_sorts_only_both_sides_additions() -> None:
    one, two, three = ({"text": t} for t in ("z", "y", "x"))
    assert union_entries([], [one, two], []) == [one, two]
    assert union_entries([], [one], [three]) == union_entries([], [three], [one])


def test_add_add_of_different_items_is_an_id_collision() -> None:
    ours = _with(created_at="2026-01-01T00:00:00.000Z", title="a")
    theirs = _with(created_at="2026-01-02T00:00:00.000Z", title="b")
    assert merge_records(None, ours, theirs).id_collision is True
    assert merge_records(None, ours, ours).id_collision is False


def _entry(before: dict[str, Any], after: dict[str, Any], ts: str, op: str = "update") -> str:
    built = hist.build_entry(ts=ts, author="x", op=op, before=before, after=after)
    return json.dumps(built.to_json(), separators=(",", ":"))


def _doc(**metadata: Any) -> dict[str, Any]:
    return {"metadata": {"id": "pm-a1", "title": "t", **metadata}, "body": ""}


def _stream(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def test_history_merge_keeps_the_prefix_interleaves_and_reanchors() -> None:
    empty = {"metadata": {}, "body": ""}
    created = _doc(tags=[])
    create = _entry(empty, created, "2026-01-01T00:00:00.000Z", "create")
    ours_state = _doc(tags=[], priority=1)
    theirs_state = _doc(tags=["x"])
    ours = _stream(create, _entry(created, ours_state, "2026-01-03T00:00:00.000Z"))
    theirs = _stream(create, _entry(created, theirs_state, "2026-01-02T00:00:00.000Z"))
    one = merge_history_text(_stream(create), ours, theirs)
    two = merge_history_text(_stream(create), theirs, ours)
    assert one.text == two.text and one.conflicts == ()
    assert one.common == 1 and one.reanchored == 1
    entries = [hist.parse_entry(line, "h") for line in one.text.splitlines()]
    assert [e.ts[:10] for e in entries] == ["2026-01-01", "2026-01-02", "2026-01-03"]
    final = hist.replay(entries)
    assert final["metadata"]["priority"] == 1 and final["metadata"]["tags"] == ["x"]
    assert hist.verify_chain(entries, final).ok


def test_history_merge_flags_two_creates_and_delete_versus_edit() -> None:
    empty = {"metadata": {}, "body": ""}
    a = _stream(_entry(empty, _doc(title="a"), "2026-01-01T00:00:00.000Z", "create"))
    b = _stream(_entry(empty, _doc(title="b"), "2026-01-01T00:00:01.000Z", "create"))
    assert any("created" in c for c in merge_history_text("", a, b).conflicts)
    created = _doc()
    base = _stream(_entry(empty, created, "2026-01-01T00:00:00.000Z", "create"))
    deleted = base + _stream(_entry(created, empty, "2026-01-02T00:00:00.000Z", "delete"))
    edited = base + _stream(_entry(created, _doc(priority=0), "2026-01-03T00:00:00.000Z"))
    merged = merge_history_text(base, deleted, edited)
    assert any("deleted" in c for c in merged.conflicts)
    assert json.loads(merged.text.splitlines()[-1])["op"] == "delete"


def test_markers_split_into_two_streams_and_reanchor_fixes_hashes() -> None:
    text = "same\n<<<<<<< ours\no\n=======\nt\n>>>>>>> theirs\nafter\n"
    assert split_conflict(text) == ("same\no\nafter\n", "same\nt\nafter\n")
    assert split_conflict("no markers\n") is None
    empty = {"metadata": {}, "body": ""}
    line = json.loads(_entry(empty, _doc(), "2026-01-01T00:00:00.000Z", "create"))
    line["after_hash"] = "0" * 64
    fixed = reanchor(json.dumps(line) + "\n")
    assert fixed.rewritten == 1 and fixed.dropped_ops == 0
    entries = [hist.parse_entry(x, "h") for x in fixed.text.splitlines()]
    assert hist.verify_chain(entries, _doc()).ok


def test_json_merges_keys_composes_additions_and_flags_leaf_conflicts() -> None:
    base = {"a": 1, "list": [1], "nested": {"k": 1}}
    ours = {"a": 1, "list": [1, 2], "nested": {"k": 1, "o": True}, "x": "o"}
    theirs = {"a": 1, "list": [1, 3], "nested": {"k": 1, "t": True}, "x": "t"}
    one = merge_json(base, ours, theirs)
    assert one.value["list"] == [1, 2, 3]
    assert one.value["nested"] == {"k": 1, "o": True, "t": True}
    assert one.conflicts == ("x",)
    assert merge_json(base, theirs, ours).value == one.value


def test_event_stores_union_by_event_id_and_renumber() -> None:
    common = '{"eventId":"e1","sequence":1,"timestamp":"1"}\n'
    ours = common + '{"eventId":"e2","sequence":2,"timestamp":"3"}\n'
    theirs = common + '{"eventId":"e3","sequence":2,"timestamp":"2"}\n'
    events = [json.loads(x) for x in merge_event_text(common, ours, theirs).text.splitlines()]
    assert [(e["eventId"], e["sequence"]) for e in events] == [("e1", 1), ("e3", 2), ("e2", 3)]


def test_markers_are_found_only_at_line_starts() -> None:
    assert first_marker_line(b"a\n<<<<<<< HEAD\nb\n") == 2
    assert first_marker_line(b"title: x <<<<<<< not one\n=======\n") is None


def test_fence_is_replaced_in_place_and_other_lines_kept() -> None:
    patterns = fence_patterns(".agents/pm", ["tasks", "issues"])
    assert patterns[0] == '".agents/pm/**/*.toon" merge=pm-item-toon'
    assert '".agents/pm/history/*.jsonl" merge=pm-history' in patterns
    text = with_fence("*.png binary\n", patterns)
    assert text.startswith("*.png binary\n\n# pm-cli:merge-drivers:v2:start\n")
    assert with_fence(text, patterns) == text
    assert committed_fence(text) == patterns
    assert committed_fence("*.png binary\n") is None
