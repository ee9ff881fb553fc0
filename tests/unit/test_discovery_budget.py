"""pm_discover results: the wire shape, token budgets and omission receipts."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from pm_core.sdk import DiscoveryError, DiscoveryResult
from tests.support.discovery import discover, names, standin_catalog

QUERY = "add or update an item"


def tokens_of(payload: Any) -> int:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return math.ceil(len(body.encode("utf-8")) / 4)


def omitted(result: DiscoveryResult) -> dict[str, dict[str, Any]]:
    return {o["reason"]: o for o in result.to_json()["omission_receipt"]["omitted"]}


def test_result_has_exactly_the_wire_shape() -> None:
    payload = discover(standin_catalog(), query=QUERY, limit=2).to_json()
    assert list(payload) == [
        "tools",
        "total",
        "returned",
        "has_more",
        "next_cursor",
        "token_cost",
        "ranking_policy",
        "cache",
        "omission_receipt",
    ]
    row = payload["tools"][0]
    assert list(row) == ["name", "command", "tier", "family", "score", "signals"]
    assert list(row["signals"]) == [
        "lexical",
        "semantic",
        "graph",
        "permission",
        "freshness",
        "usage",
    ]
    for signal in row["signals"].values():
        assert list(signal) == ["value", "weight", "available", "source"]
    assert list(payload["token_cost"]) == ["estimated_tokens", "budget", "within_budget"]
    assert list(payload["ranking_policy"]) == ["weights", "formula"]
    json.dumps(payload)  # plain JSON all the way down


def test_token_estimate_is_the_size_of_the_result_itself() -> None:
    for kwargs in ({}, {"include_schema": True}, {"limit": 1}, {"output_budget": None}):
        result = discover(standin_catalog(), query=QUERY, **kwargs)
        payload = result.to_json()
        assert payload["token_cost"]["estimated_tokens"] == tokens_of(payload)


def test_every_result_stays_within_its_budget() -> None:
    catalog = standin_catalog()
    for budget in (400, 700, 1200, 3000):
        for include_schema in (False, True):
            try:
                result = discover(
                    catalog, limit=100, output_budget=budget, include_schema=include_schema
                )
            except DiscoveryError:
                continue
            assert tokens_of(result.to_json()) <= budget
            assert result.token_cost.within_budget and result.token_cost.budget == budget


def test_rows_past_the_budget_are_left_out_with_a_way_back() -> None:
    result = discover(standin_catalog(), limit=10, output_budget=700)
    assert 0 < result.returned < 10 and result.has_more and result.next_cursor
    receipt = omitted(result)["token_budget"]
    assert receipt["what"] == "tools" and receipt["count"] == 10 - result.returned
    assert "next_cursor" in receipt["recover"] and "outputBudget to" in receipt["recover"]


def test_the_suggested_budget_fits_the_whole_page() -> None:
    tight = discover(standin_catalog(), limit=10, output_budget=700)
    recover = omitted(tight)["token_budget"]["recover"]
    suggested = int(recover.split("outputBudget to ")[1].split()[0])
    roomy = discover(standin_catalog(), limit=10, output_budget=suggested)
    assert roomy.returned == 10 and "token_budget" not in omitted(roomy)


def test_a_budget_too_small_for_one_row_is_refused_with_the_minimum() -> None:
    with pytest.raises(DiscoveryError, match="smallest budget that fits one is") as caught:
        discover(standin_catalog(), query=QUERY, output_budget=100)
    error = caught.value
    assert error.code == 64 and error.details["field"] == "outputBudget"
    minimum = error.details["minimum"]
    assert discover(standin_catalog(), query=QUERY, output_budget=minimum).returned == 1
    with pytest.raises(DiscoveryError):
        discover(standin_catalog(), query=QUERY, output_budget=minimum - 1)


def test_rows_past_the_limit_are_left_out_with_a_cursor() -> None:
    result = discover(standin_catalog(), limit=3, output_budget=None)
    receipt = omitted(result)["limit"]
    assert receipt["count"] == result.total - 3 == 29
    assert "next_cursor" in receipt["recover"]


def test_schemas_are_left_out_unless_asked_for() -> None:
    compact = discover(standin_catalog(), query=QUERY, limit=3)
    assert all("input_schema" not in row for row in compact.to_json()["tools"])
    assert omitted(compact)["compact_projection"]["count"] == 3
    assert "includeSchema" in omitted(compact)["compact_projection"]["recover"]
    full = discover(standin_catalog(), query=QUERY, limit=3, include_schema=True)
    assert [row["input_schema"] for row in full.to_json()["tools"]] == [
        {"type": "object", "properties": {"id": {"type": "string"}}}
    ] * 3
    assert "compact_projection" not in omitted(full)


def test_the_last_page_omits_nothing_but_schemas() -> None:
    result = discover(standin_catalog(), limit=100, output_budget=None)
    assert result.returned == result.total == 32 and not result.has_more
    assert list(omitted(result)) == ["compact_projection"]
    assert result.token_cost.budget is None and result.token_cost.within_budget


def test_default_budget_is_1200_tokens() -> None:
    result = discover(standin_catalog(), limit=100)
    assert result.token_cost.budget == 1200
    assert result.token_cost.estimated_tokens <= 1200 and result.returned < 32


def test_cache_hint_is_private_for_thirty_seconds_and_names_its_invalidators() -> None:
    first = discover(standin_catalog(), limit=2)
    cache = first.to_json()["cache"]
    assert cache["ttl_seconds"] == 30 and cache["scope"] == "private"
    assert cache["invalidated_by"] == [
        "tool_definitions",
        "workspace_extensions",
        "profile",
        "authorization",
        "ranking_signals",
    ]
    second = discover(standin_catalog(), limit=2, cursor=first.next_cursor)
    assert second.cache.key != first.cache.key
    assert discover(standin_catalog(), limit=2).cache.key == first.cache.key


def test_rows_are_the_same_whatever_the_budget() -> None:
    tight = discover(standin_catalog(), query=QUERY, limit=10, output_budget=600)
    roomy = discover(standin_catalog(), query=QUERY, limit=10, output_budget=None)
    assert names(tight) == names(roomy)[: tight.returned]
