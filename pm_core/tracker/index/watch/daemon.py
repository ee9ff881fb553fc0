"""The index watcher: one background process per tracker that remembers which files changed.

Run as ``python -m pm_core.tracker.index.watch.daemon ROOT [--idle SECONDS]``
(a read starts it); answers "what changed since TOKEN" from inotify events.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import secrets
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence
from types import FrameType
from typing import Any

from pm_core.tracker.index.watch.client import LOCK, SOCKET, SPAWNED
from pm_core.tracker.index.watch.inotify import (
    FOLDER_MASK,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_IGNORED,
    IN_ISDIR,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_Q_OVERFLOW,
    IN_UNMOUNT,
    ROOT_MASK,
    Event,
    Inotify,
    remote_filesystem,
)

#: Changed paths remembered; a token older than the oldest one forgotten gets "full".
LOG_MAX = 20_000
#: How often the watcher checks its socket and root even when nothing happens.
CHECK_S = 5.0
_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT
_MAX_REQUEST = 1 << 20


class Stop(Exception):
    """The watcher should exit (the reason is the message)."""


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write(f"{stamp} watch[{os.getpid()}] {message}\n")
    sys.stderr.flush()


class Watcher:
    """The watch state: inotify watches, the change log and the token."""

    def __init__(self, root: str, log_max: int = LOG_MAX) -> None:
        self.root = root
        self.inotify = Inotify()
        self.root_wd = self.inotify.add_watch(root, ROOT_MASK)
        self.epoch = secrets.token_hex(8)
        self.seq = 0
        #: The oldest token the log can answer for.
        self.floor = 0
        self.log_max = log_max
        #: relative path -> sequence of its last change, oldest first.
        self.log: dict[str, int] = {}
        #: folder -> (watch descriptor or None, first sequence its watch covers).
        self.folders: dict[str, tuple[int | None, int]] = {}
        self.by_wd: dict[int, str] = {}
        self.started = time.time()
        self.overflows = 0

    def token(self) -> str:
        """The current token."""
        return f"{self.epoch}:{self.seq}"

    def _bump(self) -> int:
        self.seq += 1
        return self.seq

    def watch_folder(self, name: str) -> None:
        """(Re)point the watch of ``name`` at what that path is now; older tokens get "full"."""
        old = self.folders.get(name)
        if old is not None and old[0] is not None:
            self.by_wd.pop(old[0], None)
            self.inotify.rm_watch(old[0])
        wd: int | None
        try:
            wd = self.inotify.add_watch(os.path.join(self.root, name), FOLDER_MASK)
        except OSError:
            wd = None  # missing (the root watch sees it come), or no watches left
        if wd is not None:
            self.by_wd[wd] = name
        self.folders[name] = (wd, self._bump())

    def drain(self) -> None:
        """Apply every event queued in the kernel now."""
        self.handle(self.inotify.read_events())

    def handle(self, events: Sequence[Event]) -> None:
        """Apply events to the log and the folder watches."""
        for wd, mask, name in events:
            if mask & IN_Q_OVERFLOW:
                self.overflows += 1
                self.floor = self._bump()
            elif wd == self.root_wd:
                self._root_event(mask, name)
            else:
                folder = self.by_wd.get(wd)
                if folder is None:
                    continue  # a watch already dropped
                if mask & _GONE:
                    self.watch_folder(folder)
                elif name and not mask & IN_ISDIR:
                    self._record(f"{folder}/{name}")

    def _root_event(self, mask: int, name: str) -> None:
        if mask & _GONE:
            raise Stop("the tracker root was removed or moved")
        if name == "runtime" and mask & (IN_DELETE | IN_MOVED_FROM):
            raise Stop("runtime/ was removed")
        if name in self.folders:
            self.watch_folder(name)

    def _record(self, rel: str) -> None:
        self.log.pop(rel, None)
        self.log[rel] = self._bump()
        while len(self.log) > self.log_max:
            oldest = next(iter(self.log))
            self.floor = max(self.floor, self.log.pop(oldest))

    def changes(self, since: Any, folders: Sequence[str]) -> dict[str, Any]:
        """The answer to "what changed in ``folders`` since ``since``"."""
        self.drain()
        for folder in folders:
            if folder not in self.folders:
                self.watch_folder(folder)
        token = self.token()
        seq = self._parse(since)
        if seq is None or seq < self.floor or seq > self.seq:
            return {"token": token, "full": True}
        paths: list[str] = []
        for rel, at in reversed(self.log.items()):
            if at <= seq:
                break
            paths.append(rel)
        full = [f for f in folders if self.folders[f][0] is None or self.folders[f][1] > seq]
        return {"token": token, "paths": paths, "full_folders": full}

    def _parse(self, since: Any) -> int | None:
        if not isinstance(since, str):
            return None
        epoch, _, seq = since.partition(":")
        if epoch != self.epoch or not seq.isdigit():
            return None
        return int(seq)

    def status(self) -> dict[str, Any]:
        """What is watched, for ``pm index status``."""
        return {
            "pid": os.getpid(),
            "root": self.root,
            "token": self.token(),
            "started": self.started,
            "folders": {name: wd is not None for name, (wd, _) in sorted(self.folders.items())},
            "logged_paths": len(self.log),
            "overflows": self.overflows,
        }

    def close(self) -> None:
        """Drop every watch."""
        self.inotify.close()


class Server:
    """The socket loop around a :class:`Watcher`."""

    def __init__(self, watcher: Watcher, sock: socket.socket, idle: float) -> None:
        self.watcher = watcher
        self.sock = sock
        self.idle = idle
        self.last_question = time.monotonic()
        self.socket_ino = os.stat(SOCKET).st_ino

    def run(self) -> str:
        """Serve until a reason to stop; returns it."""
        next_check = time.monotonic() + CHECK_S
        fd = self.watcher.inotify.fd
        while True:
            now = time.monotonic()
            idle_left = self.idle - (now - self.last_question)
            if idle_left <= 0:
                return f"idle for {self.idle:g} s"
            wait = max(0.0, min(idle_left, next_check - now))
            readable, _, _ = select.select([self.sock.fileno(), fd], [], [], wait)
            try:
                if fd in readable:
                    self.watcher.drain()
                if self.sock.fileno() in readable:
                    self._answer_one()
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + CHECK_S
                    self._check()
            except Stop as stop:
                return str(stop)

    def _check(self) -> None:
        try:
            if os.stat(SOCKET).st_ino != self.socket_ino:
                raise Stop("the socket was replaced")
        except FileNotFoundError:
            raise Stop("the socket was removed") from None
        if not os.path.isdir(self.watcher.root):
            raise Stop("the tracker root is gone")

    def _answer_one(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        with conn:
            conn.settimeout(2.0)
            try:
                answer = self._question(conn)
                conn.sendall(json.dumps(answer).encode() + b"\n")
            except (OSError, ValueError) as exc:
                _log(f"bad question: {exc}")
                return
            if answer.get("stopping"):
                raise Stop("asked to stop")

    def _question(self, conn: socket.socket) -> dict[str, Any]:
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        if uid != os.getuid():
            return {"error": "another user"}
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            data += chunk
            if len(data) > _MAX_REQUEST:
                return {"error": "request too long"}
        message = json.loads(data or b"null")
        if not isinstance(message, dict):
            return {"error": "a request is a JSON object"}
        op = message.get("op")
        if op == "changes":
            folders = message.get("folders")
            if not isinstance(folders, list) or not all(_folder_name(f) for f in folders):
                return {"error": "folders must be a list of folder names"}
            self.last_question = time.monotonic()
            return self.watcher.changes(message.get("since"), folders)
        if op == "status":
            status = self.watcher.status()
            status["idle_seconds"] = self.idle
            status["idle_for"] = round(time.monotonic() - self.last_question, 1)
            return status
        if op == "stop":
            return {"stopping": True}
        return {"error": f"unknown op {op!r}"}


def _folder_name(value: Any) -> bool:
    return (
        isinstance(value, str)
        and value not in ("", ".", "..", "runtime")
        and "/" not in value
        and "\0" not in value
    )


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    raise Stop(f"signal {signum}")


def serve(root: str, idle: float, log_max: int = LOG_MAX) -> int:
    """Watch ``root`` until idle or told to stop; 0 also when another watcher already runs."""
    runtime = os.path.join(root, "runtime")
    os.umask(0o077)
    try:
        lock = os.open(
            os.path.join(runtime, LOCK),
            os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0),
            0o600,
        )
    except OSError as exc:
        _log(f"cannot open the lock in {runtime}: {exc}")
        return 1
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0  # another watcher has this tracker
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    # Relative names from here on: the socket path may be too long for sun_path.
    os.chdir(runtime)
    kind = remote_filesystem(root)
    if kind is not None:
        _log(f"not watching: {root} is on a {kind} file system (changes made elsewhere are unseen)")
        return 1
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _on_signal)
    watcher: Watcher | None = None
    sock: socket.socket | None = None
    bound: int | None = None
    reason = "failed to start"
    try:
        watcher = Watcher(root, log_max)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(SOCKET)  # a dead watcher's (the lock says none runs)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(SOCKET)
        os.chmod(SOCKET, 0o600)
        bound = os.stat(SOCKET).st_ino
        sock.listen(64)
        sock.setblocking(False)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(SPAWNED)
        _log(f"watching {root} (idle exit after {idle:g} s)")
        reason = Server(watcher, sock, idle).run()
    except Stop as stop:
        reason = str(stop)
    except OSError as exc:
        reason = f"error: {exc}"
    finally:
        if sock is not None:
            sock.close()
        if bound is not None:
            _unlink_own_socket(bound)
        if watcher is not None:
            watcher.close()
        _log(f"stopped: {reason}")
    return 0


def _unlink_own_socket(inode: int) -> None:
    # Only the file this process bound (still under the lock): never a successor's.
    with contextlib.suppress(OSError):
        if os.stat(SOCKET).st_ino == inode:
            os.unlink(SOCKET)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``ROOT [--idle SECONDS] [--log-max N]``."""
    parser = argparse.ArgumentParser(prog="python -m pm_core.tracker.index.watch.daemon")
    parser.add_argument("root", help="the tracker root (the .agents/pm folder)")
    parser.add_argument("--idle", type=float, default=600.0, help="exit after this many idle s")
    parser.add_argument("--log-max", type=int, default=LOG_MAX, help="changed paths remembered")
    args = parser.parse_args(argv)
    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "runtime")):
        parser.error(f"{root} has no runtime/ folder")
    if args.idle <= 0 or args.log_max < 1:
        parser.error("--idle and --log-max must be positive")
    return serve(root, args.idle, args.log_max)


if __name__ == "__main__":
    sys.exit(main())
