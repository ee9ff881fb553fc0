"""A writer killed by SIGKILL at any step of a write never leaves a torn tracker.

``PM_FAULT_KILL_AT=<step>`` (see :mod:`pm_core.tracker.storage.faults`) makes ``pm``
kill itself between the steps of a write: lock taken, temp file written,
temp file renamed over the item, history appended. After each crash every
item parses, ``pm validate`` names exactly the item whose file got ahead of
its history, the fix it prints repairs that keeping the newer file, and the
dead writer's lock is taken over by the next writer.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.storage.faults import STEPS
from tests.support.mcp_client import McpProcess
from tests.support.pm_cli import PmCli, Result, pm_executable

KILLED = -signal.SIGKILL
DIFFERS = (
    "item file differs from the state its history records "
    "(edited by hand, or a write was interrupted before its history entry)"
)


def run_killed(cli: PmCli, step: str, *args: str) -> int:
    """Run ``pm *args`` set to die at ``step``; assert it died by SIGKILL; return its pid."""
    proc = subprocess.Popen(
        [*pm_executable(), *args],
        cwd=cli.repo,
        env=cli.env({"PM_FAULT_KILL_AT": step}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == KILLED, (step, proc.returncode, err)
    return proc.pid


def failures(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every failure of a validate report, tagged with its check name."""
    return [
        {"check": check["name"], **failure}
        for check in report["checks"]
        for failure in check["failures"]
    ]


def history_ops(cli: PmCli, item_id: str) -> list[str]:
    """The ``op`` of every history line of ``item_id``."""
    lines = cli.history_file(item_id).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["op"] for line in lines if line.strip()]


def lock_record(cli: PmCli, item_id: str) -> dict[str, Any] | None:
    """The lock file of ``item_id`` as JSON, or None when there is none."""
    path = cli.root / "locks" / f"{item_id}.lock"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def listed_ids(cli: PmCli) -> list[str]:
    """Ids ``pm list --all --json`` returns (asserting it works)."""
    result = cli("list", "--all", "--json")
    assert result.code == 0, result
    return [row["id"] for row in result.json()["items"]]


def validate(cli: PmCli, *extra: str) -> tuple[Result, dict[str, Any]]:
    """``pm validate --json`` (plus ``extra``) and its parsed report."""
    result = cli("validate", *extra, "--json")
    return result, json.loads(result.out)


@pytest.mark.parametrize("step", STEPS)
def test_update_killed_at_each_step_is_explained_by_validate_and_repaired_keeping_the_file(
    tmp_path: Path, step: str
) -> None:
    cli = PmCli.init(tmp_path)
    item_id = cli.create("Crash target", "--priority", "2")

    dead_pid = run_killed(cli, step, "update", item_id, "--priority", "0")

    # Whatever the step, the item parses and is listed exactly once.
    assert listed_ids(cli) == [item_id]
    reached_file = step in ("renamed", "history_appended")
    assert cli("get", item_id, "--json").json()["item"]["priority"] == (0 if reached_file else 2)
    assert history_ops(cli, item_id) == (
        ["create", "update"] if step == "history_appended" else ["create"]
    )
    # The dead writer never released its lock.
    held = lock_record(cli, item_id)
    assert held is not None and held["pid"] == dead_pid
    if step == "temp_written":
        strays = list(cli.item_file(item_id).parent.glob(f".{item_id}.toon.*.tmp"))
        assert len(strays) == 1, strays

    result, report = validate(cli)
    if step == "renamed":
        assert result.code == 1, result
        assert failures(report) == [
            {
                "check": "history",
                "id": item_id,
                "path": f"history/{item_id}.jsonl",
                "message": DIFFERS,
                "fix": "pm validate --repair-history",
            }
        ]
        assert item_id in result.err
    else:
        assert result.code == 0, result
        assert failures(report) == []

    # The fix validate prints, run as printed, repairs and keeps the newer file.
    fixed, fix_report = validate(cli, "--repair-history")
    assert fixed.code == 0, fixed
    repaired = [entry["id"] for entry in fix_report["repair"]["repaired"]]
    assert repaired == ([item_id] if step == "renamed" else [])
    assert cli("get", item_id, "--json").json()["item"]["priority"] == (0 if reached_file else 2)
    verified = cli("history", item_id, "--verify", "--json")
    assert verified.code == 0 and verified.json()["ok"] is True, verified

    # The next writer takes the dead process's lock over and leaves none behind.
    after = cli("comments", item_id, "--add", "written after the crash", "--json")
    assert after.code == 0, after
    assert lock_record(cli, item_id) is None
    final, _ = validate(cli)
    assert final.code == 0, final


def test_comments_killed_at_every_step_leave_only_the_renamed_item_for_validate_to_name(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    ids = {step: cli.create(f"Comment target {step}") for step in STEPS}
    for step, item_id in ids.items():
        run_killed(cli, step, "comments", item_id, "--add", f"said before dying at {step}")

    assert sorted(listed_ids(cli)) == sorted(ids.values())
    result, report = validate(cli)
    assert result.code == 1, result
    assert [(f["check"], f["id"], f["message"]) for f in failures(report)] == [
        ("history", ids["renamed"], DIFFERS)
    ]

    fixed, fix_report = validate(cli, "--fix")
    assert fixed.code == 0, fixed
    assert [e["id"] for e in fix_report["repair"]["repaired"]] == [ids["renamed"]]
    for step, item_id in ids.items():
        texts = [c["text"] for c in cli("comments", item_id, "--json").json()["comments"]]
        landed = step in ("renamed", "history_appended")
        assert texts == ([f"said before dying at {step}"] if landed else []), step


def test_create_killed_after_its_rename_leaves_an_item_without_history_that_fix_records(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    run_killed(cli, "renamed", "create", "--title", "Born in a crash")

    [item_id] = listed_ids(cli)
    result, report = validate(cli)
    assert result.code == 1, result
    assert [(f["check"], f["id"], f["message"]) for f in failures(report)] == [
        ("history", item_id, "item has no history")
    ]
    fixed, _ = validate(cli, "--fix")
    assert fixed.code == 0, fixed
    assert history_ops(cli, item_id) == ["history_repair"]
    assert cli("get", item_id, "--json").json()["item"]["title"] == "Born in a crash"


def test_a_write_after_a_crash_records_the_gap_first_so_the_chain_still_verifies(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    item_id = cli.create("Written over a crash")
    run_killed(cli, "renamed", "update", item_id, "--priority", "0")

    # No repair in between: the next writer finds the file ahead of its history.
    assert cli("comments", item_id, "--add", "next writer").code == 0
    assert history_ops(cli, item_id) == ["create", "history_repair", "comment_add"]
    result, report = validate(cli)
    assert result.code == 0, (result, failures(report))
    item = cli("get", item_id, "--json").json()["item"]
    assert item["priority"] == 0
    assert [c["text"] for c in item["comments"]] == ["next writer"]


def test_stray_temp_file_of_a_killed_writer_does_not_break_later_reads_or_writes(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    item_id = cli.create("Left a temp file")
    run_killed(cli, "temp_written", "append", item_id, "lost paragraph")
    folder = cli.item_file(item_id).parent
    assert len(list(folder.glob(".*.tmp"))) == 1

    assert cli("append", item_id, "kept paragraph").code == 0
    assert cli("get", item_id, "--json").json()["item"]["body"] == "kept paragraph"
    assert listed_ids(cli) == [item_id]
    assert validate(cli)[0].code == 0

    # A fresh temp file may be a live writer's; an old one is named by pm health.
    assert cli("health", "--json").code == 0
    [stray] = folder.glob(".*.tmp")
    old = time.time() - 3600
    os.utime(stray, (old, old))
    unhealthy = cli("health", "--json")
    assert unhealthy.code == 1, unhealthy
    [check] = [c for c in unhealthy.json()["checks"] if c["name"] == "stray_temp_files"]
    assert check["problems"] == [
        f"{folder.name}/{stray.name} is a temp file left by an interrupted write"
    ]
    assert "delete them" in unhealthy.json()["remediation_map"]["stray_temp_files"]
    stray.unlink()
    assert cli("health", "--json").code == 0


# ------------------------------------------------------------------ random kills

WRITER = """
import sys
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import ConflictError

root, tag, *ids = sys.argv[1:]
tracker = Tracker(root, author="looper", env={})
print("ready", flush=True)
n = 0
while True:
    item_id = ids[n % len(ids)]
    text = f"{tag}-{n}"
    try:
        if n % 4 == 3:
            tracker.update(item_id, {"description": text})
        else:
            tracker.add_log("comments", item_id, text)
    except ConflictError:
        # A lock file emptied by a kill is only stale after a few seconds.
        continue
    print(text, flush=True)
    n += 1
"""

KILLS = int(os.environ.get("PM_CRASH_KILLS", "20"))


def test_writer_loop_killed_at_random_moments_loses_no_acknowledged_write(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    ids = [cli.create(f"Loop target {n}") for n in range(3)]
    seed = int(os.environ.get("PM_CRASH_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    acknowledged: list[str] = []
    updates_acknowledged = 0
    started = time.monotonic()
    for kill in range(KILLS):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(cli.root), f"k{kill}", *ids],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None and writer.stderr is not None
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        time.sleep(rng.uniform(0.0, 0.3))
        writer.send_signal(signal.SIGKILL)
        out, err = writer.communicate(timeout=30)
        assert writer.returncode == KILLED, err
        assert "Traceback" not in err, err
        for text in out.split():
            number = int(text.split("-")[1])
            if number % 4 == 3:
                updates_acknowledged += 1
            else:
                acknowledged.append(text)
    elapsed = time.monotonic() - started

    assert sorted(listed_ids(cli)) == sorted(ids)
    fixed, fix_report = validate(cli, "--fix")
    assert fixed.code == 0, (fixed, failures(fix_report))
    assert validate(cli)[0].code == 0

    present: list[str] = []
    for item_id in ids:
        present += [c["text"] for c in cli("comments", item_id, "--json").json()["comments"]]
    missing = sorted(set(acknowledged) - set(present))
    assert missing == []
    assert len(present) == len(set(present))  # nothing applied twice
    # Only the write in flight at each kill may land unacknowledged.
    assert len(present) - len(acknowledged) <= KILLS
    print(
        f"\ncrash loop: seed {seed}, {KILLS} SIGKILLs in {elapsed:.1f} s, "
        f"{len(acknowledged)} acknowledged comments + {updates_acknowledged} updates, "
        f"{len(present) - len(acknowledged)} unacknowledged landed, 0 lost, "
        f"{len(fix_report['repair']['repaired'])} histories repaired"
    )


# ------------------------------------------------------------------ live and dead holders

HOLDER = """
import sys, time
from pathlib import Path
from pm_core.tracker.storage.locks import item_lock

with item_lock(Path(sys.argv[1]), sys.argv[2], "holder-bot", wait_ms=0):
    print("held", flush=True)
    time.sleep(120)
"""


def test_lock_of_a_live_process_makes_update_exit_4_naming_it_and_is_taken_once_it_dies(
    tmp_path: Path,
) -> None:
    cli = PmCli.init(tmp_path)
    item_id = cli.create("Held item")
    assert cli("config", "set", "locks.wait_ms", "300").code == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(cli.root / "locks"), item_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        blocked = cli("update", item_id, "--priority", "0")
        assert blocked.code == 4, blocked
        assert blocked.err_lines[0].startswith(
            f"error: {item_id} is locked by holder-bot (pid {holder.pid}) since "
        ), blocked
        assert blocked.err_lines[1].startswith("hint: "), blocked
        as_json = cli("update", item_id, "--priority", "0", "--json")
        assert as_json.code == 4
        body = json.loads(as_json.err)
        assert body["details"]["lock"]["owner"] == "holder-bot"
        assert body["details"]["lock"]["pid"] == holder.pid
        # The same through pm-mcp: an error result with code 4 naming the holder.
        with McpProcess(cli.repo) as server:
            server.initialize()
            arguments = {"id": item_id, "options": {"priority": 0}}
            reply = server.request("tools/call", {"name": "pm_update", "arguments": arguments})
            result = reply["result"]
            assert result["isError"] is True and result["structuredContent"]["code"] == 4
            assert (
                f"locked by holder-bot (pid {holder.pid})" in result["structuredContent"]["error"]
            )
            assert server.close() == 0
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)

    taken = cli("update", item_id, "--priority", "0", "--json")
    assert taken.code == 0, taken
    assert cli("get", item_id, "--json").json()["item"]["priority"] == 0
    assert lock_record(cli, item_id) is None
