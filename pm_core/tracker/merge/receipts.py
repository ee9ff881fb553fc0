"""Receipts of merge decisions: what an item driver kept and what it discarded.

Two copies are written for every conflicted item merge:

* a clone-local receipt below the git directory
  (``<git common dir>/pm/merge-receipts/<id>.json``) holding the retained and
  discarded values, so a reviewer can recover a discarded value without the
  reflog; it is never committed;
* a sidecar in the tracker (``merge-receipts/<id>.json``) holding only field
  names and SHA-256 hashes of the values, committed with the merge so a fresh
  clone or CI still sees the pending decision without publishing either value.

``pm merge report`` lists them (the local copy preferred when both exist);
``pm merge reconcile`` marks them reconciled.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pm_core.tracker.merge.items import canonical_json

SIDECAR_DIR = "merge-receipts"
LOCAL_DIR = ("pm", "merge-receipts")


def value_hash(value: Any) -> str:
    """SHA-256 of a value's canonical JSON (what the sidecar stores instead of the value)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def git_common_dir(cwd: Path) -> Path | None:
    """The repository's common git directory (shared by its worktrees), or None outside git."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.strip())


def build_receipt(
    *,
    item_id: str,
    item_path: str,
    created_at: str,
    decisions: Sequence[Mapping[str, Any]],
    union_fields: Sequence[str],
    id_collision: bool,
) -> dict[str, Any]:
    """A full (clone-local) receipt; its id is derived from the path and the decisions."""
    detailed = [
        {
            "field": d["field"],
            "retained": d["retained"],
            "discarded": d["discarded"],
            "retained_side": d["retained_side"],
            "retained_hash": value_hash(d["retained"]),
            "discarded_hash": value_hash(d["discarded"]),
        }
        for d in decisions
    ]
    digest = value_hash({"path": item_path, "decisions": detailed, "collision": id_collision})
    return {
        "receipt_id": f"mr-{digest[:12]}",
        "kind": "item",
        "item_id": item_id,
        "item_path": item_path,
        "created_at": created_at,
        "status": "pending",
        "id_collision": id_collision,
        "decisions": detailed,
        "union_fields": list(union_fields),
    }


def sidecar_of(receipt: Mapping[str, Any]) -> dict[str, Any]:
    """The privacy-safe copy: field names and value hashes, never the values."""
    out = {k: v for k, v in receipt.items() if k not in ("decisions", "source")}
    out["decisions"] = [
        {k: v for k, v in d.items() if k not in ("retained", "discarded")}
        for d in receipt.get("decisions", [])
    ]
    return out


def _write_json(path: Path, value: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_receipt(
    receipt: Mapping[str, Any], *, git_dir: Path | None, tracker_root: Path | None
) -> list[Path]:
    """Write the local receipt and the tracker sidecar (each where its folder is known)."""
    written: list[Path] = []
    name = f"{receipt['receipt_id']}.json"
    if git_dir is not None:
        path = git_dir.joinpath(*LOCAL_DIR, name)
        _write_json(path, receipt)
        written.append(path)
    if tracker_root is not None:
        path = tracker_root / SIDECAR_DIR / name
        _write_json(path, sidecar_of(receipt))
        written.append(path)
    return written


def _read_dir(directory: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    out: dict[str, tuple[Path, dict[str, Any]]] = {}
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return out
    for name in names:
        path = directory / name
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            value = {"receipt_id": name[: -len(".json")], "status": "unreadable"}
        if isinstance(value, dict) and isinstance(value.get("receipt_id"), str):
            out[value["receipt_id"]] = (path, value)
    return out


def tracker_prefix(tracker_root: Path, git_dir: Path | None) -> str | None:
    """The tracker's path relative to its worktree (how receipts name item paths)."""
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=tracker_root,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    top = Path(proc.stdout.strip()).resolve()
    try:
        rel = tracker_root.resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def list_receipts(
    tracker_root: Path, *, include_reconciled: bool = False, git_dir: Path | None = None
) -> list[dict[str, Any]]:
    """Receipts of this tracker, local and sidecar deduplicated (the local copy wins)."""
    if git_dir is None:
        git_dir = git_common_dir(tracker_root)
    sidecars = _read_dir(tracker_root / SIDECAR_DIR)
    local = _read_dir(git_dir.joinpath(*LOCAL_DIR)) if git_dir is not None else {}
    prefix = tracker_prefix(tracker_root, git_dir) if local else None
    out: list[dict[str, Any]] = []
    for receipt_id in sorted(set(sidecars) | set(local)):
        if receipt_id in local:
            receipt = dict(local[receipt_id][1])
            path = str(receipt.get("item_path", ""))
            if receipt_id not in sidecars and prefix and not path.startswith(prefix + "/"):
                continue  # another tracker of this repository
            receipt["source"] = "both" if receipt_id in sidecars else "local"
            if receipt_id in sidecars:
                # The committed copy carries the reconciliation made in another clone.
                side = sidecars[receipt_id][1]
                if side.get("status") == "reconciled":
                    receipt["status"] = "reconciled"
                    for key in ("reconciled_at", "reconciled_by"):
                        if key in side:
                            receipt[key] = side[key]
        else:
            receipt = dict(sidecars[receipt_id][1])
            receipt["source"] = "sidecar"
        if include_reconciled or receipt.get("status") != "reconciled":
            out.append(receipt)
    return out


def is_blocking(receipt: Mapping[str, Any]) -> bool:
    """Pending with a discarded value (or an id collision): it needs a reviewer's decision."""
    if receipt.get("status") == "reconciled":
        return False
    return bool(receipt.get("decisions")) or bool(receipt.get("id_collision"))


def mark_reconciled(
    tracker_root: Path, receipt_ids: Iterable[str], *, at: str, by: str, git_dir: Path | None
) -> None:
    """Record the reconciliation on both copies of each receipt."""
    wanted = set(receipt_ids)
    places = [tracker_root / SIDECAR_DIR]
    if git_dir is not None:
        places.append(git_dir.joinpath(*LOCAL_DIR))
    for directory in places:
        for receipt_id, (path, value) in _read_dir(directory).items():
            if receipt_id in wanted and value.get("status") != "reconciled":
                _write_json(
                    path,
                    {**value, "status": "reconciled", "reconciled_at": at, "reconciled_by": by},
                )
