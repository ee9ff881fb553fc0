"""Item files: TOON encode/decode, atomic writes, paths, scanning, ids.

The store knows files, not rules: lifecycle and history live in
:mod:`pm_core.tracker.api`.
"""

from __future__ import annotations

import contextlib
import os
import string
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from pm_core.tracker.model.errors import CorruptItemError, NotFoundError, UsageError
from pm_core.tracker.model.item import Item
from pm_core.tracker.storage.faults import checkpoint
from pm_core.tracker.storage.itemfile import decode_item, encode_item
from pm_core.tracker.storage.workspace import Schema

ITEM_SUFFIX = ".toon"
_ID_ALPHABET = string.digits + string.ascii_lowercase
_ID_CHARS = frozenset(_ID_ALPHABET + "-_.")


#: Mode of files the tracker writes (what ``git checkout`` gives under umask 022).
FILE_MODE = 0o644


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new bytes, never a mix."""
    import tempfile  # lazy: reads never write, and ``pm get`` starts without it

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            # mkstemp files start 0600; tracker files are shared, reviewable files.
            os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        checkpoint("temp_written")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


#: Longest accepted id: with ``.jsonl`` or a stale-lock suffix it still fits a file name.
MAX_ID_LENGTH = 128


def normalize_id(raw: str, prefix: str) -> str:
    """Trim, drop ``#``, lowercase, add the prefix when missing; reject path tricks."""
    value = raw.strip().lstrip("#").lower()
    if not value:
        raise UsageError("empty item id", hint="pass an id such as pm-a1b2")
    shown = repr(raw) if len(raw) <= 80 else f"{raw[:60]!r}... ({len(raw)} characters)"
    if len(value) > MAX_ID_LENGTH:
        raise UsageError(
            f"item id {shown} is too long", hint=f"ids are at most {MAX_ID_LENGTH} characters"
        )
    if not set(value) <= _ID_CHARS or value.startswith(".") or ".." in value:
        raise UsageError(
            f"invalid item id {shown}", hint="ids use letters, digits, '-', '_' and '.' only"
        )
    if not value.startswith(prefix) and "-" not in value:
        value = prefix + value
    return value


#: Random bytes below this map evenly onto the alphabet (the rest are drawn again).
_EVEN_BYTES = 256 - 256 % len(_ID_ALPHABET)


def new_token(length: int) -> str:
    """A random base36 token (from ``os.urandom``: ``secrets`` would load OpenSSL)."""
    out: list[str] = []
    while len(out) < length:
        out.extend(
            _ID_ALPHABET[b % len(_ID_ALPHABET)] for b in os.urandom(length) if b < _EVEN_BYTES
        )
    return "".join(out[:length])


class Store(NamedTuple):
    """Paths and raw file access for one tracker root."""

    root: Path
    schema: Schema

    @property
    def history_dir(self) -> Path:
        """``history/``."""
        return self.root / "history"

    @property
    def locks_dir(self) -> Path:
        """``locks/``."""
        return self.root / "locks"

    @property
    def runtime_dir(self) -> Path:
        """``runtime/`` (gitignored caches)."""
        return self.root / "runtime"

    def item_path(self, item_id: str, type_name: str) -> Path:
        """Where an item of ``type_name`` lives."""
        return self.root / self.schema.type_by_name(type_name).folder / f"{item_id}{ITEM_SUFFIX}"

    def find_path(self, item_id: str) -> Path | None:
        """The file of ``item_id`` in any type folder, or None."""
        name = f"{item_id}{ITEM_SUFFIX}"
        for folder in self.schema.folders():
            candidate = self.root / folder / name
            if candidate.is_file():
                return candidate
        return None

    def read_path(self, path: Path) -> Item:
        """Read and parse one item file."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"item file {path.name} vanished") from None
        return decode_item(data, f"{path.parent.name}/{path.name}")

    def read(self, item_id: str) -> tuple[Item, Path]:
        """Read an item by id; NotFoundError when absent."""
        path = self.find_path(item_id)
        if path is None:
            raise NotFoundError(
                f"item {item_id} not found", hint="list ids with `pm list --all` or `pm search`"
            )
        return self.read_path(path), path

    def write(self, item: Item, path: Path) -> None:
        """Write an item file atomically."""
        atomic_write(path, encode_item(item))

    def item_files(self) -> Iterator[Path]:
        """Every item file, folder by folder, in name order."""
        for folder in self.schema.folders():
            directory = self.root / folder
            try:
                entries = sorted(
                    e.name
                    for e in os.scandir(directory)
                    if e.name.endswith(ITEM_SUFFIX) and not e.name.startswith(".")
                )
            except FileNotFoundError:
                continue
            for name in entries:
                yield directory / name

    def scan(self) -> Iterator[tuple[Path, Item | CorruptItemError]]:
        """Every item, or the error that stops it from loading (never raises)."""
        for path in self.item_files():
            try:
                yield path, self.read_path(path)
            except CorruptItemError as exc:
                yield path, exc
            except NotFoundError:
                continue

    def new_id(self, prefix: str, length: int) -> str:
        """A fresh id: 32 tries per token length, then one character longer."""
        length = max(4, min(12, length))
        while length <= 12:
            for _ in range(32):
                candidate = prefix + new_token(length)
                if (
                    self.find_path(candidate) is None
                    and not (self.history_dir / f"{candidate}.jsonl").exists()
                ):
                    return candidate
            length += 1
        raise UsageError("could not allocate a new id", hint="raise id_token_length in settings")
