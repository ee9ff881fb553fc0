"""Refreshing the read index from the watcher's list of changed files (``verify: watch``).

Stats only what the watcher reports since the stored token; any trouble with the
watcher means a full listing for that read, never a stale answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.db import INDEX_FILE, RACY_NS, RefreshStats
from pm_core.tracker.storage.store import ITEM_SUFFIX

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index.db import Config, Listing, ReadIndex, RefreshStats

TOKEN_KEY = "watch_token"
Stat = tuple[int, int, int]


@cache
def watcher_unavailable(root: str) -> str | None:
    """Why ``root`` cannot have a watcher (no inotify, a network file system), or None."""
    from pm_core.tracker.index.watch.inotify import inotify_available, remote_filesystem

    if not inotify_available():
        return "inotify is not available on this platform"
    kind = remote_filesystem(root)
    if kind is not None:
        return f"the tracker is on a {kind} file system, whose changes inotify cannot see"
    return None


def stored_token(db: sqlite3.Connection) -> str | None:
    """The watcher token the index holds, if any."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (TOKEN_KEY,)).fetchone()
    return None if row is None else str(row[0])


def _seq(token: str) -> tuple[str, int]:
    epoch, _, seq = token.partition(":")
    return epoch, int(seq) if seq.isdigit() else -1


def covered(db: sqlite3.Connection, token: str) -> bool:
    """Whether the stored token is of the same watcher and at or past ``token``.

    Called inside the write transaction: then another process has already
    brought every row at least as far as this refresh would.
    """
    current = stored_token(db)
    if current is None:
        return False
    (epoch, seq), (mine, at) = _seq(current), _seq(token)
    return epoch == mine and seq >= at


def forget_token(db: sqlite3.Connection) -> None:
    """Drop the stored token (inside a transaction that wrote rows no token covers)."""
    db.execute("DELETE FROM meta WHERE key = ?", (TOKEN_KEY,))


def store_token(db: sqlite3.Connection, token: str) -> None:
    """Record ``token`` (inside the transaction that applied what it covers)."""
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (TOKEN_KEY, token))


class WatchRefresh:
    """One refresh's conversation with the watcher."""

    def __init__(self, index: ReadIndex) -> None:
        self.index = index
        self.runtime = index.root / "runtime"
        self.stored = stored_token(index.db)
        #: The token to store after a full listing (taken before it), if the watcher answered.
        self.token: str | None = None
        self.answer: dict[str, Any] | None = None
        self.asked = False

    def _ask(self) -> None:
        from pm_core.tracker.index.watch import client as watchclient

        config = self.index.config
        # No availability check here (it loads ctypes): a watcher only runs where
        # it can watch (it checks at start), and without one the connect fails.
        if (
            config.verify == "auto"
            and self.stored is None
            and not watchclient.socket_exists(self.runtime)
        ):
            return  # no watcher was ever needed here: list the files
        self.asked = True
        try:
            self.answer = watchclient.changes(self.runtime, self.stored, config.folders)
        except (OSError, ValueError):
            return
        self.token = str(self.answer["token"])

    def changed_only(self, started: float) -> RefreshStats | None:
        """Refresh from the watcher's list of changes; None: list every file instead."""
        self._ask()
        answer, token = self.answer, self.token
        if answer is None or token is None or answer.get("full") is True or self.stored is None:
            return None
        index = self.index
        db = index.db
        folders = index.config.folders
        row = db.execute("SELECT value FROM meta WHERE key = 'folders'").fetchone()
        if row is None or row[0] != json.dumps(list(folders)):
            return None  # the type folders changed: the full listing sorts rows anew
        whole = [f for f in folders if f in set(answer["full_folders"])]
        rels = {
            rel
            for rel in answer["paths"]
            if isinstance(rel, str) and _item_rel(rel, folders, whole)
        }
        racy = [r[0] for r in db.execute("SELECT path FROM racy").fetchall()]
        root = str(index.root)
        current: dict[str, Stat | None] = {rel: _stat(os.path.join(root, rel)) for rel in rels}
        for rel in racy:
            if rel not in current:
                current[rel] = _stat(os.path.join(root, rel))
        # A racy file (indexed within the racy window of its mtime) is confirmed by its
        # content once the window has passed ("ripe"); a gone one loses its row.
        window = time.time_ns() - RACY_NS
        ripe = any((stat := current[rel]) is None or stat[1] < window for rel in racy)
        listings = {folder: index.sweep_folder(folder) for folder in whole}
        for folder, listing in listings.items():
            for name, size, mtime, ino in listing:
                current[f"{folder}/{name}"] = (size, mtime, ino)
        if not rels and not whole and token == self.stored and not ripe:
            return _stats(len(current), 0, 0, 0, started)  # nothing new, nothing to confirm
        return self._apply(token, current, rels, whole, racy, started, ripe)

    def _still_valid(self, db: sqlite3.Connection) -> bool:
        """Whether the changes asked for (since the token read earlier) still apply.

        Called inside the write transaction. Another process may have stored a
        later token of the same watcher meanwhile (its rows are newer: fine),
        or written rows under no token at all, or under another watcher's: then
        the rows no longer match what this refresh asked about.
        """
        current = stored_token(db)
        if current is None or self.stored is None:
            return False
        (epoch, seq), (mine, since) = _seq(current), _seq(self.stored)
        return epoch == mine and seq >= since

    def _apply(
        self,
        token: str,
        current: dict[str, Stat | None],
        reported: set[str],
        whole: list[str],
        racy: list[str],
        started: float,
        ripe: bool,
    ) -> RefreshStats | None:
        from pm_core.tracker.index.write import BULK_MIN, Writer

        index = self.index
        db = index.db
        writer = Writer(index, time.time_ns())
        db.execute("BEGIN IMMEDIATE")
        try:
            # Covered: another process brought every row this far; still confirm
            # ripe racy files, which nothing else would ever clear.
            if covered(db, token) and not ripe:
                db.execute("ROLLBACK")
                return _stats(len(current), 0, 0, 0, started)
            if not self._still_valid(db):
                db.execute("ROLLBACK")
                return None  # the caller lists every file
            parses: dict[str, Stat] = {}
            removes: dict[int, str] = {}
            for rel, stat in current.items():
                hit = db.execute(
                    "SELECT rid, size, mtime_ns, ino, digest FROM entries WHERE path = ?", (rel,)
                ).fetchone()
                if stat is None:
                    if hit is not None:
                        removes[hit[0]] = rel
                elif hit is None or tuple(hit[1:4]) != stat:
                    parses[rel] = stat
                elif rel in reported and _content_differs(index.root / rel, hit[4]):
                    # The watcher saw a write that left size, mtime and inode as they
                    # were (an mtime set back, or two writes in one tick): trust bytes.
                    parses[rel] = stat
            for folder in whole:
                for rid, rel in db.execute(
                    "SELECT rid, path FROM entries WHERE folder = ?", (folder,)
                ).fetchall():
                    if rel not in current:
                        removes[rid] = rel
            # Writer internals (this module is its partner for path-wise updates):
            # racy files are re-read by content, then rows replaced and derived state kept.
            writer.recheck_racy(racy, parses, _as_sweep(current))
            if parses:
                removes.update(dict.fromkeys(writer.rids_of(list(parses)), ""))
            writer.bulk = len(parses) + len(removes) >= BULK_MIN
            writer.remove_rows(sorted(removes))
            writer.parse_and_store(parses)
            if writer.bulk:
                writer.derive_all()
            else:
                writer.derive(writer.touched_ids)
            # A folder's stored listing digest no longer describes its rows: a later
            # full listing compares that folder file by file.
            touched = {rel.partition("/")[0] for rel in (*parses, *removes.values()) if rel}
            db.executemany("DELETE FROM folders WHERE folder = ?", [(f,) for f in touched])
            store_token(db, token)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        return _stats(len(current), writer.parsed, writer.removed, writer.corrupt, started)

    def after_full(self, files: int) -> None:
        """After a full listing: start a watcher when one is wanted and none answered."""
        if self.answer is not None:
            return
        config = self.index.config
        if watcher_unavailable(str(self.index.root)) is not None:
            return
        if config.verify == "watch" or files >= config.watch_min_files:
            from pm_core.tracker.index.watch import client as watchclient

            watchclient.spawn(self.index.root, config.watch_idle_seconds)


def _item_rel(rel: str, folders: tuple[str, ...], whole: list[str]) -> bool:
    folder, _, name = rel.partition("/")
    return (
        folder in folders
        and folder not in whole
        and name.endswith(ITEM_SUFFIX)
        and not name.startswith(".")
        and "/" not in name
    )


def _content_differs(path: Path, digest: bytes | None) -> bool:
    if digest is None:
        return True  # a write-through row records no digest: parse the file again
    from pm_core.tracker.index.rows import digest16

    try:
        return digest16(path.read_bytes()) != digest
    except OSError:
        return True  # unreadable now: parse it, which records what happened


def _stat(path: str | Path) -> Stat | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _as_sweep(current: dict[str, Stat | None]) -> dict[str, Listing]:
    out: dict[str, Listing] = {}
    for rel, stat in current.items():
        if stat is not None:
            folder, _, name = rel.partition("/")
            out.setdefault(folder, []).append((name, *stat))
    return out


def _stats(files: int, parsed: int, removed: int, corrupt: int, started: float) -> RefreshStats:
    return RefreshStats(
        files, parsed, removed, corrupt, False, time.perf_counter() - started, verify="watch"
    )


__all__ = [
    "TOKEN_KEY",
    "WatchRefresh",
    "covered",
    "status",
    "stop",
    "store_token",
    "stored_token",
    "watcher_unavailable",
]


def status(tracker: Tracker) -> dict[str, Any]:
    """The read index and its watcher, for ``pm index status``."""
    from pm_core.tracker.index.watch import client as watchclient

    config = indexing.config(tracker)
    root = tracker.root
    runtime = root / "runtime"
    path = runtime / INDEX_FILE
    index: dict[str, Any] = {
        "enabled": indexing.enabled(tracker),
        "path": path.relative_to(root).as_posix(),
        "exists": path.exists(),
    }
    token: str | None = None
    if path.exists():
        try:
            with contextlib.closing(
                sqlite3.connect(
                    Path(os.path.abspath(path)).as_uri() + "?mode=ro", uri=True, timeout=1.0
                )
            ) as db:
                index["files"] = db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
                token = stored_token(db)
        except sqlite3.Error as exc:
            index["error"] = str(exc)
    why = watcher_unavailable(str(root))
    running = watchclient.status(runtime) if runtime.is_dir() else None
    watcher: dict[str, Any] = {"available": why is None, "running": running is not None}
    if why is not None:
        watcher["unavailable_because"] = why
    if running is not None:
        epoch = str(running.get("token", "")).partition(":")[0]
        watcher.update(
            pid=running.get("pid"),
            token=running.get("token"),
            watched_folders=sum(1 for on in dict(running.get("folders") or {}).values() if on),
            logged_paths=running.get("logged_paths"),
            overflows=running.get("overflows"),
            idle_for_seconds=running.get("idle_for"),
            idle_exit_seconds=running.get("idle_seconds"),
            index_token_current=token is not None and token.partition(":")[0] == epoch,
        )
    elif runtime.is_dir() and watchclient.lock_held(runtime):
        watcher["starting"] = True
    return {
        "verify": config.verify,
        "reads_use": _reads_use(config, why, running is not None, index.get("files")),
        "watch_min_files": config.watch_min_files,
        "index": index,
        "watcher": watcher,
    }


def _reads_use(config: Config, why: str | None, running: bool, files: int | None) -> str:
    if config.verify in ("files", "folders"):
        return str(config.verify)
    if why is not None:
        return "files"
    if config.verify == "watch" or running or (files or 0) >= config.watch_min_files:
        return "watch"
    return "files"


def stop(tracker: Tracker) -> dict[str, Any]:
    """Stop the tracker's watcher (``pm index stop``); the next large read starts one again."""
    from pm_core.tracker.index.watch import client as watchclient

    runtime = tracker.root / "runtime"
    was_running = runtime.is_dir() and watchclient.stop(runtime)
    still = runtime.is_dir() and watchclient.lock_held(runtime)
    return {"stopped": bool(was_running) and not still, "was_running": bool(was_running)}
