"""Change notifications for initialize-era sessions (stdio and stateful Streamable HTTP).

One watcher thread per server polls the tracker's files (stat only, no reads)
every :data:`POLL_SECONDS` and tells the sessions that care:

- ``notifications/tools/list_changed`` to every session that has made a
  request, when ``settings.json`` or ``schema/`` changes (types, statuses,
  fields, workflows: what the tool schemas are projected from), and when an
  extension is installed, removed, enabled or disabled so that the tools or
  commands change (a ``sys.path`` folder or ``settings.json`` changed and the
  server's ``tools_check`` rebuilt its host);
- ``notifications/resources/updated`` to the sessions subscribed to a URI:
  ``pm://workspace/context`` and ``claims`` when any item (or a lease) changes,
  ``focus`` when the session focus or an item changes, ``agent-guide`` when
  ``AGENTS.md`` changes, ``pm://items/{id}`` when that item's file changes and
  ``pm://items/{id}/history`` when its history does.

Changes made by any process count (a CLI run, another server, a checkout),
since the files are the truth. 2026-07-28 requests are single exchanges with
no session to notify; see ``docs/http.md``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio.from_thread
import anyio.lowlevel
import structlog

log = structlog.get_logger("pm.mcp.changes")

POLL_SECONDS = 0.5
WORKSPACE = "pm://workspace/"
ITEMS = "pm://items/"
#: Tracker subdirectories that hold no item files.
NOT_ITEMS = frozenset({"schema", "history", "runtime", "locks"})

Stat = tuple[int, int]


def _stat(path: Path) -> Stat | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _tree(directory: Path, skip: Callable[[str], bool] = lambda _n: False) -> dict[str, Stat]:
    """``{relative name: (mtime, size)}`` of the files one or two levels down."""
    out: dict[str, Stat] = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return out
    for entry in entries:
        if skip(entry.name):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                for inner in os.scandir(entry.path):
                    st = inner.stat(follow_symlinks=False)
                    out[f"{entry.name}/{inner.name}"] = (st.st_mtime_ns, st.st_size)
            else:
                st = entry.stat(follow_symlinks=False)
                out[entry.name] = (st.st_mtime_ns, st.st_size)
        except OSError:
            continue
    return out


def _import_paths() -> tuple[tuple[str, Stat | None], ...]:
    """The ``sys.path`` folders and their stat: installing a distribution changes one."""
    import sys

    return tuple((entry, _stat(Path(entry))) for entry in sys.path if entry)


class Snapshot:
    """The stat facts one poll looks at."""

    def __init__(self, root: Path) -> None:
        self.schema = (_stat(root / "settings.json"), tuple(sorted(_tree(root / "schema").items())))
        self.paths = _import_paths()
        items = _tree(root, lambda n: n in NOT_ITEMS or "." in n)
        self.items = items
        runtime = _tree(root / "runtime", lambda n: n.startswith("index."))
        self.focus = runtime.pop("session.json", None)
        self.runtime = tuple(sorted(runtime.items()))
        self.history = _tree(root / "history")
        self.guide = _stat(root.parent.parent / "AGENTS.md")

    def item(self, item_id: str) -> tuple[tuple[str, Stat], ...]:
        return tuple(
            (name, st)
            for name, st in self.items.items()
            if name.split("/")[-1].split(".")[0] == item_id
        )

    def item_history(self, item_id: str) -> tuple[tuple[str, Stat], ...]:
        return tuple(
            (name, st)
            for name, st in self.history.items()
            if name.split("/")[-1].split(".")[0] == item_id or name.split("/")[0] == item_id
        )

    def key(self, uri: str) -> object:
        """What ``uri``'s content depends on, as comparable stat facts."""
        items = tuple(sorted(self.items.items()))
        if uri == WORKSPACE + "context":
            return items
        if uri == WORKSPACE + "claims":
            return (items, self.runtime)
        if uri == WORKSPACE + "focus":
            return (self.focus, items)
        if uri == WORKSPACE + "agent-guide":
            return self.guide
        if uri.startswith(ITEMS):
            rest = uri.removeprefix(ITEMS)
            if rest.endswith("/history"):
                return self.item_history(rest.removesuffix("/history"))
            return self.item(rest)
        return None


def subscribable(uri: str) -> bool:
    """Whether updates of ``uri`` are watched."""
    if uri.startswith(WORKSPACE):
        return uri.removeprefix(WORKSPACE) in ("context", "claims", "focus", "agent-guide")
    if uri.startswith(ITEMS):
        rest = uri.removeprefix(ITEMS).removesuffix("/history")
        return bool(rest) and "/" not in rest
    return False


class _Watch:
    """One client connection: how to reach its event loop, and what it subscribed to."""

    def __init__(self, session: Any, token: Any) -> None:
        self.session = session
        self.token = token
        self.uris: dict[str, object] = {}


class ChangeWatcher:
    """Polls the tracker and notifies initialize-era sessions (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        interval: float = POLL_SECONDS,
        tools_check: Callable[[], bool] | None = None,
    ) -> None:
        self.root = root
        self.interval = interval
        #: Called when an import folder or the settings changed (and on the first
        #: poll): True when the installed or enabled extensions changed the tools.
        self.tools_check = tools_check
        self._checked = False
        self._recheck = False
        self._lock = threading.Lock()
        self._watches: dict[int, _Watch] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: Snapshot | None = None

    def _watch(self, session: Any) -> _Watch:
        """The session's entry (call on the session's event loop)."""
        with self._lock:
            watch = self._watches.get(id(session))
            if watch is None or watch.session is not session:
                watch = _Watch(session, anyio.lowlevel.current_token())
                self._watches[id(session)] = watch
            if self._thread is None:
                self._last = Snapshot(self.root)
                self._thread = threading.Thread(
                    target=self._run, name="pm-mcp-changes", daemon=True
                )
                self._thread.start()
            return watch

    def seen(self, session: Any) -> None:
        """A session made a request: it hears of tool list changes from now on."""
        self._watch(session)

    def subscribe(self, session: Any, uri: str) -> None:
        watch = self._watch(session)
        with self._lock:
            watch.uris[uri] = Snapshot(self.root).key(uri)

    def unsubscribe(self, session: Any, uri: str) -> None:
        watch = self._watch(session)
        with self._lock:
            watch.uris.pop(uri, None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception as exc:  # a poll must never take the server down
                log.warning("change_poll_failed", error=repr(exc))

    def poll(self) -> None:
        """One comparison with the previous snapshot; sends what changed."""
        now = Snapshot(self.root)
        previous, self._last = self._last, now
        tools_changed = previous is not None and previous.schema != now.schema
        paths_changed = previous is not None and previous.paths != now.paths
        if self.tools_check is not None and (
            not self._checked or self._recheck or paths_changed or tools_changed
        ):
            # A folder changes when an installer creates a distribution's metadata
            # folder, before its files are written: look once more on the next poll.
            self._checked, self._recheck = True, paths_changed
            tools_changed = self.tools_check() or tools_changed
        with self._lock:
            watches = list(self._watches.values())
        for watch in watches:
            sends: list[Callable[[], Any]] = []
            if tools_changed:
                sends.append(watch.session.send_tool_list_changed)
            with self._lock:
                for uri, before in list(watch.uris.items()):
                    after = now.key(uri)
                    if after != before:
                        watch.uris[uri] = after
                        sends.append(_bind(watch.session.send_resource_updated, uri))
            if sends and not self._deliver(watch, sends):
                with self._lock:
                    self._watches.pop(id(watch.session), None)

    def _deliver(self, watch: _Watch, sends: Iterable[Callable[[], Any]]) -> bool:
        """Send on the session's loop; False when the session is gone."""
        try:
            for send in sends:
                anyio.from_thread.run(send, token=watch.token)
        except Exception as exc:
            log.debug("change_session_gone", error=repr(exc))
            return False
        return True


def _bind(fn: Callable[[str], Any], uri: str) -> Callable[[], Any]:
    async def send() -> None:
        await fn(uri)

    return send
