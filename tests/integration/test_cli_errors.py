"""Bad input ends with its exit code and a clear message on stderr, and loses nothing.

Each failure prints ``error: <problem>`` (one line) and, where there is one,
``hint: <fix>`` on stderr; no item file or history line is changed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.pm_cli import PmCli, Result


@pytest.fixture
def cli(tmp_path: Path) -> PmCli:
    return PmCli.init(tmp_path)


@pytest.fixture
def live_pid() -> Iterator[int]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def _assert_error(result: Result, code: int, *fragments: str) -> None:
    assert result.code == code, result
    lines = result.err_lines
    assert lines, result
    assert lines[0].startswith("error: "), result
    assert len(lines) <= 2, result
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), result
    for fragment in fragments:
        assert fragment in result.err, result
    assert "Traceback" not in result.err


def _snapshot(cli: PmCli, item_id: str) -> tuple[bytes, bytes]:
    return cli.item_file(item_id).read_bytes(), cli.history_file(item_id).read_bytes()


def test_unknown_flag_is_usage_error_naming_the_flag(cli: PmCli) -> None:
    _assert_error(cli("create", "--bogus", "x"), 2, "--bogus", "pm create --help")


def test_unknown_command_is_usage_error(cli: PmCli) -> None:
    _assert_error(cli("frobnicate"), 2, "frobnicate", "pm --help")


def test_bad_enum_value_names_the_choices(cli: PmCli) -> None:
    _assert_error(cli("create", "x", "--status", "someday"), 2, "someday", "in_progress")
    _assert_error(cli("create", "x", "--type", "Gizmo"), 2, "Gizmo", "schema add type")
    _assert_error(cli("create", "x", "--priority", "9"), 2, "priority")


def test_missing_required_field_or_argument(cli: PmCli) -> None:
    _assert_error(cli("create"), 2, "title is required", "--title")
    _assert_error(cli("get"), 2, "ITEM_ID")


def test_id_that_does_not_exist_is_not_found(cli: PmCli) -> None:
    _assert_error(cli("get", "pm-zzzz"), 3, "pm-zzzz not found")
    _assert_error(cli("close", "zzzz", "reason"), 3, "pm-zzzz not found")


def test_no_tracker_is_not_found_with_the_fix(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    _assert_error(PmCli(bare)("list"), 3, "no tracker", "pm init")


def test_claim_held_by_another_is_conflict_and_changes_nothing(cli: PmCli) -> None:
    item_id = cli.create("Held")
    assert cli("claim", item_id).code == 0
    before = _snapshot(cli, item_id)
    _assert_error(
        cli("claim", item_id, env={"PM_AUTHOR": "bob"}), 4, "claimed by tester", "--force"
    )
    _assert_error(cli("release", item_id, env={"PM_AUTHOR": "bob"}), 4, "claimed by tester")
    assert _snapshot(cli, item_id) == before


def test_lock_held_by_a_live_process_is_conflict_naming_the_holder(
    cli: PmCli, live_pid: int
) -> None:
    item_id = cli.create("Locked")
    assert cli("config", "set", "locks.wait_ms", "100").code == 0
    before = _snapshot(cli, item_id)
    lock = cli.root / "locks" / f"{item_id}.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text(
        json.dumps(
            {
                "id": item_id,
                "pid": live_pid,
                "host": socket.gethostname(),
                "owner": "bob",
                "created_at": "2099-01-01T00:00:00.000Z",
                "ttl_seconds": 1800,
            }
        )
    )
    result = cli("comments", item_id, "--add", "blocked by the lock")
    _assert_error(result, 4, f"locked by bob (pid {live_pid})")
    assert _snapshot(cli, item_id) == before
    assert lock.exists()


def test_dependency_cycle_is_dependency_failure(cli: PmCli) -> None:
    first = cli.create("First")
    second = cli.create("Second", "--dep", first)
    before = _snapshot(cli, first)
    _assert_error(cli("deps", first, "--add", second), 5, "cycle")
    _assert_error(cli("create", "x", "--dep", "pm-nope"), 5, "pm-nope does not exist")
    _assert_error(cli("create", "x", "--parent", "pm-nope"), 5, "--allow-unresolved-deps")
    assert _snapshot(cli, first) == before


def test_a_single_item_command_that_changes_nothing_exits_0_with_a_noop_warning(
    cli: PmCli,
) -> None:
    item_id = cli.create("Open")
    cases = [
        (("update", item_id), "noop_no_update_fields"),
        (("update", item_id, "--status", "open"), "noop_no_update_fields"),
        (("reopen", item_id), "noop_not_terminal"),
        (("release", item_id), "noop_not_claimed"),
        (("close", item_id, "done"), None),
        (("close", item_id, "again"), "noop_already_terminal"),
    ]
    for args, warning in cases:
        result = cli(*args, "--json")
        assert result.code == 0, result
        receipt = json.loads(result.out)
        if warning is None:
            assert "warnings" not in receipt, result
            continue
        assert receipt["warnings"] == [warning] and receipt["changed_field_count"] == 0, result
        assert result.err_lines[0].startswith(f"warning: {warning}: {item_id}"), result


def test_close_without_reason_is_usage_error_with_the_fix(cli: PmCli) -> None:
    item_id = cli.create("Needs reason")
    before = _snapshot(cli, item_id)
    _assert_error(cli("close", item_id), 2, "requires a reason", "pm close")
    assert _snapshot(cli, item_id) == before


def test_invalid_json_input_is_usage_error(cli: PmCli) -> None:
    _assert_error(cli("create", "--stdin-json", stdin="{not json"), 2, "--stdin-json")
    _assert_error(cli("mutate", "--stdin", stdin="[1, 2"), 2, "not valid JSON")
    _assert_error(cli("mutate", "--stdin", stdin='{"op": "x"}'), 2, "list of objects")


def test_errors_under_json_are_one_json_line(cli: PmCli) -> None:
    result = cli("get", "pm-zzzz", "--json")
    assert result.code == 3
    lines = result.err_lines
    assert len(lines) == 1
    body = json.loads(lines[0])
    assert body["code"] == 3 and "pm-zzzz" in body["error"] and body["hint"]


def _corrupt(cli: PmCli) -> tuple[str, str, Path]:
    good = cli.create("Healthy item about parsers")
    bad = cli.create("Broken item about parsers")
    path = cli.item_file(bad)
    text = path.read_text()
    cut = text.index("Broken item") + 6
    path.write_text('title: "' + text[:cut].split("title: ", 1)[1])  # unterminated quote
    return good, bad, path


def test_corrupt_item_never_stops_list_or_search(cli: PmCli) -> None:
    good, bad, _path = _corrupt(cli)
    listed = cli("list", "--json")
    assert listed.code == 0, listed
    body = listed.json()
    assert [row["id"] for row in body["items"]] == [good]
    assert any(bad in entry for entry in body["skipped_corrupt"])
    hits = cli("search", "parsers", "--json")
    assert hits.code == 0 and [h["id"] for h in hits.json()["hits"]] == [good]


def test_corrupt_item_is_named_by_get_and_validate(cli: PmCli) -> None:
    _good, bad, path = _corrupt(cli)
    raw = path.read_bytes()
    _assert_error(cli("get", bad), 1, f"{bad}.toon")
    _assert_error(cli("comments", bad, "--add", "x"), 1, f"{bad}.toon")
    assert path.read_bytes() == raw
    report = cli("validate")
    assert report.code == 1
    assert bad in report.err_lines[0]
    assert f"{bad}.toon" in report.out


def test_empty_and_non_utf8_item_files_are_named(cli: PmCli) -> None:
    empty = cli.create("Empty soon")
    binary = cli.create("Binary soon")
    cli.item_file(empty).write_bytes(b"")
    cli.item_file(binary).write_bytes(b"\xff\xfe\x00garbage")
    _assert_error(cli("get", empty), 1, "file is empty", "pm restore")
    _assert_error(cli("get", binary), 1, "not UTF-8")
    assert cli("list").code == 0


def test_unreadable_settings_is_a_clear_error(cli: PmCli) -> None:
    (cli.root / "settings.json").write_text("{broken")
    _assert_error(cli("list"), 2, "settings.json")


def test_unexpected_failure_is_one_line_without_traceback(cli: PmCli) -> None:
    # A directory where the history file should be: an OS error no rule covers.
    item_id = cli.create("Shadowed")
    history = cli.history_file(item_id)
    history.unlink()
    history.mkdir()
    result = cli("history", item_id)
    assert result.code == 1, result
    assert result.err_lines[0].startswith("error: unexpected ")
    assert "Traceback" not in result.err
    debug = cli("history", item_id, env={"PM_DEBUG": "1"})
    assert debug.code == 1 and "Traceback" in debug.err
    os.rmdir(history)
