"""Workspace resources (``pm://workspace/...``) and the workflow prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pm_plugins.workspace_resources.resources import GUIDE_LIMIT, guide_text

from pm_core.contracts import (
    ProtocolError,
    RequestContext,
    ResourceProvider,
    ServeContext,
)
from pm_core.tracker.api import Tracker
from tests.support.toolhost import make_host

PREFIX = "pm://workspace/"


@pytest.fixture
def provider() -> ResourceProvider:
    (found,) = [p for p in make_host().resource_providers() if p.prefix == PREFIX]
    return found


def serve(tracker: Tracker) -> ServeContext:
    return ServeContext(request=RequestContext(), tracker=tracker)


def read_json(provider: ResourceProvider, tracker: Tracker, name: str) -> object:
    content = provider.read(serve(tracker), PREFIX + name)
    assert content.mime_type == "application/json"
    assert content.text is not None
    return json.loads(content.text)


def test_lists_the_four_workspace_resources(provider: ResourceProvider, tracker: Tracker) -> None:
    listed = {e.uri: e.mime_type for e in provider.list(serve(tracker))}
    assert listed == {
        PREFIX + "context": "application/json",
        PREFIX + "focus": "application/json",
        PREFIX + "claims": "application/json",
        PREFIX + "agent-guide": "text/markdown",
    }


def test_resources_are_never_gated(provider: ResourceProvider) -> None:
    assert provider.gate(RequestContext()) is True
    assert provider.gate(RequestContext(era="modern", profile="custom")) is True


def test_context_resource_ranks_open_work(provider: ResourceProvider, tracker: Tracker) -> None:
    item = tracker.create({"title": "Ranked work"})["id"]
    assert item in json.dumps(read_json(provider, tracker, "context"))


def test_focus_resource_follows_the_session_focus(
    provider: ResourceProvider, tracker: Tracker
) -> None:
    item = tracker.create({"title": "Focus me"})["id"]
    assert read_json(provider, tracker, "focus") == {"focus": None}
    tracker.set_focus(item)
    focus = read_json(provider, tracker, "focus")
    assert isinstance(focus, dict) and focus["focus"] == item


def test_claims_resource_lists_in_progress_items(
    provider: ResourceProvider, tracker: Tracker
) -> None:
    held = tracker.create({"title": "Held"})["id"]
    tracker.create({"title": "Free"})
    tracker.claim(held)
    claims = read_json(provider, tracker, "claims")
    assert isinstance(claims, dict)
    assert [row["id"] for row in claims["items"]] == [held]


def test_agent_guide_serves_agents_md(
    provider: ResourceProvider, tracker: Tracker, repo: Path
) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n", encoding="utf-8")
    content = provider.read(serve(tracker), PREFIX + "agent-guide")
    assert content.mime_type == "text/markdown"
    assert content.text == "# Agents\n\nRun the tests.\n"


def test_agent_guide_says_clearly_when_there_is_none(
    provider: ResourceProvider, tracker: Tracker
) -> None:
    text = provider.read(serve(tracker), PREFIX + "agent-guide").text
    assert text is not None and "no AGENTS.md" in text


def test_long_agent_guide_is_cut_at_the_limit_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("line of guidance\n" * 5_000, encoding="utf-8")
    text = guide_text(tmp_path)
    assert len(text) <= GUIDE_LIMIT
    assert "truncated" in text and "85,000" in text
    body = text[: text.index("\n\n[AGENTS.md truncated")]
    assert body.endswith("line of guidance")


def test_unknown_workspace_resource_is_not_found(
    provider: ResourceProvider, tracker: Tracker
) -> None:
    with pytest.raises(ProtocolError) as caught:
        provider.read(serve(tracker), PREFIX + "weather")
    assert caught.value.code == -32602
    assert "weather" in caught.value.message


def test_reading_without_a_tracker_fails_with_the_fix(
    provider: ResourceProvider, tmp_path: Path
) -> None:
    missing = Tracker(tmp_path / ".agents" / "pm", env={})
    with pytest.raises(ProtocolError) as caught:
        provider.read(serve(missing), PREFIX + "context")
    assert "no tracker" in caught.value.message
    assert caught.value.data["hint"]


# ------------------------------------------------------------------ prompts


def test_three_prompts_with_their_required_arguments() -> None:
    specs = make_host().prompts()
    required = {
        name: [(a.name, a.required) for a in spec.arguments] for name, spec in specs.items()
    }
    assert required == {
        "orient": [("request", True), ("scope", False)],
        "claim-and-start": [("id", True)],
        "record-evidence-and-close": [("id", True), ("evidence", True)],
    }


def test_orient_renders_request_and_scope() -> None:
    text = make_host().prompts()["orient"].render({"request": "fix login", "scope": "auth/"})
    assert "fix login" in text and "Scope: auth/" in text
    assert "{{" not in text


def test_orient_without_scope_drops_the_scope_line() -> None:
    text = make_host().prompts()["orient"].render({"request": "fix login"})
    assert "Scope" not in text and "{{" not in text
    assert "\n\n\n" not in text


def test_claim_and_start_names_the_item_in_each_step() -> None:
    text = make_host().prompts()["claim-and-start"].render({"id": "pm-a1b2"})
    assert "pm_claim pm-a1b2" in text and "pm_focus pm-a1b2" in text


def test_record_evidence_and_close_includes_the_evidence() -> None:
    text = (
        make_host()
        .prompts()["record-evidence-and-close"]
        .render({"id": "pm-a1b2", "evidence": "tests pass: 41 passed"})
    )
    assert "tests pass: 41 passed" in text and "pm_close pm-a1b2" in text


@pytest.mark.parametrize(
    "name,args,missing",
    [
        ("orient", {"scope": "x"}, "request"),
        ("claim-and-start", {"id": "  "}, "id"),
        ("record-evidence-and-close", {"id": "pm-1"}, "evidence"),
    ],
)
def test_render_without_a_required_argument_names_it(
    name: str, args: dict[str, str], missing: str
) -> None:
    with pytest.raises(ValueError, match=f"missing required argument.*{missing}"):
        make_host().prompts()[name].render(args)


def test_an_argument_containing_braces_is_inserted_verbatim() -> None:
    text = make_host().prompts()["claim-and-start"].render({"id": "{{evidence}}"})
    assert "pm_claim {{evidence}}" in text
