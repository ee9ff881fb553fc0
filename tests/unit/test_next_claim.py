"""``pm next --claim``: the recommendation and its lease in one step, lease rules of ``claim``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from tests.support.pm_cli import PmCli


def _as(repo: Path, author: str) -> Tracker:
    return Tracker(repo / ".agents" / "pm", author=author, env={})


def test_claim_next_claims_the_recommended_item(repo: Path) -> None:
    alice = _as(repo, "alice")
    first = str(alice.create({"title": "Urgent", "priority": 0})["id"])
    alice.create({"title": "Later", "priority": 3})
    result = alice.claim_next()
    assert result["recommended"]["id"] == first
    assert result["claimed"]["id"] == first and result["claimed"]["claimed_by"] == "alice"
    assert alice.get(first).claim_principal == "alice"


def test_a_stale_recommendation_taken_by_another_falls_to_the_next_ready(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _as(repo, "alice"), _as(repo, "bob")
    first = str(alice.create({"title": "Urgent", "priority": 0})["id"])
    second = str(alice.create({"title": "Later", "priority": 3})["id"])
    ranking = alice.next_items()  # ranked before bob's claim lands
    bob.claim(first)
    monkeypatch.setattr(alice, "next_items", lambda **_: ranking)
    result = alice.claim_next()
    assert result["claimed"]["id"] == second and result["skipped"] == [first]
    assert bob.get(first).claim_principal == "bob"  # never taken over


def test_nothing_free_to_claim_is_a_warning_not_a_failure(tracker: Tracker) -> None:
    result = tracker.claim_next()
    assert result["claimed"] is None and result["warnings"][0].startswith("nothing_to_claim")


def test_cli_next_claim(tmp_path: Path) -> None:
    cli = PmCli.init(tmp_path)
    item = cli.create("Only one")
    result = cli("next", "--claim", "--json")
    assert result.code == 0, result
    body: dict[str, Any] = json.loads(result.out)
    assert body["claimed"]["id"] == item
    again = json.loads(cli("next", "--claim", "--json").out)
    assert again["claimed"]["id"] == item  # held by me: the lease is renewed


def test_the_pm_next_tool_claims_with_the_claim_option(tracker: Tracker) -> None:
    from tests.support.toolhost import ToolHost, make_host

    tools = ToolHost(make_host(), tracker)
    item = str(tracker.create({"title": "Tool claim"})["id"])
    plain = tools.value("pm_next", {"options": {}})
    assert "claimed" not in plain and tracker.get(item).claim_principal is None
    value = tools.value("pm_next", {"options": {"claim": True}})
    assert value["claimed"]["id"] == item and tracker.get(item).claim_principal == "tester"
