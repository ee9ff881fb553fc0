"""The git merge driver: ``python -m pm_core.tracker.merge.driver KIND %O %A %B [--item-path %P]``.

Git runs the configured driver for every three-way merge of a file whose
attribute names it (merge, rebase, cherry-pick, ``stash pop``), with the
ancestor, ours and theirs in temporary files. The driver writes the merged
text over ours (``%A``, replaced atomically) and exits 0 when the merge is
clean, 1 when a decision needs review (git then keeps the path conflicted,
but the file is a valid tracker file), 2 on a usage error.

A side that is not a tracker file of its kind (not TOON, not JSON, a history
line that is not an entry) is never half merged: ``%A`` gets git's own text
merge of the three versions (what git writes without a driver), the reason
goes to stderr in one line, and the exit code keeps the path conflicted.

Start-up is the cost of a driver (it runs once per file), so this module
imports only what one merge needs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

KINDS: tuple[str, ...] = ("item", "history", "relationship", "json")
USAGE = (
    "usage: pm merge driver {item|history|relationship|json} BASE OURS THEIRS [--item-path PATH]"
)


class DriverResult(NamedTuple):
    """What one driver run did."""

    code: int
    #: One line for stderr ("" when the merge was clean and quiet).
    message: str
    receipt_id: str | None = None


class _BadInput(Exception):
    """A side that is not a file of the driver's kind."""


def _read(path: str, label: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise _BadInput(f"cannot read {label} file {path}: {exc.strerror or exc}") from None


def _write_over(path: str, data: bytes) -> None:
    """Replace ``path`` so it holds the old bytes or the new ones, never a part."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.pm-merge.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _text(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _BadInput(f"{label} is not UTF-8 text") from None


def _git_text_merge(base: str, ours: str, theirs: str) -> bytes | None:
    """Git's own line merge of the three files (conflict markers where they clash)."""
    import subprocess

    try:
        proc = subprocess.run(
            [
                "git",
                "merge-file",
                "-p",
                "-L",
                "ours",
                "-L",
                "base",
                "-L",
                "theirs",
                ours,
                base,
                theirs,
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode < 0 or proc.returncode > 127:
        return None
    return proc.stdout


def _tracker_of(item_path: str | None) -> Path | None:
    """The tracker folder holding ``item_path`` (relative to the worktree), when it is one."""
    if not item_path:
        return None
    from pathlib import Path

    rel = Path(item_path)
    if rel.is_absolute() or ".." in rel.parts or len(rel.parts) < 2:
        return None
    root = rel.parent.parent
    return root if (root / "settings.json").is_file() else None


def merge_item(
    base: bytes, ours: bytes, theirs: bytes, item_path: str | None
) -> tuple[bytes, DriverResult]:
    """Merge item files; receipts for decisions. Raises _BadInput for a non-item side."""
    from pm_core.tracker.merge.items import merge_item_files
    from pm_core.tracker.model.errors import CorruptItemError

    name = item_path or "item"
    try:
        result = merge_item_files(base, ours, theirs, name)
    except CorruptItemError as exc:
        raise _BadInput(exc.message) from None
    merged = result.merge
    if not merged.decisions and not merged.id_collision:
        return result.data, DriverResult(0, "")
    from pathlib import Path

    from pm_core.tracker.merge.receipts import build_receipt, git_common_dir, write_receipt
    from pm_core.tracker.model.clock import now_iso

    receipt = build_receipt(
        item_id=str(merged.record.get("id", Path(name).stem)),
        item_path=name,
        created_at=now_iso(),
        decisions=[d._asdict() for d in merged.decisions],
        union_fields=merged.union_fields,
        id_collision=merged.id_collision,
    )
    write_receipt(receipt, git_dir=git_common_dir(Path.cwd()), tracker_root=_tracker_of(item_path))
    fields = ", ".join(d.field for d in merged.decisions)
    what = (
        "both branches created an item with this id"
        if merged.id_collision
        else f"both branches set {fields}"
    )
    message = (
        f"pm merge: {name}: {what}; kept a stable value (receipt {receipt['receipt_id']}). "
        "Review with `pm merge report`, then `git add` the file and run `pm merge reconcile`."
    )
    return result.data, DriverResult(1, message, receipt["receipt_id"])


def _merge(
    kind: str, base: bytes, ours: bytes, theirs: bytes, item_path: str | None
) -> tuple[bytes, DriverResult]:
    name = item_path or kind
    if kind == "item":
        return merge_item(base, ours, theirs, item_path)
    texts = [
        _text(data, label) for data, label in ((base, "base"), (ours, "ours"), (theirs, "theirs"))
    ]
    if kind in ("history", "relationship"):
        from pm_core.tracker.merge.streams import MergeInputError

        try:
            if kind == "history":
                from pm_core.tracker.merge.streams import merge_history_text

                history = merge_history_text(*texts)
                text, conflicts = history.text, history.conflicts
            else:
                from pm_core.tracker.merge.events import merge_event_text

                text, conflicts = merge_event_text(*texts).text, ()
        except MergeInputError as exc:
            raise _BadInput(str(exc)) from None
        if conflicts:
            message = f"pm merge: {name}: {'; '.join(conflicts)}; `pm validate` names the fix."
            return text.encode("utf-8"), DriverResult(1, message)
        return text.encode("utf-8"), DriverResult(0, "")
    from pm_core.tracker.merge.jsondoc import dump_json, merge_json, parse_json

    try:
        values: list[Any] = [
            parse_json(t, label) if t.strip() or label != "base" else None
            for t, label in zip(texts, ("base", "ours", "theirs"), strict=True)
        ]
    except ValueError as exc:
        raise _BadInput(str(exc)) from None
    merged = merge_json(*values)
    data = dump_json(merged.value).encode("utf-8")
    if merged.conflicts:
        message = (
            f"pm merge: {name}: both branches set {', '.join(merged.conflicts)}; "
            "kept a stable value. Review the file, then `git add` it."
        )
        return data, DriverResult(1, message)
    return data, DriverResult(0, "")


def run(kind: str, base: str, ours: str, theirs: str, item_path: str | None = None) -> DriverResult:
    """One driver run over git's three files: writes ``ours`` and says how it went."""
    if kind not in KINDS:
        return DriverResult(2, f"pm merge: unknown driver kind {kind!r}; {USAGE}")
    name = item_path or kind
    try:
        data, result = _merge(
            kind, _read(base, "base"), _read(ours, "ours"), _read(theirs, "theirs"), item_path
        )
    except _BadInput as exc:
        fallback = _git_text_merge(base, ours, theirs)
        if fallback is not None:
            _write_over(ours, fallback)
        return DriverResult(
            1,
            f"pm merge: {name}: not merged by the {kind} driver ({exc}); left git's text "
            "conflict to resolve by hand",
        )
    _write_over(ours, data)
    return result


def parse_args(argv: Sequence[str]) -> tuple[str, str, str, str, str | None] | None:
    """``(kind, base, ours, theirs, item_path)`` from the driver's argument list."""
    args = list(argv)
    item_path: str | None = None
    if "--item-path" in args:
        at = args.index("--item-path")
        if at + 1 >= len(args):
            return None
        item_path = args[at + 1]
        del args[at : at + 2]
    if len(args) == 5 and item_path is None:
        item_path = args.pop()
    if len(args) != 4:
        return None
    return args[0], args[1], args[2], args[3], item_path or None


def main(argv: Sequence[str] | None = None) -> int:
    """Run as git's merge driver; the exit code is the driver protocol's."""
    parsed = parse_args(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        sys.stderr.write(USAGE + "\n")
        return 2
    result = run(*parsed)
    if result.message:
        sys.stderr.write(result.message + "\n")
    return result.code


if __name__ == "__main__":
    sys.exit(main())
