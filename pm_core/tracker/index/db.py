"""The read index: a rebuildable SQLite cache of every item file (``runtime/index.sqlite``).

:class:`ReadIndex` refreshes itself from file stat data before a read and is
updated inside the item lock on writes; ``docs/index.md`` describes what it holds.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import marshal
import os
import sqlite3
import sys
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from pm_core.tracker.index.batch import chunks
from pm_core.tracker.index.rows import (
    DOC_COLUMNS,
    ITEM_COLUMNS,
    digest16,
    item_edges,
    item_values,
    unpack_item,
)
from pm_core.tracker.index.schema import MMAP_BYTES, STATEMENTS, VERSION_TAG
from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, PmError
from pm_core.tracker.model.item import Item
from pm_core.tracker.storage.itemfile import decode_item
from pm_core.tracker.storage.store import ITEM_SUFFIX

INDEX_FILE = "index.sqlite"
#: A file whose mtime is this close to the moment it was indexed is re-read
#: until it is older: two writes within one mtime tick can share a stat.
RACY_NS = 2_000_000_000
#: How long a write through the SDK waits for the index before leaving it to the next read.
WRITE_WAIT_MS = 200
#: Parse in worker processes when at least this many files changed.
PARALLEL_MIN = 3000
#: Folder digests and the per-file parse are cheap; progress is shown past this.
PROGRESS_MIN = 2000


class IndexUnavailable(PmError):
    """The index cannot answer; the caller reads the files instead."""


class RefreshStats(NamedTuple):
    """What one refresh did."""

    files: int
    parsed: int
    removed: int
    corrupt: int
    rebuilt: bool
    seconds: float
    #: How changes were found: ``files`` or ``folders`` (listing), ``watch`` (the
    #: watcher's list; ``files`` then counts the files stat-ed), ``watch-full``
    #: (a full listing whose token the watcher gave).
    verify: str = "files"


class Config(NamedTuple):
    """What the index reads: the type folders (in schema order) and searchable custom fields.

    Folders may come and go (rows follow); a change of the searchable custom
    fields changes every search document, so it means a rebuild.
    """

    folders: tuple[str, ...]
    searchable: tuple[str, ...]
    #: ``files``: stat every item file on each refresh (any change is seen at
    #: once). ``folders``: stat the type folders and list only those that
    #: changed; a file edited in place (its folder untouched) is seen at the
    #: next full check, at most ``full_check_seconds`` later. ``watch``: ask
    #: the tracker's watcher process which files changed and stat only those
    #: (any change is seen at once; without a watcher, as ``files``).
    #: ``auto`` (the default): ``watch`` once the tracker has
    #: ``watch_min_files`` item files, else ``files``.
    verify: str = "auto"
    full_check_seconds: float = 60.0
    #: How long a refresh waits for another process's write (a first build included).
    wait_seconds: float = 120.0
    #: ``auto`` starts a watcher from this many item files.
    watch_min_files: int = 4000
    #: A watcher exits after this long without a read.
    watch_idle_seconds: float = 600.0

    def fingerprint(self) -> str:
        """The part that forces a rebuild, as stable text stored in ``meta``."""
        return json.dumps({"searchable": self.searchable})


Listing = list[tuple[str, int, int, int]]
#: Whether folders can be listed and their files stat-ed through an open descriptor.
_FD_SCAN = os.scandir in os.supports_fd and os.stat in os.supports_dir_fd


def _digest(listing: Listing) -> bytes:
    # marshal version 2 has no back-references, so equal listings give equal bytes.
    return digest16(marshal.dumps(listing, 2))


#: Indexes holding an open connection. They are closed at exit even when the
#: process skips the interpreter's teardown (the ``pm`` script does): the last
#: connection to close checkpoints SQLite's write-ahead log and deletes it.
#: A log left behind would be re-read by every later process's first open.
_OPEN: weakref.WeakSet[ReadIndex] = weakref.WeakSet()
_close_at_exit = False


def _track(index: ReadIndex) -> None:
    global _close_at_exit
    if not _close_at_exit:
        atexit.register(_close_all)
        _close_at_exit = True
    _OPEN.add(index)


def _close_all() -> None:
    for index in list(_OPEN):
        index.close()


class ReadIndex:
    """The SQLite read index of one tracker root."""

    def __init__(self, root: Path, config: Config, *, progress: bool | None = None) -> None:
        self.root = root
        self.config = config
        self.path = root / "runtime" / INDEX_FILE
        self._db: sqlite3.Connection | None = None
        self._progress = progress
        self.last_refresh: RefreshStats | None = None

    # ------------------------------------------------------------ connection

    @property
    def db(self) -> sqlite3.Connection:
        """The open connection (schema checked; rebuilt when it does not match)."""
        if self._db is None:
            self._db = self._open()
            _track(self)
        return self._db

    def _connect(self) -> sqlite3.Connection:
        # A first build of a large tracker holds the write lock for a while;
        # another reader waits for it rather than scanning every file itself.
        db = sqlite3.connect(
            self.path,
            timeout=self.config.wait_seconds,
            isolation_level=None,
            check_same_thread=False,
        )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA temp_store=MEMORY")
        db.execute("PRAGMA cache_size=-32000")
        # Pages are read in place (no copy through SQLite's cache): a read
        # touches few pages of a large file, each once.
        db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        return db

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise IndexUnavailable(f"cannot create {self.path.parent}: {exc}") from None
        for attempt in range(2):
            try:
                db = self._connect()
                if self._schema_ok(db):
                    return db
                db.close()
            except sqlite3.OperationalError as exc:
                # Busy or locked (another process is building it), or the disk
                # refuses: never delete what someone else may be writing.
                raise IndexUnavailable(f"{self.path} is not usable now: {exc}") from None
            except sqlite3.DatabaseError:
                if attempt:
                    raise IndexUnavailable(f"{self.path} cannot be opened") from None
            # A different version, configuration or a damaged file: start over.
            self._delete_files()
        raise IndexUnavailable(f"{self.path} cannot be rebuilt")

    def _schema_ok(self, db: sqlite3.Connection) -> bool:
        meta = self._meta(db)
        if meta is None:
            db.execute("BEGIN IMMEDIATE")
            try:
                if self._meta(db) is not None:  # another process created it meanwhile
                    db.execute("ROLLBACK")
                    return self._schema_ok(db)
                for statement in STATEMENTS:
                    db.execute(statement)
                db.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [("version", VERSION_TAG), ("config", self.config.fingerprint())],
                )
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            return True
        return (
            meta.get("version") == VERSION_TAG and meta.get("config") == self.config.fingerprint()
        )

    @staticmethod
    def _meta(db: sqlite3.Connection) -> dict[str, str] | None:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
            return None
        return dict(db.execute("SELECT key, value FROM meta").fetchall())

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def discard(self) -> None:
        """Close and delete the database files (the next use rebuilds them)."""
        self.close()
        self._delete_files()

    def close(self) -> None:
        """Close the connection (the next use opens it again)."""
        if self._db is not None:
            self._db.close()
            self._db = None
        _OPEN.discard(self)

    # ------------------------------------------------------------ refresh

    def _sweep(self, folders: Sequence[str]) -> dict[str, Listing]:
        """Stat every item file of ``folders``: folder -> [(name, size, mtime_ns, inode)]."""
        return {folder: self.sweep_folder(folder) for folder in folders}

    def sweep_folder(self, folder: str) -> Listing:
        """List one type folder with the stat data of each item file."""
        path = self.root / folder
        if not _FD_SCAN:
            return self._sweep_by_path(path)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except (FileNotFoundError, NotADirectoryError):
            return []
        try:
            with os.scandir(fd) as entries:
                names = [
                    e.name for e in entries if e.name.endswith(ITEM_SUFFIX) and e.name[0] != "."
                ]
            try:
                # Relative to the open folder: one path step per file, not the whole path.
                stats = [os.stat(name, dir_fd=fd) for name in names]
            except FileNotFoundError:
                return self._sweep_by_path(path)  # a file vanished meanwhile: go slowly
            return [
                (name, st.st_size, st.st_mtime_ns, st.st_ino)
                for name, st in zip(names, stats, strict=True)
            ]
        finally:
            os.close(fd)

    @staticmethod
    def _sweep_by_path(path: Path) -> Listing:
        listing: Listing = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    name = entry.name
                    if not name.endswith(ITEM_SUFFIX) or name[0] == ".":
                        continue
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue
                    listing.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        except (FileNotFoundError, NotADirectoryError):
            pass
        return listing

    def _folder_stat(self, folder: str, now_ns: int) -> tuple[int, int]:
        """The folder's (mtime_ns, inode); a recent mtime reads as -1 (never trusted)."""
        try:
            st = os.stat(self.root / folder)
        except OSError:
            return (0, 0)
        mtime = st.st_mtime_ns if st.st_mtime_ns < now_ns - RACY_NS else -1
        return (mtime, st.st_ino)

    def _to_sweep(
        self, db: sqlite3.Connection, known: dict[str, tuple[int, int]], now_ns: int
    ) -> tuple[list[str], bool]:
        """Which folders to list, and whether that is a full check."""
        folders = list(self.config.folders)
        if self.config.verify != "folders" or not known:
            return folders, True
        row = db.execute("SELECT value FROM meta WHERE key = 'full_check_ns'").fetchone()
        window = int(self.config.full_check_seconds * 1e9)
        if row is None or now_ns - int(row[0]) >= window:
            return folders, True
        return [f for f in folders if known.get(f) != self._folder_stat(f, now_ns)], False

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with the item files (see the module docstring)."""
        started = time.perf_counter()
        watch = None
        if self.config.verify in ("watch", "auto"):
            from pm_core.tracker.index.refresh import WatchRefresh

            watch = WatchRefresh(self)
            changed_only = watch.changed_only(started)
            if changed_only is not None:
                self.last_refresh = changed_only
                return changed_only
        stats = self._refresh_all(started, None if watch is None else watch.token)
        if watch is not None:
            watch.after_full(stats.files)
        self.last_refresh = stats
        return stats

    def _refresh_all(self, started: float, token: str | None) -> RefreshStats:
        """List every folder due (all but unchanged ones in ``folders`` mode) and apply.

        ``token`` (the watcher's, taken before the listing) is stored with the rows.
        """
        now_ns = time.time_ns()
        db = self.db
        rows = db.execute("SELECT folder, digest, dir_mtime, dir_ino FROM folders").fetchall()
        stored = {folder: digest for folder, digest, _, _ in rows}
        known = {folder: (mtime, ino) for folder, _, mtime, ino in rows}
        folders, full = self._to_sweep(db, known, now_ns)
        # The folder's stat is taken before its listing: a change after it shows next time.
        dirs = {folder: self._folder_stat(folder, now_ns) for folder in folders}
        sweep = self._sweep(folders)
        digests = {folder: _digest(listing) for folder, listing in sweep.items()}
        racy = [r[0] for r in db.execute("SELECT path FROM racy").fetchall()]
        changed = [f for f in folders if stored.get(f) != digests[f]]
        moved = [f for f in folders if f not in changed and known.get(f) != dirs[f]]
        stale_folders = [f for f in stored if f not in self.config.folders]
        total = sum(len(v) for v in sweep.values())
        stamp = full and self.config.verify == "folders"
        verify = "folders" if self.config.verify == "folders" else "files"
        if token is not None:
            verify = "watch-full"
        quiet = not changed and not racy and not stale_folders and not moved and not stamp
        if quiet and token is None:
            return RefreshStats(total, 0, 0, 0, False, time.perf_counter() - started, verify)
        from pm_core.tracker.index import refresh as indexwatch
        from pm_core.tracker.index.write import Writer

        writer = Writer(self, now_ns)
        db.execute("BEGIN IMMEDIATE")
        try:
            if token is not None:
                if indexwatch.covered(db, token):
                    # Another process stored a later token of the same watcher: its
                    # rows are newer than this listing; writing these could hide a change.
                    db.execute("ROLLBACK")
                    return RefreshStats(
                        total, 0, 0, 0, False, time.perf_counter() - started, verify
                    )
                # The digests read before the listing may be another process's by now.
                current = dict(db.execute("SELECT folder, digest FROM folders").fetchall())
                changed = [f for f in folders if current.get(f) != digests[f]]
            rebuilt = not stored
            if changed or racy or stale_folders:
                writer.apply(sweep, changed, stale_folders, racy, digests, dirs)
            db.executemany(
                "UPDATE folders SET dir_mtime = ?, dir_ino = ? WHERE folder = ?",
                [(*dirs[f], f) for f in moved],
            )
            if stamp:
                db.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('full_check_ns', ?)",
                    (str(now_ns),),
                )
            if token is not None:
                indexwatch.store_token(db, token)
            else:
                # A listing without a token may be older than a token another process
                # stored meanwhile: once its rows are in, that token no longer tells
                # what the rows cover, so the next watched read lists every file.
                indexwatch.forget_token(db)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        stats = RefreshStats(
            total,
            writer.parsed,
            writer.removed,
            writer.corrupt,
            rebuilt,
            time.perf_counter() - started,
            verify,
        )
        if writer.showed_progress:
            sys.stderr.write(f"\rindexed {writer.parsed:,} items in {stats.seconds:.1f} s\n")
            sys.stderr.flush()
        return stats

    def show_progress(self, files: int) -> bool:
        """Whether to draw a progress line for parsing ``files`` files.

        ``progress`` given to the constructor decides; by default, a line is
        drawn for a large batch when stderr is a terminal.
        """
        if self._progress is not None:
            return self._progress
        if files < PROGRESS_MIN:
            return False
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False

    # ------------------------------------------------------------ writes

    def record_write(self, item: Item | None, op: str, path: Path | None) -> None:
        """Update the row of a file the SDK just wrote (called inside the item lock).

        Only an index that already exists is updated; building one is left to
        the next read. ``rollback`` (and anything without a path) leaves the
        rows alone: the next refresh sees the restored files by their stat.
        A write never waits long for the index: if another process holds it
        (a first build), this raises at once and the next read catches up.
        """
        if path is None or not self.path.exists():
            return
        from pm_core.tracker.index.write import Writer

        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            return
        folder, _, name = rel.partition("/")
        if folder not in self.config.folders or "/" in name:
            return
        db = self.db
        writer = Writer(self, time.time_ns())
        db.execute(f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                writer.record_one(rel, item)
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
        finally:
            db.execute(f"PRAGMA busy_timeout = {int(self.config.wait_seconds * 1000)}")

    # ------------------------------------------------------------ reads

    def scan(self) -> Iterator[tuple[Path, Item | CorruptItemError]]:
        """Every item file with its item or parse error, in the order a file scan gives.

        The rows are fetched before this returns, so a database error surfaces
        here (and the caller can fall back) rather than halfway through a loop.
        """
        rows = self.db.execute(
            "SELECT e.path, e.error, e.hint, r.record FROM entries e "
            "LEFT JOIN records r ON r.rid = e.rid ORDER BY e.frank, e.name"
        ).fetchall()
        return self._scan_rows(rows)

    def _scan_rows(
        self, rows: list[tuple[str, str | None, str | None, bytes | None]]
    ) -> Iterator[tuple[Path, Item | CorruptItemError]]:
        for rel, error, hint, record in rows:
            path = self.root / rel
            if error is not None:
                yield path, CorruptItemError(error, hint=hint)
            elif record is not None:
                yield path, unpack_item(record)
            else:
                yield path, self.read_file(path)

    def read_file(self, path: Path) -> Item | CorruptItemError:
        """Decode the item file at ``path``, or the error that says why it is corrupt."""

        try:
            return decode_item(path.read_bytes(), path.relative_to(self.root).as_posix())
        except CorruptItemError as exc:
            return exc
        except (OSError, NotFoundError) as exc:
            return CorruptItemError(f"{path.name}: unreadable ({exc})")

    def items_by_id(self, ids: Iterable[str]) -> dict[str, Item]:
        """The live items with these ids (missing ids are left out)."""
        wanted = sorted(set(ids))
        out: dict[str, Item] = {}
        for chunk in chunks(wanted, 500):
            marks = ",".join("?" * len(chunk))
            for rel, record in self.db.execute(
                "SELECT e.path, r.record FROM entries e LEFT JOIN records r ON r.rid = e.rid "
                f"WHERE e.live = 1 AND e.id IN ({marks})",
                chunk,
            ):
                item = (
                    unpack_item(record) if record is not None else self.read_file(self.root / rel)
                )
                if isinstance(item, Item):
                    out[item.id] = item
        return out

    def path_of(self, item_id: str) -> Path | None:
        """Where the live file of ``item_id`` is, per the index."""
        row = self.db.execute(
            "SELECT path FROM entries WHERE live = 1 AND id = ?", (item_id,)
        ).fetchone()
        return None if row is None else self.root / row[0]

    def corrupt(self) -> list[tuple[Path, str]]:
        """Files that do not parse, with the error, in scan order."""
        return [
            (self.root / rel, error)
            for rel, error in self.db.execute(
                "SELECT path, error FROM entries WHERE error IS NOT NULL ORDER BY frank, name"
            )
        ]


__all__ = [
    "DOC_COLUMNS",
    "INDEX_FILE",
    "ITEM_COLUMNS",
    "Config",
    "IndexUnavailable",
    "ReadIndex",
    "RefreshStats",
    "item_edges",
    "item_values",
]
