"""Storage integrity after merges: the ``storage_integrity`` check of ``pm validate``.

What a merge can leave behind that the ordinary read path tolerates, each
reported with its fix:

* git conflict markers in any tracker file;
* a history that records two ``create`` entries (one id minted on two branches
  and merged into one file);
* a live item whose history ends in ``delete`` (deleted on one branch, edited
  on the other);
* ``settings.json`` or a schema file that is not JSON;
* merge receipts with a discarded value nobody reconciled yet;
* inside a git worktree: a missing or stale ``.gitattributes`` fence, and
  driver config that is missing or points elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.merge.markers import first_marker_line

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

Failure = dict[str, Any]
_SKIP_DIRS = frozenset({"runtime", "locks", "search", "transactions", "checkpoints"})
_SUFFIXES = (".toon", ".md", ".json", ".jsonl")
_INSTALL = "pm merge install, then commit .gitattributes"


def _failure(ident: str, message: str, path: str | None, fix: str) -> Failure:
    out: Failure = {"id": ident}
    if path:
        out["path"] = path
    out["message"] = message
    out["fix"] = fix
    return out


def _tracker_files(root: Path) -> list[tuple[str, str]]:
    """``(relative posix path, absolute path)`` of every tracker file, sorted."""
    out: list[tuple[str, str]] = []
    base = str(root)
    for directory, dirs, files in os.walk(base):
        if directory == base:
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
            prefix = ""
        else:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            prefix = os.path.relpath(directory, base).replace(os.sep, "/") + "/"
        out.extend(
            (prefix + name, os.path.join(directory, name))
            for name in files
            if name.endswith(_SUFFIXES) and not name.startswith(".")
        )
    return sorted(out)


def _last_op(data: bytes) -> str | None:
    tail = data.rstrip()
    if not tail:
        return None
    start = tail.rfind(b"\n") + 1
    try:
        entry = json.loads(tail[start:])
    except ValueError:
        return None
    return str(entry.get("op")) if isinstance(entry, dict) else None


def _creates(data: bytes) -> int:
    mentions = data.count(b'"create"')
    if mentions < 2:  # a second create needs a second mention
        return mentions
    count = 0
    for line in data.splitlines():
        if b'"create"' not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("op") == "create":
            count += 1
    return count


def check(tracker: Tracker, live_ids: set[str]) -> list[Failure]:
    """Every storage-integrity failure of the tracker (``live_ids``: ids with an item file)."""
    root = tracker.root
    out: list[Failure] = []
    for rel, name in _tracker_files(root):
        path = Path(name)
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            out.append(
                _failure(path.stem, f"cannot read {rel}: {exc.strerror}", rel, "fix permissions")
            )
            continue
        line = first_marker_line(data)
        if line is not None:
            out.append(
                _failure(
                    path.stem,
                    f"{rel} line {line}: git conflict markers (a merge was committed unresolved)",
                    rel,
                    "restore the file from one side (`git checkout --ours|--theirs -- FILE`, or "
                    "`git checkout -m FILE` to redo the merge with the drivers after "
                    "`pm merge install`), then `pm history-repair <id>` for a history",
                )
            )
            continue
        top = rel.split("/", 1)[0]
        if top == "history" and rel.endswith(".jsonl"):
            item_id = path.stem
            if _creates(data) > 1:
                out.append(
                    _failure(
                        item_id,
                        f"history of {item_id} records two creates: the id was minted on two "
                        "branches and the merge joined two different items",
                        rel,
                        f"keep one item in {item_id}; recreate the other with `pm copy {item_id}` "
                        "and restore its fields from `pm history`, then `pm merge reconcile`",
                    )
                )
            if item_id in live_ids and _last_op(data) == "delete":
                out.append(
                    _failure(
                        item_id,
                        f"{item_id} has an item file but its history ends in delete "
                        "(deleted on one branch, edited on another)",
                        rel,
                        f"honour the delete: `git rm` the item file of {item_id}; or keep the "
                        f"edit: `pm history-repair {item_id}` records it after the delete",
                    )
                )
        elif rel.endswith(".json") and (top == "schema" or rel == "settings.json"):
            try:
                json.loads(data)
            except ValueError as exc:
                out.append(
                    _failure(rel, f"{rel} is not JSON ({exc})", rel, f"fix or restore {rel}")
                )
    out.extend(_receipt_failures(root))
    out.extend(_git_failures(tracker))
    return out


def _receipt_failures(root: Path) -> list[Failure]:
    from pm_core.tracker.merge.receipts import SIDECAR_DIR, is_blocking, list_receipts

    if not (root / SIDECAR_DIR).is_dir():
        return []
    out: list[Failure] = []
    for receipt in list_receipts(root):
        if not is_blocking(receipt):
            continue
        fields = ", ".join(str(d.get("field")) for d in receipt.get("decisions", [])) or "id"
        out.append(
            _failure(
                str(receipt.get("item_id", receipt["receipt_id"])),
                f"merge receipt {receipt['receipt_id']} is pending: a merge discarded one "
                f"side's {fields}",
                str(receipt.get("item_path") or ""),
                "review it with `pm merge report`, re-apply any discarded value with `pm update`, "
                "then `pm merge reconcile --force`",
            )
        )
    return out


def _git_failures(tracker: Tracker) -> list[Failure]:
    from pm_core.tracker.merge.install import audit_drivers, audit_fence

    folders = tracker.schema.folders()
    fence = audit_fence(tracker.root, folders)
    if fence["status"] == "not_git":
        return []
    out: list[Failure] = []
    if fence["status"] == "missing":
        out.append(
            _failure(
                ".gitattributes",
                "the repository has no pm merge fence in .gitattributes: branch merges of "
                "tracker files use git's line merge and break items and histories",
                ".gitattributes",
                _INSTALL,
            )
        )
        return out
    if fence["status"] == "stale":
        shown = "; ".join(
            [*(f"missing {p}" for p in fence["missing"]), *(f"stale {p}" for p in fence["stale"])]
        )
        out.append(
            _failure(
                ".gitattributes",
                f"the merge fence is out of date: {shown}",
                ".gitattributes",
                _INSTALL,
            )
        )
    drivers = audit_drivers(tracker.root)
    if drivers["status"] != "ok":
        keys = ", ".join(drivers["missing"] + drivers["drifted"])
        what = "missing from" if drivers["missing"] else "different in"
        out.append(
            _failure(
                ".git/config",
                f"merge driver config {what} this clone ({keys}): git falls back to its line merge",
                None,
                "pm merge install (driver config is per clone; the fence is already committed)",
            )
        )
    return out
