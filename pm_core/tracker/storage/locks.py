"""Item locks: ``locks/<id>.lock`` created exclusively, with a TTL.

A stale lock (gone process or past TTL) is taken over; a live holder past the
wait is a conflict naming the holder.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pm_core.tracker.model.clock import now_iso, parse_iso
from pm_core.tracker.model.errors import ConflictError

DEFAULT_TTL_SECONDS = 1800
DEFAULT_WAIT_MS = 3000


def _hostname() -> str:
    if hasattr(os, "uname"):
        return os.uname().nodename  # gethostname(2)'s answer, without importing socket
    import socket

    return socket.gethostname()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_lock(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lock_is_stale(info: dict[str, Any], path: Path) -> bool:
    """A lock is stale when expired, unreadable and old, or held by a dead local process."""
    try:
        created = parse_iso(str(info["created_at"])).timestamp()
        ttl = float(info.get("ttl_seconds", DEFAULT_TTL_SECONDS))
    except (KeyError, ValueError, TypeError):
        # Unreadable or half-written: stale once it is older than a few seconds.
        try:
            return time.time() - path.stat().st_mtime > 5
        except FileNotFoundError:
            return True
    if time.time() > created + ttl:
        return True
    host = info.get("host")
    if host in (None, _hostname()):
        try:
            return not _pid_alive(int(info.get("pid", 0)))
        except (TypeError, ValueError):
            return True
    return False


@contextlib.contextmanager
def item_lock(
    locks_dir: Path,
    item_id: str,
    owner: str,
    *,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    wait_ms: int = DEFAULT_WAIT_MS,
) -> Iterator[Path]:
    """Hold ``locks/<item_id>.lock`` for the duration of the block."""
    locks_dir.mkdir(parents=True, exist_ok=True)
    path = locks_dir / f"{item_id}.lock"
    payload = json.dumps(
        {
            "id": item_id,
            "pid": os.getpid(),
            "host": _hostname(),
            "owner": owner,
            "created_at": now_iso(),
            "ttl_seconds": ttl_seconds,
        }
    ).encode("utf-8")
    deadline = time.monotonic() + wait_ms / 1000
    # Threads of one process (pm-mcp over HTTP) queue on an in-process lock first:
    # polling the file with backoff alone lets one waiter lose every race.
    local = _local_lock(path)
    if not local.acquire(timeout=max(0.0, wait_ms / 1000)):
        raise ConflictError(
            f"{item_id} is locked by another request in this process",
            hint="retry; the lock is held only for the duration of one write",
        )
    try:
        _acquire_file(path, item_id, payload, deadline, ttl_seconds)
    except BaseException:
        local.release()
        raise
    try:
        yield path
    finally:
        try:
            with contextlib.suppress(FileNotFoundError):
                current = _read_lock(path)
                if current is not None and current.get("pid") == os.getpid():
                    path.unlink()
        finally:
            local.release()


_LOCAL_LOCKS: dict[str, threading.Lock] = {}
_LOCAL_GUARD = threading.Lock()


def _local_lock(path: Path) -> threading.Lock:
    """The in-process lock for one lock file (created on first use)."""
    key = str(path)
    with _LOCAL_GUARD:
        lock = _LOCAL_LOCKS.get(key)
        if lock is None:
            lock = _LOCAL_LOCKS[key] = threading.Lock()
        return lock


def _acquire_file(
    path: Path, item_id: str, payload: bytes, deadline: float, ttl_seconds: int
) -> None:
    """Create the lock file with its whole content at once, waiting with backoff."""
    # Write the record to a private file, then hard-link it into place: the link
    # either fails (held) or publishes a complete record, so no reader ever sees
    # an empty or half-written lock, even if this process is killed mid-way.
    import tempfile  # lazy: reads never take a lock

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        delay = 0.025
        while True:
            try:
                os.link(tmp, path)
                return
            except FileExistsError:
                pass
            info = _read_lock(path)
            if info is None:
                continue  # released between our attempt and the read
            if lock_is_stale(info, path):
                _take_over(path, info)
                continue
            if time.monotonic() >= deadline:
                holder = info.get("owner", "unknown")
                pid = info.get("pid", "?")
                raise ConflictError(
                    f"{item_id} is locked by {holder} (pid {pid}) since "
                    f"{info.get('created_at', '?')}",
                    hint="retry when that process finishes; a dead holder's lock is taken over "
                    f"automatically after its TTL ({info.get('ttl_seconds', ttl_seconds)} s)",
                    details={"lock": info},
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _take_over(path: Path, seen: dict[str, Any]) -> None:
    """Remove a stale lock, but only if it is still the one we judged stale."""
    # Rename first so two processes cannot both remove a fresh lock taken in between.
    grave = path.with_name(f"{path.name}.stale.{os.getpid()}.{time.monotonic_ns()}")
    try:
        os.rename(path, grave)
    except FileNotFoundError:
        return
    current = _read_lock(grave)
    if current not in (seen, None) and current != {} and not lock_is_stale(current or {}, grave):
        # Someone re-took the lock after we read it: put it back.
        with contextlib.suppress(OSError):
            os.link(grave, path)
    with contextlib.suppress(FileNotFoundError):
        grave.unlink()


def lock_holder(locks_dir: Path, item_id: str) -> dict[str, Any] | None:
    """The current lock record of an item, if any."""
    return _read_lock(locks_dir / f"{item_id}.lock")
