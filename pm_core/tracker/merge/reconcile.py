"""The post-merge gate (``pm merge reconcile``) and ``pm history-repair``.

After a merge that touched the tracker, ``reconcile`` finds every history
that does not end where its item file is (the item driver's result and the
history driver's replay can differ when a scalar was decided) and every
pending merge receipt. Applying it appends one audited ``merge_reconcile``
entry per drifted history, naming the receipts behind it, and marks the
receipts reconciled. Receipts that discarded a value are refused unless the
caller passes ``force`` after review. The result is red (``ok: false``) while
anything remains to do or ``validate``'s history and storage checks fail.

``history-repair`` re-anchors a chain that no longer verifies (a conflict
resolved by hand, markers committed): marker sections become two streams
merged by the history driver's rules, operations that no longer apply are
dropped and counted, hashes are recomputed, and an audit entry records the
repair and brings the history to the item file.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from pm_core.tracker.merge import receipts as rc
from pm_core.tracker.merge.items import canonical_json
from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.storage import history as hist

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from pm_core.tracker.api import Tracker


def _lock(tracker: Tracker, item_id: str) -> AbstractContextManager[Any]:
    from pm_core.tracker.storage.locks import item_lock

    locks = tracker.settings.get("locks", {})
    return item_lock(
        tracker.store.locks_dir,
        item_id,
        tracker.author,
        ttl_seconds=int(locks.get("ttl_seconds", 1800)),
        wait_ms=int(locks.get("wait_ms", 3000)),
    )


def _drift(tracker: Tracker, item_id: str) -> dict[str, Any] | None:
    """Why ``item_id``'s history does not end at its file (None: it does)."""
    try:
        item = tracker.get(item_id)
    except (CorruptItemError, NotFoundError) as exc:
        return {"id": item_id, "kind": "unreadable_item", "problem": exc.message}
    try:
        entries = hist.read_entries(tracker.store.history_dir, item_id)
    except CorruptItemError as exc:
        return {"id": item_id, "kind": "broken_chain", "problem": exc.message}
    if entries and entries[-1].op == "delete":
        return {
            "id": item_id,
            "kind": "deleted_live",
            "problem": "the item file exists but its history ends in delete "
            "(deleted on one branch, edited on another)",
        }
    report = hist.verify_chain(entries, hist.item_document(item))
    if report.ok:
        return None
    broken = [str(p) for p in report.problems if "differs" not in p.message]
    if broken:
        return {"id": item_id, "kind": "broken_chain", "problem": broken[0]}
    return {"id": item_id, "kind": "drift", "problem": str(report.problems[0])}


def reconcile(
    tracker: Tracker, *, dry_run: bool = False, force: bool = False, message: str | None = None
) -> dict[str, Any]:
    """Reconcile merged histories and receipts; ``ok`` is False while anything is red."""
    from pm_core.tracker.model.clock import now_iso

    root = tracker.root
    git_dir = rc.git_common_dir(root)
    pending = rc.list_receipts(root, git_dir=git_dir)
    ids = sorted({item.id for item in tracker.items()})
    drifts = [d for d in (_drift(tracker, i) for i in ids) if d is not None]
    blocking = [r for r in pending if rc.is_blocking(r)]
    blocking += [
        {"receipt_id": f"deleted:{d['id']}"} for d in drifts if d["kind"] == "deleted_live"
    ]
    by_item: dict[str, list[str]] = {}
    for receipt in pending:
        by_item.setdefault(str(receipt.get("item_id")), []).append(receipt["receipt_id"])
    plan = {
        "receipts": [_summary(r) for r in pending],
        "blocking_receipts": [r["receipt_id"] for r in blocking],
        "drifted": drifts,
    }
    if dry_run:
        return {"ok": not blocking and not drifts, "dry_run": True, "applied": [], **plan}
    if blocking and not force:
        return {
            "ok": False,
            "dry_run": False,
            "refused": True,
            "reason": f"{len(blocking)} merge decision(s) need review (a discarded value, or an "
            "item deleted on one branch and edited on another); see `pm merge report` and "
            "`pm validate`, re-apply what should stay with `pm update` (or `git rm` an item "
            "whose delete should win), then rerun with --force",
            "applied": [],
            **plan,
        }
    applied: list[dict[str, Any]] = []
    for drift in drifts:
        if drift["kind"] in ("drift", "deleted_live"):
            applied.append(
                _append_reconcile(tracker, drift["id"], by_item.get(drift["id"], []), message)
            )
        elif drift["kind"] == "broken_chain":
            applied.append(repair_chain(tracker, drift["id"], message=message))
    done = now_iso()
    rc.mark_reconciled(
        root, [r["receipt_id"] for r in pending], at=done, by=tracker.author, git_dir=git_dir
    )
    check = tracker.validate(["history", "storage_integrity"])
    return {
        "ok": bool(check["ok"]),
        "dry_run": False,
        "applied": applied,
        "reconciled_receipts": [r["receipt_id"] for r in pending],
        "validation": {c["name"]: c["failures"] for c in check["checks"]},
        **plan,
    }


def _summary(receipt: dict[str, Any]) -> dict[str, Any]:
    return {
        "receipt_id": receipt["receipt_id"],
        "item_id": receipt.get("item_id"),
        "fields": [d.get("field") for d in receipt.get("decisions", [])],
        "id_collision": bool(receipt.get("id_collision")),
        "blocking": rc.is_blocking(receipt),
        "source": receipt.get("source"),
    }


def _append_reconcile(
    tracker: Tracker, item_id: str, receipt_ids: list[str], message: str | None
) -> dict[str, Any]:
    from pm_core.tracker.model.clock import now_iso

    with _lock(tracker, item_id):
        item, path = tracker.store.read(item_id)
        entries = hist.read_entries(tracker.store.history_dir, item_id)
        replayed = hist.replay(entries)
        entry = hist.build_entry(
            ts=now_iso(),
            author=tracker.author,
            op="merge_reconcile",
            before=replayed,
            after=hist.item_document(item),
            message=message or "the merged item file differs from the merged history's replay",
            extra={"merge_receipts": receipt_ids} if receipt_ids else None,
        )
        hist.append_entry(tracker.store.history_dir, item_id, entry)
        for hook in tracker.after_write:
            hook(item, "merge_reconcile", path)
    return {"id": item_id, "action": "merge_reconcile", "receipts": receipt_ids}


def repair_chain(
    tracker: Tracker, item_id: str, *, message: str | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Re-anchor ``item_id``'s history and bring it to the item file, with an audit entry."""
    from pm_core.tracker.merge.streams import (
        MergeInputError,
        merge_history_text,
        reanchor,
        split_conflict,
    )
    from pm_core.tracker.model.clock import now_iso
    from pm_core.tracker.storage.store import atomic_write

    item_id = tracker.normalize_id(item_id)
    path = hist.history_path(tracker.store.history_dir, item_id)
    with _lock(tracker, item_id):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(
                f"{item_id} has no history file", hint="`pm validate --fix` starts one"
            ) from None
        sides = split_conflict(text)
        try:
            if sides is not None:
                text = merge_history_text("", *sides).text
            fixed = reanchor(text)
        except MergeInputError as exc:
            raise UsageError(
                f"history of {item_id} cannot be repaired: {exc}",
                hint=f"restore history/{item_id}.jsonl from git (`git checkout -- FILE`)",
            ) from None
        item_path = tracker.store.find_path(item_id)
        item = tracker.store.read_path(item_path) if item_path is not None else None
        target = hist.item_document(item) if item is not None else fixed.document
        reasons = []
        if sides is not None:
            reasons.append("conflict markers merged")
        if fixed.rewritten:
            reasons.append(f"{fixed.rewritten} entries re-anchored")
        if fixed.dropped_ops:
            reasons.append(f"{fixed.dropped_ops} operations that no longer applied dropped")
        differs = canonical_json(fixed.document) != canonical_json(target)
        if differs:
            reasons.append("brought to the item file")
        report = {
            "id": item_id,
            "action": "history_repair",
            "changed": bool(reasons),
            "markers": sides is not None,
            "rewritten": fixed.rewritten,
            "dropped_ops": fixed.dropped_ops,
            "to_item_file": differs,
        }
        if not reasons or dry_run:
            return {**report, "dry_run": dry_run}
        audit = hist.build_entry(
            ts=now_iso(),
            author=tracker.author,
            op="history_repair",
            before=fixed.document,
            after=target,
            message=message or f"history repaired: {', '.join(reasons)}",
        )
        import json

        line = json.dumps(audit.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
        atomic_write(path, (fixed.text + line).encode("utf-8"))
        if item is not None and item_path is not None:
            for hook in tracker.after_write:
                hook(item, "history_repair", item_path)
    return {**report, "dry_run": False}


def repair_all(
    tracker: Tracker, *, dry_run: bool = False, message: str | None = None
) -> dict[str, Any]:
    """``repair_chain`` for every item whose history does not verify."""
    import os

    ids = {item.id for item in tracker.items()}
    with contextlib.suppress(FileNotFoundError):
        ids |= {
            n[: -len(".jsonl")]
            for n in os.listdir(tracker.store.history_dir)
            if n.endswith(".jsonl")
        }
    repaired: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for item_id in sorted(ids):
        if _drift(tracker, item_id) is None and not _ends_in_delete_while_live(tracker, item_id):
            continue
        try:
            repaired.append(repair_chain(tracker, item_id, message=message, dry_run=dry_run))
        except (UsageError, NotFoundError, CorruptItemError) as exc:
            failed.append({"id": item_id, "message": exc.message, "fix": exc.hint})
    return {"repaired": repaired, "failed": failed, "ok": not failed}


def _ends_in_delete_while_live(tracker: Tracker, item_id: str) -> bool:
    if tracker.store.find_path(item_id) is None:
        return False
    try:
        entries = hist.read_entries(tracker.store.history_dir, item_id)
    except CorruptItemError:
        return True
    return bool(entries) and entries[-1].op == "delete"
