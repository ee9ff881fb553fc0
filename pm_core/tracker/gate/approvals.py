"""Clone-local approvals of linked test commands, in the manner of ``direnv allow``.

A linked command runs only when this clone has approved its exact text. An
approval is a file named by the SHA-256 of the command's text, holding the
text itself, under ``<git common dir>/pm/approved-commands/``: the directory
``git rev-parse --git-common-dir`` prints, found here by reading ``.git``
files rather than by starting git. It is never committed, so nothing that
arrives through a pull, a merge or a checkout can approve itself, and one
changed character is another hash that needs approval again.

Why the common directory and not each worktree's own: the worktrees of a clone
belong to the one person who approves, share one object store and run the same
text in the same repository; per-worktree approvals would ask again for a text
already read, without stopping anything that the text hash does not already
stop. A tracker outside any git repository keeps approvals in its ``runtime/``
folder (gitignored; with no git, nothing arrives by pull).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.clock import now_iso

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

FOLDER = "approved-commands"


def command_hash(command: str) -> str:
    """The SHA-256 of the command's exact text (UTF-8), as hex."""
    return hashlib.sha256(command.encode("utf-8")).hexdigest()


def git_common_dir(start: Path) -> Path | None:
    """The git common directory of the repository holding ``start`` (None outside git).

    What ``git rev-parse --git-common-dir`` answers: for a main clone its
    ``.git`` directory; for a linked worktree (a ``.git`` file pointing at
    ``.git/worktrees/<name>``) the directory that one's ``commondir`` names.
    """
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git.resolve()
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                return (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            return git_dir
    return None


def store_dir(repo_root: Path) -> Path:
    """Where this clone keeps its approvals (see the module docstring)."""
    common = git_common_dir(repo_root)
    if common is not None:
        return common / "pm" / FOLDER
    return repo_root / ".agents" / "pm" / "runtime" / FOLDER


def is_approved(repo_root: Path, command: str) -> bool:
    """Whether this clone approved exactly ``command``."""
    path = store_dir(repo_root) / command_hash(command)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("command") == command


def approve(repo_root: Path, command: str, *, via: str) -> dict[str, Any]:
    """Record this clone's approval of ``command`` (``via``: how it was approved)."""
    folder = store_dir(repo_root)
    folder.mkdir(parents=True, exist_ok=True)
    digest = command_hash(command)
    record = {"command": command, "sha256": digest, "approved_at": now_iso(), "via": via}
    temp = folder / f".{digest}.{os.getpid()}.tmp"
    temp.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    temp.replace(folder / digest)
    return record


def linked_commands(
    tracker: Tracker, item_ids: Iterable[str] | None = None
) -> list[dict[str, str]]:
    """``{id, command, sha256}`` for every linked command (of ``item_ids``, else of every item)."""
    items = tracker.items() if item_ids is None else [tracker.get(i) for i in item_ids]
    out: list[dict[str, str]] = []
    for item in items:
        for test in item.tests:
            command = test.get("command")
            if isinstance(command, str) and command:
                out.append({"id": item.id, "command": command, "sha256": command_hash(command)})
    return out


def unapproved(tracker: Tracker, item_ids: Iterable[str] | None = None) -> list[dict[str, str]]:
    """The linked commands this clone has not approved (see :func:`linked_commands`)."""
    root = tracker.root.parent.parent
    return [
        row for row in linked_commands(tracker, item_ids) if not is_approved(root, row["command"])
    ]
