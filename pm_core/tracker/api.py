"""The tracker SDK: :class:`Tracker`, the single authority over tracker state.

Every mutation from any door goes through it (lock, read, write a temp file,
rename, append history, unlock); reads go to the query layer, with the read
index handed in when there is one. It returns plain data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from functools import cached_property, partial, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pm_core.tracker.index import access as indexing
from pm_core.tracker.model.clock import now_iso
from pm_core.tracker.model.errors import (
    ConflictError,
    CorruptItemError,
    DependencyError,
    NoEffectError,
    NotFoundError,
    PmError,
    UsageError,
)
from pm_core.tracker.model.fields import SETTABLE, canonical_key, coerce_fields, parse_dependency
from pm_core.tracker.model.item import Item, document_hash, item_from_record, normalize_status
from pm_core.tracker.storage.faults import checkpoint
from pm_core.tracker.storage.locks import item_lock
from pm_core.tracker.storage.store import Store, normalize_id
from pm_core.tracker.storage.workspace import (
    Schema,
    find_root,
    init_workspace,
    load_schema,
    load_settings,
    require_root,
)

if TYPE_CHECKING:
    from datetime import datetime

    from pm_core.contracts import CommandSpec
    from pm_core.tracker.query.indexed import IndexedReads
    from pm_core.tracker.storage import history as hist

Receipt = dict[str, Any]
HIERARCHY_KINDS = ("parent", "child")
LOG_KINDS = ("comments", "notes", "learnings")
LINK_KINDS = ("files", "docs")


def _given(**values: Any) -> dict[str, Any]:
    """The keywords a caller gave (not None), so the callee's own defaults apply to the rest."""
    return {k: v for k, v in values.items() if v is not None}


def resolve_author(
    explicit: str | None,
    settings: Mapping[str, Any],
    env: Mapping[str, str],
    git_name: Callable[[], str | None] = lambda: None,
) -> str:
    """``--author`` > ``PM_AUTHOR`` > settings ``author_default`` > git's ``user.name`` > ``unknown``."""
    for candidate in (explicit, env.get("PM_AUTHOR"), settings.get("author_default")):
        if candidate and str(candidate).strip():
            return str(candidate).strip()
    return git_name() or "unknown"


def git_user_name(repo: Path) -> str | None:
    """``git config user.name`` as seen from ``repo`` (None without git or a name).

    Read from the config files when they settle it (no process); else git is asked.
    """
    from pm_core.tracker.storage.gitconfig import user_name

    known = user_name(str(repo))
    if known is not None:
        return known or None
    import subprocess

    try:
        done = subprocess.run(
            ["git", "config", "user.name"],
            cwd=repo if repo.is_dir() else None,
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = done.stdout.strip() if done.returncode == 0 else ""
    return name or None


F = TypeVar("F", bound=Callable[..., Any])


def noop_ok(method: F) -> F:
    """A single-item write that finds nothing to do answers, it does not fail.

    The exit-code contract keeps 6 (no effect) for the bulk commands: a repeat
    of a single-item command (close again, release again, the status it
    already has) is a success with ``changed_field_count: 0`` and the
    :class:`NoEffectError`'s ``noop_*`` code in ``warnings``, so scripts under
    ``set -e`` keep going. Bulk commands call :meth:`Tracker.update` and
    friends and read that code to count no-ops.
    """

    @wraps(method)
    def answer(self: Tracker, first: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, first, *args, **kwargs)
        except NoEffectError as exc:
            return self.noop_receipt(first, exc)

    return cast(F, answer)


class Tracker:
    """A tracker bound to one ``.agents/pm`` root and one author."""

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        author: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.root = _resolve_root(root) if root else find_root(cwd, self.env)
        self._explicit_author = author
        self._git_names: list[str | None] = []  # git's user.name, once looked up
        #: Hooks run after every committed write (the read index subscribes).
        self.after_write: list[Callable[[Item | None, str, Path | None], None]] = [
            partial(indexing.after_write, self)
        ]

    # ------------------------------------------------------------ workspace

    @cached_property
    def settings(self) -> dict[str, Any]:
        """Settings merged over the defaults."""
        return load_settings(require_root(self.root))

    @cached_property
    def schema(self) -> Schema:
        """Built-in plus custom types, statuses and fields."""
        return load_schema(self.root)

    @cached_property
    def store(self) -> Store:
        """File access for this root."""
        require_root(self.root)
        return Store(self.root, self.schema)

    @cached_property
    def index_reads(self) -> IndexedReads:
        """What the query layer may ask the read index (each answer may be None: scan)."""
        return indexing.IndexReads(self)

    @property
    def author(self) -> str:
        """The author recorded on mutations."""
        return resolve_author(self._explicit_author, self.settings, self.env, self._git_name)

    def _git_name(self) -> str | None:
        """git's ``user.name`` for this repository, asked once per tracker."""
        if not self._git_names:
            self._git_names.append(git_user_name(self.root.parent.parent))
        return self._git_names[0]

    @property
    def prefix(self) -> str:
        """The id prefix (``pm-`` by default)."""
        return str(self.settings.get("id_prefix") or "pm-")

    def reload(self) -> None:
        """Forget cached settings and schema (after config or schema changes)."""
        for name in ("settings", "schema", "store"):
            self.__dict__.pop(name, None)

    def init(self, prefix: str | None = None, *, merge_fence: bool = True) -> dict[str, Any]:
        """Create the tracker (idempotent); inside a git worktree also install the merge drivers."""
        result = init_workspace(self.root, prefix=prefix)
        self.reload()
        if merge_fence:
            from pm_core.tracker.merge.install import init_fence

            fence = init_fence(self.root, self.schema.folders())
            if fence is not None:
                result["merge_fence"] = fence
        return result

    def normalize_id(self, raw: str) -> str:
        """Canonical id from user input."""
        return normalize_id(raw, self.prefix)

    # ------------------------------------------------------------ reading

    def get(self, item_id: str) -> Item:
        """One item by id."""
        item, _ = self.store.read(self.normalize_id(item_id))
        return item

    def exists(self, item_id: str) -> bool:
        """Whether an item file exists for ``item_id``."""
        return self.store.find_path(self.normalize_id(item_id)) is not None

    def items(self) -> list[Item]:
        """Every readable item (corrupt files are skipped; ``validate`` names them)."""
        return [item for _, item in self.scan() if isinstance(item, Item)]

    def scan(self) -> Iterator[tuple[Path, Item | CorruptItemError]]:
        """Every item file with its item or parse error (from the read index when it is on)."""
        return indexing.scan(self)

    def is_terminal(self, item: Item) -> bool:
        """Whether ``item`` is closed or canceled (by status role)."""
        return item.status in self.schema.terminal_statuses

    # ------------------------------------------------------------ write core

    @contextmanager
    def _locked(self, item_id: str) -> Iterator[None]:
        locks = self.settings.get("locks", {})
        with item_lock(
            self.store.locks_dir,
            item_id,
            self.author,
            ttl_seconds=int(locks.get("ttl_seconds", 1800)),
            wait_ms=int(locks.get("wait_ms", 3000)),
        ):
            checkpoint("locked")
            yield

    def _commit(
        self,
        before: Item | None,
        after: Item,
        path: Path,
        op: str,
        message: str | None = None,
    ) -> None:
        """Write ``after`` and append its history entry (caller holds the lock)."""
        from pm_core.tracker.storage import history as hist

        before_doc = hist.item_document(before)
        after_doc = hist.item_document(after)
        entry = hist.build_entry(
            ts=after.updated_at,
            author=self.author,
            op=op,
            before=before_doc,
            after=after_doc,
            message=message,
        )
        if path.exists() and before is not None:
            current = self.store.read_path(path)
            if current.content_hash() != before.content_hash():
                raise ConflictError(f"{after.id} changed while it was being updated; retry")
        hist.refuse_symlink(self.store.history_dir, after.id)  # before any file changes
        if before is not None:
            gap = hist.drift_entry(
                self.store.history_dir, after.id, before_doc, ts=now_iso(), author=self.author
            )
            if gap is not None:
                hist.append_entry(self.store.history_dir, after.id, gap)
        self.store.write(after, path)
        checkpoint("renamed")
        hist.append_entry(self.store.history_dir, after.id, entry)
        checkpoint("history_appended")
        for hook in self.after_write:
            hook(after, op, path)

    def apply_change(
        self,
        item_id: str,
        op: str,
        change: Callable[[Item], None],
        *,
        message: str | Callable[[], str | None] | None = None,
        allow_no_effect: bool = False,
    ) -> tuple[Item, Item]:
        """Lock, read, mutate a copy, commit. Returns (before, after).

        ``message`` may be a callable, asked after ``change`` ran: a claim only
        learns under the lock whether it took a lease over.
        """
        item_id = self.normalize_id(item_id)
        with self._locked(item_id):
            before, path = self.store.read(item_id)
            after = before.copy()
            change(after)
            if after.to_record() == before.to_record():
                if allow_no_effect:
                    return before, before
                raise NoEffectError(
                    f"{item_id}: nothing to change",
                    hint="the item already matches",
                    warning="noop_no_update_fields" if op == "update" else "noop_no_change",
                )
            after.updated_at = now_iso()
            if after.claim_expires_at:  # a lease the write may extend
                from pm_core.tracker.claims import flows as claiming

                claiming.renew_on_write(self, after, op)
            self._check_ownership(before, op)
            new_path = self.store.item_path(after.id, after.type)
            self._commit(before, after, path, op, message() if callable(message) else message)
            if new_path != path:
                self.store.write(after, new_path)
                path.unlink()
            return before, after

    def _check_ownership(self, item: Item, op: str) -> None:
        mode = str(self.settings.get("governance", {}).get("ownership_enforcement", "none"))
        if mode != "strict" or op in ("claim", "release", "close", "reopen"):
            return
        holder = item.claim_principal or item.assignee
        if holder and holder != self.author:
            raise ConflictError(
                f"{item.id} is claimed by {holder}",
                hint="claim it with --force or ask the holder to release it",
            )

    def noop_receipt(self, item_id: str, exc: NoEffectError) -> Receipt:
        """The answer of a single-item write that changed nothing (see :func:`noop_ok`)."""
        out: Receipt = {}
        try:
            item = self.get(item_id)
        except PmError:
            out["key"] = item_id  # a setting, not an item
        else:
            out.update(id=item.id, status=item.status)
        out.update(
            changed_fields=[], changed_field_count=0, warnings=[exc.warning], noop=exc.message
        )
        return out

    @staticmethod
    def receipt(before: Item | None, after: Item, **extra: Any) -> Receipt:
        """The small mutation receipt: id, status, changed fields."""
        old = before.to_record() if before else {}
        new = after.to_record()
        changed = sorted(
            k for k in set(old) | set(new) if old.get(k) != new.get(k) and k != "updated_at"
        )
        out: Receipt = {
            "id": after.id,
            "status": after.status,
            "changed_fields": changed,
            "changed_field_count": len(changed),
        }
        out.update({k: v for k, v in extra.items() if v not in (None, [], {})})
        return out

    # ------------------------------------------------------------ create & update

    def create(
        self,
        values: Mapping[str, Any],
        *,
        allow_unresolved_deps: bool = False,
        message: str | None = None,
    ) -> Receipt:
        """Create an item from field values (title required)."""
        fields = coerce_fields(values, self.schema, self.author, "create")
        title = str(fields.pop("title", "") or "").strip()
        if not title:
            raise UsageError("a title is required", hint='pass --title "..."')
        type_name = fields.pop("type", None) or "Task"
        type_def = self.schema.type_by_name(type_name)
        status = fields.pop("status", None) or type_def.default_status
        if status in self.schema.terminal_statuses:
            raise UsageError(
                f"cannot create an item as {status}", hint="create it open, then `pm close` it"
            )
        now = now_iso()
        item_id = self.store.new_id(self.prefix, int(self.settings.get("id_token_length", 4)))
        item = Item(
            id=item_id,
            title=title,
            type=type_def.name,
            status=status,
            created_at=now,
            updated_at=now,
            author=self.author,
        )
        self._set_fields(item, fields, allow_unresolved_deps)
        with self._locked(item_id):
            path = self.store.item_path(item_id, item.type)
            self._commit(None, item, path, "create", message)
        return self.receipt(None, item)

    def _set_fields(self, item: Item, fields: Mapping[str, Any], allow_unresolved: bool) -> None:
        for key, value in fields.items():
            if key == "dependencies":
                for dep in value:
                    self._add_dependency(item, dep, allow_unresolved)
                continue
            if key == "parent" and value:
                value = self._require_target(str(value), allow_unresolved)
                self._check_hierarchy(item.id, value)
            if key == "tests" and value:
                # Setting tests links commands: the same gate as ``test_add``.
                from pm_core.tracker.gate.execution import check_linking

                for test in value if isinstance(value, list) else [value]:
                    command = test.get("command") if isinstance(test, Mapping) else test
                    check_linking(str(command))
            item.set_field(key, value)

    def _require_target(self, raw: str, allow_unresolved: bool) -> str:
        target = self.normalize_id(raw)
        if not allow_unresolved and not self.exists(target):
            raise DependencyError(
                f"dependency target {target} does not exist",
                hint="create it first, or pass --allow-unresolved-deps",
            )
        return target

    def _add_dependency(self, item: Item, dep: Mapping[str, Any], allow_unresolved: bool) -> None:
        target = self._require_target(str(dep["id"]), allow_unresolved)
        if target == item.id:
            raise DependencyError(f"{item.id} cannot depend on itself")
        kind = str(dep["kind"])
        if kind in HIERARCHY_KINDS or kind in ("blocked_by", "blocks"):
            self._check_cycle(item, target, kind)
        if any(d.get("id") == target and d.get("kind") == kind for d in item.dependencies):
            return
        entry = dict(dep)
        entry["id"] = target
        item.dependencies.append(entry)

    def _edges(self, kinds: Sequence[str]) -> dict[str, set[str]]:
        """Directed edges "a waits on b" (blocked_by) or "a is child of b" (hierarchy)."""
        edges: dict[str, set[str]] = {}
        for other in self.items():
            for d in other.dependencies:
                kind = d.get("kind")
                target = str(d.get("id"))
                if kind not in kinds:
                    continue
                if kind in ("blocked_by", "parent"):
                    edges.setdefault(other.id, set()).add(target)
                else:  # blocks / child: the inverse direction
                    edges.setdefault(target, set()).add(other.id)
            if "parent" in kinds and other.parent:
                edges.setdefault(other.id, set()).add(other.parent)
        return edges

    def _check_cycle(self, item: Item, target: str, kind: str) -> None:
        family = ("parent", "child") if kind in HIERARCHY_KINDS else ("blocked_by", "blocks")
        edges = self._edges(family)
        src, dst = (item.id, target) if kind in ("blocked_by", "parent") else (target, item.id)
        # Adding src -> dst closes a cycle if dst already reaches src.
        if _reaches(edges, dst, src):
            raise DependencyError(
                f"adding {item.id} {kind} {target} would create a cycle",
                hint="remove one of the existing links first (`pm deps <id>` shows them)",
            )

    def _check_hierarchy(self, item_id: str, parent: str) -> None:
        if parent == item_id:
            raise DependencyError(f"{item_id} cannot be its own parent")
        if _reaches(self._edges(("parent", "child")), parent, item_id):
            raise DependencyError(
                f"making {parent} the parent of {item_id} would create a cycle",
                hint="pick a parent outside this item's subtree",
            )

    @noop_ok
    def update(
        self,
        item_id: str,
        values: Mapping[str, Any] | None = None,
        *,
        unset: Sequence[str] = (),
        add_tags: Sequence[str] = (),
        remove_tags: Sequence[str] = (),
        remove_deps: Sequence[str] = (),
        allow_unresolved_deps: bool = False,
        message: str | None = None,
    ) -> Receipt:
        """Change fields. ``status`` closed/canceled is routed through :meth:`close`."""
        fields = coerce_fields(values or {}, self.schema, self.author, "update")
        if not (fields or unset or add_tags or remove_tags or remove_deps):
            self.get(item_id)  # a missing item is "not found", not a no-op
            raise NoEffectError(
                f"{self.normalize_id(item_id)}: no field to change was given",
                hint="pass a field, e.g. --status, --title, --add-tag",
                warning="noop_no_update_fields",
            )
        status = fields.get("status")
        if status in self.schema.terminal_statuses:
            reason = fields.pop("close_reason", None) or message
            fields.pop("status")
            if fields or unset or add_tags or remove_tags or remove_deps:
                self.update(
                    item_id,
                    fields,
                    unset=unset,
                    add_tags=add_tags,
                    remove_tags=remove_tags,
                    remove_deps=remove_deps,
                    allow_unresolved_deps=allow_unresolved_deps,
                )
            return self.close(item_id, str(reason or ""), status=str(status))
        for key in unset:
            name = canonical_key(key)
            if name not in SETTABLE and self.schema.field(name) is None:
                raise UsageError(f"cannot unset {key!r}", hint="unset optional or custom fields")
            if name in ("title", "type", "status", "priority"):
                raise UsageError(f"{name} is required and cannot be unset")

        def change(item: Item) -> None:
            if item.status in self.schema.terminal_statuses and "status" in fields:
                raise UsageError(
                    f"{item.id} is {item.status}", hint=f"reopen it first: `pm reopen {item.id}`"
                )
            self._set_fields(item, fields, allow_unresolved_deps)
            for key in unset:
                item.set_field(canonical_key(key), None)
            if add_tags or remove_tags:
                tags = (set(item.tags) | {t for t in add_tags if t}) - set(remove_tags)
                item.tags = sorted(tags)
            for raw in remove_deps:
                spec = parse_dependency(raw, self.author)
                target = self.normalize_id(spec["id"])
                kind = spec["kind"] if ":" in raw or "kind=" in raw else None
                kept = [
                    d
                    for d in item.dependencies
                    if not (d.get("id") == target and (kind is None or d.get("kind") == kind))
                ]
                if len(kept) == len(item.dependencies):
                    raise NotFoundError(f"{item.id} has no dependency on {target}")
                item.dependencies = kept

        before, after = self.apply_change(item_id, "update", change, message=message)
        return self.receipt(before, after)

    # ------------------------------------------------------------ lifecycle

    @noop_ok
    def close(
        self,
        item_id: str,
        reason: str = "",
        *,
        duplicate_of: str | None = None,
        resolution: str | None = None,
        canceled: bool = False,
        completed_at: str | None = None,
        status: str | None = None,
    ) -> Receipt:
        """Close (or cancel) with a reason; unblock dependents whose blockers are all done.

        ``status``: the terminal status to end in (any status with the terminal
        role in the schema, such as a custom ``wontfix``); without it the status
        with the ``default_close`` role, or ``default_cancel`` when ``canceled``.
        """
        text = (reason or duplicate_of or resolution or "").strip()
        governance = self.settings.get("governance", {})
        if not text and governance.get("require_close_reason", True):
            raise UsageError(
                "closing requires a reason",
                hint='pass it: `pm close <id> "what was done and the evidence"`',
            )
        if duplicate_of:
            duplicate_of = self._require_target(duplicate_of, False)
        schema = self.schema
        if status is not None:
            try:
                target_status = normalize_status(status, schema.status_names)
            except ValueError as exc:
                raise UsageError(str(exc), hint="add it with `pm schema add status`") from None
            if target_status not in schema.terminal_statuses:
                raise UsageError(
                    f"{target_status!r} is not a terminal status",
                    hint="close into one of: " + ", ".join(sorted(schema.terminal_statuses)),
                )
        elif canceled:
            target_status = schema.status_with_role("default_cancel", "canceled")
        else:
            target_status = schema.status_with_role("default_close", "closed")

        def change(item: Item) -> None:
            if item.status in self.schema.terminal_statuses:
                raise NoEffectError(
                    f"{item.id} is already {item.status}", warning="noop_already_terminal"
                )
            now = now_iso()
            item.status = target_status
            item.close_reason = text or None
            item.closed_at = now
            item.completed_at = completed_at or now
            if duplicate_of:
                item.duplicate_of = duplicate_of
            if resolution:
                item.resolution = resolution
            item.claim_expires_at = None

        op = "close"
        before, after = self.apply_change(item_id, op, change, message=text or None)
        unblocked = self._auto_unblock(after.id)
        return self.receipt(before, after, auto_unblocked=unblocked)

    def _auto_unblock(self, closed_id: str) -> list[str]:
        """Move blocked dependents to open when all their blockers are terminal."""
        everything = {i.id: i for i in self.items()}
        released: list[str] = []
        for other in everything.values():
            if other.status != "blocked":
                continue
            blockers = blockers_of(other, everything.values())
            if closed_id not in blockers:
                continue
            if all(b in everything and self.is_terminal(everything[b]) for b in blockers) and not (
                other.blocked_by and other.blocked_by not in blockers
            ):

                def change(item: Item) -> None:
                    item.status = "open"

                self.apply_change(
                    other.id,
                    "update",
                    change,
                    message=f"auto-unblocked: {closed_id} closed",
                    allow_no_effect=True,
                )
                released.append(other.id)
        return released

    @noop_ok
    def reopen(self, item_id: str, *, message: str | None = None) -> Receipt:
        """Reopen a terminal item; clears close reason and stamps."""

        def change(item: Item) -> None:
            if item.status not in self.schema.terminal_statuses:
                raise NoEffectError(
                    f"{item.id} is {item.status}, not closed or canceled",
                    warning="noop_not_terminal",
                )
            item.status = "open"
            item.close_reason = None
            item.closed_at = None
            item.completed_at = None

        before, after = self.apply_change(item_id, "reopen", change, message=message)
        return self.receipt(before, after)

    @noop_ok
    def claim(
        self,
        item_id: str,
        *,
        force: bool = False,
        if_available: bool = False,
        renew: bool = False,
        local: bool = False,
    ) -> Receipt:
        """Take (or, with ``renew``, extend) the claim lease for the current author.

        A live lease of someone else is a conflict (exit 4) naming the holder
        and expiry unless ``force`` (recorded as ``claim_takeover``); an expired
        one is taken without force. In ``claims.mode`` remote the lease is a
        compare-and-swap on the git remote first; ``local`` claims in the item
        file only. See :mod:`pm_core.tracker.claims.flows`.
        """
        from pm_core.tracker.claims import flows as claiming

        receipt = claiming.claim(
            self, item_id, force=force, if_available=if_available, renew=renew, local=local
        )
        if receipt.get("claimed_by") and not renew:
            waiting = self.open_blockers(str(receipt["id"]))
            if waiting:
                shown = ", ".join(f"{b} ({s})" for b, s in waiting)
                receipt.setdefault("warnings", []).append(
                    f"claim_blocked: {receipt['id']} is blocked by {shown}; "
                    "finish or unlink the blocker before the work can be done"
                )
        return receipt

    def open_blockers(self, item_id: str) -> list[tuple[str, str]]:
        """``(id, status)`` of each blocker of ``item_id`` that is not terminal (``missing``)."""
        everything = {i.id: i for i in self.items()}
        item = everything.get(self.normalize_id(item_id)) or self.get(item_id)
        out = []
        for blocker in blockers_of(item, everything.values()):
            other = everything.get(blocker)
            if other is None:
                out.append((blocker, "missing"))
            elif not self.is_terminal(other):
                out.append((blocker, other.status))
        return out

    @noop_ok
    def release(self, item_id: str, *, force: bool = False, local: bool = False) -> Receipt:
        """End the claim (only its holder, unless ``force``); remote mode deletes the lease ref."""
        from pm_core.tracker.claims import flows as claiming

        return claiming.release(self, item_id, force=force, local=local)

    def claims(
        self, *, include_expired: bool = False, fetch: bool = True, fallback: bool = False
    ) -> dict[str, Any]:
        """Live claim leases; in remote mode read from the git remote, with ``fetched_at``."""
        from pm_core.tracker.claims import flows as claiming

        return claiming.claims(
            self, include_expired=include_expired, fetch=fetch, fallback=fallback
        )

    def delete(self, item_id: str) -> Receipt:
        """Remove an item file; its history stays and records the deletion."""
        from pm_core.tracker.storage import history as hist

        item_id = self.normalize_id(item_id)
        with self._locked(item_id):
            before, path = self.store.read(item_id)
            entry = hist.build_entry(
                ts=now_iso(),
                author=self.author,
                op="delete",
                before=hist.item_document(before),
                after=hist.item_document(None),
            )
            path.unlink()
            hist.append_entry(self.store.history_dir, item_id, entry)
            for hook in self.after_write:
                hook(None, "delete", path)
        return {"id": item_id, "status": "deleted", "changed_fields": [], "changed_field_count": 0}

    def copy(self, item_id: str, *, title: str | None = None) -> Receipt:
        """Create a new open item from an existing one (no comments, history or claim)."""
        source = self.get(item_id)
        record = source.to_record()
        for key in (
            "id",
            "created_at",
            "updated_at",
            "assignee",
            "claim_principal",
            "claim_expires_at",
            "closed_at",
            "completed_at",
            "close_reason",
            "comments",
            "notes",
            "learnings",
            "test_runs",
            "author",
            "status",
        ):
            record.pop(key, None)
        record["title"] = title or f"Copy of {source.title}"
        record["dependencies"] = [{"id": d["id"], "kind": d["kind"]} for d in source.dependencies]
        return self.create(record, allow_unresolved_deps=True, message=f"copied from {source.id}")

    # ------------------------------------------------------------ collections

    def add_log(self, kind: str, item_id: str, text: str, *, data: Any = None) -> Receipt:
        """Add a comment, note or learning."""
        if kind not in LOG_KINDS:
            raise UsageError(f"unknown log kind {kind!r}")
        if not text or not text.strip():
            raise UsageError(f"empty {kind[:-1]}", hint="pass the text to add")
        op = {"comments": "comment_add", "notes": "note_add", "learnings": "learning_add"}[kind]

        def change(item: Item) -> None:
            entry: dict[str, Any] = {"created_at": now_iso(), "author": self.author, "text": text}
            if data is not None:
                entry["data"] = data
            getattr(item, kind).append(entry)

        before, after = self.apply_change(item_id, op, change)
        return self.receipt(before, after, count=len(getattr(after, kind)))

    def logs(self, kind: str, item_id: str) -> list[dict[str, Any]]:
        """The comments, notes or learnings of an item."""
        if kind not in LOG_KINDS:
            raise UsageError(f"unknown log kind {kind!r}")
        entries: list[dict[str, Any]] = getattr(self.get(item_id), kind)
        return entries

    @noop_ok
    def append(self, item_id: str, text: str) -> Receipt:
        """Append a paragraph to the body."""
        if not text:
            raise UsageError("nothing to append", hint="pass the text")

        def change(item: Item) -> None:
            item.body = f"{item.body.rstrip()}\n\n{text}".lstrip() if item.body else text

        before, after = self.apply_change(item_id, "append", change)
        return self.receipt(before, after)

    @noop_ok
    def link(
        self, kind: str, item_id: str, path: str, *, scope: str = "project", note: str | None = None
    ) -> Receipt:
        """Link a file or doc (``kind`` files/docs); the path stays inside the repository."""
        if kind not in LINK_KINDS:
            raise UsageError(f"unknown link kind {kind!r}")
        if scope not in ("project", "global"):
            raise UsageError(f"invalid scope {scope!r}", hint="use project or global")
        if not path or "\x00" in path:
            raise UsageError("invalid path", hint="pass a path without NUL bytes")
        clean = self.safe_relpath(path) if scope == "project" else path

        def change(item: Item) -> None:
            links = getattr(item, kind)
            if any(e.get("path") == clean for e in links):
                raise NoEffectError(
                    f"{clean} is already linked to {item.id}", warning="noop_already_linked"
                )
            entry: dict[str, Any] = {"path": clean, "scope": scope}
            if note:
                entry["note"] = note
            links.append(entry)

        op = "files_add" if kind == "files" else "docs_add"
        before, after = self.apply_change(item_id, op, change)
        warnings = []
        where = self.root.parent.parent / clean if scope == "project" else Path(clean)
        if not where.expanduser().exists():
            warnings.append(
                f"path_missing: {clean} does not exist (linked anyway; create it or "
                f"`pm {kind} {after.id} --remove {clean}` if it was a typo)"
            )
        return self.receipt(before, after, warnings=warnings)

    @noop_ok
    def unlink(self, kind: str, item_id: str, path: str) -> Receipt:
        """Remove a file or doc link."""
        if kind not in LINK_KINDS:
            raise UsageError(f"unknown link kind {kind!r}")

        def change(item: Item) -> None:
            links = getattr(item, kind)
            kept = [e for e in links if e.get("path") != path]
            if len(kept) == len(links):
                raise NotFoundError(f"{path} is not linked to {item.id}")
            setattr(item, kind, kept)

        op = "files_remove" if kind == "files" else "docs_remove"
        before, after = self.apply_change(item_id, op, change)
        return self.receipt(before, after)

    def safe_relpath(self, raw: str) -> str:
        """A repository-relative path that cannot escape the repository."""
        if not raw or "\x00" in raw:
            raise UsageError("invalid path", hint="pass a path inside the repository")
        repo = self.root.parent.parent
        candidate = Path(raw)
        try:
            full = (candidate if candidate.is_absolute() else repo / candidate).resolve()
        except (OSError, RuntimeError):  # a symlink loop, or a name the OS refuses
            raise UsageError(
                f"path {raw!r} cannot be resolved (a symbolic link loop?)",
                hint="link a real path inside the repository",
            ) from None
        try:
            rel = full.relative_to(repo.resolve())
        except ValueError:
            raise UsageError(
                f"path {raw!r} is outside the repository",
                hint="link files inside the repository, or use scope=global",
            ) from None
        return rel.as_posix()

    # ------------------------------------------------------------ dependencies

    @noop_ok
    def add_dependency(
        self, item_id: str, target: str, kind: str = "blocked_by", *, allow_unresolved: bool = False
    ) -> Receipt:
        """Add a typed dependency (aliases canonicalised, cycles rejected)."""
        dep = parse_dependency(f"{target}:{kind}" if ":" not in target else target, self.author)

        def change(item: Item) -> None:
            self._add_dependency(item, dep, allow_unresolved)

        before, after = self.apply_change(
            item_id, "update", change, message=f"dependency {dep['kind']}"
        )
        return self.receipt(before, after)

    @noop_ok
    def remove_dependency(self, item_id: str, target: str, kind: str | None = None) -> Receipt:
        """Remove a dependency (of any kind, or of ``kind``)."""
        spec = f"{target}:{kind}" if kind else target
        return self.update(item_id, remove_deps=[spec])

    # ------------------------------------------------------------ history

    def history(self, item_id: str) -> list[hist.HistoryEntry]:
        """An item's history entries, oldest first (also for deleted items)."""
        from pm_core.tracker.storage import history as hist

        item_id = self.normalize_id(item_id)
        entries = hist.read_entries(self.store.history_dir, item_id)
        if not entries and not self.exists(item_id):
            raise NotFoundError(f"item {item_id} not found and has no history")
        return entries

    def version(self, item_id: str, ref: str) -> Item:
        """The item as it was at version ``ref`` (number or timestamp)."""
        from pm_core.tracker.storage import history as hist

        entries = self.history(item_id)
        count = hist.version_index(entries, ref)
        document = hist.replay(entries, count)
        if not document["metadata"]:
            raise NotFoundError(f"{item_id} did not exist at version {ref}")
        return item_from_record({**document["metadata"], "body": document["body"]})

    @noop_ok
    def restore(self, item_id: str, ref: str) -> Receipt:
        """Rebuild an item at ``ref`` by replay and append a ``restore`` entry."""
        from pm_core.tracker.storage import history as hist

        item_id = self.normalize_id(item_id)
        target = self.version(item_id, ref)
        with self._locked(item_id):
            path = self.store.find_path(item_id)
            before: Item | None = None
            if path is not None:
                try:
                    before = self.store.read_path(path)
                except CorruptItemError:
                    before = None
            restored = target.copy()
            restored.updated_at = now_iso()
            new_path = self.store.item_path(item_id, restored.type)
            base = before
            if base is None:
                # Chain from the last recorded state so verification still holds.
                entries = hist.read_entries(self.store.history_dir, item_id)
                document = hist.replay(entries)
                base = (
                    item_from_record({**document["metadata"], "body": document["body"]})
                    if document["metadata"]
                    else None
                )
            entry = hist.build_entry(
                ts=restored.updated_at,
                author=self.author,
                op="restore",
                before=hist.item_document(base),
                after=hist.item_document(restored),
                message=f"restored to {ref}",
            )
            if path is not None and path != new_path:
                path.unlink()
            self.store.write(restored, new_path)
            hist.append_entry(self.store.history_dir, item_id, entry)
            for hook in self.after_write:
                hook(restored, "restore", new_path)
        return self.receipt(before, restored, restored_from=ref)

    # ------------------------------------------------------------ transactions

    def mutate(self, mutations: Sequence[Mapping[str, Any]], *, dry_run: bool = False) -> Receipt:
        """Apply several mutations as one transaction: all or nothing.

        Each mutation is ``{op, id, options}`` with op in create, update, close,
        reopen, claim, release, comment, note, learning, append, link, dep.
        On failure every file written so far is put back and the history
        lines appended are removed.
        """
        if not mutations:
            raise UsageError("no mutations given", hint="pass a list of {op, id, options}")
        snapshot = _Snapshot(self)
        results: list[Receipt] = []
        try:
            with ExitStack():
                for number, mutation in enumerate(mutations, start=1):
                    try:
                        results.append(self._one_mutation(mutation, snapshot))
                    except PmError as exc:
                        exc.message = f"mutation {number} ({mutation.get('op')}): {exc.message}"
                        raise
            if dry_run:
                snapshot.rollback()
        except BaseException:
            snapshot.rollback()
            raise
        return {"applied": not dry_run, "dry_run": dry_run, "results": results}

    def select(
        self, ids: Sequence[str] = (), filters: Mapping[str, Any] | None = None
    ) -> list[str]:
        """Ids of the items a bulk command works on: ``ids`` and/or ``list`` filters.

        Without ids or filters nothing is selected (a bulk write over the whole
        tracker is asked for with an explicit filter, e.g. ``status=open``).
        """
        given = {k: v for k, v in (filters or {}).items() if v not in (None, (), [], "", False)}
        if not ids and not given:
            raise UsageError(
                "no items selected",
                hint="pass --ids or a filter such as --status, --type, --tag, --parent",
            )
        chosen = [self.normalize_id(i) for i in ids]
        for item_id in chosen:
            self.get(item_id)  # a missing id is "not found" before anything is written
        if given:
            listed = self.list_items(**given, limit=None)["items"]
            found = {str(r["id"]) for r in listed}
            chosen = [i for i in chosen if i in found] if ids else sorted(found)
        return list(dict.fromkeys(chosen))

    def bulk(
        self, item_ids: Sequence[str], write: Callable[[str], Receipt], *, dry_run: bool = False
    ) -> dict[str, Any]:
        """Apply ``write`` to each item, all or nothing; the effect envelope of a bulk command.

        ``outcome`` is ``effect`` (exit 0) when every item changed, ``partial_effect``
        (7) when some found nothing to do, ``no_effect`` (6) when none changed or
        nothing matched. Any error puts every file back and is raised; ``dry_run``
        puts them back after computing the rows.
        """
        snapshot = _Snapshot(self)
        snapshot.remember_many(item_ids)
        rows: list[Receipt] = []
        try:
            for item_id in item_ids:
                try:
                    rows.append(write(item_id))
                except PmError as exc:
                    exc.message = f"{item_id}: {exc.message} (nothing was changed)"
                    raise
            if dry_run:
                snapshot.rollback()
        except BaseException:
            snapshot.rollback()
            raise
        changed = [r for r in rows if r.get("changed_field_count")]
        if not rows or not changed:
            outcome, code = "no_effect", 6
        elif len(changed) < len(rows):
            outcome, code = "partial_effect", 7
        else:
            outcome, code = "effect", 0
        return {
            "outcome": outcome,
            "exit_code": code,
            "dry_run": dry_run,
            "applied": not dry_run and bool(changed),
            "matched_count": len(rows),
            "updated_count": len(changed),
            "unchanged_count": len(rows) - len(changed),
            "rows": rows,
        }

    def update_many(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        ids: Sequence[str] = (),
        filters: Mapping[str, Any] | None = None,
        add_tags: Sequence[str] = (),
        remove_tags: Sequence[str] = (),
        message: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`update` of every selected item as one all-or-nothing step (``pm update-many``)."""
        chosen = self.select(ids, filters)

        def write(item_id: str) -> Receipt:
            return self.update(
                item_id, values, add_tags=add_tags, remove_tags=remove_tags, message=message
            )

        return self.bulk(chosen, write, dry_run=dry_run)

    def close_many(
        self,
        reason: str,
        *,
        ids: Sequence[str] = (),
        filters: Mapping[str, Any] | None = None,
        canceled: bool = False,
        status: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """:meth:`close` of every selected item as one all-or-nothing step (``pm close-many``)."""
        chosen = self.select(ids, filters)

        def write(item_id: str) -> Receipt:
            return self.close(item_id, reason, canceled=canceled, status=status)

        return self.bulk(chosen, write, dry_run=dry_run)

    def _one_mutation(self, mutation: Mapping[str, Any], snapshot: _Snapshot) -> Receipt:
        op = str(mutation.get("op", "")).strip()
        options = dict(mutation.get("options") or {})
        raw_id = mutation.get("id")
        if op != "create":
            if not raw_id:
                raise UsageError("missing id")
            snapshot.remember(self.normalize_id(str(raw_id)))
        item_id = str(raw_id or "")
        if op == "create":
            receipt = self.create(options)
            snapshot.created(receipt["id"])
            return receipt
        if op == "update":
            return self.update(item_id, options)
        if op == "close":
            return self.close(item_id, str(options.get("reason", "")))
        if op == "reopen":
            return self.reopen(item_id)
        if op == "claim":
            return self.claim(item_id, force=bool(options.get("force")))
        if op == "release":
            return self.release(item_id, force=bool(options.get("force")))
        if op in ("comment", "note", "learning"):
            return self.add_log(op + "s", item_id, str(options.get("text", "")))
        if op == "append":
            return self.append(item_id, str(options.get("text", "")))
        if op == "dep":
            return self.add_dependency(
                item_id, str(options.get("target", "")), str(options.get("kind", "blocked_by"))
            )
        raise UsageError(
            f"unknown mutation op {op!r}",
            hint="use create, update, close, reopen, claim, release, comment, note, "
            "learning, append or dep",
        )

    # --- extension points used by sdk modules
    # Small, generic write doors for the read-side and analysis modules
    # (plan, test runs, history repair): they reuse the lock/commit path above
    # instead of writing files themselves.

    def edit(
        self,
        item_id: str,
        op: str,
        change: Callable[[Item], None],
        *,
        message: str | None = None,
        allow_no_effect: bool = False,
    ) -> Receipt:
        """Apply ``change`` to a copy of the item under its lock and record it as ``op``."""
        before, after = self.apply_change(
            item_id, op, change, message=message, allow_no_effect=allow_no_effect
        )
        return self.receipt(before, after)

    def reconcile_history(
        self, item_id: str, *, message: str | None = None
    ) -> dict[str, Any] | None:
        """Make history end where the item file is, when they disagree.

        A hand edit, or a crash between the file rename and the history append,
        leaves a file that its history's replay does not reproduce. The file is
        the newer truth: append a ``history_repair`` entry whose patch goes from
        the replayed state to the file. Returns what was done, or None when the
        history already matches.
        """
        from pm_core.tracker.storage import history as hist

        item_id = self.normalize_id(item_id)
        with self._locked(item_id):
            item, path = self.store.read(item_id)
            entries = hist.read_entries(self.store.history_dir, item_id)
            try:
                replayed = hist.replay(entries)
            except Exception as exc:  # jsonpatch raises several error types
                raise CorruptItemError(
                    f"history of {item_id} cannot be replayed: {exc}",
                    hint="restore history/<id>.jsonl from git; the item file is untouched",
                ) from exc
            current = hist.item_document(item)
            if document_hash(replayed) == document_hash(current):
                return None
            reason = "no history" if not entries else "item file differs from its history"
            entry = hist.build_entry(
                ts=now_iso(),
                author=self.author,
                op="history_repair",
                before=replayed,
                after=current,
                message=message or reason,
            )
            hist.append_entry(self.store.history_dir, item_id, entry)
            for hook in self.after_write:
                hook(item, "history_repair", path)
        return {
            "id": item_id,
            "reason": reason,
            "entries_before": len(entries),
            "patch_operations": len(entry.patch),
        }

    # --- read-side and analysis operations (thin delegates to sdk modules)
    # Each imports its module on first call: `pm --version` must stay fast.

    def list_items(
        self,
        *,
        status: str | Sequence[str] | None = None,
        type: str | Sequence[str] | None = None,
        tags: Sequence[str] = (),
        assignee: str | None = None,
        parent: str | None = None,
        include_terminal: bool = False,
        priority: int | str | Sequence[int | str] | None = None,
        fields: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        sort: str = "default",
        field_filters: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Filtered rows; see :func:`pm_core.tracker.query.listing.list_items`."""
        from pm_core.tracker.query.listing import list_items

        return list_items(
            self,
            status=status,
            type=type,
            tags=tags,
            assignee=assignee,
            parent=parent,
            include_terminal=include_terminal,
            priority=priority,
            fields=fields,
            limit=limit,
            offset=offset,
            sort=sort,
            field_filters=field_filters,
        )

    def search(
        self,
        query: str,
        *,
        mode: str = "keyword",
        match: str = "or",
        limit: int = 50,
        min_score: float = 0.0,
        include_terminal: bool = True,
        filters: Mapping[str, str | Sequence[str]] | None = None,
    ) -> dict[str, Any]:
        """Ranked hits; see :func:`pm_core.tracker.query.search.search`."""
        from pm_core.tracker.query.search import search

        return search(
            self,
            query,
            mode=mode,
            match=match,
            limit=limit,
            min_score=min_score,
            include_terminal=include_terminal,
            filters=filters,
        )

    def next_items(
        self,
        *,
        limit: int = 5,
        parent: str | None = None,
        ready_only: bool = False,
        include_decisions: bool = False,
        token_budget: int | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """What to do next; see :func:`pm_core.tracker.query.ranking.next_items`."""
        from pm_core.tracker.query.ranking import next_items

        return next_items(
            self,
            limit=limit,
            parent=parent,
            ready_only=ready_only,
            include_decisions=include_decisions,
            token_budget=token_budget,
            now=now,
        )

    def claim_next(
        self,
        *,
        limit: int = 5,
        parent: str | None = None,
        ready_only: bool = False,
        include_decisions: bool = False,
        token_budget: int | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """``next`` and a claim of what it recommends, as one step (``pm next --claim``).

        The claim is the lease test-and-set of :meth:`claim` (same lease rules,
        no ``--force``): when another author claims the recommended item between
        the ranking and the lease, the next ready item is tried, so two agents
        running this at once never get the same item. ``claimed`` is the claim
        receipt, or ``None`` with a ``nothing_to_claim`` warning.
        """
        result = self.next_items(
            limit=limit,
            parent=parent,
            ready_only=ready_only,
            include_decisions=include_decisions,
            token_budget=token_budget,
            now=now,
        )
        candidates = [result.get("recommended"), *(result.get("ready") or [])]
        ids = list(dict.fromkeys(str(c["id"]) for c in candidates if isinstance(c, Mapping)))
        skipped: list[str] = []
        for item_id in ids:
            receipt = self.claim(item_id, if_available=True)
            if receipt.get("skipped"):
                skipped.append(item_id)
                continue
            out = {**result, "claimed": receipt}
            if skipped:
                out["skipped"] = skipped
            return out
        warning = "nothing_to_claim: no ready item is free to claim"
        return {**result, "claimed": None, "skipped": skipped, "warnings": [warning]}

    def context(
        self,
        *,
        depth: str = "brief",
        limit: int = 10,
        parent: str | None = None,
        token_budget: int | None = None,
        section: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Working context; see :func:`pm_core.tracker.query.ranking.context`."""
        from pm_core.tracker.query.ranking import context

        return context(
            self,
            depth=depth,
            limit=limit,
            parent=parent,
            token_budget=token_budget,
            section=section,
            now=now,
        )

    def graph(
        self,
        subcommand: str,
        item_id: str | None = None,
        target: str | None = None,
        *,
        depth: int | None = None,
        max_nodes: int | None = None,
        max_edges: int | None = None,
    ) -> dict[str, Any]:
        """Graph analysis; see :func:`pm_core.tracker.query.graph.graph`.

        A bound left as None takes the graph module's default.
        """
        from pm_core.tracker.query.graph import graph

        bounds = _given(depth=depth, max_nodes=max_nodes, max_edges=max_edges)
        return graph(self, subcommand, item_id, target, **bounds)

    def deps_tree(
        self,
        item_id: str,
        *,
        depth: int | None = None,
        max_nodes: int | None = None,
        max_edges: int | None = None,
    ) -> dict[str, Any]:
        """The ``pm deps`` packet; see :func:`pm_core.tracker.query.graph.deps_tree`.

        A bound left as None takes the graph module's default.
        """
        from pm_core.tracker.query.graph import deps_tree

        bounds = _given(depth=depth, max_nodes=max_nodes, max_edges=max_edges)
        return deps_tree(self, item_id, **bounds)

    def get_focus(self) -> dict[str, Any]:
        """The session focus; see :mod:`pm_core.tracker.ops.focus`."""
        from pm_core.tracker.ops.focus import get_focus

        return get_focus(self)

    def set_focus(self, item_id: str) -> dict[str, Any]:
        """Focus on an item; see :mod:`pm_core.tracker.ops.focus`."""
        from pm_core.tracker.ops.focus import set_focus

        return set_focus(self, item_id)

    def clear_focus(self) -> dict[str, Any]:
        """Clear the focus; see :mod:`pm_core.tracker.ops.focus`."""
        from pm_core.tracker.ops.focus import clear_focus

        return clear_focus(self)

    def validate(self, checks: Sequence[str] | None = None) -> dict[str, Any]:
        """Integrity checks; see :func:`pm_core.tracker.query.validate.validate`."""
        from pm_core.tracker.query.validate import validate

        return validate(self, checks)

    def health(self) -> dict[str, Any]:
        """Workspace health; see :func:`pm_core.tracker.query.validate.health`."""
        from pm_core.tracker.query.validate import health

        return health(self)

    def storage_integrity(self, live_ids: set[str]) -> list[dict[str, Any]]:
        """Merge leftovers, for ``validate``; see :func:`pm_core.tracker.merge.integrity.check`."""
        from pm_core.tracker.merge.integrity import check

        return check(self, live_ids)

    def merge_driver_audit(self) -> dict[str, Any]:
        """This clone's merge driver config; see :func:`pm_core.tracker.merge.install.audit_drivers`."""
        from pm_core.tracker.merge.install import audit_drivers

        return audit_drivers(self.root)

    def repair_history(self, item_id: str | None = None) -> dict[str, Any]:
        """Reconcile drifted histories; see :func:`pm_core.tracker.query.validate.repair_history`."""
        from pm_core.tracker.query.validate import repair_history

        return repair_history(self, item_id)

    def plan_create(
        self, title: str, steps: Sequence[str], *, parent: str | None = None, description: str = ""
    ) -> Receipt:
        """Create a plan; see :func:`pm_core.tracker.ops.plan.plan_create`."""
        from pm_core.tracker.ops.plan import plan_create

        return plan_create(self, title, steps, parent=parent, description=description)

    def plan_show(self, plan_id: str) -> dict[str, Any]:
        """A plan with steps and validation; see :func:`pm_core.tracker.ops.plan.plan_show`."""
        from pm_core.tracker.ops.plan import plan_show

        return plan_show(self, plan_id)

    @noop_ok
    def plan_step(
        self, plan_id: str, step_ref: str, status: str, *, note: str | None = None
    ) -> Receipt:
        """Move a plan step; see :func:`pm_core.tracker.ops.plan.plan_step`."""
        from pm_core.tracker.ops.plan import plan_step

        return plan_step(self, plan_id, step_ref, status, note=note)

    def plan_add_step(
        self,
        plan_id: str,
        title: str,
        *,
        depends_on: Sequence[str] = (),
        note: str | None = None,
        after: str | None = None,
    ) -> Receipt:
        """Add a plan step; see :func:`pm_core.tracker.ops.plan.plan_add_step`."""
        from pm_core.tracker.ops.plan import plan_add_step

        return plan_add_step(self, plan_id, title, depends_on=depends_on, note=note, after=after)

    def plan_decision(self, plan_id: str, text: str) -> Receipt:
        """Record a plan decision; see :func:`pm_core.tracker.ops.plan.plan_decision`."""
        from pm_core.tracker.ops.plan import plan_decision

        return plan_decision(self, plan_id, text)

    @noop_ok
    def test_add(
        self,
        item_id: str,
        command: str,
        *,
        timeout_seconds: int | None = None,
        note: str | None = None,
    ) -> Receipt:
        """Link a test command; see :func:`pm_core.tracker.ops.linked_tests.test_add`.

        ``timeout_seconds`` left as None takes the module's default.
        """
        from pm_core.tracker.ops.linked_tests import test_add

        timeout = _given(timeout_seconds=timeout_seconds)
        return test_add(self, item_id, command, note=note, **timeout)

    @noop_ok
    def test_remove(self, item_id: str, command: str) -> Receipt:
        """Unlink a test command; see :func:`pm_core.tracker.ops.linked_tests.test_remove`."""
        from pm_core.tracker.ops.linked_tests import test_remove

        return test_remove(self, item_id, command)

    def test_list(self, item_id: str) -> dict[str, Any]:
        """Linked tests and recent runs; see :func:`pm_core.tracker.ops.linked_tests.test_list`."""
        from pm_core.tracker.ops.linked_tests import test_list

        return test_list(self, item_id)

    @noop_ok
    def test_run(
        self, item_id: str, *, timeout_seconds: int | float | None = None
    ) -> dict[str, Any]:
        """Run linked tests; see :func:`pm_core.tracker.ops.linked_tests.test_run`."""
        from pm_core.tracker.ops.linked_tests import test_run

        return test_run(self, item_id, timeout_seconds=timeout_seconds)

    def test_all(
        self,
        *,
        ids: Sequence[str] = (),
        filters: Mapping[str, Any] | None = None,
        timeout_seconds: int | float | None = None,
    ) -> dict[str, Any]:
        """:meth:`test_run` over every selected item that links a test command (``pm test-all``).

        Each command keeps the timeout rules of ``test --run`` (its own timeout,
        ``timeout_seconds`` overriding). Without ids or filters the open items
        are taken. Items without test commands are left out (``without_tests``).
        """
        from pm_core.tracker.ops.linked_tests import test_run

        given = dict(filters or {})
        if ids or given:
            chosen = self.select(ids, given)
        else:
            chosen = [str(r["id"]) for r in self.list_items(limit=None)["items"]]
        results = []
        without: list[str] = []
        for item_id in chosen:
            item = self.get(item_id)
            if not any(t.get("command") for t in item.tests):
                without.append(item.id)
                continue
            results.append(test_run(self, item.id, timeout_seconds=timeout_seconds))
        passed = sum(r["summary"]["passed"] for r in results)
        failed = sum(r["summary"]["failed"] for r in results)
        out: dict[str, Any] = {
            "items": results,
            "summary": {"items": len(results), "passed": passed, "failed": failed},
            "without_tests": without,
        }
        if not results:
            out["warnings"] = ["noop_no_linked_tests: no selected item links a test command"]
        return out

    def stats(self) -> dict[str, Any]:
        """Counts and open-work age; see :func:`pm_core.tracker.ops.summary.stats`."""
        from pm_core.tracker.ops.summary import stats

        return stats(self)

    def activity(self, since: str | None = "7d", limit: int = 20) -> dict[str, Any]:
        """Recent changes by item; see :func:`pm_core.tracker.ops.summary.activity`."""
        from pm_core.tracker.ops.summary import activity

        return activity(self, since=since, limit=limit)

    def config_get(self, key: str) -> dict[str, Any]:
        """One setting; see :func:`pm_core.tracker.ops.admin.config_get`."""
        from pm_core.tracker.ops.admin import config_get

        return config_get(self, key)

    @noop_ok
    def config_set(self, key: str, value: Any) -> dict[str, Any]:
        """Change one setting; see :func:`pm_core.tracker.ops.admin.config_set`."""
        from pm_core.tracker.ops.admin import config_set

        return config_set(self, key, value)

    @noop_ok
    def config_unset(self, key: str) -> dict[str, Any]:
        """Remove one setting; see :func:`pm_core.tracker.ops.admin.config_unset`."""
        from pm_core.tracker.ops.admin import config_unset

        return config_unset(self, key)

    def config_list(self) -> dict[str, Any]:
        """Every setting; see :func:`pm_core.tracker.ops.admin.config_list`."""
        from pm_core.tracker.ops.admin import config_list

        return config_list(self)

    def schema_list(self) -> dict[str, Any]:
        """Types, statuses, fields; see :func:`pm_core.tracker.ops.admin.schema_list`."""
        from pm_core.tracker.ops.admin import schema_list

        return schema_list(self)

    def schema_add(
        self,
        kind: str,
        name: str,
        *,
        folder: str | None = None,
        aliases: Sequence[str] | None = None,
        default_status: str | None = None,
        description: str | None = None,
        roles: Sequence[str] | None = None,
        field_type: str | None = None,
        commands: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Add a type, status or field; see :func:`pm_core.tracker.ops.admin.schema_add`.

        Each keyword belongs to one kind (``folder``, ``aliases``, ``default_status``:
        type; ``roles``: status; ``field_type``, ``commands``: field; ``description``:
        type and field); one given for another kind is refused.
        """
        from pm_core.tracker.ops.admin import schema_add

        given = {
            "folder": folder,
            "aliases": aliases,
            "default_status": default_status,
            "description": description,
            "roles": roles,
            "field_type": field_type,
            "commands": commands,
        }
        return schema_add(self, kind, name, **{k: v for k, v in given.items() if v is not None})

    def contracts(self, *, commands: Sequence[CommandSpec] | None = None) -> dict[str, Any]:
        """The machine contract; see :func:`pm_core.tracker.ops.admin.contracts`."""
        from pm_core.tracker.ops.admin import contracts

        return contracts(self, commands=commands)

    def events(self, since: str | None = None, limit: int = 100) -> dict[str, Any]:
        """Recent history across items; see :func:`pm_core.tracker.ops.admin.events`."""
        from pm_core.tracker.ops.admin import events

        return events(self, since, limit)


def _resolve_root(root: Path | str) -> Path:
    """``root`` made absolute; a NUL byte or a symlink loop is a usage error, not a crash."""
    if "\x00" in str(root):
        raise UsageError("tracker path contains a NUL byte", hint="pass the .agents/pm directory")
    try:
        return Path(root).resolve()
    except (OSError, RuntimeError):
        raise UsageError(
            f"tracker path {str(root)!r} cannot be resolved (a symbolic link loop?)",
            hint="pass the .agents/pm directory",
        ) from None


def _reaches(edges: Mapping[str, set[str]], start: str, goal: str) -> bool:
    seen: set[str] = set()
    stack = [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(edges.get(node, ()))
    return False


def blockers_of(item: Item, everything: Iterator[Item] | Sequence[Item] | Any) -> list[str]:
    """Ids that block ``item``: its blocked_by links and items that say they block it."""
    found = [str(d["id"]) for d in item.dependencies if d.get("kind") == "blocked_by"]
    for other in everything:
        if any(d.get("kind") == "blocks" and d.get("id") == item.id for d in other.dependencies):
            found.append(other.id)
    if item.blocked_by:
        found.append(item.blocked_by)
    return list(dict.fromkeys(found))


class _Snapshot:
    """Original bytes of files touched by a transaction, for rollback."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.files: dict[Path, bytes | None] = {}
        self.new_ids: list[str] = []

    def _keep(self, path: Path) -> None:
        if path not in self.files:
            self.files[path] = path.read_bytes() if path.exists() else None

    def remember_many(self, item_ids: Sequence[str]) -> None:
        """:meth:`remember` of many items, reading the blocked items once."""
        from pm_core.tracker.storage import history as hist

        store = self.tracker.store
        for item_id in item_ids:
            path = store.find_path(item_id)
            if path is not None:
                self._keep(path)
            self._keep(hist.history_path(store.history_dir, item_id))
        for other in self.tracker.items():
            if other.status == "blocked":
                other_path = store.find_path(other.id)
                if other_path is not None:
                    self._keep(other_path)
                self._keep(hist.history_path(store.history_dir, other.id))

    def remember(self, item_id: str) -> None:
        from pm_core.tracker.storage import history as hist

        store = self.tracker.store
        path = store.find_path(item_id)
        if path is not None:
            self._keep(path)
        self._keep(hist.history_path(store.history_dir, item_id))
        # Auto-unblock may touch other items: keep every blocked item too.
        for other in self.tracker.items():
            if other.status == "blocked":
                other_path = store.find_path(other.id)
                if other_path is not None:
                    self._keep(other_path)
                self._keep(hist.history_path(store.history_dir, other.id))

    def created(self, item_id: str) -> None:
        self.new_ids.append(item_id)

    def rollback(self) -> None:
        from pm_core.tracker.storage import history as hist
        from pm_core.tracker.storage.store import atomic_write

        store = self.tracker.store
        for item_id in self.new_ids:
            path = store.find_path(item_id)
            if path is not None:
                path.unlink()
            hist.history_path(store.history_dir, item_id).unlink(missing_ok=True)
        for path, data in self.files.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, data)
        for hook in self.tracker.after_write:
            hook(None, "rollback", None)
