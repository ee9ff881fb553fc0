"""The index watcher: reads that stat only what inotify says changed, and never go stale.

Every test runs real watcher processes on real files (a generated 120-item
tracker whose files are dated an hour back, so no file is "racy" and re-read
by content anyway: only the watcher can make a read notice an edit). The
``root`` fixture stops any watcher it started, by its socket and else by the
pid in its lock file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.index import access as indexing
from pm_core.tracker.index.db import RefreshStats
from pm_core.tracker.index.watch import client as watchclient
from pm_core.tracker.index.watch.inotify import inotify_available
from pm_core.tracker.query.listing import list_items
from tests.bench.generate import generate

pytestmark = pytest.mark.skipif(not inotify_available(), reason="the watcher needs inotify")

AUTHOR = "alice"
HOUR_AGO = time.time() - 3600


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(120, tmp_path_factory.mktemp("watch120") / "ws", jobs=1, history=False)


def set_index_settings(root: Path, **values: Any) -> None:
    path = root / "settings.json"
    settings = json.loads(path.read_text())
    settings["index"] = {**settings.get("index", {}), **values}
    path.write_text(json.dumps(settings))


def runtime(root: Path) -> Path:
    return root / "runtime"


def stop_watcher(root: Path) -> None:
    """Stop the watcher of ``root`` by asking, else by the pid its lock file holds."""
    rt = runtime(root)
    if not rt.is_dir():
        return
    watchclient.stop(rt, wait=5.0)
    if watchclient.lock_held(rt):
        pid = int((rt / watchclient.LOCK).read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not watchclient.lock_held(rt), "the killed watcher to let go")


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    target = tmp_path / "ws" / ".agents" / "pm"
    shutil.copytree(pristine, target)
    shutil.rmtree(target / "runtime", ignore_errors=True)
    (target / "runtime").mkdir()
    for path in target.glob("*/*.toon"):
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    set_index_settings(target, watch_min_files=10, watch_idle_seconds=120)
    try:
        yield target
    finally:
        stop_watcher(target)


def wait_for(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def tracker(root: Path, verify: str | None = None) -> Tracker:
    return Tracker(root, author=AUTHOR, env={"PM_INDEX_VERIFY": verify} if verify else {})


def off(root: Path) -> Tracker:
    return Tracker(root, author=AUTHOR, env={"PM_INDEX": "off"})


def read(t: Tracker) -> RefreshStats:
    index = indexing.fresh(t)
    assert index is not None and index.last_refresh is not None
    return index.last_refresh


def watched(root: Path, verify: str | None = None) -> tuple[Tracker, dict[str, Any]]:
    """A tracker whose reads are answered through a running watcher; and its status."""
    t = tracker(root, verify)
    read(t)  # starts the watcher (a full listing this time)
    status = wait_for(lambda: watchclient.status(runtime(root)), "the watcher to listen")
    assert read(t).verify == "watch-full"  # the first token
    assert read(t).verify == "watch"
    return t, status


def titles(t: Tracker, ids: list[str]) -> dict[str, str]:
    index = indexing.fresh(t)
    assert index is not None
    return {item_id: item.title for item_id, item in index.items_by_id(ids).items()}


def listed(t: Tracker) -> list[tuple[str, str, str]]:
    rows = list_items(t, include_terminal=True, fields=["id", "title", "status"])["items"]
    return [(r["id"], r["title"], r["status"]) for r in rows]


def assert_same_as_files(root: Path, t: Tracker) -> None:
    assert listed(t) == listed(off(root))


def task_files(root: Path) -> list[Path]:
    return sorted((root / "tasks").glob("*.toon"))


def edit_in_place(path: Path, marker: str) -> None:
    """Rewrite a file through the same inode (open, truncate, write), as many editors do."""
    text = path.read_text()
    with open(path, "r+", encoding="utf-8") as fh:
        fh.truncate(0)
        fh.write(text.replace("\ntitle: ", f"\ntitle: {marker} ", 1))


def test_in_place_edit_is_seen_by_the_very_next_read(root: Path) -> None:
    t, _ = watched(root)
    path = task_files(root)[3]
    inode, folder_mtime = path.stat().st_ino, (root / "tasks").stat().st_mtime_ns
    edit_in_place(path, "inplace")
    assert path.stat().st_ino == inode
    assert (root / "tasks").stat().st_mtime_ns == folder_mtime
    stats = read(t)
    assert stats.verify == "watch" and stats.parsed == 1 and stats.files == 1
    assert titles(t, [path.stem])[path.stem].startswith("inplace ")
    assert_same_as_files(root, t)


def test_racy_files_are_confirmed_once_then_a_watched_read_stats_nothing(root: Path) -> None:
    from pm_core.tracker.index.db import RACY_NS

    for path in root.glob("*/*.toon"):
        os.utime(path, None)  # just written, as after a clone or a checkout: racy when indexed
    t, _status = watched(root)

    def racy_rows() -> int:
        index = indexing.fresh(t)
        assert index is not None
        return int(index.db.execute("SELECT COUNT(*) FROM racy").fetchone()[0])

    assert racy_rows() > 0
    assert read(t).files > 0  # still within the window: each read stats them
    time.sleep(RACY_NS / 1e9 + 0.2)
    confirmed = read(t)  # past the window: read by content once, and let go
    assert confirmed.verify == "watch" and confirmed.parsed == 0
    assert racy_rows() == 0
    later = read(t)
    assert later.verify == "watch" and later.files == 0
    assert_same_as_files(root, t)


def test_edit_that_keeps_size_mtime_and_inode_is_still_seen(root: Path) -> None:
    t, _ = watched(root)
    path = task_files(root)[5]
    before = path.stat()
    text = path.read_text()
    # The title's first letter becomes another: same size.
    at = text.index("\ntitle: ") + len("\ntitle: ")
    letter = "Q" if text[at] != "Q" else "R"
    changed = text[:at] + letter + text[at + 1 :]
    assert len(changed) == len(text) and changed != text
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    assert read(t).parsed == 1
    assert titles(t, [path.stem])[path.stem].startswith(letter)
    assert_same_as_files(root, t)


def test_create_delete_rename_and_checkout_style_replace_are_seen(root: Path) -> None:
    t, _ = watched(root)
    files = task_files(root)
    # Created by another process that does not touch the index (a pull, another tool).
    created = off(root).create({"title": "made elsewhere", "type": "Task"})
    assert created["id"] in titles(t, [created["id"]])
    # Deleted.
    gone = files[0]
    gone.unlink()
    assert titles(t, [gone.stem]) == {}
    # Renamed away (a file not named like an item stops counting) and back.
    moved = files[1]
    hidden = moved.with_name("." + moved.name)
    moved.rename(hidden)
    assert titles(t, [moved.stem]) == {}
    hidden.rename(moved)
    assert moved.stem in titles(t, [moved.stem])
    # Replaced by rename over it (git checkout, editors that save by rename): a new inode.
    replaced = files[2]
    tmp = replaced.with_name(replaced.name + ".tmp")
    tmp.write_text(replaced.read_text().replace("\ntitle: ", "\ntitle: checked out ", 1))
    os.replace(tmp, replaced)
    assert titles(t, [replaced.stem])[replaced.stem].startswith("checked out ")
    assert read(t).verify == "watch"
    assert_same_as_files(root, t)


def test_type_folder_replaced_is_listed_again_and_watched_anew(root: Path) -> None:
    t, _ = watched(root)
    tasks = root / "tasks"
    old = root / "tasks.old"
    tasks.rename(old)
    shutil.copytree(old, tasks)
    first = task_files(root)[0]
    edit_in_place(first, "in new folder")
    shutil.rmtree(old)
    stats = read(t)
    assert stats.verify == "watch" and stats.files >= len(task_files(root))
    assert titles(t, [first.stem])[first.stem].startswith("in new folder ")
    # The watch now follows the new folder: a later in-place edit there is seen too.
    second = task_files(root)[1]
    edit_in_place(second, "later")
    stats = read(t)
    # Stat-ed: the edited file, and the first one (written a moment ago, so re-read).
    assert stats.files == 2 and stats.parsed == 1
    assert titles(t, [second.stem])[second.stem].startswith("later ")
    assert_same_as_files(root, t)


def test_killed_watcher_means_a_full_listing_and_a_new_watcher(root: Path) -> None:
    t, status = watched(root)
    os.kill(status["pid"], signal.SIGKILL)
    wait_for(lambda: not watchclient.lock_held(runtime(root)), "the killed watcher to be gone")
    path = task_files(root)[4]
    edit_in_place(path, "after kill")
    stats = read(t)
    assert stats.verify == "files"  # nobody answered: every file listed
    assert titles(t, [path.stem])[path.stem].startswith("after kill ")
    new = wait_for(lambda: watchclient.status(runtime(root)), "a new watcher")
    assert new["pid"] != status["pid"]
    assert read(t).verify == "watch-full"  # another epoch: list once, then trust it
    edit_in_place(path, "again")
    assert read(t).verify == "watch"
    assert titles(t, [path.stem])[path.stem].startswith("again ")


def test_hung_watcher_means_a_full_listing_not_a_stale_answer(root: Path) -> None:
    t, status = watched(root)
    path = task_files(root)[6]
    os.kill(status["pid"], signal.SIGSTOP)
    try:
        edit_in_place(path, "while hung")
        stats = read(t)  # gives up on the watcher after its timeout, lists every file
        assert stats.verify == "files"
        assert titles(t, [path.stem])[path.stem].startswith("while hung ")
        assert watchclient.lock_held(runtime(root))  # no second watcher beside it
    finally:
        os.kill(status["pid"], signal.SIGCONT)
    edit_in_place(path, "resumed")
    # The listing without a token dropped the stored one: a full listing takes a new token.
    assert read(t).verify == "watch-full"
    assert titles(t, [path.stem])[path.stem].startswith("resumed ")
    edit_in_place(path, "watched again")
    assert read(t).verify == "watch"
    assert titles(t, [path.stem])[path.stem].startswith("watched again ")


def test_rows_written_without_a_token_make_the_next_watched_read_list_every_file(
    root: Path,
) -> None:
    # A read that lists every file without the watcher's token (verify: files, or a
    # watcher that did not answer) may hold a listing older than a token another
    # process stored meanwhile; once its rows are in, that token must not be trusted.
    t, _ = watched(root)
    first, second = task_files(root)[7], task_files(root)[8]
    edit_in_place(first, "by files")
    stats = read(tracker(root, "files"))
    assert stats.verify == "files" and stats.parsed == 1
    edit_in_place(second, "after")
    assert read(t).verify == "watch-full"
    got = titles(t, [first.stem, second.stem])
    assert got[first.stem].startswith("by files ") and got[second.stem].startswith("after ")
    assert_same_as_files(root, t)
    assert read(t).verify == "watch"


@pytest.mark.parametrize(
    "answer",
    [
        b"not json\n",
        b"[1, 2]\n",
        b'{"token": "e:1", "paths": [["nested"]], "full_folders": []}\n',
        b'{"token": 5, "full": true}\n',
        b'{"error": "no"}\n',
        b"",
    ],
)
def test_a_garbled_answer_means_a_full_listing(root: Path, answer: bytes) -> None:
    import socket
    import threading

    watched(root, "watch")  # the index holds a token: the answer would be used path by path
    stop_watcher(root)
    path = task_files(root)[2]
    edit_in_place(path, "garbled")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(runtime(root) / watchclient.SOCKET))
    server.listen(4)

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(answer)

    thread = threading.Thread(target=answer_once, daemon=True)
    thread.start()
    try:
        stats = read(tracker(root, "watch"))
    finally:
        thread.join(timeout=5)
        server.close()
    assert stats.verify == "files" and stats.parsed == 1
    assert titles(tracker(root, "files"), [path.stem])[path.stem].startswith("garbled ")


def test_event_queue_overflow_means_a_full_listing(root: Path) -> None:
    t, status = watched(root)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    pid = status["pid"]
    a, b, edited = task_files(root)[:3]
    os.kill(pid, signal.SIGSTOP)
    try:
        # Alternating files: the kernel merges only repeats of the same event.
        for n in range(limit // 2 + 100):
            os.utime(a, (HOUR_AGO, HOUR_AGO + n))
            os.utime(b, (HOUR_AGO, HOUR_AGO + n))
        edit_in_place(edited, "overflowed")
    finally:
        os.kill(pid, signal.SIGCONT)
    stats = read(t)
    assert stats.verify == "watch-full"
    assert titles(t, [edited.stem])[edited.stem].startswith("overflowed ")
    assert watchclient.status(runtime(root))["overflows"] >= 1  # type: ignore[index]
    assert read(t).verify == "watch"
    assert_same_as_files(root, t)


def test_changes_past_the_watchers_log_mean_a_full_listing(root: Path) -> None:
    rt = runtime(root)
    subprocess.Popen(
        [
            sys.executable,
            *("-m", "pm_core.tracker.index.watch.daemon", str(root)),
            *("--idle", "60", "--log-max", "3"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for(lambda: watchclient.status(rt), "the watcher to listen")
    t = tracker(root)
    assert read(t).verify == "watch-full"
    files = task_files(root)[:5]
    for n, path in enumerate(files):
        edit_in_place(path, f"many {n}")
    stats = read(t)
    assert stats.verify == "watch-full" and stats.parsed == 5
    assert all(title.startswith("many ") for title in titles(t, [p.stem for p in files]).values())
    edit_in_place(files[0], "few")
    assert read(t).verify == "watch"
    assert titles(t, [files[0].stem])[files[0].stem].startswith("few ")


WORKER = """
import json, sys, time
from pathlib import Path
from pm_core.tracker.index import access as indexing
from pm_core.tracker.api import Tracker

root, stop, ids = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(",")
t = Tracker(root, author="w", env={})
reads = 0
while not stop.exists():
    index = indexing.fresh(t)
    assert index is not None
    reads += 1
index = indexing.fresh(t)
found = {i: item.title for i, item in index.items_by_id(ids).items()}
print(json.dumps({"reads": reads, "titles": found, "verify": index.last_refresh.verify}))
"""


def test_two_processes_reading_while_files_change_stay_correct(root: Path, tmp_path: Path) -> None:
    t, _ = watched(root)
    files = task_files(root)[:8]
    ids = [p.stem for p in files]
    stop = tmp_path / "stop"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(root), str(stop), ",".join(ids)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for n in range(40):
            edit_in_place(files[n % len(files)], f"round {n}")
            read(t)
            time.sleep(0.005)
    finally:
        stop.touch()
    truth = {item.id: item.title for item in (off(root).get(i) for i in ids)}
    for worker in workers:
        out, _ = worker.communicate(timeout=60)
        assert worker.returncode == 0
        answer = json.loads(out)
        assert answer["reads"] > 0 and answer["verify"].startswith("watch")
        assert answer["titles"] == truth
    assert titles(t, ids) == truth
    assert_same_as_files(root, t)


def test_small_tracker_never_starts_a_watcher(root: Path) -> None:
    set_index_settings(root, watch_min_files=4000)
    t = tracker(root)
    for n in range(3):
        edit_in_place(task_files(root)[n], f"small {n}")
        assert read(t).verify == "files"
    assert not watchclient.lock_held(runtime(root))
    assert not (runtime(root) / watchclient.SOCKET).exists()
    assert not (runtime(root) / watchclient.LOG).exists()


def test_files_setting_never_asks_or_starts_the_watcher(root: Path) -> None:
    set_index_settings(root, verify="files")
    t = tracker(root)
    path = task_files(root)[0]
    for n in range(2):
        edit_in_place(path, f"files {n}")
        assert read(t).verify == "files"
        assert titles(t, [path.stem])[path.stem].startswith(f"files {n} ")
    assert not watchclient.lock_held(runtime(root))
    assert not (runtime(root) / watchclient.LOG).exists()


def test_idle_watcher_exits(root: Path) -> None:
    set_index_settings(root, watch_idle_seconds=0.5)
    watched(root)
    wait_for(lambda: not watchclient.lock_held(runtime(root)), "the idle watcher to exit", 20)
    assert "stopped: idle" in (runtime(root) / watchclient.LOG).read_text()
    assert not (runtime(root) / watchclient.SOCKET).exists()


def test_stop_right_after_a_start_stops_the_watcher_coming_up(root: Path) -> None:
    assert read(tracker(root, "watch")).verify == "files"  # starts a watcher, does not wait
    assert watchclient.stop(runtime(root)) is True
    time.sleep(1.0)
    assert not watchclient.lock_held(runtime(root))
    assert not (runtime(root) / watchclient.SOCKET).exists()


def test_removing_runtime_stops_the_watcher(root: Path, tmp_path: Path) -> None:
    _, status = watched(root)
    shutil.rmtree(runtime(root))
    wait_for(lambda: not _alive(status["pid"]), "the watcher to exit")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (its parent is the shell that started it, long gone: init reaps it).
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][:1] != "Z"


def test_long_tracker_path_still_gets_a_watcher(pristine: Path, tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "ws" / ".agents" / "pm"
    shutil.copytree(pristine, deep)
    shutil.rmtree(deep / "runtime", ignore_errors=True)
    (deep / "runtime").mkdir()
    assert len(str(deep / "runtime" / watchclient.SOCKET)) > 108
    set_index_settings(deep, watch_min_files=10)
    try:
        t, _ = watched(deep)
        path = sorted((deep / "tasks").glob("*.toon"))[0]
        edit_in_place(path, "deep")
        assert read(t).verify == "watch"
        assert titles(t, [path.stem])[path.stem].startswith("deep ")
    finally:
        stop_watcher(deep)


def test_pm_index_status_and_stop(root: Path) -> None:
    watched(root)
    env = {**os.environ, "PM_PATH": str(root)}
    env.pop("PM_INDEX_VERIFY", None)
    pm = [sys.executable, "-m", "pm_core.cli.main"]
    out = subprocess.run([*pm, "--json", "index", "status"], env=env, capture_output=True)
    status = json.loads(out.stdout)
    assert status["reads_use"] == "watch" and status["watcher"]["running"] is True
    assert status["watcher"]["index_token_current"] is True
    out = subprocess.run([*pm, "--json", "index", "stop"], env=env, capture_output=True)
    assert json.loads(out.stdout) == {"stopped": True, "was_running": True}
    assert not watchclient.lock_held(runtime(root))


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"verify": "inotify"}, "unknown index verify mode 'inotify'"),
        ({"watch_min_files": -1}, "index.watch_min_files must be a whole number"),
        ({"watch_min_files": 2.5}, "index.watch_min_files must be a whole number"),
        ({"watch_idle_seconds": 0}, "index.watch_idle_seconds must be a number of seconds"),
    ],
)
def test_bad_watch_settings_are_errors_naming_the_key(
    root: Path, values: dict[str, Any], problem: str
) -> None:
    from pm_core.tracker.model.errors import UsageError

    set_index_settings(root, **values)
    with pytest.raises(UsageError) as caught:
        indexing.config(tracker(root))
    assert problem in caught.value.message


def test_watcher_never_imports_modules_from_the_checkout(root: Path) -> None:
    # A checkout's own json.py must not run in the watcher a read starts from there.
    workspace = root.parent.parent
    marker = workspace / "imported"
    (workspace / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    subprocess.run(
        # -P: this read itself must not pick up json.py; the watcher it starts is the subject.
        [sys.executable, "-P", "-m", "pm_core.cli.main", "list"],
        cwd=workspace,
        env={**os.environ, "PM_PATH": str(root), "PM_AUTHOR": AUTHOR},
        check=True,
        capture_output=True,
    )
    assert wait_for(lambda: watchclient.status(runtime(root)), "the watcher to listen")
    assert not marker.exists()


def test_links_planted_in_runtime_are_never_written_through(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    rt = runtime(root)
    (rt / watchclient.SPAWNED).symlink_to(outside)
    (rt / watchclient.LOG).symlink_to(outside)
    os.utime(outside, (HOUR_AGO, HOUR_AGO))  # no start "just now": a start is tried
    read(tracker(root))  # wants a watcher: tries to start one
    assert outside.read_text() == "keep me\n"
    assert not watchclient.lock_held(rt)
