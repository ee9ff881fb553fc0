"""Adopting pm in another repository: the author from git, tests run in the project's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.ops.linked_tests import child_env


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_the_author_falls_back_to_git_user_name(repo: Path, tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    _git(repo, "config", "user.name", "Ada Lovelace")
    tracker = Tracker(repo / ".agents" / "pm", env={**home, "PATH": os.environ["PATH"]})
    receipt = tracker.create({"title": "Mine"})
    assert tracker.get(str(receipt["id"])).author == "Ada Lovelace"
    # PM_AUTHOR and an explicit author still win
    named = Tracker(repo / ".agents" / "pm", env={**home, "PM_AUTHOR": "bot"})
    assert named.author == "bot"
    assert Tracker(repo / ".agents" / "pm", author="cli", env=home).author == "cli"


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs pm run from a virtualenv")
def test_linked_tests_run_without_pms_own_virtualenv(tmp_path: Path) -> None:
    own_bin = str(Path(sys.prefix) / "bin")
    env = {"PATH": os.pathsep.join([own_bin, "/usr/bin", "/bin"]), "VIRTUAL_ENV": sys.prefix}
    project = tmp_path / "project"
    project.mkdir()
    child = child_env(project, env)
    assert child["PATH"].split(os.pathsep) == ["/usr/bin", "/bin"]
    assert "VIRTUAL_ENV" not in child
    # pm installed in the project's own environment is that environment: left alone
    assert child_env(Path(sys.prefix).parent, env) == env


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs pm run from a virtualenv")
def test_a_test_run_does_not_see_pms_python(
    tracker: Tracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    own_bin = str(Path(sys.prefix) / "bin")
    monkeypatch.setenv("PATH", os.pathsep.join([own_bin, os.environ.get("PATH", "")]))
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    item = str(tracker.create({"title": "Env"})["id"])
    check = 'test -z "$VIRTUAL_ENV" && ! echo ":$PATH:" | grep -q ":' + own_bin + ':"'
    tracker.test_add(item, f"sh -c '{check}'")
    result = tracker.test_run(item)
    assert result["summary"] == {"passed": 1, "failed": 0}, result["runs"]
