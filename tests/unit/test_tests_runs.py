"""Linked test commands: add/remove/list, and runs that pass, fail and time out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import NoEffectError, NotFoundError, UsageError
from pm_core.tracker.ops import linked_tests as runs
from tests.support.trackers import add, make_tracker

PY = sys.executable


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def test_run_records_pass_fail_and_timeout(t: Tracker) -> None:
    item = add(t, "Tested")
    runs.test_add(t, item, "echo ok")
    runs.test_add(t, item, "exit 3")
    runs.test_add(t, item, "sleep 30", timeout_seconds=1)
    result = runs.test_run(t, item)
    passed, failed, slow = result["runs"]
    assert (passed["passed"], passed["exit_code"], passed["output_tail"]) == (True, 0, "ok\n")
    assert (failed["passed"], failed["exit_code"], failed["timed_out"]) == (False, 3, False)
    assert (slow["passed"], slow["exit_code"], slow["timed_out"]) == (False, None, True)
    assert slow["duration_ms"] < 10_000, "the timeout kills the whole process group"
    assert result["summary"] == {"passed": 1, "failed": 2}
    recorded = t.get(item).test_runs
    assert [r["passed"] for r in recorded] == [True, False, False]
    assert all("output_tail" not in r and r["author"] == "alice" for r in recorded)
    assert t.history(item)[-1].op == "test_run_track"


def test_timeout_override_applies_to_every_command(t: Tracker) -> None:
    item = add(t, "Slow")
    runs.test_add(t, item, "sleep 30")
    (run,) = runs.test_run(t, item, timeout_seconds=0.5)["runs"]
    assert run["timed_out"] is True


def test_output_tail_is_bounded_to_the_last_2000_characters(t: Tracker) -> None:
    item = add(t, "Chatty")
    runs.test_add(t, item, f"{PY} -c \"print('a' * 5000 + 'END')\"")
    (run,) = runs.test_run(t, item)["runs"]
    assert len(run["output_tail"]) == 2000
    assert run["output_tail"].endswith("END\n")


def test_commands_run_in_the_repository_root(t: Tracker, tmp_path: Path) -> None:
    item = add(t, "Where")
    runs.test_add(t, item, f'{PY} -c "import os; print(os.getcwd())"')
    (run,) = runs.test_run(t, item)["runs"]
    assert Path(run["output_tail"].strip()).resolve() == tmp_path.resolve()


def test_add_list_and_remove_links(t: Tracker) -> None:
    item = add(t, "Links")
    assert runs.test_add(t, item, "echo a", note="smoke")["tests"] == 1
    with pytest.raises(NoEffectError, match="already links"):
        runs.test_add(t, item, "echo a")
    runs.test_run(t, item)
    listed = runs.test_list(t, item)
    assert listed["tests"][0]["command"] == "echo a"
    assert listed["tests"][0]["note"] == "smoke"
    assert listed["tests"][0]["last_run"]["passed"] is True
    runs.test_remove(t, item, "echo a")
    assert runs.test_list(t, item)["tests"] == []
    with pytest.raises(NotFoundError):
        runs.test_remove(t, item, "echo a")


def test_bad_test_input_is_refused(t: Tracker) -> None:
    item = add(t, "Empty")
    with pytest.raises(NoEffectError, match="no test commands"):
        runs.test_run(t, item)
    with pytest.raises(UsageError, match="empty test command"):
        runs.test_add(t, item, "  ")
    with pytest.raises(UsageError, match="positive"):
        runs.test_add(t, item, "echo", timeout_seconds=0)
