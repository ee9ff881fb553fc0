"""Append-only history: ``history/<id>.jsonl``, one JSON object per mutation.

Each entry holds an RFC 6902 patch with before/after hashes in the epoch its
``item_hash_version`` names (:mod:`pm_core.tracker.model.itemhash`), so any
version can be rebuilt and the chain checked.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.model.item import Item
from pm_core.tracker.model.itemhash import (
    CURRENT_EPOCH,
    DECLARED_EPOCHS,
    UNDECLARED_EPOCHS,
    DocumentHasher,
    epochs_agree,
    item_hash,
    js_number,
    parse_json,
)

if TYPE_CHECKING:
    from pathlib import Path

    from pm_core.tracker.storage.store import Store

EMPTY_DOCUMENT: dict[str, Any] = {"metadata": {}, "body": ""}
#: The stream of workspace changes (settings, schema): ``history/_workspace.jsonl``.
#: Its document's ``metadata.documents`` maps each governed file's tracker-relative
#: path to that file's JSON (the TypeScript pm's shape).
WORKSPACE_STREAM = "_workspace"


def item_document(item: Item | None) -> dict[str, Any]:
    """The ``{metadata, body}`` document history patches apply to."""
    if item is None:
        return {"metadata": {}, "body": ""}
    return {"metadata": item.metadata(), "body": item.body}


def make_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """An RFC 6902 patch turning ``before`` into ``after``."""
    if before == EMPTY_DOCUMENT and _is_document(after):
        # From nothing (a create, a restore): every field is added whole, the
        # operations a diff would find, in the document's own order as the
        # TypeScript pm writes them. No diff to run, so no diff library to load.
        ops = [
            {"op": "add", "path": field_path(key), "value": _copy(value)}
            for key, value in after["metadata"].items()
        ]
        if after["body"] != "":
            ops.append({"op": "replace", "path": "/body", "value": after["body"]})
        return ops
    import jsonpatch

    diff: list[dict[str, Any]] = jsonpatch.make_patch(before, after).patch
    return diff


def key_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """A coarse RFC 6902 patch from ``before`` to ``after``: one operation per changed key.

    Each top-level metadata key (and the body) that differs is added,
    removed or replaced whole. Valid wherever :func:`make_patch`'s is; used
    where the diff's import would cost more than its smaller patch saves (a
    merge driver starts once per file).
    """
    old, new = before.get("metadata") or {}, after.get("metadata") or {}
    if set(before) != {"metadata", "body"} or set(after) != {"metadata", "body"}:
        return [{"op": "replace", "path": "", "value": _copy(after)}]
    ops: list[dict[str, Any]] = []
    for key in sorted(old.keys() | new.keys()):
        path = field_path(key)
        if key not in new:
            ops.append({"op": "remove", "path": path})
        elif key not in old:
            ops.append({"op": "add", "path": path, "value": _copy(new[key])})
        elif not same_json(old[key], new[key]):
            ops.append({"op": "replace", "path": path, "value": _copy(new[key])})
    if not same_json(before.get("body"), after.get("body")):
        ops.append({"op": "replace", "path": "/body", "value": after.get("body")})
    return ops


def field_path(key: str) -> str:
    """The JSON pointer of one metadata field (``~`` and ``/`` escaped, RFC 6901)."""
    return "/metadata/" + key.replace("~", "~0").replace("/", "~1")


def _is_document(value: Mapping[str, Any]) -> bool:
    return set(value) == {"metadata", "body"} and isinstance(value["metadata"], dict)


class PatchError(ValueError):
    """A patch operation that does not apply (its path is missing, or out of range)."""


#: Parsed JSON pointers: replay meets the same few paths (``/metadata/updated_at``) over and over.
_POINTERS: dict[str, tuple[str, ...]] = {}


def _pointer(path: Any) -> tuple[str, ...]:
    tokens = _POINTERS.get(path) if isinstance(path, str) else None
    if tokens is not None:
        return tokens
    if not isinstance(path, str):
        raise PatchError(f"path {path!r} is not text")
    text = path
    if text.startswith("/front_matter"):  # the TypeScript pm's older name for metadata
        text = "/metadata" + text[len("/front_matter") :]
    if text == "":
        tokens = ()
    elif not text.startswith("/"):
        raise PatchError(f"path {path!r} does not start with /")
    else:
        tokens = tuple(t.replace("~1", "/").replace("~0", "~") for t in text[1:].split("/"))
    if len(_POINTERS) > 4096:
        _POINTERS.clear()
    _POINTERS[path] = tokens
    return tokens


_SCALARS = (str, int, float, bool, type(None))


def _copy(value: Any) -> Any:
    if type(value) in _SCALARS:
        return value
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _index(container: list[Any], token: str, *, upto: int) -> int:
    if not token.isdigit() or not token.isascii():
        raise PatchError(f"array index {token!r} is not a number")
    index = int(token)
    if index > upto:
        raise PatchError(f"array index {index} is out of range (length {len(container)})")
    return index


def _walk(document: Any, tokens: tuple[str, ...], path: Any) -> Any:
    node = document
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"path {path} does not exist")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, upto=len(node) - 1)]
        else:
            raise PatchError(f"path {path} does not exist")
    return node


def _strict_equal(left: Any, right: Any) -> bool:
    if type(left) is not type(right) and not (
        isinstance(left, int | float)
        and isinstance(right, int | float)
        and not isinstance(left, bool)
        and not isinstance(right, bool)
    ):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(
            _strict_equal(v, right[k]) for k, v in left.items()
        )
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_strict_equal, left, right))
    return bool(left == right)


def same_json(left: Any, right: Any) -> bool:
    """Whether two JSON values serialise alike (``==`` would equate ``1``, ``1.0`` and ``True``)."""
    if left != right:
        return False
    return _same_types(left, right)


def _same_types(left: Any, right: Any) -> bool:
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        return all(_same_types(value, right[key]) for key, value in left.items())
    if kind is list:
        return all(map(_same_types, left, right))
    if kind is float:
        return repr(left) == repr(right)
    return True


def _differing_keys(current: Mapping[str, Any], replayed: Mapping[str, Any]) -> set[str] | None:
    """The metadata keys (and ``"body"``) whose JSON differs; None: not two item documents."""
    left, right = current.get("metadata"), replayed.get("metadata")
    if type(left) is not dict or type(right) is not dict or current.keys() != replayed.keys():
        return None
    keys = {
        key
        for key in left.keys() | right.keys()
        if key not in left or key not in right or not same_json(left[key], right[key])
    }
    if not same_json(current.get("body"), replayed.get("body")):
        keys.add("body")
    return keys


class PatchChanges:
    """What :func:`apply_patch` changed, for a hasher that re-encodes only that.

    ``keys``: the top-level metadata keys (and ``"body"``) written, None when
    the patch addressed the whole document or metadata. ``elements``: the ids
    of list elements (``/metadata/<key>/<index>``) changed in place by an
    operation on a path below them.
    """

    __slots__ = ("elements", "keys")

    def __init__(self) -> None:
        self.keys: set[str] | None = set()
        self.elements: set[int] = set()

    def note(self, root: Any, tokens: tuple[str, ...], path: Any) -> None:
        keys = self.keys
        if keys is None:
            return
        if len(tokens) > 1 and tokens[0] == "metadata":
            keys.add(tokens[1])
            if len(tokens) > 3:
                element = _walk(root, tokens[:3], path)
                if type(element) is dict or type(element) is list:
                    self.elements.add(id(element))
        elif tokens and tokens[0] == "body":
            keys.add("body")
        else:
            self.keys = None


_WRITES = frozenset({"add", "remove", "replace", "move", "copy"})


def apply_patch(
    document: dict[str, Any],
    patch: list[dict[str, Any]],
    *,
    in_place: bool = False,
    changes: PatchChanges | None = None,
) -> dict[str, Any]:
    """Apply an RFC 6902 patch strictly (a missing path is a :class:`PatchError`).

    Paths under ``/front_matter`` address ``/metadata``. The result is a new
    document unless ``in_place``, which changes ``document`` (faster for replay;
    a failed patch leaves it half applied). ``changes``, when given, collects
    what the patch wrote.
    """
    root: Any = document if in_place else _copy(document)
    for operation in patch:
        op = operation.get("op")
        path = operation.get("path")
        tokens = _POINTERS.get(path) if type(path) is str else None
        if tokens is None:
            tokens = _pointer(path)
        if op == "replace" or op == "add":
            if "value" not in operation:
                raise PatchError(f"{op} {path} has no value")
            if changes is not None:
                changes.note(root, tokens, path)
            if not tokens:
                root = _copy(operation["value"])
                continue
            # The parent, walked here: nearly every path is /metadata/<key>[/<index>...].
            parent = root
            for token in tokens[:-1]:
                if type(parent) is dict and token in parent:
                    parent = parent[token]
                else:
                    parent = _walk(parent, (token,), path)
            key = tokens[-1]
            value = operation["value"]
            if type(value) not in _SCALARS:
                value = _copy(value)
            if type(parent) is dict:
                if op == "replace" and key not in parent:
                    raise PatchError(f"replace {path}: the path does not exist")
                parent[key] = value
            elif isinstance(parent, list):
                if op == "replace":
                    parent[_index(parent, key, upto=len(parent) - 1)] = value
                elif key == "-":
                    parent.append(value)
                else:
                    parent.insert(_index(parent, key, upto=len(parent)), value)
            elif op == "replace":
                raise PatchError(f"replace {path}: the path does not exist")
            else:
                raise PatchError(f"add {path}: the parent is not an object or array")
            continue
        if op == "test":
            if "value" not in operation:
                raise PatchError(f"{op} {path} has no value")
            if not _strict_equal(_walk(root, tokens, path), operation["value"]):
                raise PatchError(f"test {path} failed")
            continue
        if op not in _WRITES:
            raise PatchError(f"unknown patch operation {op!r}")
        if changes is not None:
            changes.note(root, tokens, path)
        if op == "remove":
            _remove(root, tokens, path)
            continue
        source = _pointer(operation.get("from"))
        if changes is not None and op == "move":
            changes.note(root, source, operation.get("from"))
        value = _walk(root, source, operation.get("from"))
        if op == "move":
            _remove(root, source, operation.get("from"))
        else:
            value = _copy(value)
        root = _add(root, tokens, path, value)
    if not isinstance(root, dict):
        raise PatchError("the patched document is not an object")
    return root


def _add(root: Any, tokens: tuple[str, ...], path: Any, value: Any) -> Any:
    if not tokens:
        return value
    parent = _walk(root, tokens[:-1], path)
    key = tokens[-1]
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        if key == "-":
            parent.append(value)
        else:
            parent.insert(_index(parent, key, upto=len(parent)), value)
    else:
        raise PatchError(f"add {path}: the parent is not an object or array")
    return root


def _remove(root: Any, tokens: tuple[str, ...], path: Any) -> None:
    if not tokens:
        raise PatchError("remove of the whole document")
    parent = _walk(root, tokens[:-1], path)
    key = tokens[-1]
    if isinstance(parent, dict):
        if key not in parent:
            raise PatchError(f"remove {path}: the path does not exist")
        del parent[key]
    elif isinstance(parent, list):
        del parent[_index(parent, key, upto=len(parent) - 1)]
    else:
        raise PatchError(f"remove {path}: the path does not exist")


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
    #: The epoch of ``before_hash``/``after_hash`` (None: not declared, an older writer).
    item_hash_version: Any = None
    #: The line of the file it was read from (0: not read from a file).
    line: int = 0

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
        if self.item_hash_version is not None:
            out["item_hash_version"] = self.item_hash_version
        if self.message:
            out["message"] = self.message
        out.update(self.extra)
        return out


_KNOWN = (
    "ts",
    "author",
    "op",
    "patch",
    "before_hash",
    "after_hash",
    "message",
    "item_hash_version",
)
_RESTORE_HINT = (
    "restore the file from git (`git checkout -- <file>`), or move the bad line out "
    "and run `pm validate --repair-history`"
)


_KNOWN_KEYS = frozenset(_KNOWN)
#: ``parse_json``'s decoder, made once (``json.loads`` with options builds one per call).
_DECODER = json.JSONDecoder(parse_float=lambda s: js_number(float(s)))
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as json.loads skips it


def parse_entry(line: str, where: str, number: int = 0) -> HistoryEntry:
    """Parse one history line; CorruptItemError naming the line and the fix on failure."""
    try:
        raw, end = _DECODER.raw_decode(line, _SPACE.match(line).end())  # type: ignore[union-attr]
        if _SPACE.match(line, end).end() != len(line):  # type: ignore[union-attr]
            parse_json(line)  # extra data: json's own message names where
    except ValueError as exc:
        if line.startswith(("<<<<<<<", "=======", ">>>>>>>")):
            raise CorruptItemError(
                f"{where}: a git conflict marker (a merge was committed unresolved)",
                hint="`pm history-repair <id>` merges both sides and re-anchors the chain",
            ) from None
        raise CorruptItemError(f"{where}: not JSON ({exc})", hint=_RESTORE_HINT) from None
    if type(raw) is not dict:
        raise CorruptItemError(f"{where}: entry is not a JSON object", hint=_RESTORE_HINT)
    if "ts" not in raw or "op" not in raw or "patch" not in raw:
        missing = [k for k in ("ts", "op", "patch") if k not in raw]
        raise CorruptItemError(f"{where}: entry lacks {', '.join(missing)}", hint=_RESTORE_HINT)
    patch = raw["patch"]
    if type(patch) is not list or any(type(p) is not dict for p in patch):
        raise CorruptItemError(f"{where}: patch is not a list of operations", hint=_RESTORE_HINT)
    extra = (
        {k: v for k, v in raw.items() if k not in _KNOWN_KEYS}
        if raw.keys() - _KNOWN_KEYS
        else _NOTHING_EXTRA
    )
    ts, op = raw["ts"], raw["op"]
    author = raw.get("author", "unknown")
    before, after = raw.get("before_hash", ""), raw.get("after_hash", "")
    return HistoryEntry(
        ts if type(ts) is str else str(ts),
        author if type(author) is str else str(author),
        op if type(op) is str else str(op),
        patch,
        before if type(before) is str else str(before),
        after if type(after) is str else str(after),
        raw.get("message"),
        extra,
        raw.get("item_hash_version"),
        number,
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


def hash_matches(document: Mapping[str, Any], recorded: str, declared: Any = None) -> bool:
    """True when ``recorded`` is ``document``'s hash in the declared epoch (any, when undeclared)."""
    if declared is not None:
        return declared in DECLARED_EPOCHS and item_hash(document, declared) == recorded
    return any(item_hash(document, epoch) == recorded for epoch in UNDECLARED_EPOCHS)


def drift_entry(
    history_dir: Path, item_id: str, current: dict[str, Any], *, ts: str, author: str
) -> HistoryEntry | None:
    """A ``history_repair`` entry when the history does not end at ``current``, else None.

    Writers call this under the item lock before appending their own entry: a
    process killed between the file rename and its history append leaves a
    file one step ahead of its history, and an entry appended on top of that
    would break the chain for good. Recording the gap first keeps every later
    entry verifiable. Only the last line is read in the common, agreeing
    case; None also when the history cannot be read or is in an epoch this
    program does not know (``validate`` reports both).
    """
    line = _last_line(history_path(history_dir, item_id))
    if line is None:
        if item_hash(current) == item_hash(EMPTY_DOCUMENT):
            return None
    else:
        try:
            last = parse_entry(line.decode("utf-8"), f"history/{item_id}.jsonl")
        except (CorruptItemError, UnicodeDecodeError):
            return None
        if not last.after_hash:
            return None  # an entry without hashes: nothing to compare
        declared = last.item_hash_version
        if declared is not None and declared not in DECLARED_EPOCHS:
            return None
        if hash_matches(current, last.after_hash, declared):
            return None
    try:
        replayed = replay(read_entries(history_dir, item_id))
    except (CorruptItemError, PatchError):  # corrupt or unreplayable: leave it to validate
        return None
    if item_hash(replayed) == item_hash(current):
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
    """Every entry of an item's history, oldest first (CorruptItemError on a bad line)."""
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
            yield parse_entry(line, f"history/{item_id}.jsonl line {number}", number)


class ReadReport(NamedTuple):
    """An item's history as far as it reads: the entries before the first bad line."""

    entries: list[HistoryEntry]
    #: The first line that does not parse, and why (None: every line parsed).
    error: CorruptItemError | None
    #: Lines after the bad one that were not read.
    unread: int = 0


def read_history(history_dir: Path, item_id: str) -> ReadReport:
    """Read an item's history without raising: the good prefix and the first bad line."""
    path = history_path(history_dir, item_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ReadReport([], None)
    except (OSError, UnicodeDecodeError) as exc:
        return ReadReport(
            [],
            CorruptItemError(f"history/{item_id}.jsonl cannot be read: {exc}", hint=_RESTORE_HINT),
        )
    entries: list[HistoryEntry] = []
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        entry = _well_formed(line, number)
        if entry is not None:
            entries.append(entry)
            continue
        if not line.strip():
            continue
        try:
            entries.append(parse_entry(line, f"history/{item_id}.jsonl line {number}", number))
        except CorruptItemError as exc:
            rest = sum(1 for later in lines[number:] if later.strip())
            return ReadReport(entries, exc, rest)
    return ReadReport(entries, None)


def _well_formed(line: str, number: int) -> HistoryEntry | None:
    """:func:`parse_entry` for a line as pm writes it; None sends any other line there."""
    if not line.startswith("{"):
        return None
    try:
        raw, end = _DECODER.raw_decode(line)
    except ValueError:
        return None
    if end != len(line) or type(raw) is not dict:
        return None
    patch = raw.get("patch")
    ts, op = raw.get("ts"), raw.get("op")
    author = raw.get("author", "unknown")
    before, after = raw.get("before_hash", ""), raw.get("after_hash", "")
    if (
        type(patch) is not list
        or type(ts) is not str
        or type(op) is not str
        or type(author) is not str
        or type(before) is not str
        or type(after) is not str
        or any(type(p) is not dict for p in patch)
    ):
        return None
    extra = (
        {k: v for k, v in raw.items() if k not in _KNOWN_KEYS}
        if raw.keys() - _KNOWN_KEYS
        else _NOTHING_EXTRA
    )
    return HistoryEntry(
        ts,
        author,
        op,
        patch,
        before,
        after,
        raw.get("message"),
        extra,
        raw.get("item_hash_version"),
        number,
    )


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
    """An entry recording the change from ``before`` to ``after``, hashed in the current epoch."""
    return HistoryEntry(
        ts=ts,
        author=author,
        op=op,
        patch=make_patch(before, after),
        before_hash=item_hash(before),
        after_hash=item_hash(after),
        message=message,
        extra=extra or {},
        item_hash_version=CURRENT_EPOCH,
    )


def replay(entries: list[HistoryEntry], upto: int | None = None) -> dict[str, Any]:
    """The document after applying the first ``upto`` entries (all when None).

    Raises :class:`PatchError` naming the entry whose patch does not apply.
    """
    document: dict[str, Any] = {"metadata": {}, "body": ""}
    for number, entry in enumerate(entries[: len(entries) if upto is None else upto], start=1):
        try:
            document = apply_patch(document, entry.patch, in_place=True)
        except PatchError as exc:
            where = f"line {entry.line}" if entry.line else f"entry {number}"
            raise PatchError(f"{where} ({entry.op}): {exc}") from None
    return document


class ChainProblem(NamedTuple):
    """One thing wrong with a history chain: where, what, and the fix."""

    line: int
    message: str
    fix: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class ChainReport(NamedTuple):
    """The result of checking one item's history chain."""

    ok: bool
    entries: int
    problems: tuple[ChainProblem, ...] = ()
    #: The epoch the chain's last entry was verified in (None: no entries).
    epoch: int | None = None


#: Fixes named by chain problems.
FIX_REPAIR = "pm validate --repair-history"
FIX_RESTORE = (
    "restore history/<id>.jsonl from git (`git checkout -- <file>`), then pm validate --fix"
)
FIX_UPGRADE = "upgrade pm: this entry was written by a newer pm; nothing was changed"


def verify_chain(entries: list[HistoryEntry], current: Mapping[str, Any] | None) -> ChainReport:
    """Check the hash chain, in each entry's epoch, and that it ends at ``current``.

    ``current`` is the item's ``{metadata, body}`` document (None: no file,
    e.g. a deleted item). An entry declaring an epoch is hashed in it; one
    that declares none in the epoch the chain last declared, else in the
    first of epochs 1, 2 and 0 its hashes match (the TypeScript pm's rule,
    and this program's own earlier hashes). Problems name the line and the fix.
    """
    problems: list[ChainProblem] = []
    document: dict[str, Any] = {"metadata": {}, "body": ""}
    hasher = DocumentHasher()
    #: After an entry whose after_hash does not match, the chain carries on from
    #: the recorded hash (so one bad entry is named once, not every entry after it).
    assumed: str | None = None

    def matches(epoch: int, recorded: str) -> bool:
        if assumed is not None:
            return recorded == assumed
        return hasher.matches(document, recorded, epoch)

    authoritative: int | None = None
    verified: int | None = None
    preferred: tuple[int, ...] = UNDECLARED_EPOCHS
    for number, entry in enumerate(entries, start=1):
        line = entry.line or number
        declared = entry.item_hash_version
        if declared is not None and declared not in DECLARED_EPOCHS:
            problems.append(
                ChainProblem(
                    line,
                    f"{entry.op} entry has item_hash_version {declared!r}, which this pm does "
                    f"not know (it knows {', '.join(map(str, DECLARED_EPOCHS))}); the chain from "
                    "here on is not verified",
                    FIX_UPGRADE,
                )
            )
            return ChainReport(False, len(entries), tuple(problems), None)
        if declared is not None:
            candidates: tuple[int, ...] = (declared,)
        elif authoritative is not None:
            candidates = (authoritative,)
        else:
            candidates = preferred
        # The epochs in which the state before matches, as the TypeScript pm collects
        # them; epochs 1 and 2 agree unless linked tests reorder, so one match stands
        # for both then.
        before = next(([e] for e in candidates if matches(e, entry.before_hash)), [])
        if before and before[0] in (1, 2):
            agree = assumed is not None or epochs_agree(document)
            before = [
                e
                for e in candidates
                if e == before[0] or (e in (1, 2) and (agree or matches(e, entry.before_hash)))
            ]
        if entry.before_hash and not before and entry.op != "create":
            problems.append(
                ChainProblem(
                    line,
                    f"{entry.op} entry's before_hash does not follow the entry before it "
                    "(an entry is missing or was edited)",
                    FIX_RESTORE,
                )
            )
        changes = PatchChanges()
        try:
            document = apply_patch(document, entry.patch, in_place=True, changes=changes)
        except PatchError as exc:
            problems.append(
                ChainProblem(line, f"{entry.op} entry's patch does not apply: {exc}", FIX_RESTORE)
            )
            return ChainReport(False, len(entries), tuple(problems), verified)
        hasher.changed(changes.keys, changes.elements)
        assumed = None
        tried = before or candidates
        epoch = next((e for e in tried if matches(e, entry.after_hash)), None)
        if epoch is None:
            if entry.after_hash:
                problems.append(
                    ChainProblem(
                        line,
                        f"{entry.op} entry's after_hash does not match its replay",
                        FIX_RESTORE,
                    )
                )
                assumed = entry.after_hash
            epoch = tried[0]
        verified = epoch
        if declared is not None:
            authoritative = epoch
        elif epoch != preferred[0]:
            # Undeclared entries of one stream share an epoch: try it first next time.
            preferred = (epoch, *(e for e in UNDECLARED_EPOCHS if e != epoch))
    if current is not None and entries:
        epoch = verified if verified is not None else CURRENT_EPOCH
        recorded = entries[-1].after_hash or hasher.hash(document, epoch)
        # The replay matched its recorded hash: a file equal to the replay (the
        # usual case) matches it too, with no second document to hash.
        same = assumed is None and same_json(current, document)
        if not same:
            differing = _differing_keys(current, document)
            checker = (
                DocumentHasher()
                if differing is None
                else hasher.derived(differing, recorded, epoch)
            )
        if not same and not checker.matches(current, recorded, epoch):
            problems.append(
                ChainProblem(
                    0,
                    "item file differs from the state its history records "
                    "(edited by hand, or a write was interrupted before its history entry)",
                    FIX_REPAIR,
                )
            )
    return ChainReport(not problems, len(entries), tuple(problems), verified)


def verify_item(store: Store, item_id: str) -> dict[str, Any]:
    """Check one item's history: the hash chain, and that replay gives the file on disk.

    Returns ``{id, ok, entries, problems}`` (problems as text naming the
    line, with ``fixes`` alongside). A deleted item is checked up to its
    ``delete`` entry; a file whose history never recorded a deletion, or an
    item with neither file nor history, is named as a problem.
    """
    where = f"history/{item_id}.jsonl"
    problems: list[str] = []
    fixes: list[str] = []
    read = read_history(store.history_dir, item_id)
    entries = read.entries
    path = store.find_path(item_id)
    if path is None and not entries and read.error is None:
        raise NotFoundError(f"item {item_id} not found and has no history")
    current: dict[str, Any] | None = None
    if path is not None:
        try:
            current = item_document(store.read_path(path))
        except CorruptItemError as exc:
            problems.append(exc.message)
            fixes.append(exc.hint or "fix the item file by hand, or pm restore it from history")
        if not entries and read.error is None:
            problems.append("item has no history")
            fixes.append(FIX_REPAIR)
    elif entries and entries[-1].op != "delete" and read.error is None:
        problems.append("item file is missing but its history does not record a delete")
        fixes.append(f"pm restore {item_id} {len(entries)}")
    if read.error is not None:
        problems.append(read.error.message)
        fixes.append(read.error.hint or FIX_RESTORE)
        current = None  # the chain stops at the bad line: the file cannot be compared
    report = verify_chain(entries, current)
    for problem in report.problems:
        problems.append(f"{where} {problem}" if problem.line else problem.message)
        fixes.append(problem.fix)
    out: dict[str, Any] = {
        "id": item_id,
        "ok": not problems,
        "entries": report.entries + read.unread + (1 if read.error else 0),
        "problems": problems,
    }
    if report.epoch is not None:
        out["item_hash_version"] = report.epoch
    if fixes:
        out["fixes"] = fixes
    return out


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
    from pm_core.tracker.model.clock import parse_iso

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
