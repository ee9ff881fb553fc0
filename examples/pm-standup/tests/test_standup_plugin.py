"""The plugin registers its commands with the right tiers and shows up where they say."""

from __future__ import annotations

from pathlib import Path

from pm_core.sdk import Host, Tracker, list_tools, run_command


def run_actions(
    host: Host, profile: str, workspace: Path, allowlist: list[str] | None = None
) -> list[str] | None:
    """``pm_run``'s action list at ``profile``, or None when ``pm_run`` is not listed."""
    for tool in list_tools(profile, workspace, host=host, allowlist=allowlist):
        if tool.name == "pm_run":
            return list(tool.input_schema["properties"]["action"]["enum"])
    return None


def test_commands_are_registered_with_their_tiers(host: Host) -> None:
    commands = host.commands()
    assert (commands["standup"].tier, commands["standup"].family) == ("core", "orientation")
    assert commands["standup-digest"].tier == "internal"
    assert host.records["standup"].status == "ok"
    assert host.records["standup"].hooks == ["pm_register_commands"]


def test_core_profile_lists_pm_run_with_standup_but_never_the_digest(
    host: Host, root: Path
) -> None:
    for profile in ("core", "standard", "full"):
        actions = run_actions(host, profile, root)
        assert actions is not None and "standup" in actions, profile
        assert "standup-digest" not in actions, profile


def test_custom_profile_without_pm_run_does_not_list_it(host: Host, root: Path) -> None:
    assert run_actions(host, "custom", root, ["pm_get"]) is None


def test_internal_digest_still_runs_through_the_sdk(alice: Tracker, host: Host) -> None:
    alice.create({"title": "One"})
    report = run_command("standup-digest", alice, host=host)
    assert [row["author"] for row in report["authors"]] == ["alice"]
