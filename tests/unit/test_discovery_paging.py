"""pm_discover paging: opaque cursors that never repeat rows and go stale on change."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from pm_core.contracts import ToolDescriptor
from pm_core.sdk import DiscoveryError, discover_tools
from tests.support.discovery import SECRET, discover, names, standin_catalog, tool

QUERY = "add or update an item"


def walk(catalog: list[ToolDescriptor], **kwargs: Any) -> list[str]:
    """Every row name, following next_cursor to the end."""
    seen: list[str] = []
    cursor: str | None = None
    while True:
        result = discover(catalog, cursor=cursor, **kwargs)
        seen.extend(names(result))
        if result.next_cursor is None:
            assert not result.has_more
            return seen
        assert result.has_more
        cursor = result.next_cursor


def first_cursor(catalog: list[ToolDescriptor], **kwargs: Any) -> str:
    cursor = discover(catalog, query=QUERY, limit=2, **kwargs).next_cursor
    assert cursor is not None
    return cursor


def assert_stale(catalog: list[ToolDescriptor], cursor: str, **kwargs: Any) -> None:
    kwargs.setdefault("query", QUERY)
    with pytest.raises(DiscoveryError, match="without a cursor") as caught:
        discover(catalog, cursor=cursor, limit=2, **kwargs)
    assert caught.value.code == 64
    assert caught.value.details == {"field": "cursor", "reason": "stale"}


def test_paging_visits_every_row_once_in_ranked_order() -> None:
    catalog = standin_catalog()
    whole = names(discover(catalog, query=QUERY, limit=100, output_budget=None))
    paged = walk(catalog, query=QUERY, limit=3)
    assert paged == whole
    assert len(set(paged)) == len(paged) > 6


def test_paging_without_a_query_visits_the_whole_catalog() -> None:
    catalog = standin_catalog()
    paged = walk(catalog, limit=7)
    assert sorted(paged) == sorted(t.name for t in catalog)


def test_paging_under_a_tight_budget_still_visits_every_row_once() -> None:
    catalog = standin_catalog()
    whole = names(discover(catalog, limit=100, output_budget=None))
    paged = walk(catalog, limit=10, output_budget=500)
    assert paged == whole


def test_the_same_call_returns_the_same_rows_and_cursor() -> None:
    catalog = standin_catalog()
    one, two = (discover(catalog, query=QUERY, limit=2) for _ in range(2))
    assert one.to_json() == two.to_json()


def test_a_cursor_survives_a_new_limit_and_budget() -> None:
    catalog = standin_catalog()
    whole = names(discover(catalog, query=QUERY, limit=100, output_budget=None))
    cursor = first_cursor(catalog)
    rest = discover(catalog, query=QUERY, cursor=cursor, limit=100, output_budget=None)
    assert names(rest) == whole[2:]


def test_a_catalog_rebuilt_from_equal_objects_keeps_cursors_valid() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    rebuilt = [attrs.evolve(t) for t in catalog]
    assert names(discover(rebuilt, query=QUERY, cursor=cursor, limit=2))


def test_cursor_goes_stale_when_a_tool_definition_changes() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    changed = [
        attrs.evolve(t, description=t.description + " Now faster.") if t.name == "pm_get" else t
        for t in catalog
    ]
    assert_stale(changed, cursor)


def test_cursor_goes_stale_when_a_schema_changes() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    changed = [
        attrs.evolve(t, input_schema={"type": "object"}) if t.name == "pm_list" else t
        for t in catalog
    ]
    assert_stale(changed, cursor)


def test_cursor_goes_stale_when_a_workspace_extension_appears() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    extended = [*catalog, tool("pm_run:kanban", "Show the kanban board.", family="extensions")]
    assert_stale(extended, cursor)


def test_cursor_goes_stale_when_authorization_removes_a_tool() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    assert_stale([t for t in catalog if t.name != "pm_copy"], cursor)


def test_cursor_goes_stale_when_the_profile_changes() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog, profile="core")
    assert_stale(catalog, cursor, profile="standard")


def test_cursor_goes_stale_when_ranking_signals_change() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog, signals={"usage": {"pm_get": 0.2}})
    assert_stale(catalog, cursor, signals={"usage": {"pm_get": 0.3}})


@pytest.mark.parametrize(
    "change",
    [
        {"query": "close an item"},
        {"family": "authoring"},
        {"tier": "standard"},
        {"include_schema": True},
    ],
)
def test_cursor_goes_stale_when_the_query_filters_or_projection_change(
    change: dict[str, Any],
) -> None:
    catalog = standin_catalog()
    assert_stale(catalog, first_cursor(catalog), **change)


def test_cursor_from_another_key_is_refused() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    with pytest.raises(DiscoveryError, match="stale"):
        discover_tools(catalog, query=QUERY, cursor=cursor, secret=SECRET + b"!")


def test_tampered_cursor_is_refused() -> None:
    catalog = standin_catalog()
    cursor = first_cursor(catalog)
    tampered = cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB")
    assert_stale(catalog, tampered)


@pytest.mark.parametrize("garbage", ["not-a-cursor", "%%%", "AAAA"])
def test_a_string_that_is_no_cursor_is_refused_as_malformed(garbage: str) -> None:
    with pytest.raises(DiscoveryError, match="without a cursor") as caught:
        discover(standin_catalog(), query=QUERY, cursor=garbage)
    assert caught.value.details["reason"] == "malformed"


def test_without_a_secret_cursors_use_one_key_per_process() -> None:
    catalog = standin_catalog()
    cursor = discover_tools(catalog, query=QUERY, limit=2).next_cursor
    assert cursor is not None
    assert names(discover_tools(catalog, query=QUERY, limit=2, cursor=cursor))
