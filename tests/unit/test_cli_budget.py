"""Token ceilings: payloads shrink step by step with an explicit omission receipt."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pm_core.cli.output import FIRST_HEAD, encode_toon, render, render_head
from pm_core.tracker.query.budget import (
    OMITTED_KEY,
    Elided,
    ceiling,
    estimate_tokens,
    fit,
    json_measure,
    project,
    row_cap,
)


def _rows(count: int, description: str = "d" * 300) -> dict[str, Any]:
    items = [
        {
            "id": f"pm-{n:04d}",
            "title": f"Item {n}",
            "type": "Task",
            "status": "open",
            "priority": n % 5,
            "description": description,
            "tags": ["a", "b"],
        }
        for n in range(count)
    ]
    return {"items": items, "total": count}


def test_estimate_is_bytes_over_four_rounded_up() -> None:
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("é") == 1  # two bytes


def test_estimate_of_a_byte_count_equals_the_estimate_of_those_bytes() -> None:
    # Skills and discovery know sizes, not texts: the same rule applies to both.
    for text in ("", "abcd", "abcde", "é" * 7, "x" * 4001):
        data = text.encode("utf-8")
        assert estimate_tokens(len(data)) == estimate_tokens(data) == estimate_tokens(text)
    assert estimate_tokens(9) == 3


def test_default_ceilings_by_kind_and_format() -> None:
    assert ceiling("read", "toon") == 4000 and ceiling("read", "json") == 6000
    assert ceiling("mutation", "toon") == 2000 and ceiling("mutation", "json") == 3000
    assert ceiling("governance", "json") == 9000


def test_settings_override_a_ceiling() -> None:
    settings = {"output": {"token_budgets": {"read": {"toon": 123}}}}
    assert ceiling("read", "toon", settings) == 123
    assert ceiling("read", "json", settings) == 6000


def test_payload_within_budget_is_returned_unchanged() -> None:
    payload = _rows(3)
    assert fit(payload, 4000) == payload


def test_unbounded_budget_never_shrinks() -> None:
    payload = _rows(500)
    assert fit(payload, None) == payload


def test_oversized_list_keeps_total_and_says_what_was_omitted() -> None:
    payload = _rows(400)
    result = fit(payload, 2000)
    assert json_measure(result) <= 2000
    assert result["total"] == 400
    receipt = result[OMITTED_KEY]
    assert receipt["reason"] == "token_budget" and receipt["budget_tokens"] == 2000
    assert receipt["estimated_tokens"] == json_measure(payload)
    assert "--limit" in receipt["recover"]
    shown = len(result["items"])
    assert receipt["omitted_count"] == 400 - shown
    assert result.get("items_omitted", 0) == 400 - shown


def test_shrinking_drops_detail_before_rows() -> None:
    result = fit(_rows(40), 1500)
    assert result[OMITTED_KEY]["level"] in ("compact", "brief")
    assert len(result["items"]) == 40
    assert all(len(r.get("description", "")) < 300 for r in result["items"])


def test_brief_rows_keep_identity_fields() -> None:
    result = fit(_rows(60), 1200)
    row = result["items"][0]
    assert {"id", "title", "status", "priority"} <= set(row)


def test_tiny_budget_falls_back_to_counts() -> None:
    result = fit(_rows(50), 30)
    assert result[OMITTED_KEY]["level"] == "counts"
    assert result["items"] == [] and result["items_count"] == 50


def test_long_log_keeps_the_latest_entries() -> None:
    comments = [{"text": f"comment {n} " + "x" * 200} for n in range(30)]
    payload = {"item": {"id": "pm-a", "comments": comments}}
    result = fit(payload, 600)
    kept = result["item"]["comments"]
    assert kept and kept[-1]["text"].startswith("comment 29")


def test_input_payload_is_not_modified() -> None:
    payload = _rows(100)
    snapshot = json.dumps(payload)
    fit(payload, 500)
    assert json.dumps(payload) == snapshot


def test_project_keeps_id_and_the_fields_asked_for_in_order() -> None:
    record = {"id": "pm-a", "title": "t", "status": "open", "body": "b"}
    assert list(project(record, ["status", "title", "nope"])) == ["id", "status", "title"]


def test_render_shrinks_toon_output_to_its_ceiling() -> None:
    payload = _rows(300)
    text = render(payload, fmt="toon", kind="read")
    assert estimate_tokens(text) <= 4000
    assert "omitted:" in text and "total: 300" in text


def test_render_unbounded_prints_everything() -> None:
    payload = _rows(300)
    assert render(payload, fmt="toon", bounded=False) == encode_toon(payload)


def test_render_json_is_strict_json() -> None:
    payload = _rows(2)
    assert json.loads(render(payload, fmt="json")) == payload


@pytest.mark.parametrize("kind", ["read", "mutation", "governance"])
def test_render_respects_each_kind(kind: str) -> None:
    text = render(_rows(400), fmt="toon", kind=kind)
    assert estimate_tokens(text) <= ceiling(kind, "toon")


def test_large_list_keeps_the_rows_that_fit_with_its_receipt() -> None:
    # The trial measured without the final receipt once fitted, then overflowed,
    # and the whole list fell back to counts ("items: []").
    payload = _rows(10_000, description="")
    result = fit(payload, 4000)
    assert result[OMITTED_KEY]["level"] == "summary"
    assert 50 < len(result["items"]) < 10_000
    assert result["items_omitted"] == 10_000 - len(result["items"])
    assert result[OMITTED_KEY]["omitted_count"] == result["items_omitted"]
    assert json_measure(result) <= 4000


def test_shrinking_work_is_bounded_by_the_budget_not_the_list() -> None:
    measured_rows: list[int] = []

    def measure(candidate: Any) -> int:
        measured_rows.append(len(candidate.get("items", [])))
        return json_measure(candidate)

    fit(_rows(50_000, description=""), 2000, measure=measure)
    # Every trial is capped near the budget (2000 tokens / 16 bytes a row).
    assert max(measured_rows[1:]) <= 2000 * 4 // 16 + 1
    assert len(measured_rows) < 40


def _split(payload: dict[str, Any], keep: int) -> tuple[dict[str, Any], Elided]:
    """The payload with only its first ``keep`` rows, and what the rest adds as JSON."""
    rest = payload["items"][keep:]
    head = dict(payload, items=payload["items"][:keep])
    size = len(json.dumps(rest, ensure_ascii=False, separators=(",", ":")).encode()) - 1
    return head, Elided("items", len(rest), size)


@pytest.mark.parametrize("fmt", ["toon", "json"])
def test_render_of_elided_rows_equals_render_of_every_row(fmt: str) -> None:
    payload = _rows(3000, description='é\t"quoted"')
    budget = ceiling("read", fmt)
    head, elided = _split(payload, row_cap(budget))
    expected = render(payload, fmt=fmt)
    assert render(head, fmt=fmt, elided=elided) == expected
    assert fit(head, budget, full_size=json_measure(payload), elided=elided) == fit(
        payload, budget, full_size=json_measure(payload)
    )


def test_render_head_builds_only_the_rows_that_can_show() -> None:
    payload = _rows(5000, description="")
    for row in payload["items"]:
        row["title"] = f"{row['title']} " + "t" * 100  # titles survive shrinking: ~120 rows fit
    asked: list[int | None] = []

    def fetch(head: int | None) -> tuple[dict[str, Any], Elided | None]:
        asked.append(head)
        return _split(payload, head) if head is not None else (payload, None)

    assert render_head(fetch) == render(payload)
    # Fewer rows than the first head fit, so only the first head was built.
    assert asked == [FIRST_HEAD]


def test_render_head_builds_to_the_cap_when_every_row_of_the_first_head_fits() -> None:
    # Small rows: more than the first head fit under the ceiling.
    payload = {
        "items": [{"id": f"pm-{n:05d}", "title": "t"} for n in range(20_000)],
        "total": 20_000,
    }
    asked: list[int | None] = []

    def fetch(head: int | None) -> tuple[dict[str, Any], Elided | None]:
        asked.append(head)
        return _split(payload, head) if head is not None else (payload, None)

    cap = row_cap(ceiling("read", "toon"))
    assert render_head(fetch) == render(payload)
    assert asked == [FIRST_HEAD, cap]


def test_render_head_fetches_every_row_when_the_whole_list_is_small() -> None:
    # Tiny rows: the whole list is under three ceilings, so it is rendered as is.
    payload = {"items": [{"id": f"pm-{n:04d}"} for n in range(1200)], "total": 1200}
    asked: list[int | None] = []

    def fetch(head: int | None) -> tuple[dict[str, Any], Elided | None]:
        asked.append(head)
        return _split(payload, head) if head is not None else (payload, None)

    assert render_head(fetch) == render(payload)
    assert asked == [FIRST_HEAD, None]


def test_elided_rows_of_a_list_that_could_fit_whole_are_refused() -> None:
    # 900 rows in all could fit at a level that keeps every row: they must all be built.
    head, elided = _split(_rows(900, description=""), 10)
    with pytest.raises(ValueError, match="first rows"):
        fit(head, 4000, full_size=10**6, elided=elided)
    with pytest.raises(ValueError, match="token budget"):
        fit(head, None, elided=elided)
