"""Run the installed ``pm`` console script in a temporary git repository.

Usage::

    cli = PmCli.init(tmp_path)           # git init + pm init
    result = cli("create", "--title", "x", "--json")
    result.json()["id"]; result.code; result.err_line
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def pm_executable() -> list[str]:
    """The console script installed next to this interpreter (``-m`` as a fallback)."""
    script = Path(sys.executable).with_name("pm")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pm_core.cli.main"]


class Result:
    """One finished ``pm`` run."""

    def __init__(self, args: list[str], proc: subprocess.CompletedProcess[str]) -> None:
        self.args = args
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self) -> Any:
        """Stdout parsed as JSON."""
        return json.loads(self.out)

    @property
    def err_lines(self) -> list[str]:
        """Non-empty stderr lines."""
        return [line for line in self.err.splitlines() if line.strip()]

    def __repr__(self) -> str:
        return (
            f"<pm {' '.join(self.args)} -> {self.code}\nstdout={self.out!r}\nstderr={self.err!r}>"
        )


class PmCli:
    """Runs ``pm`` with a fixed working directory and author."""

    def __init__(self, repo: Path, author: str = "tester") -> None:
        self.repo = repo
        self.author = author

    @classmethod
    def init(cls, base: Path, author: str = "tester", prefix: str | None = None) -> PmCli:
        """A new git repository under ``base`` with ``pm init`` already run."""
        repo = base / "repo"
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        cli = cls(repo, author)
        args = ["init", prefix] if prefix else ["init"]
        result = cli(*args)
        assert result.code == 0, result
        return cli

    @property
    def root(self) -> Path:
        """The tracker root."""
        return self.repo / ".agents" / "pm"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment of a run: no PM_PATH, this author, bytecode caches allowed."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PM_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env["PM_AUTHOR"] = self.author
        env.update(extra or {})
        return env

    def __call__(
        self,
        *args: str,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> Result:
        """Run ``pm *args`` and return its result (never raises on a non-zero exit)."""
        proc = subprocess.run(
            [*pm_executable(), *args],
            cwd=cwd or self.repo,
            env=self.env(env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(list(args), proc)

    def create(self, title: str, *args: str) -> str:
        """Create an item and return its id."""
        result = self("create", "--title", title, *args, "--json")
        assert result.code == 0, result
        return str(result.json()["id"])

    def item_file(self, item_id: str) -> Path:
        """The file of ``item_id`` (any type folder)."""
        found = list(self.root.glob(f"*/{item_id}.toon"))
        assert len(found) == 1, found
        return found[0]

    def history_file(self, item_id: str) -> Path:
        """``history/<id>.jsonl``."""
        return self.root / "history" / f"{item_id}.jsonl"
