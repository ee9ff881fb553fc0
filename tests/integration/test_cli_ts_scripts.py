"""Script lines written for the TypeScript pm run on ours with the same effect.

Each scenario is a list of command lines; both implementations run them in
fresh repositories, and the test compares what a script reads: exit codes,
the mutation receipt's ``id``/``status``/``changed_field_count``, ``--id-only``
and ``--quiet`` output, and the resulting item. The TypeScript pm is
``$PM_UPSTREAM_BIN/pm``; without it the test skips, except under ``CI=true``
where its absence fails.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.pm_cli import pm_executable

Run = Callable[..., subprocess.CompletedProcess[str]]


def _upstream() -> list[str]:
    folder = os.environ.get("PM_UPSTREAM_BIN", "")
    binary = Path(folder) / "pm" if folder else None
    if binary is None or not binary.exists():
        message = "PM_UPSTREAM_BIN does not name the TypeScript pm's bin folder"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    return [str(binary)]


def _runner(command: list[str], repo: Path) -> Run:
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = {**os.environ, "PM_AUTHOR": "scripter", "NO_COLOR": "1"}
    env.pop("PM_PATH", None)

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            cwd=repo,
            env=env,
            text=True,
            capture_output=True,
            input=stdin,
            timeout=120,
        )

    assert run("init").returncode == 0
    return run


@pytest.fixture
def both(tmp_path: Path) -> dict[str, Run]:
    return {
        "theirs": _runner(_upstream(), tmp_path / "theirs"),
        "ours": _runner(pm_executable(), tmp_path / "ours"),
    }


def _json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
    return json.loads(proc.stdout)


def test_positional_create_comments_append_close_and_receipts(both: dict[str, Run]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for name, run in both.items():
        created = _json(run("--json", "create", "Task", "Fix the login bug"))
        item = created["id"]
        assert set(created) >= {"id", "status", "changed_field_count"}, name
        plain = _json(run("--json", "create", "Only a title"))
        comment = run("comments", item, "first comment")
        note = run("notes", item, "a note")
        learning = run("learnings", item, "a learning")
        append = run("append", item, "more body")
        id_only = _json(run("--json", "--id-only", "update", item, "--priority", "1"))
        quiet = run("--quiet", "update", item, "--priority", "0")
        no_fields = _json(run("--json", "--no-changed-fields", "update", item, "--priority", "2"))
        closed = _json(run("--json", "close", item, "done: tests pass"))
        shown = _json(run("--json", "--lean", "get", item))
        seen[name] = {
            "codes": [p.returncode for p in (comment, note, learning, append, quiet)],
            "id_only": sorted(id_only),
            "quiet_out": quiet.stdout,
            "no_fields_has_list": "changed_fields" in no_fields,
            "closed": closed["status"],
            "title": shown["item"]["title"],
            "type": shown["item"]["type"],
            "plain_type": _json(run("--json", "get", plain["id"]))["item"]["type"],
            "comments": [c["text"] for c in _json(run("--json", "comments", item))["comments"]],
            "close_reason": shown["item"]["close_reason"],
        }
    assert seen["ours"] == seen["theirs"]
    assert seen["ours"]["codes"] == [0, 0, 0, 0, 0]
    assert seen["ours"]["id_only"] == ["id", "status"]
    assert seen["ours"]["comments"] == ["first comment"]


def test_pm_path_names_the_tracker_from_anywhere(both: dict[str, Run], tmp_path: Path) -> None:
    outcomes = {}
    for name, run in both.items():
        tracker = tmp_path / name / ".agents" / "pm"
        created = _json(run("--json", "--pm-path", str(tracker), "create", "Via pm-path"))
        listed = _json(run("--json", "--pm-path", str(tracker), "list"))
        outcomes[name] = [i["id"] for i in listed["items"]] == [created["id"]]
    assert outcomes == {"theirs": True, "ours": True}
