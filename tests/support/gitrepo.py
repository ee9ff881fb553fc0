"""Git repositories with a tracker, for merge tests: branches, worktrees, merges.

Usage::

    repo = GitRepo.create(tmp_path)          # git init, pm init (drivers installed), first commit
    item = repo.pm.create("shared")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "a")
    ...
    result = repo.git("merge", "b", check=False)
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support.pm_cli import PmCli


def git_env(author: str) -> dict[str, str]:
    """Author and committer of commits made by ``author``, no editor."""
    email = f"{author}@example.invalid"
    return {
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_EDITOR": "true",
        "GIT_MERGE_AUTOEDIT": "no",
    }


class GitRepo:
    """One worktree of a repository with a tracker, driven by one author."""

    def __init__(self, path: Path, author: str = "tester") -> None:
        self.path = path
        self.author = author
        self.pm = PmCli(path, author)

    @classmethod
    def create(cls, base: Path, author: str = "tester", *init_args: str) -> GitRepo:
        """A new repository on branch ``main`` with ``pm init`` run and committed."""
        path = base / "repo"
        path.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
        repo = cls(path, author)
        result = repo.pm("init", *init_args)
        assert result.code == 0, result
        repo.commit("init tracker")
        return repo

    @property
    def root(self) -> Path:
        """The tracker root."""
        return self.path / ".agents" / "pm"

    def git(
        self, *args: str, check: bool = True, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run git in this worktree (raises on failure unless ``check`` is False)."""
        full_env = self.pm.env(git_env(self.author))
        full_env.update(env or {})
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def commit(self, message: str) -> None:
        """Stage everything and commit (allowing an empty commit)."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def branch(self, name: str, start: str = "main") -> None:
        """Create ``name`` at ``start`` and check it out."""
        self.git("checkout", "-q", "-B", name, start)

    def worktree(self, path: Path, branch: str, author: str) -> GitRepo:
        """A second worktree of this repository on a new branch ``branch``."""
        self.git("worktree", "add", "-q", "-b", branch, str(path))
        return GitRepo(path, author)

    def conflicted(self) -> list[str]:
        """Paths git holds as unmerged."""
        out = self.git("diff", "--name-only", "--diff-filter=U").stdout
        return sorted(line for line in out.splitlines() if line)

    def status(self) -> list[str]:
        """``git status --porcelain`` lines (untracked included)."""
        return [line for line in self.git("status", "--porcelain").stdout.splitlines() if line]


def upstream_bin(env: Mapping[str, str] | None = None) -> Path:
    """The TypeScript pm's ``bin`` folder from ``PM_UPSTREAM_BIN``.

    Without it the test is skipped on a workstation but FAILS under ``CI=true``:
    CI installs the oracle (``.ci/run``), so its absence there is a broken setup.
    """
    import os

    import pytest

    source = os.environ if env is None else env
    value = source.get("PM_UPSTREAM_BIN", "")
    if value and (Path(value) / "pm").exists():
        return Path(value)
    why = (
        (f"PM_UPSTREAM_BIN={value!r} has no pm" if value else "PM_UPSTREAM_BIN is not set")
        + " (install the oracle: ../shared/upstream-pm/install.sh DEST, then PM_UPSTREAM_BIN=DEST/bin)"
    )
    if source.get("CI", "").lower() == "true":
        pytest.fail(why)
    pytest.skip(why)
