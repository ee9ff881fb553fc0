"""The git merge drivers with real git and real ``pm`` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitrepo import GitRepo


def _item(repo: GitRepo, item_id: str) -> dict[str, Any]:
    result = repo.pm("get", item_id, "--json")
    assert result.code == 0, result
    item: dict[str, Any] = result.json()["item"]
    return item


def _ok(repo: GitRepo, *args: str) -> Any:
    result = repo.pm(*args, "--json")
    assert result.code == 0, result
    return result.json() if result.out.strip() else None


def _verifies(repo: GitRepo, item_id: str) -> None:
    report = repo.pm("history", item_id, "--verify", "--json")
    assert report.code == 0, report
    assert report.json()["ok"] is True


def _validate(repo: GitRepo) -> dict[str, Any]:
    result = repo.pm("validate", "--json")
    report: dict[str, Any] = json.loads(result.out)
    return report


def _failures(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return next(c["failures"] for c in report["checks"] if c["name"] == check)


@pytest.fixture
def shared(tmp_path: Path) -> tuple[GitRepo, str]:
    """A repository with one committed item on main."""
    repo = GitRepo.create(tmp_path)
    item_id = repo.pm.create("shared item", "--description", "both branches touch it")
    repo.commit("base item")
    return repo, item_id


def _two_branches(repo: GitRepo, a: list[list[str]], b: list[list[str]]) -> None:
    for name, mutations in (("a", a), ("b", b)):
        repo.branch(name)
        for args in mutations:
            _ok(repo, *args)
        repo.commit(f"branch {name}")


def driver_words(command: str) -> list[str]:
    import shlex

    return shlex.split(command)


def test_init_installs_fence_and_absolute_driver_config(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path)
    text = (repo.path / ".gitattributes").read_text()
    assert '".agents/pm/history/*.jsonl" merge=pm-history' in text
    assert '".agents/pm/tasks/*.toon" merge=pm-item-toon' in text
    driver = repo.git("config", "--get", "merge.pm-item-toon.driver").stdout.strip()
    # This interpreter by absolute path, started lean (isolated, no site), pm_core named on the path.
    words = driver_words(driver)
    assert os.path.samefile(words[0], sys.executable) and words[1:4] == ["-I", "-S", "-c"]
    assert "from pm_core.tracker.merge.driver import main" in words[4]
    assert words[5] == "item"
    assert driver.endswith('"%O" "%A" "%B" --item-path %P')
    for key in ("pm-item-markdown", "pm-history", "pm-relationship", "pm-json"):
        assert repo.git("config", "--get", f"merge.{key}.driver").returncode == 0
    again = _ok(repo, "merge", "install")
    assert again["gitattributes"]["changed"] is False and again["git_config_changed"] == []
    health = repo.pm("health", "--json").json()
    drivers = next(c for c in health["checks"] if c["name"] == "merge_drivers")
    assert drivers["ok"] is True


def test_init_no_merge_fence_leaves_git_alone_and_validate_names_the_fix(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path, "tester", "--no-merge-fence")
    assert not (repo.path / ".gitattributes").exists()
    assert repo.git("config", "--get", "merge.pm-history.driver", check=False).returncode != 0
    # A warning, not a failure: the TypeScript pm's validate passes such a tracker too.
    (check,) = [c for c in _validate(repo)["checks"] if c["name"] == "storage_integrity"]
    assert any(
        "no pm merge fence" in f["message"] and "pm merge install" in f["fix"]
        for f in check["warnings"]
    )
    dry = _ok(repo, "merge", "install", "--dry-run")
    assert dry["gitattributes"]["changed"] is True
    assert not (repo.path / ".gitattributes").exists()
    _ok(repo, "merge", "install")
    repo.git("config", "merge.pm-json.driver", "cat")
    health = repo.pm("health", "--json")
    assert health.code == 1
    check = next(c for c in health.json()["checks"] if c["name"] == "merge_drivers")
    assert check["ok"] is False and "merge.pm-json.driver" in check["problems"][0]
    failures = _failures(_validate(repo), "storage_integrity")
    assert any("merge.pm-json.driver" in f["message"] for f in failures)


def test_comments_on_both_branches_merge_cleanly(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _two_branches(
        repo,
        [["comments", item, "--add", "from a"]],
        [["comments", item, "--add", "from b"]],
    )
    merged = repo.git("merge", "a", "-m", "merge a")
    assert "CONFLICT" not in merged.stdout
    texts = [c["text"] for c in _item(repo, item)["comments"]]
    assert sorted(texts) == ["from a", "from b"]
    _verifies(repo, item)
    assert _validate(repo)["ok"] is True


def test_different_fields_on_one_item_merge_cleanly(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _two_branches(
        repo,
        [["update", item, "--priority", "0"], ["comments", item, "--add", "a"]],
        [["update", item, "--add-tag", "backend"], ["notes", item, "--add", "b"]],
    )
    repo.git("merge", "a", "-m", "merge a")
    got = _item(repo, item)
    assert got["priority"] == 0 and got["tags"] == ["backend"]
    assert [c["text"] for c in got["comments"]] == ["a"] and [n["text"] for n in got["notes"]] == [
        "b"
    ]
    _verifies(repo, item)
    assert _validate(repo)["ok"] is True


def test_new_items_on_both_sides(shared: tuple[GitRepo, str]) -> None:
    repo, _ = shared
    repo.branch("a")
    one = repo.pm.create("made on a")
    repo.commit("a")
    repo.branch("b")
    two = repo.pm.create("made on b")
    repo.commit("b")
    repo.git("merge", "a", "-m", "merge a")
    ids = {i["id"] for i in _ok(repo, "list", "--all")["items"]}
    assert {one, two} <= ids
    assert _validate(repo)["ok"] is True


def test_scalar_set_two_ways_is_conflicted_valid_receipted_and_gated(
    shared: tuple[GitRepo, str],
) -> None:
    repo, item = shared
    _two_branches(
        repo,
        [["update", item, "--priority", "0"], ["comments", item, "--add", "a"]],
        [["update", item, "--priority", "4"], ["comments", item, "--add", "b"]],
    )
    merged = repo.git("merge", "a", "-m", "merge a", check=False)
    assert merged.returncode != 0
    item_path = f".agents/pm/tasks/{item}.toon"
    assert item_path in repo.conflicted()
    assert "both branches set priority" in merged.stdout + merged.stderr
    data = (repo.path / item_path).read_bytes()
    assert b"<<<<<<<" not in data and b">>>>>>>" not in data
    got = _item(repo, item)  # the conflicted file is a valid item
    assert got["priority"] in (0, 4) and len(got["comments"]) == 2
    git_dir = Path(
        repo.git("rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    )
    local = list((git_dir / "pm" / "merge-receipts").glob("*.json"))
    sidecars = list((repo.root / "merge-receipts").glob("*.json"))
    assert len(local) == 1 and len(sidecars) == 1
    receipt = json.loads(local[0].read_text())
    decision = receipt["decisions"][0]
    assert decision["field"] == "priority"
    assert {decision["retained"], decision["discarded"]} == {0, 4}
    sidecar_text = sidecars[0].read_text()
    assert '"retained"' not in sidecar_text and '"discarded"' not in sidecar_text
    assert json.loads(sidecar_text)["decisions"][0]["discarded_hash"] == decision["discarded_hash"]
    report = _ok(repo, "merge", "report")
    assert [r["item_id"] for r in report["receipts"]] == [item]
    assert report["counts"]["blocking"] == 1
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "merge a (reviewed)")
    assert any("pending" in f["message"] for f in _failures(_validate(repo), "storage_integrity"))
    refused = repo.pm("merge", "reconcile", "--json")
    assert refused.code != 0 and refused.json()["refused"] is True
    assert repo.pm("merge", "reconcile", "--dry-run", "--json").code != 0
    forced = repo.pm("merge", "reconcile", "--force", "--json")
    assert forced.code == 0, forced
    assert _ok(repo, "merge", "report")["receipts"] == []
    _verifies(repo, item)
    assert _validate(repo)["ok"] is True


def test_delete_versus_edit_is_found_and_repaired(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _two_branches(repo, [["delete", item]], [["comments", item, "--add", "kept"]])
    merged = repo.git("merge", "a", "-m", "merge a", check=False)
    assert merged.returncode != 0
    assert f".agents/pm/tasks/{item}.toon" in repo.conflicted()
    repo.git("add", "-A")  # keep the edited file
    repo.git("commit", "-q", "-m", "merge a keeping the edit")
    failures = _failures(_validate(repo), "storage_integrity")
    found = [f for f in failures if f["id"] == item and "ends in delete" in f["message"]]
    assert found and "history-repair" in found[0]["fix"]
    assert repo.pm("merge", "reconcile", "--json").code != 0  # a decision, not a routine repair
    _ok(repo, "history-repair", item)
    _verifies(repo, item)
    assert _validate(repo)["ok"] is True


def _mint(repo: GitRepo, title: str, item_id: str, folder: str = "tasks") -> None:
    """Create an item and give it ``item_id`` (what two branches minting one id produce)."""
    made = repo.pm.create(title, "--type", folder[:-1].capitalize())
    for path in (repo.root / folder / f"{made}.toon", repo.root / "history" / f"{made}.jsonl"):
        text = path.read_text().replace(made, item_id)
        path.unlink()
        path.with_name(path.name.replace(made, item_id)).write_text(text)
    _ok(repo, "history-repair", item_id)


def test_same_id_minted_on_both_sides(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path)
    repo.branch("a")
    _mint(repo, "item of a", "pm-same")
    repo.commit("a")
    repo.branch("b")
    _mint(repo, "item of b", "pm-same")
    repo.commit("b")
    merged = repo.git("merge", "a", "-m", "merge a", check=False)
    assert merged.returncode != 0
    assert ".agents/pm/tasks/pm-same.toon" in repo.conflicted()
    assert "both branches created" in merged.stdout + merged.stderr
    assert _item(repo, "pm-same")["title"] in ("item of a", "item of b")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "merge")
    failures = _failures(_validate(repo), "storage_integrity")
    assert any(f["id"] == "pm-same" and "minted on two branches" in f["message"] for f in failures)


def test_same_id_in_two_type_folders_is_a_duplicate(tmp_path: Path) -> None:
    repo = GitRepo.create(tmp_path)
    repo.branch("a")
    _mint(repo, "a task", "pm-twin", "tasks")
    repo.commit("a")
    repo.branch("b")
    _mint(repo, "an issue", "pm-twin", "issues")
    repo.commit("b")
    repo.git("merge", "a", "-m", "merge a", check=False)
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "merge")
    report = _validate(repo)
    assert any(f["id"] == "pm-twin" for f in _failures(report, "duplicates"))
    assert any(f["id"] == "pm-twin" for f in _failures(report, "storage_integrity"))


def _diverge(repo: GitRepo, item: str) -> None:
    _two_branches(
        repo,
        [
            ["update", item, "--priority", "0", "--add-tag", "a"],
            ["comments", item, "--add", "a1"],
            ["comments", item, "--add", "a2"],
        ],
        [
            ["update", item, "--priority", "3", "--add-tag", "b"],
            ["comments", item, "--add", "b1"],
            ["learnings", item, "--add", "b2"],
        ],
    )


def test_either_way_round_gives_byte_identical_files(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _diverge(repo, item)
    files = [f".agents/pm/tasks/{item}.toon", f".agents/pm/history/{item}.jsonl"]
    results = []
    for ours, theirs in (("a", "b"), ("b", "a")):
        repo.git("checkout", "-q", "-B", f"m-{ours}", ours)
        repo.git("merge", theirs, "-m", "m", check=False)
        results.append([(repo.path / f).read_bytes() for f in files])
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", "m")
    assert results[0] == results[1]
    assert b"<<<<<<<" not in results[0][0] + results[0][1]


def test_rebase_cherry_pick_and_stash_pop_use_the_drivers(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _two_branches(
        repo,
        [["comments", item, "--add", "a"]],
        [["comments", item, "--add", "b"]],
    )
    # rebase a onto b
    repo.git("checkout", "-q", "-B", "rebased", "a")
    repo.git("rebase", "b")
    assert sorted(c["text"] for c in _item(repo, item)["comments"]) == ["a", "b"]
    _verifies(repo, item)
    # cherry-pick a's commit onto b
    repo.git("checkout", "-q", "-B", "picked", "b")
    repo.git("cherry-pick", "a")
    assert sorted(c["text"] for c in _item(repo, item)["comments"]) == ["a", "b"]
    _verifies(repo, item)
    # stash an uncommitted comment, commit another, pop it
    repo.git("checkout", "-q", "-B", "stashed", "main")
    _ok(repo, "comments", item, "--add", "stashed")
    repo.git("stash")
    _ok(repo, "comments", item, "--add", "committed")
    repo.commit("committed")
    repo.git("stash", "pop")
    assert sorted(c["text"] for c in _item(repo, item)["comments"]) == ["committed", "stashed"]
    _verifies(repo, item)
    assert _validate(repo)["ok"] is True


def _driver(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-m", "pm_core.tracker.merge.driver", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_driver_given_a_non_toon_file_leaves_gits_conflict(tmp_path: Path) -> None:
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("not: [toon\nline two\n")
    ours.write_text("not: [toon\nours changed\n")
    theirs.write_text("not: [toon\ntheirs changed\n")
    expected = subprocess.run(
        [
            "git",
            "merge-file",
            "-p",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            str(ours),
            str(base),
            str(theirs),
        ],
        capture_output=True,
        check=False,
    ).stdout
    before = sorted(p.name for p in tmp_path.iterdir())
    run = _driver(
        "item",
        str(base),
        str(ours),
        str(theirs),
        "--item-path",
        ".agents/pm/tasks/x.toon",
        cwd=tmp_path,
    )
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not merged by the item driver" in lines[0]
    assert ours.read_bytes() == expected and b"<<<<<<< ours" in expected
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no receipt, no temp file


def test_driver_given_non_json_history_or_settings_fails_loudly(tmp_path: Path) -> None:
    for kind in ("history", "json"):
        base, ours, theirs = (tmp_path / f"{kind}-{n}" for n in ("base", "ours", "theirs"))
        base.write_text("{}\n")
        ours.write_text("{}\n<<<<<<< broken\n")
        theirs.write_text('{"a": 1}\n')
        run = _driver(kind, str(base), str(ours), str(theirs), cwd=tmp_path)
        assert run.returncode == 1
        assert f"not merged by the {kind} driver" in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
    assert _driver("nonsense", "a", "b", "c", cwd=tmp_path).returncode == 2


def test_garbage_item_merge_touches_nothing_outside_the_tracker(
    shared: tuple[GitRepo, str],
) -> None:
    repo, item = shared
    path = repo.root / "tasks" / f"{item}.toon"
    for name, text in (("a", "garbage from a\n"), ("b", "garbage from b\n")):
        repo.branch(name)
        path.write_text(text)
        repo.commit(name)
    merged = repo.git("merge", "a", "-m", "m", check=False)
    assert merged.returncode != 0
    assert "not merged by the item driver" in merged.stderr
    changed = [line[3:] for line in repo.status()]
    assert changed and all(p.startswith(".agents/pm/") for p in changed), changed


def test_markers_do_not_stop_reads_of_other_items(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    other = repo.pm.create("another item")
    path = repo.root / "tasks" / f"{item}.toon"
    path.write_text("<<<<<<< ours\ntitle: x\n=======\ntitle: y\n>>>>>>> theirs\n")
    history = repo.root / "history" / f"{other}.jsonl"
    history.write_text("<<<<<<< ours\n" + history.read_text() + "=======\n>>>>>>> theirs\n")
    repo.commit("markers committed")
    listed = _ok(repo, "list", "--all")
    assert other in {i["id"] for i in listed["items"]}
    assert repo.pm("search", "another", "--json").code == 0
    assert repo.pm("next", "--json").code == 0
    failures = _failures(_validate(repo), "storage_integrity")
    assert {f["path"] for f in failures if "conflict markers" in f["message"]} == {
        f"tasks/{item}.toon",
        f"history/{other}.jsonl",
    }
    _ok(repo, "history-repair", other)
    _verifies(repo, other)


def test_json_settings_merge_key_by_key(shared: tuple[GitRepo, str]) -> None:
    repo, _ = shared
    settings = repo.root / "settings.json"
    for name, key in (("a", "from_a"), ("b", "from_b")):
        repo.branch(name)
        data = json.loads(settings.read_text())
        data[key] = True
        settings.write_text(json.dumps(data, indent=2) + "\n")
        repo.commit(name)
    repo.git("merge", "a", "-m", "m")
    merged = json.loads(settings.read_text())
    assert merged["from_a"] is True and merged["from_b"] is True


def test_reconcile_clean_merge_is_green(shared: tuple[GitRepo, str]) -> None:
    repo, item = shared
    _two_branches(repo, [["comments", item, "--add", "a"]], [["comments", item, "--add", "b"]])
    repo.git("merge", "a", "-m", "m")
    dry = repo.pm("merge", "reconcile", "--dry-run", "--json")
    assert dry.code == 0, dry
    assert dry.json()["drifted"] == []
