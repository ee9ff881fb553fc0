"""Approved commands across two real clones: a pulled command waits for this clone's approval.

Alice links a command in her clone and pushes; Bob pulls. On Bob's clone the
command is listed by ``pm health`` and refused by ``pm test --run`` until Bob
runs ``pm test --approve`` (which shows it first); one changed character,
pulled again, needs approval again. A canary file stands for "the command ran".
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm_core.tracker.gate.approvals import command_hash, git_common_dir, store_dir
from tests.support.pm_cli import PmCli, pm_executable

#: Non-interactive runs: no terminal, and CI says so explicitly.
CI = {"CI": "true"}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its stdout."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def clones(tmp_path: Path) -> tuple[PmCli, PmCli, Path]:
    """Alice's clone with a tracker, a bare origin, and Bob's clone of it."""
    alice = PmCli.init(tmp_path / "alice", author="alice")
    git(alice.repo, "add", "-A")
    git(alice.repo, "commit", "-qm", "tracker")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(alice.repo), str(origin))
    git(alice.repo, "remote", "add", "origin", str(origin))
    git(alice.repo, "fetch", "-q", "origin")
    branch = git(alice.repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(alice.repo, "branch", "-q", f"--set-upstream-to=origin/{branch}")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "bob"))
    return alice, PmCli(tmp_path / "bob", author="bob"), tmp_path


def push(cli: PmCli, message: str) -> None:
    git(cli.repo, "add", "-A")
    git(cli.repo, "commit", "-qm", message)
    git(cli.repo, "push", "-q")


def test_a_pulled_command_is_refused_until_approved_and_a_changed_one_again(
    clones: tuple[PmCli, PmCli, Path],
) -> None:
    alice, bob, base = clones
    canary = base / "canary"
    item = alice.create("Tested")
    linked = alice("test", item, "--add", f"touch {canary}", "--json")
    assert linked.code == 0, linked
    # Linking on Alice's clone approved it there: it runs for her.
    assert alice("test", item, "--run", "--json").code == 0
    assert canary.exists()
    canary.unlink()
    push(alice, "link a test")

    git(bob.repo, "pull", "-q")
    refused = bob("test", item, "--run", "--json")
    assert refused.code == 2, refused
    assert "not approved on this clone" in refused.err and f"touch {canary}" in refused.err
    assert "--approve" in refused.err
    assert not canary.exists()
    health = bob("health", "--json")
    assert health.code == 1, health
    check = {c["name"]: c for c in health.json()["checks"]}["approved_commands"]
    assert check["ok"] is False and check["detail"] == {"unapproved": 1}
    assert f"touch {canary}" in check["problems"][0] and item in check["problems"][0]
    assert bob("test", item, "--json").json()["tests"][0]["approved"] is False

    # Non-interactive without the explicit flag: shown, not approved.
    unflagged = bob("test", "--approve", "--all", "--json", env=CI)
    assert unflagged.code == 2, unflagged
    assert f"touch {canary}" in unflagged.err and "--yes" in unflagged.err
    assert bob("test", item, "--run", "--json").code == 2
    approved = bob("test", "--approve", "--all", "--yes", "--json", env=CI)
    assert approved.code == 0, approved
    assert f"touch {canary}" in approved.err  # each command is shown first
    assert [r["command"] for r in approved.json()["approved"]] == [f"touch {canary}"]
    ran = bob("test", item, "--run", "--json")
    assert ran.code == 0, ran
    assert canary.exists()
    canary.unlink()
    assert {c["name"]: c for c in bob("health", "--json").json()["checks"]}["approved_commands"][
        "ok"
    ]

    # One changed character, by hand on Alice's clone, pulled: approval is needed again.
    path = alice.item_file(item)
    text = path.read_text()
    assert f"touch {canary}" in text
    path.write_text(text.replace(f"touch {canary}", f"touch {canary}2"))
    push(alice, "edit the test by hand")
    git(bob.repo, "reset", "-q", "--hard")  # Bob drops his local run records first
    git(bob.repo, "pull", "-q")
    again = bob("test", item, "--run", "--json")
    assert again.code == 2, again
    assert f"touch {canary}2" in again.err
    assert not Path(f"{canary}2").exists()
    per_item = bob("test", item, "--approve", "--yes", "--json", env=CI)
    assert per_item.code == 0, per_item
    assert bob("test", item, "--run", "--json").code == 0
    assert Path(f"{canary}2").exists()


def test_approvals_live_in_the_git_common_dir_shared_by_worktrees(
    clones: tuple[PmCli, PmCli, Path],
) -> None:
    alice, _, base = clones
    worktree = base / "alice-wt"
    git(alice.repo, "worktree", "add", "-q", str(worktree))
    reported = git(worktree, "rev-parse", "--git-common-dir").strip()
    assert git_common_dir(worktree) == (worktree / reported).resolve()
    assert git_common_dir(alice.repo) == (alice.repo / ".git").resolve()
    assert store_dir(worktree) == store_dir(alice.repo)
    assert store_dir(alice.repo).is_relative_to(alice.repo / ".git")
    # Nothing about approvals is ever in what git tracks.
    canary = base / "canary-wt"
    item = alice.create("Shared")
    assert alice("test", item, "--add", f"touch {canary}").code == 0
    digest = command_hash(f"touch {canary}")
    assert (store_dir(alice.repo) / digest).is_file()
    outside_git = [p for p in alice.repo.rglob(digest) if ".git" not in p.parts]
    assert outside_git == []
    push(alice, "link")
    git(worktree, "merge", "-q", git(alice.repo, "rev-parse", "HEAD").strip())
    wt = PmCli(worktree, author="alice")
    assert wt("test", item, "--run", "--json").code == 0  # approved once per clone
    assert canary.exists()


def test_approve_needs_an_item_or_all_and_prompts_are_never_implicit(
    clones: tuple[PmCli, PmCli, Path],
) -> None:
    alice, _, _ = clones
    assert alice("test", "--approve").code == 2
    item = alice.create("Nothing linked")
    nothing = alice("test", item, "--approve", "--json", env=CI)
    assert nothing.code == 0 and nothing.json()["approved"] == []
    assert alice("test", item, "--yes").code == 2


def test_on_a_terminal_each_command_is_shown_and_asked_about_one_by_one(
    clones: tuple[PmCli, PmCli, Path],
) -> None:
    import os
    import pty
    import select

    alice, bob, base = clones
    item = alice.create("Two commands")
    yes_cmd, no_cmd = f"touch {base}/canary-yes", f"touch {base}/canary-no"
    assert alice("test", item, "--add", yes_cmd).code == 0
    assert alice("test", item, "--add", no_cmd).code == 0
    push(alice, "two tests")
    git(bob.repo, "pull", "-q")
    env = {k: v for k, v in bob.env().items() if k != "CI"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: pm on a terminal (stdin, stdout and stderr)
        os.chdir(bob.repo)
        os.execvpe(pm_executable()[0], [*pm_executable(), "test", item, "--approve"], env)
    seen = b""
    answers = iter([b"y\n", b"n\n"])
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, seen.decode(errors="replace")
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if seen.count(b"approve this command?") > seen.count(b"\x00answered"):
            os.write(fd, next(answers))
            seen += b"\x00answered"
    _, status = os.waitpid(pid, 0)
    text = seen.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert text.index(yes_cmd) < text.index(no_cmd)  # shown one at a time, in order
    assert seen.count(b"\x00answered") == 2
    listed = {t["command"]: t["approved"] for t in bob("test", item, "--json").json()["tests"]}
    assert listed == {yes_cmd: True, no_cmd: False}
    refused = bob("test", item, "--run", "--json")
    assert refused.code == 2 and no_cmd in refused.err and yes_cmd not in refused.err
