"""Our merge drivers against the TypeScript pm (the oracle in ``PM_UPSTREAM_BIN``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitrepo import GitRepo, upstream_bin


def _ts(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    env = repo.pm.env({"PM_AUTHOR": repo.author})
    return subprocess.run(
        [str(upstream_bin() / "pm"), *args],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _ts_json(repo: GitRepo, *args: str) -> Any:
    proc = _ts(repo, *args, "--json")
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def _ts_integrity(repo: GitRepo) -> dict[str, Any]:
    report = _ts_json(repo, "validate")
    assert report["ok"] is True, report
    check = next(c for c in report["checks"] if c["name"] == "storage_integrity")
    details: dict[str, Any] = check["details"]
    for key in (
        "unreadable_item_files",
        "duplicate_item_ids",
        "history_conflict_marker_streams",
        "history_unparseable_streams",
        "resurrected_items",
        "unparseable_config_files",
    ):
        assert details[key] == [], (key, details[key])
    return details


def test_a_merge_our_drivers_made_validates_in_the_typescript_pm(tmp_path: Path) -> None:
    upstream_bin()
    repo = GitRepo.create(tmp_path)
    item = repo.pm.create("shared", "--description", "d")
    repo.commit("base")
    for name, args in (("a", ("--priority", "1")), ("b", ("--add-tag", "x"))):
        repo.branch(name)
        assert repo.pm("update", item, *args).code == 0
        assert repo.pm("comments", item, "--add", f"from {name}").code == 0
        repo.commit(name)
    merged = repo.git("merge", "a", "-m", "merge")
    assert "CONFLICT" not in merged.stdout
    details = _ts_integrity(repo)
    assert details["merge_fence"]["status"] == "ok"  # one fence serves both implementations
    texts = sorted(c["text"] for c in _ts_json(repo, "comments", item)["comments"])
    assert texts == ["from a", "from b"]


def test_a_fence_the_typescript_pm_installed_merges_with_our_drivers(tmp_path: Path) -> None:
    upstream_bin()
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    repo = GitRepo(path, "tsuser")
    assert _ts(repo, "init").returncode == 0
    fence = (path / ".gitattributes").read_bytes()
    created = _ts_json(repo, "create", "--title", "shared", "--description", "d", "--type", "Task")
    item = str(created.get("id") or created["item"]["id"])
    repo.commit("base")
    installed = repo.pm("merge", "install", "--json")
    assert installed.code == 0, installed
    assert installed.json()["gitattributes"]["changed"] is False
    assert (path / ".gitattributes").read_bytes() == fence
    driver = repo.git("config", "--get", "merge.pm-history.driver").stdout
    assert "pm_core.tracker.merge.driver" in driver
    for name in ("a", "b"):
        repo.branch(name)
        assert _ts(repo, "comments", item, "--add", f"from {name}").returncode == 0
        repo.commit(name)
    merged = repo.git("merge", "a", "-m", "merge")
    assert "CONFLICT" not in merged.stdout
    _ts_integrity(repo)
    texts = sorted(c["text"] for c in _ts_json(repo, "comments", item)["comments"])
    assert texts == ["from a", "from b"]
    verified = _ts_json(repo, "history", item, "--verify")
    assert verified["verification"]["ok"] is True, verified["verification"]


def test_missing_oracle_fails_under_ci_and_skips_elsewhere() -> None:
    with pytest.raises(pytest.fail.Exception):
        upstream_bin({"CI": "true"})
    with pytest.raises(pytest.skip.Exception):
        upstream_bin({})
