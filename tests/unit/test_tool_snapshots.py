"""The committed ``tools/list`` snapshots match what is listed, and each profile is within its gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.tool_snapshots import (
    FOLDER,
    GATES,
    PROFILES,
    TS_FULL_TOKENS,
    fresh_repo,
    render,
    snapshot,
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_repo(tmp_path_factory.mktemp("snap"))


@pytest.mark.parametrize("profile", PROFILES)
def test_snapshot_has_not_drifted(profile: str, repo: Path) -> None:
    committed = (FOLDER / f"{profile}.json").read_text(encoding="utf-8")
    assert render(snapshot(profile, repo)) == committed, (
        f"tools/list at {profile} changed: run `python -m tests.support.tool_snapshots` "
        "and commit docs/generated/tools-list/"
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_tokens_are_within_the_gate(profile: str, repo: Path) -> None:
    data = snapshot(profile, repo)
    assert data["estimated_tokens"] <= GATES[profile], data["estimated_tokens"]


def test_full_stays_under_a_third_of_the_typescript_pm() -> None:
    full = json.loads((FOLDER / "full.json").read_text(encoding="utf-8"))
    assert full["estimated_tokens"] * 3 < TS_FULL_TOKENS
    assert GATES["full"] * 3 <= TS_FULL_TOKENS
