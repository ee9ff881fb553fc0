"""Crash injection for tests: die by SIGKILL at a named step of a write.

A test harness, not a feature. The write path calls :func:`checkpoint` between
its steps; when the environment variable ``PM_FAULT_KILL_AT`` names that step,
the process kills itself with SIGKILL, exactly as an out-of-memory kill or a
pulled plug would: no ``finally`` blocks, no lock release, no cleanup. Crash
tests use it to prove that every step boundary leaves a state that parses,
that ``pm validate`` describes precisely, and that ``pm validate --fix``
repairs without losing the newer item.

Steps, in the order a write passes them:

``locked``
    the item lock is held; nothing written yet.
``temp_written``
    the new bytes are in a temp file next to the target, fsynced, not renamed.
``renamed``
    the item file holds the new state; its history entry is not appended yet.
``history_appended``
    file and history agree; the lock is not released yet.

The variable is read once per process, so an unset variable costs one
dictionary lookup per checkpoint.
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
    """Kill this process with SIGKILL when ``PM_FAULT_KILL_AT`` equals ``step``."""
    if _target() == step:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
