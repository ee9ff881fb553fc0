"""Append-only history: ``history/<id>.jsonl``, one JSON object per mutation.

Each entry holds an RFC 6902 patch with before/after hashes, so any version can be
rebuilt and the chain checked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.model.clock import parse_iso
from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.model.item import Item, document_hash

if TYPE_CHECKING:
    from pm_core.tracker.storage.store import Store

EMPTY_DOCUMENT: dict[str, Any] = {"metadata": {}, "body": ""}


def item_document(item: Item | None) -> dict[str, Any]:
    """The ``{metadata, body}`` document history patches apply to."""
    if item is None:
        return {"metadata": {}, "body": ""}
    return {"metadata": item.metadata(), "body": item.body}


def make_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """An RFC 6902 patch turning ``before`` into ``after``."""
    import jsonpatch

    ops: list[dict[str, Any]] = jsonpatch.make_patch(before, after).patch
    return ops


def apply_patch(document: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """Apply an RFC 6902 patch, returning a new document."""
    import jsonpatch

    result: dict[str, Any] = jsonpatch.apply_patch(document, patch, in_place=False)
    return result


#: A shared empty mapping (read-only, so it can be every instance's default).
_NOTHING_EXTRA: Mapping[str, Any] = MappingProxyType({})


class HistoryEntry(NamedTuple):
    """One line of an item's history."""

    ts: str
    author: str
    op: str
    patch: list[dict[str, Any]]
    before_hash: str
    after_hash: str
    message: str | None = None
    extra: Mapping[str, Any] = _NOTHING_EXTRA

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to the file."""
        out: dict[str, Any] = {
            "ts": self.ts,
            "author": self.author,
            "op": self.op,
            "patch": self.patch,
            "before_hash": self.before_hash,
            "after_hash": self.after_hash,
        }
        if self.message:
            out["message"] = self.message
        out.update(self.extra)
        return out


_KNOWN = ("ts", "author", "op", "patch", "before_hash", "after_hash", "message")


def parse_entry(line: str, where: str) -> HistoryEntry:
    """Parse one history line; CorruptItemError naming the line on failure."""
    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise CorruptItemError(f"{where}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise CorruptItemError(f"{where}: entry is not a JSON object")
    missing = [k for k in ("ts", "op", "patch") if k not in raw]
    if missing:
        raise CorruptItemError(f"{where}: entry lacks {', '.join(missing)}")
    patch = raw["patch"]
    if not isinstance(patch, list) or not all(isinstance(p, dict) for p in patch):
        raise CorruptItemError(f"{where}: patch is not a list of operations")
    return HistoryEntry(
        ts=str(raw["ts"]),
        author=str(raw.get("author", "unknown")),
        op=str(raw["op"]),
        patch=patch,
        before_hash=str(raw.get("before_hash", "")),
        after_hash=str(raw.get("after_hash", "")),
        message=raw.get("message"),
        extra={k: v for k, v in raw.items() if k not in _KNOWN},
    )


def history_path(history_dir: Path, item_id: str) -> Path:
    """``history/<id>.jsonl``."""
    return history_dir / f"{item_id}.jsonl"


def refuse_symlink(history_dir: Path, item_id: str) -> None:
    """CorruptItemError when ``history/<id>.jsonl`` is a symbolic link (writers check first)."""
    if history_path(history_dir, item_id).is_symlink():
        raise CorruptItemError(
            f"history/{item_id}.jsonl is a symbolic link; pm does not write through it",
            hint="replace it with the real history file (git checkout), or delete it and "
            f"run `pm validate --fix` to start a new history for {item_id}",
        )


def append_entry(history_dir: Path, item_id: str, entry: HistoryEntry) -> None:
    """Append one entry with a single write, then fsync."""
    history_dir.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    path = history_path(history_dir, item_id)
    # O_NOFOLLOW: a committed symlink must not make pm append to a file outside the tracker.
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError:
        refuse_symlink(history_dir, item_id)
        raise
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_line(path: Path) -> bytes | None:
    """The last non-blank line of ``path`` read from the end (None: no file or empty)."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None
    with fh:
        pos = fh.seek(0, os.SEEK_END)
        data = b""
        step = 8192
        while pos > 0:
            size = min(step, pos)
            pos -= size
            fh.seek(pos)
            data = fh.read(size) + data
            tail = data.rstrip()
            cut = tail.rfind(b"\n")
            if cut >= 0:
                return tail[cut + 1 :]
            step *= 2
        return data.strip() or None


def drift_entry(
    history_dir: Path, item_id: str, current: dict[str, Any], *, ts: str, author: str
) -> HistoryEntry | None:
    """A ``history_repair`` entry when the history does not end at ``current``, else None.

    Writers call this under the item lock before appending their own entry: a
    process killed between the file rename and its history append leaves a
    file one step ahead of its history, and an entry appended on top of that
    would break the chain for good. Recording the gap first keeps every later
    entry verifiable. Only the last line is read in the common, agreeing
    case; None also when the history cannot be read (``validate`` reports it).
    """
    line = _last_line(history_path(history_dir, item_id))
    current_hash = document_hash(current)
    if line is None:
        recorded = document_hash(EMPTY_DOCUMENT)
    else:
        try:
            recorded = parse_entry(line.decode("utf-8"), f"history/{item_id}.jsonl").after_hash
        except (CorruptItemError, UnicodeDecodeError):
            return None
        if not recorded:
            return None  # an entry without hashes: nothing to compare
    if recorded == current_hash:
        return None
    try:
        replayed = replay(read_entries(history_dir, item_id))
    except Exception:  # corrupt or unreplayable: leave it to validate
        return None
    if document_hash(replayed) == current_hash:
        return None
    return build_entry(
        ts=ts,
        author=author,
        op="history_repair",
        before=replayed,
        after=current,
        message="the item file was ahead of its history (an interrupted write or a hand "
        "edit); recorded before the next change",
    )


def read_entries(history_dir: Path, item_id: str) -> list[HistoryEntry]:
    """Every entry of an item's history, oldest first."""
    return list(iter_entries(history_dir, item_id))


def iter_entries(history_dir: Path, item_id: str) -> Iterator[HistoryEntry]:
    """Iterate an item's history; a torn last line (crash mid-append) is an error."""
    path = history_path(history_dir, item_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield parse_entry(line, f"history/{item_id}.jsonl line {number}")


def build_entry(
    *,
    ts: str,
    author: str,
    op: str,
    before: dict[str, Any],
    after: dict[str, Any],
    message: str | None = None,
    extra: dict[str, Any] | None = None,
) -> HistoryEntry:
    """An entry recording the change from ``before`` to ``after``."""
    return HistoryEntry(
        ts=ts,
        author=author,
        op=op,
        patch=make_patch(before, after),
        before_hash=document_hash(before),
        after_hash=document_hash(after),
        message=message,
        extra=extra or {},
    )


def replay(entries: list[HistoryEntry], upto: int | None = None) -> dict[str, Any]:
    """The document after applying the first ``upto`` entries (all when None)."""
    document = {"metadata": {}, "body": ""}
    for entry in entries[: len(entries) if upto is None else upto]:
        document = apply_patch(document, entry.patch)
    return document


class ChainReport(NamedTuple):
    """The result of checking one item's history chain."""

    ok: bool
    entries: int
    problems: tuple[str, ...] = ()


def verify_chain(entries: list[HistoryEntry], current_hash: str | None) -> ChainReport:
    """Check the hash chain and that replay reproduces the current item."""
    problems: list[str] = []
    document = {"metadata": {}, "body": ""}
    previous = document_hash(document)
    for number, entry in enumerate(entries, start=1):
        if entry.before_hash and entry.before_hash != previous and entry.op != "create":
            problems.append(f"entry {number} ({entry.op}) does not follow entry {number - 1}")
        try:
            document = apply_patch(document, entry.patch)
        except Exception as exc:
            problems.append(f"entry {number} ({entry.op}) patch does not apply: {exc}")
            break
        actual = document_hash(document)
        if entry.after_hash and entry.after_hash != actual:
            problems.append(f"entry {number} ({entry.op}) after_hash does not match its replay")
            actual = entry.after_hash
        previous = actual
    if current_hash is not None and entries and previous != current_hash:
        problems.append(
            "item file differs from the state its history records "
            "(edited by hand, or a write was interrupted before its history entry)"
        )
    return ChainReport(ok=not problems, entries=len(entries), problems=tuple(problems))


def verify_item(store: Store, item_id: str) -> dict[str, Any]:
    """Check one item's history: the hash chain, and that replay gives the file on disk.

    Returns ``{id, ok, entries, problems}``. A deleted item is checked up to
    its ``delete`` entry; a file whose history never recorded a deletion, or
    an item with neither file nor history, is named as a problem.
    """
    problems: list[str] = []
    try:
        entries = read_entries(store.history_dir, item_id)
    except CorruptItemError as exc:
        return {"id": item_id, "ok": False, "entries": 0, "problems": [exc.message]}
    path = store.find_path(item_id)
    if path is None and not entries:
        raise NotFoundError(f"item {item_id} not found and has no history")
    current: str | None = None
    if path is not None:
        try:
            current = store.read_path(path).content_hash()
        except CorruptItemError as exc:
            problems.append(exc.message)
        if not entries:
            problems.append("item has no history")
    elif entries[-1].op != "delete":
        problems.append("item file is missing but its history does not record a delete")
    report = verify_chain(entries, current)
    problems.extend(report.problems)
    return {"id": item_id, "ok": not problems, "entries": report.entries, "problems": problems}


def version_index(entries: list[HistoryEntry], ref: str) -> int:
    """How many entries make the version named by ``ref`` (1-based number or timestamp)."""
    if not entries:
        raise NotFoundError("no history to restore from")
    text = ref.strip()
    if text.isdigit():
        number = int(text)
        if not 1 <= number <= len(entries):
            raise UsageError(
                f"version {number} does not exist", hint=f"versions run from 1 to {len(entries)}"
            )
        return number

    try:
        moment = parse_iso(text)
    except ValueError:
        raise UsageError(
            f"invalid version {ref!r}", hint="pass a version number or an ISO timestamp"
        ) from None
    count = 0
    for entry in entries:
        try:
            if parse_iso(entry.ts) <= moment:
                count += 1
        except ValueError:
            continue
    if count == 0:
        raise UsageError(f"no version at or before {ref}", hint=f"the first is {entries[0].ts}")
    return count
