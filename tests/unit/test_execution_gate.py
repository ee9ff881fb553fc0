"""The command-execution gate and the operator switches, in process."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ConfigurationError, ParamSpec, ToolContext
from pm_core.hosting import run_command
from pm_core.operator import OperatorPolicy
from pm_core.testing import make_host
from pm_core.tracker.api import Tracker
from pm_core.tracker.gate import approvals, execution
from pm_core.tracker.gate.execution import CommandRefusedError

DENY = OperatorPolicy().command_policy()


class Spawner:
    """An extension whose command starts a process the way a plugin would."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        def touch(ctx: ToolContext, target: str) -> Mapping[str, Any]:
            subprocess.run(["touch", target], check=True)
            return {"touched": target}

        return [
            CommandSpec(
                name="touch-file",
                summary="Create a file.",
                params=(ParamSpec("target", required=True),),
                handler=touch,
            )
        ]


def test_an_extension_handler_cannot_spawn_under_deny_and_can_otherwise(
    tracker: Tracker, tmp_path: Path
) -> None:
    host = make_host(("spawner", Spawner()))
    canary = tmp_path / "canary"
    with execution.policy(DENY), pytest.raises(CommandRefusedError) as refused:
        run_command("touch-file", tracker, {"target": str(canary)}, host=host)
    assert "PM_MCP_ALLOW_COMMANDS" in str(refused.value) + str(refused.value.hint)
    assert "touch-file" in refused.value.message
    assert not canary.exists()
    run_command("touch-file", tracker, {"target": str(canary)}, host=host)
    assert canary.exists()


def test_pm_own_processes_and_code_outside_extensions_are_not_gated(tmp_path: Path) -> None:
    with execution.policy(DENY):
        with execution.extension_call("x"), execution.internal_process():
            subprocess.run(["true"], check=True)
        subprocess.run(["true"], check=True)  # a library's helper, outside any extension
        with execution.extension_call("x"), pytest.raises(CommandRefusedError):
            subprocess.run(["true"], check=True)


def test_linked_commands_under_deny_are_refused_before_linking_or_running(
    tracker: Tracker, tmp_path: Path
) -> None:
    item = tracker.create({"title": "T"})["id"]
    canary = tmp_path / "canary"
    tracker.test_add(item, f"touch {canary}")
    with execution.policy(DENY):
        with pytest.raises(CommandRefusedError, match="off"):
            tracker.test_run(item)
        with pytest.raises(CommandRefusedError, match="linking"):
            tracker.test_add(item, "echo other")
        with pytest.raises(CommandRefusedError, match="linking"):
            tracker.update(item, {"tests": [{"command": "echo other"}]})
    assert not canary.exists()
    assert [t["command"] for t in tracker.get(item).tests] == [f"touch {canary}"]


def test_one_changed_character_is_another_approval(tracker: Tracker, tmp_path: Path) -> None:
    repo = tracker.root.parent.parent
    approvals.approve(repo, "echo a", via="test")
    assert approvals.is_approved(repo, "echo a")
    assert not approvals.is_approved(repo, "echo b")
    assert not approvals.is_approved(repo, "echo a ")
    # A record whose text does not match its name approves nothing.
    forged = approvals.store_dir(repo) / approvals.command_hash("echo b")
    forged.write_text('{"command": "echo a"}')
    assert not approvals.is_approved(repo, "echo b")


def test_without_git_approvals_live_in_runtime(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    tracker = Tracker(plain / ".agents" / "pm", author="t", env={})
    tracker.init()
    assert approvals.git_common_dir(plain) is None  # the temporary folder is in no repository
    assert approvals.store_dir(plain) == plain / ".agents" / "pm" / "runtime" / "approved-commands"
    item = tracker.create({"title": "T"})["id"]
    tracker.test_add(item, "true")
    assert tracker.test_list(item)["tests"][0]["approved"] is True


@pytest.mark.parametrize("value", ["2", "maybe", "enabled"])
def test_switch_values_that_are_neither_on_nor_off_are_configuration_errors(value: str) -> None:
    with pytest.raises(ConfigurationError, match="PM_MCP_READ_ONLY"):
        OperatorPolicy.from_env({"PM_MCP_READ_ONLY": value})


def test_deny_names_are_checked_against_the_tools() -> None:
    policy = OperatorPolicy.from_env({"PM_MCP_DENY": "pm_get,,pm_nope "})
    assert policy.deny == {"pm_get", "pm_nope"}
    with pytest.raises(ConfigurationError, match="pm_nope"):
        policy.check({"pm_get", "pm_list"})
    OperatorPolicy.from_env({"PM_MCP_DENY": "pm_get"}).check({"pm_get"})


def test_commands_switch_on_means_approvals_not_anything_goes() -> None:
    on = OperatorPolicy.from_env({"PM_MCP_ALLOW_COMMANDS": "yes"}).command_policy()
    assert on.mode == "approved"
    assert OperatorPolicy.from_env({}).command_policy().mode == "deny"
