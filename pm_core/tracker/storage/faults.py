"""Crash injection for tests: die by SIGKILL at a named step of a write.

A test harness, not a feature: ``PM_FAULT_KILL_AT`` names the step
(see :func:`checkpoint`).
"""

from __future__ import annotations

import functools
import os

ENV_VAR = "PM_FAULT_KILL_AT"
STEPS: tuple[str, ...] = ("locked", "temp_written", "renamed", "history_appended")


@functools.cache
def _target() -> str | None:
    return os.environ.get(ENV_VAR) or None


def checkpoint(step: str) -> None:
    """Kill this process with SIGKILL when ``PM_FAULT_KILL_AT`` equals ``step``.

    No ``finally`` block, lock release or cleanup runs, as after an out-of-memory
    kill. Steps, in the order a write passes them: ``locked`` (lock held, nothing
    written), ``temp_written`` (new bytes fsynced in a temp file), ``renamed`` (item
    file holds the new state, history not appended), ``history_appended`` (file
    and history agree, lock not released).
    """
    if _target() == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
