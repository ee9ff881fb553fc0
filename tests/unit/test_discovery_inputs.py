"""pm_discover inputs: family and tier filters, and clear refusals of bad input."""

from __future__ import annotations

from typing import Any

import pytest

from pm_core.sdk import DiscoveryError
from tests.support.discovery import discover, standin_catalog, tool


def refused(field: str, **kwargs: Any) -> DiscoveryError:
    with pytest.raises(DiscoveryError) as caught:
        discover(standin_catalog(), **kwargs)
    assert caught.value.code == 64
    assert caught.value.details["field"] == field
    return caught.value


def test_family_filter_keeps_one_family() -> None:
    result = discover(standin_catalog(), family="evidence", limit=100, output_budget=None)
    assert {row.family for row in result.tools} == {"evidence"}
    assert result.total == 7


def test_family_filter_applies_to_matches_of_a_query() -> None:
    result = discover(standin_catalog(), query="close an item", family="lifecycle")
    assert result.tools[0].name == "pm_close"
    assert {row.family for row in result.tools} == {"lifecycle"}


def test_tier_filter_keeps_that_tier_and_narrower() -> None:
    core = discover(standin_catalog(), tier="core", limit=100, output_budget=None)
    assert {row.tier for row in core.tools} == {"core"} and core.total == 14
    standard = discover(standin_catalog(), tier="standard", limit=100, output_budget=None)
    assert {row.tier for row in standard.tools} == {"core", "standard"} and standard.total == 30


def test_an_extension_family_outside_the_ten_is_accepted_when_a_tool_has_it() -> None:
    tools = [*standin_catalog(), tool("pm_run:scan", "Scan things.", family="scanning")]
    result = discover(tools, family="scanning")
    assert [row.name for row in result.tools] == ["pm_run:scan"]


def test_internal_tools_are_never_listed() -> None:
    tools = [*standin_catalog(), tool("pm_secret", "Close everything.", tier="internal")]
    rows = discover(tools, query="close", limit=100, output_budget=None).tools
    assert "pm_secret" not in {row.name for row in rows}


def test_unknown_family_is_refused_with_the_known_ones() -> None:
    error = refused("family", family="lifecylce")
    assert "lifecylce" in error.message and "lifecycle" in error.details["allowed"]


@pytest.mark.parametrize("tier", ["internal", "everything", ""])
def test_unknown_tier_is_refused(tier: str) -> None:
    error = refused("tier", tier=tier)
    assert error.details["allowed"] == ["core", "standard", "full"]


@pytest.mark.parametrize("limit", [0, 101, -3, True, 2.5, "5"])
def test_limit_outside_1_to_100_is_refused(limit: Any) -> None:
    error = refused("limit", limit=limit)
    assert "from 1 to 100" in error.message


@pytest.mark.parametrize("limit", [1, 100])
def test_limit_bounds_are_accepted(limit: int) -> None:
    assert discover(standin_catalog(), limit=limit, output_budget=None).returned == min(limit, 32)


def test_query_longer_than_4096_characters_is_refused() -> None:
    error = refused("query", query="a" * 4097)
    assert error.details["max_length"] == 4096 and error.details["length"] == 4097
    assert discover(standin_catalog(), query="close " * 682 + "x").returned > 0


@pytest.mark.parametrize("budget", [0, -5, True, "1200"])
def test_output_budget_must_be_a_positive_integer(budget: Any) -> None:
    refused("outputBudget", output_budget=budget)


def test_include_schema_must_be_a_boolean() -> None:
    refused("includeSchema", include_schema="yes")


def test_duplicate_candidate_names_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="duplicate candidate tool name 'x_a'"):
        discover([tool("x_a"), tool("x_a")])


def test_an_empty_catalog_gives_an_empty_result() -> None:
    result = discover([], query="anything")
    assert result.total == 0 and result.tools == () and result.next_cursor is None
