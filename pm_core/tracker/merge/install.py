"""Install the merge drivers: a fenced ``.gitattributes`` block and clone-local git config.

The attribute block is committed and shared by every branch; it is the same
block, under the same markers and attribute names, that the TypeScript ``pm``
writes, so a repository used by both implementations carries one fence. The
driver commands live in the clone's own ``.git/config`` (git never commits
them): each names this interpreter by absolute path and runs
:mod:`pm_core.tracker.merge.driver`, so a merge never depends on ``PATH``.

The fence is written only after the config entries are in place, so a clone
whose config cannot be written never gets attributes pointing at drivers it
does not have.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pm_core.tracker.model.errors import PmError, UsageError

FENCE_START = "# pm-cli:merge-drivers:v2:start"
FENCE_END = "# pm-cli:merge-drivers:v2:end"
#: The first fence the TypeScript pm wrote; replaced by the v2 block on install.
LEGACY_START = "# pm-cli:merge-drivers:start"
LEGACY_END = "# pm-cli:merge-drivers:end"
DRIVER_MODULE = "pm_core.tracker.merge.driver"


class DriverDef(NamedTuple):
    """One merge driver: its attribute name, description and artifact kind."""

    key: str
    name: str
    kind: str
    item_path: bool


DRIVERS: tuple[DriverDef, ...] = (
    DriverDef("pm-item-toon", "pm field-aware TOON item document merge", "item", True),
    DriverDef("pm-item-markdown", "pm field-aware JSON-markdown item document merge", "item", True),
    DriverDef("pm-history", "pm append-only history stream merge", "history", False),
    DriverDef(
        "pm-relationship", "pm append-only relationship event store merge", "relationship", False
    ),
    DriverDef("pm-json", "pm key-level JSON config merge", "json", False),
)


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
    )


def worktree_root(start: Path) -> Path | None:
    """The git worktree holding ``start``, or None outside git."""
    try:
        proc = _git(start, "rev-parse", "--show-toplevel")
    except (OSError, NotADirectoryError):
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.strip()).resolve()


def _configured(worktree: Path) -> dict[str, str]:
    """This clone's ``merge.pm-*`` config entries (one git call)."""
    proc = _git(worktree, "config", "--local", "--get-regexp", r"^merge\.pm-")
    configured: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        configured[key] = value
    return configured


def _quote_pattern(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fence_patterns(tracker_rel: str, folders: Sequence[str]) -> list[str]:
    """Every attribute line of the fence for a tracker at ``tracker_rel`` (worktree-relative)."""
    prefix = f"{tracker_rel}/" if tracker_rel else ""
    q = _quote_pattern
    lines = [
        f"{q(prefix + '**/*.toon')} merge=pm-item-toon",
        f"{q(prefix + '**/*.md')} merge=pm-item-markdown",
    ]
    for folder in sorted(set(folders)):
        lines.append(f"{q(f'{prefix}{folder}/*.toon')} merge=pm-item-toon")
        lines.append(f"{q(f'{prefix}{folder}/*.md')} merge=pm-item-markdown")
    lines += [
        f"{q(prefix + '**/*.jsonl')} merge=pm-relationship",
        f"{q(prefix + 'history/*.jsonl')} merge=pm-history",
        f"{q(prefix + 'settings.json')} merge=pm-json",
        f"{q(prefix + '**/*.json')} merge=pm-json",
        f"{q(prefix + 'extensions/**')} -merge",
        f"{q(prefix + 'extensions/.managed-extensions.json')} merge=pm-json",
    ]
    return lines


#: What a driver run may import from outside the standard library: pm itself and the full
#: TOON decoder (for item files the fast reader does not take).
DRIVER_PACKAGES: tuple[str, ...] = ("pm_core", "toon_format")


def driver_command(kind: str, item_path: bool, python: str | None = None) -> str:
    """The ``merge.<name>.driver`` value: this interpreter by absolute path, git's placeholders.

    The driver starts once per merged file, so it starts lean: isolated
    (``-I``: no environment variables, no user site), without the ``site``
    module (``-S``: no ``.pth`` processing), with the folders that hold the
    packages it needs (:data:`DRIVER_PACKAGES`) named on ``sys.path``, and run
    as ``-c`` code (no ``runpy``).
    """
    exe = shlex.quote(python or sys.executable)
    code = (
        f"import sys; sys.path[:0] = {driver_path()!r}; "
        f"from {DRIVER_MODULE} import main; sys.exit(main())"
    )
    command = f'{exe} -I -S -c {shlex.quote(code)} {kind} "%O" "%A" "%B"'
    return command + (" --item-path %P" if item_path else "")


def driver_path() -> list[str]:
    """The folders holding :data:`DRIVER_PACKAGES` as this program imports them."""
    import importlib

    folders: list[str] = []
    for name in DRIVER_PACKAGES:
        module = importlib.import_module(name)
        origin = os.path.abspath(str(module.__file__))
        # A package's folder is the one above its __init__.py; a module's is its own.
        top = os.path.dirname(origin)
        folder = os.path.dirname(top) if os.path.basename(origin) == "__init__.py" else top
        if folder not in folders:
            folders.append(folder)
    return folders


def config_entries(python: str | None = None) -> list[tuple[str, str]]:
    """Every clone-local config entry the drivers need."""
    out: list[tuple[str, str]] = []
    for d in DRIVERS:
        out.append((f"merge.{d.key}.name", d.name))
        out.append((f"merge.{d.key}.driver", driver_command(d.kind, d.item_path, python)))
    return out


def _strip_block(text: str, start: str, end: str) -> str:
    a = text.find(start)
    b = text.find(end)
    if a >= 0 and b > a:
        return text[:a] + text[b + len(end) :]
    return text


def with_fence(current: str, patterns: Sequence[str]) -> str:
    """``.gitattributes`` text with the fence replaced (or appended), the rest kept."""
    rest = _strip_block(_strip_block(current, FENCE_START, FENCE_END), LEGACY_START, LEGACY_END)
    rest = rest.rstrip()
    block = "\n".join([FENCE_START, *patterns, FENCE_END])
    return f"{rest}\n\n{block}\n" if rest else f"{block}\n"


def committed_fence(text: str) -> list[str] | None:
    """The attribute lines inside the fence, or None when there is no fence."""
    for start, end in ((FENCE_START, FENCE_END), (LEGACY_START, LEGACY_END)):
        a = text.find(start)
        b = text.find(end)
        if a >= 0 and b > a:
            return [line.strip() for line in text[a + len(start) : b].splitlines() if line.strip()]
    return None


class Layout(NamedTuple):
    """Where the tracker sits in its worktree."""

    worktree: Path
    tracker_rel: str

    @property
    def gitattributes(self) -> Path:
        """The worktree's ``.gitattributes``."""
        return self.worktree / ".gitattributes"


def layout(tracker_root: Path) -> Layout | None:
    """The worktree and the tracker's path in it (None: not inside a git worktree)."""
    top = worktree_root(tracker_root)
    if top is None:
        return None
    try:
        rel = tracker_root.resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    return Layout(top, "" if rel == "." else rel)


def install(tracker_root: Path, folders: Sequence[str], *, dry_run: bool = False) -> dict[str, Any]:
    """Write the clone-local driver config, then the fence; idempotent.

    UsageError outside a git worktree; PmError when the config cannot be written
    (the fence is then left as it was).
    """
    where = layout(tracker_root)
    if where is None:
        raise UsageError(
            f"{tracker_root} is not inside a git worktree; merge drivers are git configuration",
            hint="run `git init` (or work inside a clone), then `pm merge install`",
        )
    patterns = fence_patterns(where.tracker_rel, folders)
    entries = config_entries()
    configured = _configured(where.worktree)
    changed_config: list[str] = []
    for key, value in entries:
        if configured.get(key) == value:
            continue
        changed_config.append(key)
        if dry_run:
            continue
        proc = _git(where.worktree, "config", "--local", key, value)
        if proc.returncode != 0:
            raise PmError(
                f"cannot write {key} to the repository's git config: "
                f"{proc.stderr.strip() or 'git config failed'}",
                hint="make .git/config writable (or wait for the git process holding its lock), "
                "then rerun `pm merge install`; `--dry-run` shows what it would write",
            )
    path = where.gitattributes
    before = path.read_text(encoding="utf-8") if path.is_file() else ""
    after = with_fence(before, patterns)
    if after != before and not dry_run:
        from pm_core.tracker.storage.store import atomic_write

        atomic_write(path, after.encode("utf-8"))
    return {
        "ok": True,
        "dry_run": dry_run,
        "worktree": str(where.worktree),
        "gitattributes": {
            "path": ".gitattributes",
            "changed": after != before,
            "patterns": patterns,
        },
        "git_config": [{"key": k, "value": v} for k, v in entries],
        "git_config_changed": changed_config,
        "next_steps": [
            "git add .gitattributes && git commit (the fence is shared by every branch)",
            "each clone and worktree's config is its own: run `pm merge install` once in each clone",
            "after a merge that touches the tracker: `pm merge reconcile --dry-run`, then `pm merge reconcile`",
        ],
    }


def audit_fence(tracker_root: Path, folders: Sequence[str]) -> dict[str, Any]:
    """``{status: not_git|missing|ok|stale, missing, stale}`` for the committed fence."""
    where = layout(tracker_root)
    if where is None:
        return {"status": "not_git", "missing": [], "stale": []}
    text = where.gitattributes.read_text(encoding="utf-8") if where.gitattributes.is_file() else ""
    committed = committed_fence(text)
    if committed is None:
        return {"status": "missing", "missing": [], "stale": []}
    expected = fence_patterns(where.tracker_rel, folders)
    missing = [p for p in expected if p not in committed]
    stale = [p for p in committed if p not in expected]
    return {"status": "stale" if missing or stale else "ok", "missing": missing, "stale": stale}


def _is_foreign_pm(value: str, kind: str, item_path: bool) -> bool:
    """A driver command of the TypeScript pm (node + its dist/cli.js) whose files exist."""
    try:
        words = shlex.split(value)
    except ValueError:
        return False
    tail = ["merge", "driver", kind, "%O", "%A", "%B"] + (
        ["--item-path", "%P"] if item_path else []
    )
    if len(words) != 2 + len(tail) or words[2:] != tail:
        return False
    node, cli = Path(words[0]), Path(words[1])
    return (
        node.name.startswith("node") and cli.name == "cli.js" and node.is_file() and cli.is_file()
    )


def audit_drivers(tracker_root: Path) -> dict[str, Any]:
    """``{status: not_git|ok|missing|drift, missing, drifted, foreign}`` for the clone's config."""
    where = layout(tracker_root)
    if where is None:
        return {"status": "not_git", "missing": [], "drifted": [], "foreign": []}
    configured = _configured(where.worktree)
    missing: list[str] = []
    drifted: list[str] = []
    foreign: list[str] = []
    for d in DRIVERS:
        key = f"merge.{d.key}.driver"
        found = configured.get(key)
        if found is None:
            missing.append(key)
        elif found == driver_command(d.kind, d.item_path):
            continue
        elif _is_foreign_pm(found, d.kind, d.item_path):
            foreign.append(key)
        else:
            drifted.append(key)
    status = "missing" if missing else "drift" if drifted else "ok"
    return {"status": status, "missing": missing, "drifted": drifted, "foreign": foreign}


def init_fence(tracker_root: Path, folders: Sequence[str]) -> dict[str, Any] | None:
    """What ``pm init`` does: install inside a git worktree, else nothing (None).

    A clone whose config cannot be written still gets its tracker; the result
    says why the drivers are missing and how to add them.
    """
    if layout(tracker_root) is None:
        return None
    try:
        done = install(tracker_root, folders)
    except PmError as exc:
        return {"installed": False, "problem": exc.message, "fix": exc.hint}
    return {
        "installed": True,
        "gitattributes_changed": done["gitattributes"]["changed"],
        "next_step": "git add .gitattributes (the merge fence is shared by every branch)",
    }
