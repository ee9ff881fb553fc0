"""Test commands linked to items, and their recorded runs.

Each linked command runs through the shell under its timeout; one ``test_runs``
entry per command is recorded through :meth:`Tracker.edit`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.gate import execution
from pm_core.tracker.model.clock import now_iso
from pm_core.tracker.model.errors import NoEffectError, NotFoundError, UsageError
from pm_core.tracker.model.item import Item

if TYPE_CHECKING:
    from pm_core.tracker.api import Receipt, Tracker

DEFAULT_TIMEOUT_SECONDS = 600
OUTPUT_TAIL_CHARS = 2000
#: Runs kept in the item file; older ones stay in history.
KEEP_RUNS = 50
APPROVE_HINT = "read it, then approve it: `pm test --approve --all` (each command is shown first)"


def repo_root(tracker: Tracker) -> Path:
    """The repository holding ``.agents/pm`` (commands run there)."""
    return tracker.root.parent.parent


def _check_timeout(value: int | float | None, what: str) -> None:
    if value is not None and (isinstance(value, bool) or value <= 0):
        raise UsageError(f"{what} must be a positive number of seconds, got {value!r}")


def test_add(
    tracker: Tracker,
    item_id: str,
    command: str,
    *,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    note: str | None = None,
) -> Receipt:
    """Link a test command to an item."""
    text = (command or "").strip()
    if not text:
        raise UsageError("empty test command", hint='pass the command, e.g. "pytest tests/unit"')
    _check_timeout(timeout_seconds, "timeout_seconds")
    allowed = execution.check_linking(text)
    count: dict[str, int] = {}

    def change(item: Item) -> None:
        if any(t.get("command") == text for t in item.tests):
            raise NoEffectError(
                f"{item.id} already links the test {text!r}", warning="noop_already_linked"
            )
        entry: dict[str, Any] = {
            "command": text,
            "scope": "project",
            "timeout_seconds": timeout_seconds,
        }
        if note:
            entry["note"] = note
        item.tests.append(entry)
        count["tests"] = len(item.tests)

    receipt = tracker.edit(item_id, "tests_add", change)
    execution.approve_linked(repo_root(tracker), text, allowed)
    receipt.update(count)
    return receipt


def test_remove(tracker: Tracker, item_id: str, command: str) -> Receipt:
    """Unlink a test by its command (or 1-based position)."""
    ref = (command or "").strip()

    def change(item: Item) -> None:
        kept = [t for t in item.tests if t.get("command") != ref and t.get("path") != ref]
        if len(kept) == len(item.tests) and ref.isdigit() and 1 <= int(ref) <= len(item.tests):
            kept = [t for n, t in enumerate(item.tests, start=1) if n != int(ref)]
        if len(kept) == len(item.tests):
            raise NotFoundError(
                f"{item.id} links no test {ref!r}", hint="`pm test <id>` lists them"
            )
        item.tests = kept

    return tracker.edit(item_id, "tests_remove", change)


def test_list(tracker: Tracker, item_id: str) -> dict[str, Any]:
    """The linked tests and the most recent run of each command."""
    item = tracker.get(item_id)
    last: dict[str, Mapping[str, Any]] = {}
    for run in item.test_runs:
        last[str(run.get("command"))] = run
    from pm_core.tracker.gate.approvals import is_approved

    repo = repo_root(tracker)
    tests = []
    for test in item.tests:
        row: dict[str, Any] = dict(test)
        if test.get("command"):
            row["approved"] = is_approved(repo, str(test["command"]))
        latest = last.get(str(test.get("command")))
        if latest is not None:
            row["last_run"] = {
                "started_at": latest.get("started_at"),
                "passed": latest.get("passed"),
                "exit_code": latest.get("exit_code"),
            }
        tests.append(row)
    return {"id": item.id, "tests": tests, "runs": len(item.test_runs)}


def child_env(repo: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a linked test runs in: the repository's, not pm's own.

    When pm runs from a virtual environment outside ``repo`` (pipx, ``uv tool``,
    a checkout's ``.venv/bin`` on ``PATH``), its ``bin`` folder is taken off
    ``PATH`` and its ``VIRTUAL_ENV`` unset, so ``pytest`` and ``python`` are
    the project's. A pm installed inside the repository's own environment is
    that environment, and is left alone.
    """
    import sys

    out = dict(os.environ if env is None else env)
    prefix = Path(sys.prefix).resolve()
    if prefix == Path(sys.base_prefix).resolve():
        return out  # not a virtual environment
    try:
        prefix.relative_to(repo.resolve())
    except ValueError:
        pass
    else:
        return out  # the repository's own environment
    own_bins = {str(prefix / "bin"), str(prefix / "Scripts")}
    kept = [
        p
        for p in out.get("PATH", "").split(os.pathsep)
        if p and str(Path(p).resolve()) not in own_bins
    ]
    out["PATH"] = os.pathsep.join(kept)
    virtual = out.get("VIRTUAL_ENV")
    if virtual and Path(virtual).resolve() == prefix:
        del out["VIRTUAL_ENV"]
    return out


def run_command(command: str, cwd: Path, timeout: float) -> dict[str, Any]:
    """Run one linked shell command with a timeout; the whole process group dies on timeout.

    The command runs only when the policy in force allows it
    (:func:`pm_core.tracker.gate.execution.check_linked`): by default, when this
    clone approved its exact text.

    A new session is used so a command that spawns children (a shell running
    ``sleep``, a test runner with workers) cannot outlive its timeout and keep
    the output pipe open.
    """
    execution.check_linked(cwd, [{"id": "", "command": command}], APPROVE_HINT)
    started_at = now_iso()
    start = time.monotonic()
    process = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=child_env(cwd),
    )
    timed_out = False
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    text = (output or b"").decode("utf-8", errors="replace")
    exit_code = None if timed_out else process.returncode
    return {
        "command": command,
        "exit_code": exit_code,
        "passed": not timed_out and exit_code == 0,
        "duration_ms": int((time.monotonic() - start) * 1000),
        "started_at": started_at,
        "output_tail": text[-OUTPUT_TAIL_CHARS:],
        "timed_out": timed_out,
    }


def test_run(
    tracker: Tracker, item_id: str, *, timeout_seconds: int | float | None = None
) -> dict[str, Any]:
    """Run every linked test command and record the results on the item.

    ``timeout_seconds`` overrides each link's own timeout. Path-only links
    (no command) are reported as skipped.
    """
    _check_timeout(timeout_seconds, "timeout_seconds")
    item = tracker.get(item_id)
    commands = [t for t in item.tests if t.get("command")]
    skipped = [str(t.get("path")) for t in item.tests if not t.get("command")]
    if not commands:
        raise NoEffectError(
            f"{item.id} has no test commands to run",
            hint=f'link one: `pm test {item.id} --add "pytest tests/unit"`',
            warning="noop_no_linked_tests",
        )
    cwd = repo_root(tracker)
    execution.check_linked(
        cwd,
        [{"id": item.id, "command": str(t["command"])} for t in commands],
        f"read them, then approve: `pm test {item.id} --approve` (each command is shown first)",
    )
    runs = []
    for test in commands:
        limit = timeout_seconds or float(test.get("timeout_seconds") or DEFAULT_TIMEOUT_SECONDS)
        runs.append(run_command(str(test["command"]), cwd, float(limit)))
    author = tracker.author

    def change(target: Item) -> None:
        for run in runs:
            record = {k: v for k, v in run.items() if k != "output_tail"}
            record["author"] = author
            target.test_runs.append(record)
        del target.test_runs[:-KEEP_RUNS]

    passed = sum(1 for r in runs if r["passed"])
    tracker.edit(
        item.id,
        "test_run_track",
        change,
        message=f"tests: {passed} passed, {len(runs) - passed} failed",
    )
    result: dict[str, Any] = {
        "id": item.id,
        "runs": runs,
        "summary": {"passed": passed, "failed": len(runs) - passed},
    }
    if skipped:
        result["skipped"] = skipped
    return result
