"""Merge of two append-only history streams (``history/<id>.jsonl``).

Both branches appended entries after a common prefix. The merged stream
keeps that prefix byte for byte, then both divergent suffixes interleaved by
timestamp (ties broken by the entry's canonical JSON, so the order does not
depend on which branch git calls ours; each side's own order is kept). The
hash chain is then re-anchored: an entry whose recorded ``before`` state is
no longer the state it follows gets its change re-applied to the merged state
(with the item field rules of :mod:`pm_core.tracker.merge.items`) and a new
patch and new hashes. Entries that still follow their predecessor are kept
as they were written.

A ``delete`` in one suffix and other changes in the other cannot be decided
by a file driver: the delete goes last (so ``validate`` sees a live item whose
history ends in ``delete``) and the merge reports a conflict. Two suffixes
that each ``create`` the item mean one id was minted on two branches: also a
conflict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from pm_core.tracker.merge.items import canonical_json, merge_records


class MergeInputError(ValueError):
    """A side of a merge that is not what its driver merges (names the side and the line)."""


class HistoryMerge(NamedTuple):
    """The merged stream and its accounting."""

    text: str
    common: int
    from_ours: int
    from_theirs: int
    reanchored: int
    conflicts: tuple[str, ...]


def item_hash(document: Mapping[str, Any]) -> str:
    """The hash a re-anchored entry records: the model's item hash, current epoch.

    The one call site of the hash rule in the merge package; re-anchored
    entries declare ``item_hash_version`` to match.
    """
    from pm_core.tracker.model.itemhash import CURRENT_EPOCH
    from pm_core.tracker.model.itemhash import item_hash as model_hash

    return model_hash(document, CURRENT_EPOCH)


def _epoch() -> int:
    from pm_core.tracker.model.itemhash import CURRENT_EPOCH

    return CURRENT_EPOCH


def parse_stream(text: str, side: str) -> list[tuple[str, dict[str, Any]]]:
    """``(line, entry)`` for every non-blank line; MergeInputError names the first bad one."""
    out: list[tuple[str, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            raise MergeInputError(f"{side} line {number} is not JSON") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("patch"), list):
            raise MergeInputError(f"{side} line {number} is not a history entry (no patch)")
        out.append((line, entry))
    return out


def _empty() -> dict[str, Any]:
    return {"metadata": {}, "body": ""}


def _apply(document: dict[str, Any], patch: list[dict[str, Any]], where: str) -> dict[str, Any]:
    from pm_core.tracker.storage.history import PatchError, apply_patch

    try:
        return apply_patch(document, patch)
    except PatchError as exc:
        raise MergeInputError(f"{where}: patch does not apply ({exc})") from None


def _states(
    prefix_state: dict[str, Any], suffix: list[tuple[str, dict[str, Any]]], side: str
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(before, after)`` documents of every suffix entry, replayed on its own side."""
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    state = prefix_state
    for number, (_, entry) in enumerate(suffix, start=1):
        after = _apply(state, entry["patch"], f"{side} entry {number} after the common prefix")
        out.append((state, after))
        state = after
    return out


def _as_record(document: Mapping[str, Any]) -> dict[str, Any]:
    metadata = document.get("metadata")
    record = dict(metadata) if isinstance(metadata, Mapping) else {}
    record["body"] = document.get("body", "")
    return record


def _as_document(record: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {k: v for k, v in record.items() if k != "body"}
    return {"metadata": metadata, "body": record.get("body", "")}


def _reapply(
    before: dict[str, Any], running: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """The change ``before`` -> ``after`` applied to ``running`` with the item field rules."""
    base = _as_record(before) if before.get("metadata") else None
    merged = merge_records(base, _as_record(running), _as_record(after))
    return _as_document(merged.record)


def _patch_between(
    written: list[dict[str, Any]], running: dict[str, Any], following: dict[str, Any]
) -> list[dict[str, Any]]:
    """A patch from ``running`` to ``following``: the entry's own when it still gets there.

    A change such as "append a comment, set updated_at" usually means the same
    on the merged state; keeping its patch keeps the entry as its writer wrote
    it. Otherwise each changed field is written whole (:func:`key_patch`: no
    diff library to load in a driver that starts once per file).
    """
    from pm_core.tracker.storage.history import PatchError, apply_patch, key_patch

    try:
        if canonical_json(apply_patch(running, written)) == canonical_json(following):
            return written
    except PatchError:
        pass
    return key_patch(running, following)


def _order_key(entry: Mapping[str, Any]) -> tuple[int, str, str]:
    # A delete sorts after everything else: see the module docstring.
    return (
        1 if entry.get("op") == "delete" else 0,
        str(entry.get("ts", "")),
        canonical_json(entry),
    )


def merge_history_text(base: str, ours: str, theirs: str) -> HistoryMerge:
    """Merge two history streams that share a prefix; MergeInputError on a bad side."""
    del base  # the common prefix is what both sides still share, whatever git's base holds
    ours_lines = parse_stream(ours, "ours")
    theirs_lines = parse_stream(theirs, "theirs")
    common = 0
    for (a, _), (b, _) in zip(ours_lines, theirs_lines, strict=False):
        if a != b:
            break
        common += 1
    prefix = ours_lines[:common]
    state = _empty()
    for number, (_, entry) in enumerate(prefix, start=1):
        state = _apply(state, entry["patch"], f"common entry {number}")
    ours_suffix = ours_lines[common:]
    theirs_suffix = theirs_lines[common:]
    queues = [
        list(zip(ours_suffix, _states(state, ours_suffix, "ours"), strict=True)),
        list(zip(theirs_suffix, _states(state, theirs_suffix, "theirs"), strict=True)),
    ]
    conflicts: list[str] = []
    ops = [{e.get("op") for (_, e), _ in queue} for queue in queues]
    if "create" in ops[0] and "create" in ops[1]:
        conflicts.append("both branches created this item (one id minted twice)")
    if any("delete" in mine and (theirs_ops - {"delete"}) for mine, theirs_ops in (ops, ops[::-1])):
        conflicts.append("one branch deleted this item and the other changed it")
    lines = [line for line, _ in prefix]
    running = state
    reanchored = 0
    emitted: set[str] = set()
    while queues[0] or queues[1]:
        if queues[0] and queues[1]:
            pick = 0 if _order_key(queues[0][0][0][1]) <= _order_key(queues[1][0][0][1]) else 1
        else:
            pick = 0 if queues[0] else 1
        (line, entry), (before, after) = queues[pick].pop(0)
        if line in emitted:
            continue  # the same entry on both sides (a cherry-pick): kept once
        emitted.add(line)
        if canonical_json(running) == canonical_json(before):
            # The entry still follows the state it was written on: it is valid
            # as written (patch and hashes), whatever hash epoch it declares.
            lines.append(line)
            running = after
            continue
        following = _empty() if entry.get("op") == "delete" else _reapply(before, running, after)
        rewritten = dict(entry)
        rewritten["patch"] = _patch_between(entry["patch"], running, following)
        rewritten["before_hash"] = item_hash(running)
        rewritten["after_hash"] = item_hash(following)
        rewritten["item_hash_version"] = _epoch()
        lines.append(json.dumps(rewritten, ensure_ascii=False, separators=(",", ":")))
        reanchored += 1
        running = following
    text = "".join(line + "\n" for line in lines)
    return HistoryMerge(
        text, common, len(ours_suffix), len(theirs_suffix), reanchored, tuple(conflicts)
    )


def split_conflict(text: str) -> tuple[str, str] | None:
    """Ours' and theirs' text of a file holding git conflict markers (None: no markers).

    Lines outside the conflicted hunks belong to both sides; a diff3 ``|||||||``
    section (the ancestor) belongs to neither.
    """
    if not any(line.startswith("<<<<<<<") for line in text.splitlines()):
        return None
    ours: list[str] = []
    theirs: list[str] = []
    where = "both"
    for line in text.splitlines():
        if line.startswith("<<<<<<<"):
            where = "ours"
        elif line.startswith("|||||||") and where == "ours":
            where = "base"
        elif line.startswith("=======") and where in ("ours", "base"):
            where = "theirs"
        elif line.startswith(">>>>>>>") and where == "theirs":
            where = "both"
        elif where == "both":
            ours.append(line)
            theirs.append(line)
        elif where == "ours":
            ours.append(line)
        elif where == "theirs":
            theirs.append(line)
    return "".join(x + "\n" for x in ours), "".join(x + "\n" for x in theirs)


class Reanchored(NamedTuple):
    """One stream with its chain recomputed."""

    text: str
    document: dict[str, Any]
    rewritten: int
    dropped_ops: int


def reanchor(text: str) -> Reanchored:
    """Replay a stream in file order and rewrite every entry whose hashes do not follow.

    An operation that no longer applies (its target is gone) is dropped from
    its entry and counted; an entry keeps its bytes when its hashes hold.
    """
    from pm_core.tracker.storage.history import hash_matches, make_patch

    running = _empty()
    lines: list[str] = []
    rewritten = dropped = 0
    for line, entry in parse_stream(text, "history"):
        ops = entry["patch"]
        if entry.get("op") == "delete":
            following = _empty()
            kept_ops: list[dict[str, Any]] | None = None
        else:
            try:
                following = _apply(running, ops, "entry")
                kept_ops = ops
            except MergeInputError:
                following = running
                kept_ops = []
                for op in ops:
                    try:
                        following = _apply(following, [op], "operation")
                        kept_ops.append(op)
                    except MergeInputError:
                        dropped += 1
        declared = entry.get("item_hash_version")
        follows = entry.get("op") == "create" or not entry.get("before_hash")
        if not follows:
            follows = hash_matches(running, str(entry.get("before_hash")), declared)
        if (
            kept_ops is ops
            and follows
            and hash_matches(following, str(entry.get("after_hash", "")), declared)
        ):
            lines.append(line)
        else:
            new = dict(entry)
            new["patch"] = make_patch(running, following)
            new["before_hash"] = item_hash(running)
            new["after_hash"] = item_hash(following)
            new["item_hash_version"] = _epoch()
            lines.append(json.dumps(new, ensure_ascii=False, separators=(",", ":")))
            rewritten += 1
        running = following
    return Reanchored("".join(x + "\n" for x in lines), running, rewritten, dropped)
