"""How a :class:`~pm_core.tracker.api.Tracker` reaches its read index, without importing sqlite3.

The index is on unless ``PM_INDEX`` or settings turn it off; any failure to open
or refresh it means "read the files".
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pm_core.tracker.model.errors import PmError, UsageError

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker
    from pm_core.tracker.index.db import ReadIndex
    from pm_core.tracker.model.errors import CorruptItemError
    from pm_core.tracker.model.item import Item
    from pm_core.tracker.query.indexed import ListPage, SearchPage
    from pm_core.tracker.query.search import Query

T = TypeVar("T")
_OFF = ("0", "off", "false", "no")
#: How a refresh finds changed files (see :class:`pm_core.tracker.index.db.Config`).
VERIFY_MODES = ("auto", "files", "folders", "watch")
_HANDLES: weakref.WeakKeyDictionary[Tracker, ReadIndex] = weakref.WeakKeyDictionary()


def enabled(tracker: Tracker) -> bool:
    """Whether reads of this tracker may use the index."""
    if str(tracker.env.get("PM_INDEX", "")).strip().lower() in _OFF:
        return False
    try:
        settings = tracker.settings.get("index") or {}
    except Exception:  # unreadable settings: the read itself will report them
        return False
    return not (isinstance(settings, dict) and settings.get("enabled") is False)


def config(tracker: Tracker) -> Any:
    """The index configuration of ``tracker``: folders, searchable fields, verify mode."""
    from pm_core.tracker.index.db import Config

    schema = tracker.schema
    searchable = tuple(f.key for f in schema.fields if not f.commands or "search" in f.commands)
    settings = tracker.settings.get("index") or {}
    if not isinstance(settings, dict):
        settings = {}
    verify = tracker.env.get("PM_INDEX_VERIFY") or settings.get("verify") or "auto"
    if verify not in VERIFY_MODES:
        where = "PM_INDEX_VERIFY" if tracker.env.get("PM_INDEX_VERIFY") else "index.verify"
        raise UsageError(
            f"unknown index verify mode {verify!r} ({where})",
            hint="use auto (the default), files, folders or watch",
        )
    return Config(
        folders=schema.folders(),
        searchable=searchable,
        verify=verify,
        full_check_seconds=_seconds(settings, "full_check_seconds", 60.0),
        wait_seconds=_seconds(settings, "wait_seconds", 120.0),
        watch_min_files=_count(settings, "watch_min_files", 4000),
        watch_idle_seconds=_seconds(settings, "watch_idle_seconds", 600.0, positive=True),
    )


def _count(settings: dict[str, Any], key: str, default: int) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(
            f"index.{key} must be a whole number (0 or more), got {value!r}",
            hint=f"fix settings.json, or remove it for the default ({default})",
        )
    return value


def _seconds(
    settings: dict[str, Any], key: str, default: float, *, positive: bool = False
) -> float:
    value = settings.get(key, default)
    low = "more than 0" if positive else "0 or more"
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (positive and value == 0)
    ):
        raise UsageError(
            f"index.{key} must be a number of seconds ({low}), got {value!r}",
            hint=f"fix settings.json, or remove it for the default ({default:g})",
        )
    return float(value)


def handle(tracker: Tracker) -> ReadIndex | None:
    """The tracker's index object (not refreshed), or None when the index is off."""
    if not enabled(tracker):
        return None
    from pm_core.tracker.index.db import ReadIndex

    wanted = config(tracker)
    index = _HANDLES.get(tracker)
    if index is None or index.config != wanted or index.root != tracker.root:
        if index is not None:
            index.close()
        index = ReadIndex(tracker.root, wanted)
        _HANDLES[tracker] = index
    return index


def fresh(tracker: Tracker) -> ReadIndex | None:
    """The index brought up to date with the files, or None: read the files instead."""
    import sqlite3

    from pm_core.tracker.index.db import IndexUnavailable

    try:
        index = handle(tracker)
    except PmError:
        raise  # a bad index setting is the user's to fix: say so
    except Exception:  # anything else: the file path reports it (or works)
        return None
    if index is None:
        return None
    for attempt in range(2):
        try:
            index.refresh()
            return index
        except (IndexUnavailable, OSError):
            return None
        except sqlite3.OperationalError:
            # Busy past the wait, locked, or out of disk: this read scans files;
            # the database may be another process's work in progress, so keep it.
            index.close()
            return None
        except sqlite3.DatabaseError:
            # A damaged or foreign database file: throw it away and build anew once.
            index.close()
            if attempt:
                return None
            index.discard()
    return None


#: SQLite integers stop at 2**63: a limit or offset past any tracker's size is
#: passed on as this (it means the same: every row, or none left).
COUNT_MAX = 2**62


def bounded(count: int) -> int:
    """``count`` as SQLite can bind it (see :data:`COUNT_MAX`)."""
    return min(count, COUNT_MAX)


def answer(tracker: Tracker, compute: Callable[[ReadIndex], T]) -> T | None:
    """``compute(index)`` on a fresh index; None when there is none or SQLite fails.

    Tracker errors (a missing parent, a bad filter) pass through: they are
    answers. A database error is not: the caller reads the files instead.
    """
    import sqlite3

    index = fresh(tracker)
    if index is None:
        return None
    try:
        return compute(index)
    except sqlite3.Error:
        index.close()
        return None


def scan(tracker: Tracker) -> Iterator[tuple[Path, Item | CorruptItemError]]:
    """Every item file with its item or parse error: from the index when it can answer."""
    import sqlite3

    index = fresh(tracker)
    if index is not None:
        try:
            return index.scan()
        except sqlite3.Error:
            pass
    return tracker.store.scan()


def after_write(tracker: Tracker, item: Item | None, op: str, path: Path | None) -> None:
    """The SDK's after-write hook: update the index row of the file just written.

    Never raises: the write has already happened, and a missed update only
    means the next read parses that one file again.
    """
    if path is None or not enabled(tracker):
        return
    try:
        index = handle(tracker)
        if index is not None:
            index.record_write(item, op, path)
    except Exception:
        index = _HANDLES.pop(tracker, None)
        if index is not None:
            index.close()


class IndexReads:
    """The read index's side of :class:`pm_core.tracker.query.indexed.IndexedReads`.

    Bound to one tracker. The modules behind it are imported on first use, so a
    command that never reads through the index never imports ``sqlite3``.
    """

    def __init__(self, tracker: Tracker) -> None:
        self._tracker = tracker

    def list_page(self, **options: Any) -> ListPage | None:
        """One page of ``pm list`` (see :func:`pm_core.tracker.index.reads.list_page`)."""
        from pm_core.tracker.index import reads  # lazy: sqlite3 only when reading

        return reads.list_page(self._tracker, **options)

    def search_page(
        self, parsed: Query, filters: Mapping[str, Sequence[str]], **options: Any
    ) -> SearchPage | None:
        """The best matches of ``pm search`` (see :func:`pm_core.tracker.index.reads.search_page`)."""
        from pm_core.tracker.index import reads  # lazy: sqlite3 only when reading

        return reads.search_page(self._tracker, parsed, filters, **options)

    def next_items(self, **options: Any) -> dict[str, Any] | None:
        """The ``pm next`` result (see :func:`pm_core.tracker.index.rank.next_items`)."""
        from pm_core.tracker.index import rank  # lazy: sqlite3 only when reading

        return rank.next_items(self._tracker, **options)

    def context(self, **options: Any) -> dict[str, Any] | None:
        """The ``pm context`` result (see :func:`pm_core.tracker.index.rank.context`)."""
        from pm_core.tracker.index import rank  # lazy: sqlite3 only when reading

        return rank.context(self._tracker, **options)
