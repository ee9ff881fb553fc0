"""pm list: filters, terminal handling, paging, projections, corrupt files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.query.listing import list_items
from tests.support.trackers import add, as_author, hand_edit, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def ids(result: dict[str, object]) -> list[str]:
    return [row["id"] for row in result["items"]]  # type: ignore[attr-defined,index]


def test_list_hides_terminal_items_unless_asked(t: Tracker) -> None:
    live = add(t, "live")
    done = add(t, "done")
    t.close(done, "finished")
    assert ids(list_items(t)) == [live]
    assert sorted(ids(list_items(t, include_terminal=True))) == sorted([live, done])


def test_status_filter_naming_a_terminal_status_includes_it(t: Tracker) -> None:
    add(t, "live")
    done = add(t, "done")
    t.close(done, "finished")
    result = list_items(t, status="closed")
    assert ids(result) == [done]
    assert result["filters"]["include_terminal"] is True


def test_filters_on_type_tags_priority_assignee_and_parent_combine(t: Tracker) -> None:
    epic = add(t, "epic", type="Epic")
    match = add(t, "match", parent=epic, tags="ui,api", priority=1)
    add(t, "wrong tags", parent=epic, tags="ui", priority=1)
    add(t, "wrong parent", tags="ui,api", priority=1)
    add(t, "wrong priority", parent=epic, tags="ui,api", priority=3)
    result = list_items(t, type="Task", tags=["ui", "api"], priority="high", parent=epic)
    assert ids(result) == [match]
    t.claim(match)
    assert ids(list_items(t, assignee="alice")) == [match]
    assert match not in ids(list_items(t, assignee="none"))


def test_default_rows_carry_the_documented_keys(t: Tracker) -> None:
    epic = add(t, "epic", type="Epic")
    child = add(t, "child", parent=epic, tags="x")
    row = next(r for r in list_items(t)["items"] if r["id"] == child)
    assert list(row) == [
        "id",
        "title",
        "type",
        "status",
        "priority",
        "tags",
        "parent",
        "updated_at",
    ]
    assert row["parent"] == epic


def test_paging_reports_total_has_more_and_next_offset(t: Tracker) -> None:
    for n in range(5):
        add(t, f"item {n}")
    first = list_items(t, limit=2, sort="title")
    assert [r["title"] for r in first["items"]] == ["item 0", "item 1"]
    assert (first["total"], first["returned"], first["has_more"], first["next_offset"]) == (
        5,
        2,
        True,
        2,
    )
    last = list_items(t, limit=2, offset=4, sort="title")
    assert [r["title"] for r in last["items"]] == ["item 4"]
    assert last["has_more"] is False and "next_offset" not in last


def test_default_sort_is_priority_then_most_recently_updated(t: Tracker) -> None:
    old = add(t, "old", priority=2)
    urgent = add(t, "urgent", priority=0)
    new = add(t, "new", priority=2)
    hand_edit(t, old, updated_at="2026-01-01T00:00:00.000Z")
    hand_edit(t, new, updated_at="2026-02-01T00:00:00.000Z")
    assert ids(list_items(t)) == [urgent, new, old]


def test_fields_projection_keeps_id_first_and_rejects_unknown_fields(t: Tracker) -> None:
    add(t, "one", tags="a")
    rows = list_items(t, fields=["title", "tags"])["items"]
    assert rows == [{"id": rows[0]["id"], "title": "one", "tags": ["a"]}]
    with pytest.raises(UsageError, match="unknown field"):
        list_items(t, fields=["titel"])


def test_custom_field_declared_for_list_is_a_filter(t: Tracker) -> None:
    t.schema_add("field", "team", field_type="string", commands=["create", "update", "list"])
    core = add(t, "core work", team="core")
    add(t, "web work", team="web")
    assert ids(list_items(t, field_filters={"team": "core"})) == [core]


def test_custom_field_not_declared_for_list_is_refused(t: Tracker) -> None:
    t.schema_add("field", "secret", field_type="string", commands=["create"])
    with pytest.raises(UsageError, match="not declared for list"):
        list_items(t, field_filters={"secret": "x"})
    with pytest.raises(UsageError, match="unknown custom field"):
        list_items(t, field_filters={"nope": "x"})


def test_corrupt_item_file_is_skipped_and_named(t: Tracker) -> None:
    good = add(t, "good")
    broken = t.root / "tasks" / "pm-zzzz.toon"
    broken.write_text("title: [unclosed\n", encoding="utf-8")
    result = list_items(t)
    assert ids(result) == [good]
    assert result["skipped_corrupt"] == [".agents/pm/tasks/pm-zzzz.toon"]


def test_bad_arguments_are_usage_errors_naming_the_problem(t: Tracker) -> None:
    with pytest.raises(UsageError, match="unknown sort"):
        list_items(t, sort="random")
    with pytest.raises(UsageError, match="unknown status"):
        list_items(t, status="finished-ish")
    with pytest.raises(UsageError, match="offset"):
        list_items(t, offset=-1)


def test_assignee_filter_sees_claims_by_other_authors(t: Tracker) -> None:
    mine = add(t, "mine")
    theirs = add(t, "theirs")
    as_author(t, "bob").claim(theirs)
    t.claim(mine)
    assert ids(list_items(t, assignee="bob")) == [theirs]
