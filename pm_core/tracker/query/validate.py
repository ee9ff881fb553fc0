"""``pm validate``, ``pm health`` and history repair.

Validation only reads; repair writes through :meth:`Tracker.reconcile_history`.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Sequence
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.claims.leases import lease_disagreements
from pm_core.tracker.model.clock import parse_iso
from pm_core.tracker.model.errors import PmError, UsageError
from pm_core.tracker.model.item import (
    DEPENDENCY_ALIASES,
    DEPENDENCY_KINDS,
    Item,
    normalize_tags,
)
from pm_core.tracker.query.graph import find_cycles
from pm_core.tracker.query.view import TrackerView, build_view
from pm_core.tracker.storage import history as hist
from pm_core.tracker.storage.locks import lock_is_stale
from pm_core.tracker.storage.workspace import load_schema, load_settings

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

CHECKS: tuple[str, ...] = (
    "parse",
    "metadata",
    "lifecycle",
    "dependencies",
    "history",
    "duplicates",
    "claims",
    "storage_integrity",
)
_RISKS = ("low", "medium", "high", "critical")
_REPAIR = "pm validate --repair-history"
Failure = dict[str, Any]


#: Marks a finding that is reported but does not fail (``validate`` moves it to ``warnings``).
_WARNING = "_warning"


def _warning(
    item_id: str, message: str, *, path: str | None = None, fix: str | None = None
) -> Failure:
    """A finding where this program is stricter than the format (the TypeScript pm accepts it)."""
    out = _failure(item_id, message, path=path, fix=fix)
    out[_WARNING] = True
    return out


def _failure(
    item_id: str, message: str, *, path: str | None = None, fix: str | None = None
) -> Failure:
    out: Failure = {"id": item_id}
    if path:
        out["path"] = path
    out["message"] = message
    if fix:
        out["fix"] = fix
    return out


def validate(tracker: Tracker, checks: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the named checks (all by default): ``{ok, checks: [{name, ok, failures}], counts}``."""
    selected = list(CHECKS) if not checks else list(dict.fromkeys(checks))
    unknown = [c for c in selected if c not in CHECKS]
    if unknown:
        raise UsageError(
            f"unknown check(s): {', '.join(unknown)}", hint=f"use any of: {', '.join(CHECKS)}"
        )
    # The files themselves: what is validated, and no index build on a first run.
    view = build_view(tracker, files=True)
    runners = {
        "parse": _check_parse,
        "metadata": _check_metadata,
        "lifecycle": _check_lifecycle,
        "dependencies": _check_dependencies,
        "duplicates": _check_duplicates,
        "claims": _check_claims,
        "storage_integrity": _check_storage_integrity,
    }
    # The view is read once and only read from here on: collections need not walk it.
    gc.freeze()
    try:
        history = _HistoryCheck(tracker, view, alone=selected == ["history"])
        found = {name: runners[name](tracker, view) for name in selected if name != "history"}
        if "history" in selected:
            found["history"] = history.finish()
        else:
            history.cancel()
    finally:
        gc.unfreeze()
    results: list[dict[str, Any]] = []
    total = warned = 0
    for name in selected:
        failures = [f for f in found[name] if not f.get(_WARNING)]
        result: dict[str, Any] = {"name": name, "ok": not failures, "failures": failures}
        warnings = [
            {k: v for k, v in f.items() if k != _WARNING} for f in found[name] if f.get(_WARNING)
        ]
        if warnings:
            result["warnings"] = warnings
        total += len(failures)
        warned += len(warnings)
        results.append(result)
    failed = [r for r in results if not r["ok"]]
    return {
        "ok": not failed,
        "checks": results,
        "counts": {
            "items": len(view.by_id),
            "corrupt": len(view.corrupt),
            "checks": len(results),
            "failed_checks": len(failed),
            "failures": total,
            "warnings": warned,
        },
    }


def _item_path(prefix: str, view: TrackerView, item: Item) -> str:
    # Built from a prefix computed once per check: relative_to per item is slow at 10k items.
    path = view.paths[item.id][0]
    return f"{prefix}/{path.parent.name}/{path.name}"


def _check_parse(tracker: Tracker, view: TrackerView) -> list[Failure]:
    return [
        _failure(
            path.stem,
            exc.message,
            path=view.relpath(path),
            fix=exc.hint or "fix the file by hand, or `pm restore <id> <version>` from history",
        )
        for path, exc in view.corrupt
    ]


def _check_metadata(tracker: Tracker, view: TrackerView) -> list[Failure]:
    schema = tracker.schema
    type_folders = {t.name: t.folder for t in schema.types}
    statuses = set(schema.status_names)
    out: list[Failure] = []
    prefix = view.relpath(view.root)
    from pm_core.tracker.model.entries import checker, entry_problems

    shapes = checker()
    for item in view.item_list():
        path = _item_path(prefix, view, item)

        def fail(message: str, fix: str, item: Item = item, path: str = path) -> None:
            out.append(_failure(item.id, message, path=path, fix=fix))

        for problem in entry_problems(item, shapes):
            fail(f"malformed entry {problem}", "fix the entry in the item file by hand")

        stem = view.paths[item.id][0].stem
        if stem != item.id:
            fail(f"file {stem} holds id {item.id}", "rename the file to match its id")
        if item.type not in type_folders:
            fail(
                f"unknown type {item.type!r}",
                f"pm schema add type {item.type}, or pm update {item.id} --type Task",
            )
        elif view.paths[item.id][0].parent.name != type_folders[item.type]:
            fail(
                f"a {item.type} lives in {type_folders[item.type]}/, not "
                f"{view.paths[item.id][0].parent.name}/",
                f"move the file to {type_folders[item.type]}/",
            )
        if item.status not in statuses:
            fail(f"unknown status {item.status!r}", f"pm update {item.id} --status open")
        if not 0 <= item.priority <= 4:
            fail(f"priority {item.priority} is outside 0-4", f"pm update {item.id} --priority 2")
        for key in ("created_at", "updated_at"):
            value = getattr(item, key)
            try:
                parse_iso(value)
            except ValueError:
                fail(f"{key} {value!r} is not an ISO timestamp", f"set {key} to an ISO 8601 time")
        if item.tags != normalize_tags(item.tags) and not _locale_sorted_tags(item.tags):
            out.append(
                _warning(
                    item.id,
                    "tags are not sorted and unique",
                    path=path,
                    fix=f"pm update {item.id} --tags {','.join(normalize_tags(item.tags))}",
                )
            )
        if item.risk is not None and str(item.risk).lower() not in _RISKS:
            fail(f"invalid risk {item.risk!r}", f"pm update {item.id} --risk medium")
        if item.confidence is not None and not _confidence_ok(item.confidence):
            fail(f"invalid confidence {item.confidence!r}", "use 0-100 or low/medium/high")
        for declared in schema.fields:
            value = item.extra.get(declared.key)
            if value is not None and not _type_ok(declared.type, value):
                fail(
                    f"custom field {declared.key!r} should be {declared.type}, got {value!r}",
                    f"pm update {item.id} --field {declared.key}=...",
                )
    return out


def _locale_sorted_tags(tags: list[str]) -> bool:
    """Unique and in the TypeScript pm's order (lower case, ``localeCompare``), which it writes."""
    from pm_core.tracker.model.itemhash import locale_compare

    return len(set(tags)) == len(tags) and all(locale_compare(a, b) < 0 for a, b in pairwise(tags))


def _confidence_ok(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("low", "medium", "high") or (
            value.isdigit() and 0 <= int(value) <= 100
        )
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string_array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return isinstance(value, str | int | float)


def _check_lifecycle(tracker: Tracker, view: TrackerView) -> list[Failure]:
    require_reason = bool(tracker.settings.get("governance", {}).get("require_close_reason", True))
    # A reason is asked of finished work, not of canceled work (as the TypeScript pm does).
    canceled = {s.name for s in tracker.schema.statuses if "terminal_canceled" in s.roles}
    out: list[Failure] = []
    prefix = view.relpath(view.root)
    for item in view.item_list():
        path = _item_path(prefix, view, item)
        if view.is_terminal(item):
            # Both are warnings: the TypeScript pm writes closed items without
            # closed_at, and its validate only warns about a missing reason.
            if not item.closed_at:
                out.append(
                    _warning(
                        item.id,
                        f"{item.status} without closed_at",
                        path=path,
                        fix=f'pm reopen {item.id}, then pm close {item.id} "reason" (records closed_at)',
                    )
                )
            if require_reason and not item.close_reason and item.status not in canceled:
                out.append(
                    _warning(
                        item.id,
                        f"{item.status} without close_reason",
                        path=path,
                        fix=f'pm reopen {item.id}, then pm close {item.id} "reason"',
                    )
                )
            # Closing keeps who did the work (assignee, claim_principal) but ends
            # the lease; a live lease on a finished item is the inconsistency.
            if item.claim_expires_at:
                out.append(
                    _failure(
                        item.id,
                        f"{item.status} but still holds a claim lease "
                        f"({item.claim_principal or item.assignee or 'unknown'} until "
                        f"{item.claim_expires_at})",
                        path=path,
                        fix=f"pm release {item.id} --force",
                    )
                )
        elif item.closed_at or item.completed_at:
            out.append(
                _warning(
                    item.id,
                    f"{item.status} but has closed_at/completed_at",
                    path=path,
                    fix=f"pm update {item.id} --unset closed_at --unset completed_at, or pm close it",
                )
            )
    return out


def _check_dependencies(tracker: Tracker, view: TrackerView) -> list[Failure]:
    out: list[Failure] = []
    prefix = view.relpath(view.root)
    for item in view.item_list():
        path = _item_path(prefix, view, item)
        targets: list[tuple[str, str]] = []
        for dep in item.dependencies:
            kind = str(dep.get("kind") or "")
            if kind not in DEPENDENCY_KINDS and kind not in DEPENDENCY_ALIASES:
                out.append(
                    _failure(
                        item.id,
                        f"unknown dependency kind {kind!r} on {dep.get('id')}",
                        path=path,
                        fix=f"pm update {item.id} --dep-remove {dep.get('id')}",
                    )
                )
            targets.append((str(dep.get("id") or ""), f"dependency {kind}"))
        for key in ("parent", "blocked_by", "duplicate_of"):
            value = item.get_field(key)
            if value:
                targets.append((str(value), key))
        for target, what in targets:
            if target and target not in view.by_id:
                out.append(
                    _failure(
                        item.id,
                        f"{what} target {target} does not exist",
                        path=path,
                        fix=f"pm update {item.id} --dep-remove {target} (or create/restore {target})",
                    )
                )
    for cycle, kind in find_cycles(view.edges):
        label = "blocking" if kind == "blocked_by" else "hierarchy"
        out.append(
            _failure(
                cycle[0],
                f"{label} cycle: {' -> '.join([*cycle, cycle[0]])}",
                fix="remove one link of the cycle (`pm deps <id>` shows them)",
            )
        )
    return out


def _check_duplicates(tracker: Tracker, view: TrackerView) -> list[Failure]:
    out: list[Failure] = []
    for item_id, paths in sorted(view.paths.items()):
        if len(paths) > 1:
            shown = ", ".join(view.relpath(p) for p in paths)
            out.append(
                _failure(
                    item_id,
                    f"id {item_id} is used by {len(paths)} files: {shown}",
                    path=view.relpath(paths[1]),
                    fix="keep one file (merge by hand) and give the other a new id with `pm copy`",
                )
            )
    return out


def _check_claims(tracker: Tracker, view: TrackerView) -> list[Failure]:
    # Remote claims mode only: the item file's holder against the lease ref.

    return lease_disagreements(tracker)


def _check_storage_integrity(tracker: Tracker, view: TrackerView) -> list[Failure]:
    # What a branch merge can leave behind (markers, ids minted twice, delete
    # versus edit, the merge fence): the merge package's checks, which sit
    # above this layer, reached through the tracker.
    found = tracker.storage_integrity(set(view.by_id))
    # A missing or stale merge fence is a warning, as in the TypeScript pm's
    # validate: a tracker it wrote and passes must not fail here.
    for failure in found:
        if failure.get("id") == ".gitattributes":
            failure[_WARNING] = True
    return found


def _history_ids(history_dir: Path) -> list[str]:
    try:
        names = os.listdir(history_dir)
    except FileNotFoundError:
        return []
    return sorted(
        n[: -len(".jsonl")] for n in names if n.endswith(".jsonl") and not n.startswith("_")
    )


class _HistoryCheck:
    """The ``history`` check: every item's chain replayed and hashed, the biggest cost.

    On a 2+ core machine with enough items, a forked child takes about half
    the work (by history size) as soon as this is made, while this process
    runs the other checks and then its own part. A fork shares the items
    already read. Any trouble in the child (no fork, a crash, a bad pipe)
    falls back to doing its part here, so the answer never depends on it.
    """

    def __init__(self, tracker: Tracker, view: TrackerView, *, alone: bool) -> None:
        self.tracker = tracker
        self.view = view
        self.func = partial(_item_history_failures, tracker.store.history_dir)
        self.items = view.item_list()
        self.pid = 0
        self.read_fd = -1
        self.theirs: list[int] = []
        if len(self.items) >= PARALLEL_MIN_ITEMS and (os.cpu_count() or 1) >= 2:
            # With other checks to run here too, the child takes a little more.
            self._fork(0.5 if alone else 0.55)

    def _fork(self, share: float) -> None:
        if not hasattr(os, "fork"):
            return
        history_dir = self.tracker.store.history_dir
        weights = []
        for item in self.items:
            try:
                weights.append(os.stat(history_dir / f"{item.id}.jsonl").st_size + 256)
            except OSError:
                weights.append(256)
        given = mine = 0
        for index, weight in enumerate(weights):  # to whichever side is behind its share
            if given * (1 - share) <= mine * share:
                self.theirs.append(index)
                given += weight
            else:
                mine += weight
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            self.theirs = []
            return
        if pid == 0:  # the child: its part, pickled down the pipe, then out without cleanup
            code = 0
            try:
                import pickle

                os.close(read_fd)
                data = pickle.dumps(
                    (
                        [self.func(self.items[i]) for i in self.theirs],
                        workspace_history_failures(self.tracker),
                    )
                )
                with os.fdopen(write_fd, "wb") as pipe:
                    pipe.write(data)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(write_fd)
        self.pid, self.read_fd = pid, read_fd

    def _collect(self) -> tuple[list[list[Failure]], list[Failure]] | None:
        """The child's part and the workspace stream's failures (None: do them here)."""
        if not self.pid:
            return None
        with os.fdopen(self.read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        try:
            import pickle

            got = pickle.loads(data) if status == 0 else None
        except Exception:
            got = None
        if (
            isinstance(got, tuple)
            and len(got) == 2
            and isinstance(got[0], list)
            and len(got[0]) == len(self.theirs)
            and isinstance(got[1], list)
        ):
            return got[0], got[1]
        return None

    def cancel(self) -> None:
        if self.pid:
            import signal

            os.kill(self.pid, signal.SIGKILL)
            os.close(self.read_fd)
            os.waitpid(self.pid, 0)
            self.pid = 0

    def finish(self) -> list[Failure]:
        """Every history failure, in item order, then histories with no item."""
        theirs = set(self.theirs)
        mine = {i: self.func(item) for i, item in enumerate(self.items) if i not in theirs}
        collected = self._collect()
        if collected is None:
            got = [self.func(self.items[i]) for i in self.theirs]
            workspace = workspace_history_failures(self.tracker)
        else:
            got, workspace = collected
        mine.update(zip(self.theirs, got, strict=True))
        out: list[Failure] = []
        for index in range(len(self.items)):
            out.extend(mine[index])
        out.extend(_orphan_histories(self.tracker, self.view))
        out.extend(workspace)
        return out


def workspace_history_failures(tracker: Tracker) -> list[Failure]:
    """``history/_workspace.jsonl``: its chain, and each governed file against its replay.

    A broken chain fails, as for an item. A governed file (``settings.json``,
    a schema file) that differs from, is missing from, or cannot be compared
    with the state the stream records is a warning, as in the TypeScript pm:
    the file was changed outside pm, which may be on purpose.
    """
    history_dir = tracker.store.history_dir
    stream = hist.WORKSPACE_STREAM
    where = f"history/{stream}.jsonl"
    read = hist.read_history(history_dir, stream)
    if read.error is not None:
        return [_failure(stream, read.error.message, path=where, fix=read.error.hint or _REPAIR)]
    if not read.entries:
        return []
    report = hist.verify_chain(read.entries, None)
    out = [
        _failure(stream, str(problem), path=where, fix=problem.fix) for problem in report.problems
    ]
    if out:
        return out
    try:
        replayed = hist.replay(read.entries)
    except hist.PatchError as exc:
        return [_failure(stream, str(exc), path=where, fix=hist.FIX_RESTORE)]
    metadata = replayed.get("metadata")
    documents = metadata.get("documents") if isinstance(metadata, dict) else None
    if not isinstance(documents, dict):
        return []
    fix = (
        "make the change through pm (`pm config set`, `pm schema ...`) so it is recorded, "
        f"or restore the file from git; `pm history {stream}` shows the recorded versions"
    )
    root = tracker.root.resolve()
    for rel in sorted(documents):
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or target == root:
            out.append(_warning(stream, f"records {rel!r}, outside the tracker", path=where))
            continue
        try:
            current = json.loads(target.read_text(encoding="utf-8"))
        except FileNotFoundError:
            out.append(
                _warning(stream, f"{rel} is missing but its history records it", path=rel, fix=fix)
            )
            continue
        except (OSError, ValueError) as exc:
            out.append(_warning(stream, f"{rel} cannot be compared: {exc}", path=rel, fix=fix))
            continue
        if not hist.same_json(current, documents[rel]):
            out.append(
                _warning(
                    stream,
                    f"{rel} differs from the state history/{stream}.jsonl records "
                    "(changed outside pm)",
                    path=rel,
                    fix=fix,
                )
            )
    return out


def _orphan_histories(tracker: Tracker, view: TrackerView) -> list[Failure]:
    history_dir = tracker.store.history_dir
    out: list[Failure] = []
    known = set(view.by_id) | {p.stem for p, _ in view.corrupt}
    for item_id in _history_ids(history_dir):
        if item_id in known:
            continue
        where = f"history/{item_id}.jsonl"
        read = hist.read_history(history_dir, item_id)
        if read.error is not None:
            out.append(_failure(item_id, read.error.message, path=where, fix=read.error.hint))
            continue
        entries = read.entries
        if entries and entries[-1].op != "delete":
            out.append(
                _failure(
                    item_id,
                    "history exists but the item file is missing (not deleted through pm)",
                    path=where,
                    fix=f"pm restore {item_id} {len(entries)}",
                )
            )
    return out


#: Below this many items a second process costs more than it saves.
PARALLEL_MIN_ITEMS = 400


def _item_history_failures(history_dir: Path, item: Item) -> list[Failure]:
    """The history problems of one item, each naming the file, the line and the fix."""
    where = f"history/{item.id}.jsonl"
    read = hist.read_history(history_dir, item.id)
    out: list[Failure] = []
    if read.error is not None:
        message = read.error.message
        if read.unread:
            message += f"; {read.unread} later line(s) not read"
        out.append(_failure(item.id, message, path=where, fix=read.error.hint or _REPAIR))
    elif not read.entries:
        return [_failure(item.id, "item has no history", path=where, fix=_REPAIR)]
    current = None if read.error is not None else hist.item_document(item)
    report = hist.verify_chain(read.entries, current)
    for problem in report.problems:
        failure = _failure(item.id, problem.message, path=where, fix=problem.fix)
        if problem.line:
            failure["line"] = problem.line
            failure["message"] = f"line {problem.line}: {problem.message}"
        out.append(failure)
    return out


# ---------------------------------------------------------------- repair


def repair_history(tracker: Tracker, item_id: str | None = None) -> dict[str, Any]:
    """Append ``history_repair`` entries where item files and history disagree.

    The file always wins (it is the newer state). Histories that cannot be
    replayed are reported, not rewritten.
    """
    if item_id:
        ids = [tracker.normalize_id(item_id)]
        tracker.get(ids[0])  # NotFoundError / CorruptItemError name the problem
    else:
        ids = sorted(build_view(tracker).by_id)
    repaired: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for current in ids:
        if not item_id and not _drifted(tracker, current):
            continue
        try:
            done = tracker.reconcile_history(current)
        except PmError as exc:
            failed.append({"id": current, "message": exc.message, "fix": exc.hint})
            continue
        if done is not None:
            repaired.append(done)
    return {
        "repaired": repaired,
        "failed": failed,
        "counts": {
            "checked": len(ids),
            "repaired": len(repaired),
            "failed": len(failed),
            "unchanged": len(ids) - len(repaired) - len(failed),
        },
    }


def _drifted(tracker: Tracker, item_id: str) -> bool:
    """A cheap pre-check (no lock) so a whole-tracker repair locks only drifted items."""
    try:
        item = tracker.get(item_id)
        entries = hist.read_entries(tracker.store.history_dir, item_id)
        return not entries or not hist.verify_chain(entries, hist.item_document(item)).ok
    except Exception:
        # Unreadable or unreplayable: let reconcile_history report it properly.
        return True


# ---------------------------------------------------------------- health


def health(tracker: Tracker) -> dict[str, Any]:
    """Workspace checks with a fix per failing check: ``{ok, checks, counts, remediation_map}``."""

    root = tracker.root
    checks: list[dict[str, Any]] = []
    remedies: dict[str, str] = {}

    def add(name: str, problems: list[str], fix: str, detail: Any = None) -> None:
        entry: dict[str, Any] = {"name": name, "ok": not problems, "problems": problems}
        if detail is not None:
            entry["detail"] = detail
        checks.append(entry)
        if problems:
            remedies[name] = fix

    try:
        load_settings(root)
        add("settings", [], "")
    except PmError as exc:
        add("settings", [exc.message], exc.hint or "fix settings.json")
    try:
        schema = load_schema(root)
        add(
            "schema",
            [],
            "",
            {
                "types": len(schema.types),
                "statuses": len(schema.statuses),
                "fields": len(schema.fields),
            },
        )
    except PmError as exc:
        add("schema", [exc.message], exc.hint or "fix the files in schema/")
    missing = [
        f"{name}/ is missing"
        for name in ("schema", "history", "locks", "runtime")
        if not (root / name).is_dir()
    ]
    add("folders", missing, "pm init (idempotent: it only creates what is missing)")
    stale: list[str] = []
    lock_count = 0
    locks_dir = root / "locks"
    for path in sorted(locks_dir.glob("*.lock")) if locks_dir.is_dir() else []:
        lock_count += 1
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        if lock_is_stale(info if isinstance(info, dict) else {}, path):
            stale.append(
                f"locks/{path.name} is stale (holder {info.get('owner', '?') if isinstance(info, dict) else '?'})"
            )
    add(
        "stale_locks",
        stale,
        "delete the stale lock files (a dead holder's lock is also taken over on the next write)",
        {"locks": lock_count},
    )
    add(
        "stray_temp_files",
        _stray_temp_files(tracker),
        "delete them: each is the unfinished write of a killed process, and the file it "
        "was meant to replace is intact (`pm validate` names any history drift)",
    )
    add(
        "runtime_writable",
        _probe_runtime(root / "runtime"),
        "make runtime/ writable (it holds rebuildable caches only)",
    )
    gitignore = root / ".gitignore"
    lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.is_file() else []
    unignored = [
        f"{entry} is not in .gitignore" for entry in ("runtime/", "locks/") if entry not in lines
    ]
    add("gitignore", unignored, "pm init (adds runtime/ and locks/ to .agents/pm/.gitignore)")
    _merge_drivers_check(tracker, add)
    counts: dict[str, Any] = {"items": 0, "corrupt": 0}
    try:
        view = build_view(tracker)
        counts = {"items": len(view.by_id), "corrupt": len(view.corrupt)}
        problems = [f"{view.relpath(p)}: {e.message}" for p, e in view.corrupt]
        add("items", problems, "pm validate --check parse names each file and its fix", counts)
    except PmError as exc:
        add("items", [exc.message], exc.hint or "fix the workspace first")
    from pm_core.tracker.gate.approvals import unapproved

    try:
        waiting = unapproved(tracker)
    except PmError:
        waiting = []  # unreadable items are the "items" check's finding
    add(
        "approved_commands",
        [f"{row['id']}: {row['command']!r} is not approved on this clone" for row in waiting],
        "read each command, then `pm test --approve --all` (it shows each one first); "
        "until then `pm test --run` refuses them",
        {"unapproved": len(waiting)},
    )
    return {
        "ok": not remedies,
        "checks": checks,
        "counts": counts,
        "remediation_map": remedies,
    }


def _merge_drivers_check(tracker: Tracker, add: Any) -> None:
    """``merge_drivers``: the clone's driver config against this installation (git only)."""
    audit = tracker.merge_driver_audit()
    if audit["status"] == "not_git":
        return
    problems = [f"{key} is not configured in this clone" for key in audit["missing"]]
    problems += [f"{key} runs a command other than this pm's driver" for key in audit["drifted"]]
    add(
        "merge_drivers",
        problems,
        "pm merge install (writes the clone-local driver config; idempotent)",
        {"status": audit["status"], "other_pm": audit["foreign"]},
    )


#: A temp file older than this is no writer's work in progress (writes take milliseconds).
STRAY_TEMP_SECONDS = 60.0


def _stray_temp_files(tracker: Tracker) -> list[str]:
    """Temp files (``.<name>.<random>.tmp``) left where a write was killed before its rename."""
    import time

    root = tracker.root
    try:
        folders = [*tracker.schema.folders(), "schema", ""]
    except PmError:
        folders = ["schema", ""]
    cutoff = time.time() - STRAY_TEMP_SECONDS
    found: list[str] = []
    for folder in dict.fromkeys(folders):
        directory = root / folder if folder else root
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime > cutoff:
                    continue
            except OSError:
                continue
            rel = f"{folder}/{entry.name}" if folder else entry.name
            found.append(f"{rel} is a temp file left by an interrupted write")
    return sorted(found)


def _probe_runtime(runtime: Path) -> list[str]:
    probe = runtime / f".health-probe-{os.getpid()}"
    try:
        runtime.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        return [f"runtime/ is not writable: {exc.strerror or exc}"]
    return []
