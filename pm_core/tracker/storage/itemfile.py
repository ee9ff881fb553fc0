"""Item files as bytes: :func:`decode_item` and :func:`encode_item`.

Kept apart from :mod:`pm_core.tracker.storage.store` (folders, ids, writes) so
a merge driver, which runs once per file, reads and writes items without
loading the rest of the storage layer.
"""

from __future__ import annotations

from typing import Any

from pm_core.tracker.model.errors import CorruptItemError, UsageError
from pm_core.tracker.model.item import Item, ItemFormatError, item_from_record


def encode_item(item: Item) -> bytes:
    """The item file's bytes: TOON, canonical key order, body last, newline at end."""
    # The package's own encoder gives the same text; the reference package's
    # import (importlib.metadata) would cost more than the rest of a create.
    from pm_core.tracker.storage.toon import encode

    text = encode(item.to_record())
    try:
        return (text.rstrip("\n") + "\n").encode("utf-8")
    except UnicodeEncodeError as exc:
        # Lone surrogates (from non-UTF-8 bytes or a "\udXXX" JSON escape) have
        # no UTF-8 form; refuse the write before any file is touched.
        bad = exc.object[exc.start : exc.end].encode("utf-8", "backslashreplace").decode()
        raise UsageError(
            f"{item.id}: text contains {bad}, which is not a Unicode character",
            hint="send text as valid UTF-8 (no lone surrogate escapes)",
        ) from None


def decode_item(data: bytes, source: str = "item") -> Item:
    """Parse an item file; CorruptItemError names the file and the problem.

    Files in the layout pm writes are read by the fast reader; anything else
    (nested objects, list items, odd quoting) goes to the full TOON decoder,
    which is imported only then.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptItemError(f"{source}: not UTF-8 ({exc.reason})") from exc
    if not text.strip():
        raise CorruptItemError(f"{source}: file is empty", hint="restore it with `pm restore`")
    # The fast reader is 89% of `pm get` and 35% of a first read at 10,000 items
    # (tests/bench/bench_tricks.py): it also spares the import of toon_format.
    from pm_core.tracker.storage.fastread import read_record

    record = read_record(text)
    if record is not None:
        return _to_item(record, source)
    import toon_format

    try:
        record = toon_format.decode(text)
    except Exception as exc:  # the decoder raises several error types
        if any(line.startswith("<<<<<<< ") for line in text.splitlines()):
            raise CorruptItemError(
                f"{source}: git conflict markers (a merge was committed unresolved)",
                hint="take one side (`git checkout --ours|--theirs -- FILE`), or redo the merge "
                "with the drivers: `pm merge install`, then `git checkout -m FILE`",
            ) from exc
        raise CorruptItemError(
            f"{source}: not valid TOON ({exc})",
            hint="fix the file by hand, or rebuild it from history with `pm restore <id> <version>`",
        ) from exc
    return _to_item(record, source)


def _to_item(record: Any, source: str) -> Item:
    try:
        return item_from_record(record)
    except ItemFormatError as exc:
        raise CorruptItemError(f"{source}: {exc}", hint="fix the file by hand") from exc
