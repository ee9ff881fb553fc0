"""The tool result cap: oversized results become an error that says how to narrow the call."""

from __future__ import annotations

import json

import pytest

from pm_core.contracts import ConfigurationError
from pm_core.mcp.server import (
    DEFAULT_MAX_RESPONSE_BYTES,
    POINTER_TEXT,
    USAGE_CODE,
    byte_limit,
    success_result,
)

ROWS = [{"id": f"pm-{n:04d}", "title": "x" * 40} for n in range(100)]


def test_result_under_the_cap_is_returned_as_is() -> None:
    result = success_result({"items": ROWS[:2]}, [], False, max_bytes=10_000)
    assert not result.is_error
    assert result.structured_content == {"result": {"items": ROWS[:2]}}
    assert json.loads(result.content[0].text) == {"items": ROWS[:2]}  # type: ignore[union-attr]


def test_result_over_the_cap_is_an_error_naming_sizes_the_setting_and_the_remedy() -> None:
    result = success_result({"items": ROWS}, [], False, max_bytes=2_000)
    assert result.is_error
    body = result.structured_content
    assert body is not None and body["result"] is None
    assert body["code"] == USAGE_CODE
    assert "PM_MCP_MAX_RESPONSE_BYTES" in body["error"] and "2000-byte" in body["error"]
    assert "limit" in body["hint"] and "fields" in body["hint"]
    assert body["details"]["limit"] == 2_000 and body["details"]["bytes"] > 2_000
    # The error itself is small.
    assert len(result.content[0].text) < 1_000  # type: ignore[union-attr]


def test_the_cap_counts_both_the_text_and_the_structured_copy() -> None:
    one_copy = len(json.dumps({"items": ROWS}, separators=(",", ":")).encode())
    # Fits once but not twice: the wire carries the JSON text and structuredContent.
    assert success_result({"items": ROWS}, [], False, max_bytes=one_copy + 100).is_error
    assert not success_result({"items": ROWS}, [], False, max_bytes=2 * one_copy + 100).is_error


def test_pointer_results_are_measured_by_their_structured_content() -> None:
    small = success_result({"items": ROWS[:1]}, ["w"], True, max_bytes=2_000)
    assert not small.is_error and small.content[0].text == POINTER_TEXT  # type: ignore[union-attr]
    big = success_result({"items": ROWS}, ["w"], True, max_bytes=2_000)
    assert big.is_error and big.content[0].text == POINTER_TEXT  # type: ignore[union-attr]


def test_without_a_cap_nothing_is_refused() -> None:
    assert not success_result({"items": ROWS * 50}, [], False).is_error


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1.5", "4MiB"])
def test_a_cap_that_is_not_a_positive_byte_count_is_a_configuration_error(raw: str) -> None:
    with pytest.raises(ConfigurationError, match="PM_MCP_MAX_RESPONSE_BYTES must be a positive"):
        byte_limit({"PM_MCP_MAX_RESPONSE_BYTES": raw}, "PM_MCP_MAX_RESPONSE_BYTES", 1)


def test_an_unset_or_blank_cap_is_the_default() -> None:
    name = "PM_MCP_MAX_RESPONSE_BYTES"
    assert byte_limit({}, name, DEFAULT_MAX_RESPONSE_BYTES) == 4 * 1024 * 1024
    assert byte_limit({name: " "}, name, 7) == 7
    assert byte_limit({name: "1234"}, name, 7) == 1234
