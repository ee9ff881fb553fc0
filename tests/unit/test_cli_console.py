"""The console script leaves without the interpreter's teardown, but never without flushing."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pm_core.cli import main as entry


class Left(Exception):
    """Raised by the stand-in for ``os._exit``."""


def _fake_exit(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    codes: list[int] = []

    def leave(code: int) -> None:
        codes.append(code)
        raise Left

    monkeypatch.setattr(os, "_exit", leave)
    return codes


def test_console_runs_atexit_handlers_flushes_then_leaves_with_the_exit_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps: list[object] = []
    monkeypatch.setattr(entry, "main", lambda: 3)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest's own threads aside
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: steps.append("atexit"))

    class Out:
        def flush(self) -> None:
            steps.append("flush")

    monkeypatch.setattr(sys, "stdout", Out())

    def leave(code: int) -> None:
        steps.append(code)
        raise Left

    monkeypatch.setattr(os, "_exit", leave)
    with pytest.raises(Left):
        entry.console()
    assert steps == ["atexit", "flush", 3]


def test_a_real_process_runs_its_atexit_handlers_and_prints_everything() -> None:
    program = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "from pm_core.cli.main import console\n"
        "sys.argv = ['pm', '--version']\n"
        "console()\n"
    )
    # Buffered output, as on most machines: what a handler prints must still arrive.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("pm ")
    assert done.stdout.splitlines()[-1] == "handler ran"


def test_console_takes_the_usual_exit_while_another_thread_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    codes = _fake_exit(monkeypatch)
    monkeypatch.setattr(entry, "main", lambda: 0)
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        with pytest.raises(SystemExit) as exited:
            entry.console()
    finally:
        stop.set()
        worker.join()
    assert exited.value.code == 0
    assert codes == []


def test_console_takes_the_usual_exit_when_output_cannot_be_flushed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    codes = _fake_exit(monkeypatch)
    monkeypatch.setattr(entry, "main", lambda: 0)

    class Full:
        def flush(self) -> None:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    with pytest.raises(SystemExit):
        entry.console()
    assert codes == []


def test_the_installed_script_delivers_every_byte_of_a_large_answer(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("pm")
    env = {**os.environ, "PM_AUTHOR": "t", "PM_PATH": str(tmp_path / ".agents" / "pm")}
    env.pop("PM_INDEX", None)
    subprocess.run([script, "init"], cwd=tmp_path, env=env, check=True, capture_output=True)
    body = "x" * 200_000
    (tmp_path / "body.md").write_text(body)
    created = subprocess.run(
        [script, "--json", "create", "Big", "--body-file", "body.md"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    item_id = json.loads(created.stdout)["id"]
    shown = subprocess.run(
        [script, "--json", "get", item_id], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["item"]["body"] == body
    missing = subprocess.run(
        [script, "get", "pm-zzzz"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert missing.returncode == 3
    assert missing.stderr.startswith("error: ")


def test_the_script_leaves_no_write_ahead_log_behind(tmp_path: Path) -> None:
    # A log left behind (no close, no checkpoint) is re-read by every later
    # process's first open: a 30 MB log after a first build cost each read ~30 ms.
    script = Path(sys.executable).with_name("pm")
    root = tmp_path / ".agents" / "pm"
    env = {**os.environ, "PM_AUTHOR": "t", "PM_PATH": str(root)}
    env.pop("PM_INDEX", None)
    for args in (["init"], ["create", "One"], ["list"], ["search", "one"], ["next"]):
        done = subprocess.run([script, *args], cwd=tmp_path, env=env, capture_output=True)
        assert done.returncode == 0, done.stderr
    runtime = sorted(p.name for p in (root / "runtime").iterdir())
    assert "index.sqlite" in runtime
    assert "index.sqlite-wal" not in runtime and "index.sqlite-shm" not in runtime, runtime
