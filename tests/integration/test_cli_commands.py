"""The installed ``pm`` end to end in temporary git repositories: every command family."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.pm_cli import PmCli


@pytest.fixture
def cli(tmp_path: Path) -> PmCli:
    return PmCli.init(tmp_path)


def test_init_creates_the_tracker_at_the_git_top_from_a_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cli = PmCli(repo)
    result = cli("init", "acme", "--json", cwd=repo / "src" / "deep")
    assert result.code == 0, result
    assert (repo / ".agents" / "pm" / "settings.json").is_file()
    assert result.json()["id_prefix"] == "acme-"
    below = cli("create", "From below", "--json", cwd=repo / "src")
    assert below.code == 0, below
    assert below.json()["id"].startswith("acme-")


def test_create_get_update_round_trip_with_toon_and_json(cli: PmCli) -> None:
    body = cli.repo / "body.md"
    body.write_text("## Plan\n\nStep one, then two.\n")
    created = cli(
        "create",
        "Ship the parser",
        "-d",
        "Keep quoted commas, colons: all of them",
        "--type",
        "feature",
        "--priority",
        "high",
        "--tags",
        "parser,storage",
        "--ac",
        "round trip",
        "--ac",
        "no data loss",
        "--estimate",
        "90",
        "--goal",
        "Lossless storage",
        "--body-file",
        str(body),
    )
    assert created.code == 0, created
    assert created.out.startswith("id: pm-")  # TOON receipt by default
    item_id = created.out.split()[1]
    got = cli("get", item_id, "--json").json()["item"]
    assert got["type"] == "Feature" and got["priority"] == 1
    assert got["tags"] == ["parser", "storage"]
    assert got["acceptance_criteria"] == "round trip; no data loss"
    assert got["estimated_minutes"] == 90 and got["goal"] == "Lossless storage"
    assert got["body"] == "## Plan\n\nStep one, then two.\n"
    assert got["author"] == "tester"

    updated = cli(
        "update", item_id, "--add-tag", "v2", "--remove-tag", "storage", "--unset", "goal", "--json"
    ).json()
    assert set(updated["changed_fields"]) == {"tags", "goal"}
    got = cli("get", item_id, "--fields", "tags,goal", "--json").json()["item"]
    assert got == {"id": item_id, "tags": ["parser", "v2"]}


def test_create_reads_stdin_json_and_custom_fields(cli: PmCli) -> None:
    assert cli("schema", "add", "field", "team", "--type", "string").code == 0
    result = cli(
        "create",
        "--stdin-json",
        "--field",
        "team=storage",
        "--json",
        stdin=json.dumps({"title": "From JSON", "priority": 0, "tags": ["x"]}),
    )
    assert result.code == 0, result
    item = cli("get", result.json()["id"], "--json").json()["item"]
    assert item["title"] == "From JSON" and item["priority"] == 0 and item["team"] == "storage"


def test_author_comes_from_flag_then_environment(cli: PmCli) -> None:
    first = cli.create("By env")
    second = cli("--author", "flag-author", "create", "By flag", "--json").json()["id"]
    assert cli("get", first, "--json").json()["item"]["author"] == "tester"
    assert cli("get", second, "--json").json()["item"]["author"] == "flag-author"


def test_list_reports_total_and_an_explicit_limit_is_exact(cli: PmCli) -> None:
    ids = [cli.create(f"Item {n}", "--priority", str(n % 5)) for n in range(6)]
    cli("close", ids[0], "done")
    listed = cli("list", "--json").json()
    assert listed["total"] == 5 and len(listed["items"]) == 5
    assert ids[0] not in {row["id"] for row in listed["items"]}
    limited = cli("list", "--limit", "2", "--json").json()
    assert limited["total"] == 5 and limited["returned"] == 2 and limited["has_more"] is True
    everything = cli("list", "--all", "--json").json()
    assert everything["total"] == 6
    toon = cli("list", "--status", "closed")
    assert "total: 1" in toon.out


def test_list_shrinks_to_its_ceiling_with_an_omission_note(cli: PmCli) -> None:
    mutations = [
        {"op": "create", "options": {"title": f"Long item {n} " + "words " * 40}} for n in range(80)
    ]
    assert cli("mutate", "--stdin", stdin=json.dumps(mutations)).code == 0
    shrunk = cli("list")
    assert shrunk.code == 0
    assert len(shrunk.out.encode()) / 4 <= 4000
    assert "omitted:" in shrunk.out and "total: 80" in shrunk.out
    assert "recover:" in shrunk.out
    full = cli("list", "--json").json()
    assert full["total"] == 80 and len(full["items"]) == 80 and "omitted" not in full


def test_search_finds_by_words_across_statuses(cli: PmCli) -> None:
    target = cli.create("Lock takeover after crash", "-d", "stale lock files")
    cli.create("Unrelated chore")
    cli("close", target, "fixed")
    hits = cli("search", "stale", "lock", "--json").json()
    assert [h["id"] for h in hits["hits"]][:1] == [target]


def test_comments_notes_learnings_add_and_list(cli: PmCli) -> None:
    item_id = cli.create("Evidence")
    for kind in ("comments", "notes", "learnings"):
        added = cli(kind, item_id, "--add", f"first {kind}, with: punctuation", "--json")
        assert added.code == 0, added
        assert added.json()["count"] == 1
    assert cli("comments", item_id, "--stdin", stdin="from stdin\nsecond line").code == 0
    listed = cli("comments", item_id, "--json").json()
    assert [c["text"] for c in listed["comments"]] == [
        "first comments, with: punctuation",
        "from stdin\nsecond line",
    ]
    assert listed["total"] == 2
    assert cli("learnings", item_id, "--json").json()["learnings"][0]["author"] == "tester"


def test_append_files_docs_and_links(cli: PmCli) -> None:
    item_id = cli.create("Links")
    (cli.repo / "src").mkdir()
    (cli.repo / "src" / "a.py").write_text("x = 1\n")
    assert cli("append", item_id, "Appended paragraph").code == 0
    assert cli("files", item_id, "--add", "src/a.py", "--note", "entry point").code == 0
    assert cli("docs", item_id, "--add", "README.md").code == 0
    files = cli("files", item_id, "--json").json()
    assert files["files"] == [{"path": "src/a.py", "scope": "project", "note": "entry point"}]
    assert cli("files", item_id, "--remove", "src/a.py").code == 0
    assert cli("files", item_id, "--json").json()["total"] == 0
    outside = cli("files", item_id, "--add", "../../etc/passwd")
    assert outside.code == 2 and "outside the repository" in outside.err
    assert cli("get", item_id, "--json").json()["item"]["body"] == "Appended paragraph"


def test_deps_add_remove_and_tree(cli: PmCli) -> None:
    parent = cli.create("Parent", "--type", "epic")
    child = cli.create("Child", "--parent", parent)
    blocker = cli.create("Blocker")
    assert cli("deps", child, "--add", f"{blocker}:blocked_by").code == 0
    tree = cli("deps", child, "--json").json()
    assert blocker in json.dumps(tree) and parent in json.dumps(tree)
    assert cli("deps", child, "--remove", blocker).code == 0
    item = cli("get", child, "--json").json()["item"]
    assert all(d["id"] != blocker for d in item.get("dependencies", []))


def test_claim_close_reopen_release_flow(cli: PmCli) -> None:
    item_id = cli.create("Flow")
    claimed = cli("claim", item_id, "--json").json()
    assert claimed["status"] == "in_progress" and claimed["claimed_by"] == "tester"
    assert cli("release", item_id).code == 0
    closed = cli("close", item_id, "-r", "done with evidence", "--json").json()
    assert closed["status"] == "closed"
    assert cli("reopen", item_id, "--json").json()["status"] == "open"
    via_update = cli("update", item_id, "--status", "closed", "-r", "closed by update", "--json")
    assert via_update.code == 0, via_update
    item = cli("get", item_id, "--json").json()["item"]
    assert item["close_reason"] == "closed by update"


def test_history_restore_delete_copy(cli: PmCli) -> None:
    item_id = cli.create("Versioned")
    cli("update", item_id, "--title", "Renamed")
    history = cli("history", item_id, "--json").json()
    assert [e["op"] for e in history["entries"]] == ["create", "update"]
    assert "title" in history["entries"][1]["changed"]
    assert cli("restore", item_id, "1").code == 0
    assert cli("get", item_id, "--json").json()["item"]["title"] == "Versioned"
    verified = cli("history", item_id, "--verify", "--json")
    assert verified.code == 0 and verified.json()["ok"] is True
    copy = cli("copy", item_id, "--json").json()["id"]
    assert cli("get", copy, "--json").json()["item"]["title"] == "Copy of Versioned"
    assert cli("delete", item_id).code == 0
    assert cli("get", item_id).code == 3
    assert cli("get", item_id, "--at", "3", "--json").json()["item"]["title"] == "Versioned"


def test_mutate_applies_all_or_nothing(cli: PmCli) -> None:
    item_id = cli.create("Target")
    good = [
        {"op": "comment", "id": item_id, "options": {"text": "one"}},
        {"op": "update", "id": item_id, "options": {"priority": 0}},
    ]
    applied = cli("mutate", "--stdin", "--json", stdin=json.dumps(good))
    assert applied.code == 0 and len(applied.json()["results"]) == 2
    before = cli.item_file(item_id).read_bytes()
    history_before = cli.history_file(item_id).read_bytes()
    bad = [
        {"op": "comment", "id": item_id, "options": {"text": "two"}},
        {"op": "update", "id": item_id, "options": {"priority": "urgent"}},
    ]
    failed = cli("mutate", "--stdin", stdin=json.dumps(bad))
    assert failed.code == 2 and "mutation 2 (update)" in failed.err
    assert cli.item_file(item_id).read_bytes() == before
    assert cli.history_file(item_id).read_bytes() == history_before


def test_focus_next_context_graph_plan(cli: PmCli) -> None:
    epic = cli.create("Epic", "--type", "epic")
    task = cli.create("Task under epic", "--parent", epic, "--priority", "0")
    assert cli("focus", task, "--json").json()["focus"] == task
    assert cli("focus", "--json").json()["focus"] == task
    recommended = cli("next", "--json").json()["recommended"]
    assert recommended["id"] == task
    assert cli("context", "--json").code == 0
    ancestors = cli("graph", "ancestors", task, "--json").json()
    assert epic in json.dumps(ancestors)
    plan = cli("plan", "create", "Roll out", "--step", "build", "--step", "ship", "--json")
    assert plan.code == 0, plan
    plan_id = plan.json()["id"]
    assert cli("plan", "step", plan_id, "1", "in_progress").code == 0
    shown = cli("plan", "show", plan_id, "--json").json()
    assert "build" in json.dumps(shown)
    assert cli("focus", "--clear", "--json").json()["focus"] is None


def test_validate_health_schema_config_contracts_events(cli: PmCli) -> None:
    cli.create("Valid")
    report = cli("validate", "--json")
    assert report.code == 0 and report.json()["ok"] is True
    assert cli("health", "--json").json()["ok"] is True
    assert cli("schema", "add", "type", "Spike").code == 0
    assert cli.create("Investigate", "--type", "spike")
    assert cli("config", "set", "locks.wait_ms", "500").code == 0
    assert cli("config", "get", "locks.wait_ms", "--json").json()["value"] == 500
    contract = cli("contracts", "--json").json()
    assert {"create", "list", "close"} <= {c["name"] for c in contract["commands"]}
    assert cli("events", "--limit", "3", "--json").json()["returned"] == 3


def test_test_command_links_and_runs_with_a_timeout(cli: PmCli) -> None:
    item_id = cli.create("Tested")
    assert cli("test", item_id, "--add", "true").code == 0
    run = cli("test", item_id, "--run", "--json")
    assert run.code == 0, run
    assert run.json()["summary"] == {"passed": 1, "failed": 0}
    assert cli("test", item_id, "--add", "sleep 5").code == 0
    slow = cli("test", item_id, "--run", "--timeout", "0.5", "--json")
    assert slow.code == 1 and "failed" in slow.err
    runs = cli("get", item_id, "--json").json()["item"]["test_runs"]
    assert len(runs) == 3


def test_help_lists_commands_and_version_prints(cli: PmCli) -> None:
    helped = cli("--help")
    assert helped.code == 0 and "create" in helped.out and "validate" in helped.out
    assert cli("--version").out.startswith("pm ")
    assert cli("create", "--help").code == 0
