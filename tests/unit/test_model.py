"""The item model: canonical records, field access, parsing rules and normalisers."""

from __future__ import annotations

import inspect

import pytest

from pm_core.tracker.model.item import (
    FIELD_ORDER,
    ITEM_FIELDS,
    Item,
    ItemFormatError,
    document_hash,
    item_from_record,
    normalize_dependency_kind,
    normalize_priority,
    normalize_status,
    normalize_tags,
)


def _item(**fields: object) -> Item:
    record: dict[str, object] = {
        "id": "pm-a1b2",
        "title": "A task",
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
    }
    record.update(fields)
    return item_from_record(record)


def test_record_omits_unset_optionals_and_puts_body_last() -> None:
    record = _item(body="text").to_record()
    assert list(record)[:9] == [
        "id",
        "title",
        "description",
        "type",
        "status",
        "priority",
        "tags",
        "created_at",
        "updated_at",
    ]
    assert "assignee" not in record and "dependencies" not in record
    assert list(record)[-1] == "body"


def test_record_follows_the_upstream_key_order() -> None:
    item = _item(
        close_reason="done",
        docs=[{"path": "a.md", "scope": "project"}],
        deadline="2026-02-01T00:00:00.000Z",
        assignee="ana",
        author="ana",
        resolution="fixed",
        parent="pm-p",
    )
    keys = [k for k in item.to_record() if k not in ("body",)]
    assert keys == sorted(keys, key=FIELD_ORDER.index)
    assert keys.index("deadline") < keys.index("assignee") < keys.index("author")
    assert keys.index("parent") < keys.index("resolution") < keys.index("docs")
    assert keys.index("docs") < keys.index("close_reason")


def test_unknown_keys_stay_after_the_key_they_followed() -> None:
    item = item_from_record(
        {
            "id": "pm-a1b2",
            "title": "t",
            "zeta_custom": 1,
            "status": "open",
            "docs": [{"path": "a.md", "scope": "project"}],
            "close_reason": "x",
            "alpha_extra": {"k": "v"},
            "body": "",
        }
    )
    keys = list(item.to_record())
    assert keys.index("zeta_custom") == keys.index("title") + 1
    assert keys.index("alpha_extra") == keys.index("close_reason") + 1
    assert item.get_field("alpha_extra") == {"k": "v"}


def test_keys_set_without_an_anchor_go_last_in_name_order() -> None:
    item = _item()
    item.set_field("zz_field", "z")
    item.set_field("aa_field", "a")
    keys = list(item.to_record())
    assert keys[-3:] == ["aa_field", "zz_field", "body"]


def test_set_field_none_unsets_optional_custom_and_collection() -> None:
    item = _item(assignee="ana", comments=[{"created_at": "x", "author": "a", "text": "t"}])
    item.set_field("custom_key", "v")
    item.set_field("assignee", None)
    item.set_field("custom_key", None)
    item.set_field("comments", None)
    record = item.to_record()
    assert "assignee" not in record and "custom_key" not in record and "comments" not in record
    assert item.comments == []


def test_required_fields_are_written_even_when_empty() -> None:
    record = _item().to_record()
    assert record["description"] == "" and record["tags"] == [] and record["body"] == ""


def test_missing_title_is_a_format_error_naming_the_field() -> None:
    with pytest.raises(ItemFormatError, match="'title'"):
        item_from_record({"id": "pm-a1b2"})


def test_non_mapping_record_is_a_format_error() -> None:
    with pytest.raises(ItemFormatError, match="mapping"):
        item_from_record(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_collection_of_scalars_is_a_format_error() -> None:
    with pytest.raises(ItemFormatError, match="'comments' must be a list of objects"):
        _item(comments=["just text"])


def test_non_integer_priority_is_a_format_error() -> None:
    with pytest.raises(ItemFormatError, match="'priority' must be an integer"):
        _item(priority="urgent")


def test_integer_text_priority_is_read_as_a_number() -> None:
    assert _item(priority="3").priority == 3


def test_regression_must_be_a_boolean() -> None:
    with pytest.raises(ItemFormatError, match="regression"):
        _item(regression="maybe")
    assert _item(regression=True).regression is True


def test_text_field_holding_an_object_is_a_format_error() -> None:
    with pytest.raises(ItemFormatError, match="'goal' must be text"):
        _item(goal={"nested": True})


def test_number_in_a_text_field_is_kept_as_text() -> None:
    assert _item(release=2026.5, sprint=7).release == "2026.5"


def test_confidence_keeps_a_number_or_a_word() -> None:
    assert _item(confidence=80).confidence == 80
    assert _item(confidence="high").confidence == "high"


def test_tags_written_as_text_are_split_on_commas() -> None:
    assert _item(tags="a, b,,c").tags == ["a", "b", "c"]


def test_copy_is_independent_of_the_original() -> None:
    item = _item(dependencies=[{"id": "pm-x", "kind": "related", "created_at": "t"}])
    clone = item.copy()
    clone.dependencies[0]["kind"] = "blocks"
    clone.title = "changed"
    assert item.dependencies[0]["kind"] == "related" and item.title == "A task"


def test_content_hash_ignores_key_order_and_tracks_content() -> None:
    item = _item(body="b")
    assert item.content_hash() == document_hash({"body": "b", "metadata": item.metadata()})
    other = item.copy()
    other.title = "different"
    assert other.content_hash() != item.content_hash()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("open", "open"),
        ("In Progress", "in_progress"),
        ("done", "closed"),
        ("cancelled", "canceled"),
    ],
)
def test_status_aliases_are_canonicalised(raw: str, expected: str) -> None:
    assert normalize_status(raw) == expected


def test_unknown_status_names_the_choices() -> None:
    with pytest.raises(ValueError, match="expected one of: draft, open"):
        normalize_status("someday")


@pytest.mark.parametrize(("raw", "expected"), [(0, 0), ("4", 4), ("high", 1), ("P2", 2)])
def test_priority_accepts_numbers_names_and_p_forms(raw: int | str, expected: int) -> None:
    assert normalize_priority(raw) == expected


@pytest.mark.parametrize("raw", [5, "-1", "urgent", "p9"])
def test_priority_out_of_range_is_rejected(raw: int | str) -> None:
    with pytest.raises(ValueError, match="priority"):
        normalize_priority(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("depends_on", "blocked_by"), ("child-of", "parent"), ("related_to", "related")],
)
def test_dependency_aliases_are_canonicalised(raw: str, expected: str) -> None:
    assert normalize_dependency_kind(raw) == expected


def test_unknown_dependency_kind_names_the_choices() -> None:
    with pytest.raises(ValueError, match="expected one of: blocked_by"):
        normalize_dependency_kind("mentions")


def test_tags_are_trimmed_deduplicated_and_sorted() -> None:
    assert normalize_tags([" b", "a", "b", ""]) == ["a", "b"]


def test_item_fields_name_the_constructor_parameters_in_order() -> None:
    assert tuple(inspect.signature(Item).parameters) == ITEM_FIELDS


def test_items_compare_by_value_but_not_by_where_extra_keys_were() -> None:
    a = Item(id="pm-1", title="t", extra={"k": 1}, extra_after={"k": None})
    b = Item(id="pm-1", title="t", extra={"k": 1}, extra_after={"k": "title"})
    assert a == b
    assert a != Item(id="pm-1", title="other")
    assert "extra_after" not in repr(a)
