"""Talking to a tracker's index watcher over ``runtime/watch.sock`` (one JSON line each way).

Every failure is an :class:`OSError` or :class:`ValueError`; the caller then
lists the files itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

SOCKET = "watch.sock"
LOCK = "watch.lock"
LOG = "watch.log"
#: Written by a client that starts a watcher, removed by the watcher once it listens:
#: a fresh one means "starting (or failed to start) just now, do not start another".
SPAWNED = "watch.spawned"
#: How long a just-started watcher is given before another start is tried.
SPAWN_GRACE_S = 10.0
#: How long a client waits for an answer before listing the files itself.
TIMEOUT_S = 0.5
_SUN_PATH_MAX = 100
#: Opening a file of runtime/ for writing: created if missing, never through a symlink.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
_MAX_ANSWER = 64 * 1024 * 1024


@contextlib.contextmanager
def _address(runtime: Path) -> Iterator[str]:
    path = os.path.join(runtime, SOCKET)
    if len(os.fsencode(path)) < _SUN_PATH_MAX:
        yield path
        return
    # Too long for sun_path: name the folder through an open descriptor instead.
    fd = os.open(runtime, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET}"
    finally:
        os.close(fd)


def request(runtime: Path, message: dict[str, Any], timeout: float = TIMEOUT_S) -> dict[str, Any]:
    """Send one request to the watcher of ``runtime`` and return its answer.

    Requests and answers are one JSON line each: ``{"op": "changes", "since":
    TOKEN|null, "folders": [...]}`` answers ``{"token", "full": true}`` or
    ``{"token", "paths", "full_folders"}``; ``{"op": "status"}`` and
    ``{"op": "stop"}`` report and end the watcher. A socket path too long for
    ``sun_path`` is reached through ``/proc/self/fd/N/watch.sock``.

    Raises :class:`OSError` (no watcher, refused, timed out) or
    :class:`ValueError` (an answer that is not a JSON object).
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with _address(runtime) as address, contextlib.closing(sock):
        sock.settimeout(timeout)
        sock.connect(address)
        sock.sendall(json.dumps(message).encode() + b"\n")
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n"):
                break
            if size > _MAX_ANSWER:
                raise ValueError("the watcher's answer is too long")
    answer = json.loads(b"".join(chunks) or b"null")
    if not isinstance(answer, dict):
        raise ValueError(f"the watcher answered {answer!r}")
    if "error" in answer:
        raise ValueError(f"the watcher refused: {answer['error']}")
    return answer


def changes(runtime: Path, since: str | None, folders: Sequence[str]) -> dict[str, Any]:
    """What changed in ``folders`` since ``since`` (see the module docstring)."""
    answer = request(runtime, {"op": "changes", "since": since, "folders": list(folders)})
    token = answer.get("token")
    if not isinstance(token, str):
        raise ValueError("the watcher's answer has no token")
    if answer.get("full") is True:
        return answer
    for key in ("paths", "full_folders"):
        value = answer.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"the watcher's answer has no list of names under {key!r}")
    return answer


def socket_exists(runtime: Path) -> bool:
    """Whether a watcher socket file is there (it may be stale)."""
    return os.path.exists(os.path.join(runtime, SOCKET))


def lock_held(runtime: Path) -> bool:
    """Whether a watcher holds the lock of ``runtime`` (running, or starting)."""
    import fcntl

    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(os.path.join(runtime, LOCK), flags)
    except OSError:
        return False  # missing, or not a plain file (a link or a pipe planted there)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def spawn(root: Path, idle_seconds: float) -> bool:
    """Start the watcher of ``root`` in the background unless one runs or is starting.

    Returns whether a start was attempted. The watcher is started through
    ``sh -c '... &'`` so it is nobody's child (no zombie in a long-lived
    caller); this waits only for that shell, never for the watcher.
    """
    import subprocess

    from pm_core.tracker.gate.execution import internal_process

    runtime = root / "runtime"
    if lock_held(runtime):
        return False
    marker = runtime / SPAWNED
    with contextlib.suppress(OSError):
        if time.time() - marker.stat().st_mtime < SPAWN_GRACE_S:
            return False
    try:
        # runtime/ sits in the user's checkout: never follow a link planted there.
        os.close(os.open(marker, _CREATE | os.O_TRUNC, 0o600))
        os.utime(marker)
        with (
            os.fdopen(os.open(runtime / LOG, _CREATE | os.O_APPEND, 0o600), "ab") as log,
            internal_process(),  # pm's own index watcher, not a caller's command
        ):
            proc = subprocess.Popen(
                [
                    "/bin/sh",
                    "-c",
                    '"$@" </dev/null >/dev/null &',
                    "sh",
                    sys.executable,
                    # -P, and a neutral working folder: the checkout's own files
                    # (a json.py, a secrets.py) must never be imported as modules.
                    "-P",
                    "-m",
                    "pm_core.tracker.index.watch.daemon",
                    os.path.abspath(root),
                    "--idle",
                    str(idle_seconds),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                close_fds=True,
                start_new_session=True,
                cwd="/",
                env=_daemon_env(),
            )
            proc.wait(timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _daemon_env() -> dict[str, str]:
    import pm_core

    env = dict(os.environ)
    # The watcher imports pm_core from wherever this process did.
    home = str(Path(pm_core.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    return env


def status(runtime: Path) -> dict[str, Any] | None:
    """The running watcher's own account, or None when none answers."""
    try:
        return request(runtime, {"op": "status"})
    except (OSError, ValueError):
        return None


def stop(runtime: Path, wait: float = 5.0) -> bool:
    """Ask the watcher to exit and wait until its lock is free; whether one was running.

    A watcher a read has just started is waited for (up to ``wait``), so it
    is stopped too rather than coming up afterwards.
    """
    deadline = time.monotonic() + wait
    asked = False
    while True:
        try:
            request(runtime, {"op": "stop"})
            asked = True
            break
        except (OSError, ValueError):
            if time.monotonic() >= deadline or not _starting(runtime):
                break
            time.sleep(0.05)
    while lock_held(runtime) and time.monotonic() < deadline:
        time.sleep(0.02)
    return asked


def _starting(runtime: Path) -> bool:
    """Whether a watcher was started a moment ago and does not listen yet."""
    try:
        return time.time() - (runtime / SPAWNED).stat().st_mtime < SPAWN_GRACE_S
    except OSError:
        return False


__all__ = [
    "LOCK",
    "LOG",
    "SOCKET",
    "SPAWNED",
    "changes",
    "lock_held",
    "request",
    "socket_exists",
    "spawn",
    "status",
    "stop",
]
