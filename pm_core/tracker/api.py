"""The tracker SDK: :class:`Tracker`, the single authority over tracker state.

Every mutation from any door goes through it (lock, read, write a temp file,
rename, append history, unlock); reads go to the query layer, with the read
index handed in when there is one. It returns plain data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.claims import flows as claiming
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
from pm_core.tracker.model.item import Item, document_hash, item_from_record
from pm_core.tracker.storage import history as hist
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
    from pm_core.tracker.query.indexed import IndexedReads

Receipt = dict[str, Any]
HIERARCHY_KINDS = ("parent", "child")
LOG_KINDS = ("comments", "notes", "learnings")
LINK_KINDS = ("files", "docs")


def resolve_author(
    explicit: str | None, settings: Mapping[str, Any], env: Mapping[str, str]
) -> str:
    """``--author`` > ``PM_AUTHOR`` > settings ``author_default`` > ``unknown``."""
    for candidate in (explicit, env.get("PM_AUTHOR"), settings.get("author_default")):
        if candidate and str(candidate).strip():
            return str(candidate).strip()
    return "unknown"


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
        return resolve_author(self._explicit_author, self.settings, self.env)

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
                    f"{item_id}: nothing to change", hint="the item already matches"
                )
            after.updated_at = now_iso()
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
            return self.close(item_id, str(reason or ""), canceled=status != "closed")
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

    def close(
        self,
        item_id: str,
        reason: str = "",
        *,
        duplicate_of: str | None = None,
        resolution: str | None = None,
        canceled: bool = False,
        completed_at: str | None = None,
    ) -> Receipt:
        """Close (or cancel) with a reason; unblock dependents whose blockers are all done."""
        text = (reason or duplicate_of or resolution or "").strip()
        governance = self.settings.get("governance", {})
        if not text and governance.get("require_close_reason", True):
            raise UsageError(
                "closing requires a reason",
                hint='pass it: `pm close <id> "what was done and the evidence"`',
            )
        if duplicate_of:
            duplicate_of = self._require_target(duplicate_of, False)
        target_status = "canceled" if canceled else "closed"

        def change(item: Item) -> None:
            if item.status in self.schema.terminal_statuses:
                raise NoEffectError(f"{item.id} is already {item.status}")
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

    def reopen(self, item_id: str, *, message: str | None = None) -> Receipt:
        """Reopen a terminal item; clears close reason and stamps."""

        def change(item: Item) -> None:
            if item.status not in self.schema.terminal_statuses:
                raise NoEffectError(f"{item.id} is {item.status}, not closed or canceled")
            item.status = "open"
            item.close_reason = None
            item.closed_at = None
            item.completed_at = None

        before, after = self.apply_change(item_id, "reopen", change, message=message)
        return self.receipt(before, after)

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
        return claiming.claim(
            self, item_id, force=force, if_available=if_available, renew=renew, local=local
        )

    def release(self, item_id: str, *, force: bool = False, local: bool = False) -> Receipt:
        """End the claim (only its holder, unless ``force``); remote mode deletes the lease ref."""
        return claiming.release(self, item_id, force=force, local=local)

    def claims(
        self, *, include_expired: bool = False, fetch: bool = True, fallback: bool = False
    ) -> dict[str, Any]:
        """Live claim leases; in remote mode read from the git remote, with ``fetched_at``."""
        return claiming.claims(
            self, include_expired=include_expired, fetch=fetch, fallback=fallback
        )

    def delete(self, item_id: str) -> Receipt:
        """Remove an item file; its history stays and records the deletion."""
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

    def append(self, item_id: str, text: str) -> Receipt:
        """Append a paragraph to the body."""
        if not text:
            raise UsageError("nothing to append", hint="pass the text")

        def change(item: Item) -> None:
            item.body = f"{item.body.rstrip()}\n\n{text}".lstrip() if item.body else text

        before, after = self.apply_change(item_id, "append", change)
        return self.receipt(before, after)

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
                raise NoEffectError(f"{clean} is already linked to {item.id}")
            entry: dict[str, Any] = {"path": clean, "scope": scope}
            if note:
                entry["note"] = note
            links.append(entry)

        op = "files_add" if kind == "files" else "docs_add"
        before, after = self.apply_change(item_id, op, change)
        return self.receipt(before, after)

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

    def remove_dependency(self, item_id: str, target: str, kind: str | None = None) -> Receipt:
        """Remove a dependency (of any kind, or of ``kind``)."""
        spec = f"{target}:{kind}" if kind else target
        return self.update(item_id, remove_deps=[spec])

    # ------------------------------------------------------------ history

    def history(self, item_id: str) -> list[hist.HistoryEntry]:
        """An item's history entries, oldest first (also for deleted items)."""
        item_id = self.normalize_id(item_id)
        entries = hist.read_entries(self.store.history_dir, item_id)
        if not entries and not self.exists(item_id):
            raise NotFoundError(f"item {item_id} not found and has no history")
        return entries

    def version(self, item_id: str, ref: str) -> Item:
        """The item as it was at version ``ref`` (number or timestamp)."""
        entries = self.history(item_id)
        count = hist.version_index(entries, ref)
        document = hist.replay(entries, count)
        if not document["metadata"]:
            raise NotFoundError(f"{item_id} did not exist at version {ref}")
        return item_from_record({**document["metadata"], "body": document["body"]})

    def restore(self, item_id: str, ref: str) -> Receipt:
        """Rebuild an item at ``ref`` by replay and append a ``restore`` entry."""
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

    def list_items(self, **options: Any) -> dict[str, Any]:
        """Filtered rows; see :func:`pm_core.tracker.query.listing.list_items`."""
        from pm_core.tracker.query.listing import list_items

        return list_items(self, **options)

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        """Ranked hits; see :func:`pm_core.tracker.query.search.search`."""
        from pm_core.tracker.query.search import search

        return search(self, query, **options)

    def next_items(self, **options: Any) -> dict[str, Any]:
        """What to do next; see :func:`pm_core.tracker.query.ranking.next_items`."""
        from pm_core.tracker.query.ranking import next_items

        return next_items(self, **options)

    def context(self, **options: Any) -> dict[str, Any]:
        """Working context; see :func:`pm_core.tracker.query.ranking.context`."""
        from pm_core.tracker.query.ranking import context

        return context(self, **options)

    def graph(
        self, subcommand: str, item_id: str | None = None, target: str | None = None, **options: Any
    ) -> dict[str, Any]:
        """Graph analysis; see :func:`pm_core.tracker.query.graph.graph`."""
        from pm_core.tracker.query.graph import graph

        return graph(self, subcommand, item_id, target, **options)

    def deps_tree(self, item_id: str, **options: Any) -> dict[str, Any]:
        """The ``pm deps`` packet; see :func:`pm_core.tracker.query.graph.deps_tree`."""
        from pm_core.tracker.query.graph import deps_tree

        return deps_tree(self, item_id, **options)

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

    def plan_create(self, title: str, steps: Sequence[str], **options: Any) -> Receipt:
        """Create a plan; see :func:`pm_core.tracker.ops.plan.plan_create`."""
        from pm_core.tracker.ops.plan import plan_create

        return plan_create(self, title, steps, **options)

    def plan_show(self, plan_id: str) -> dict[str, Any]:
        """A plan with steps and validation; see :func:`pm_core.tracker.ops.plan.plan_show`."""
        from pm_core.tracker.ops.plan import plan_show

        return plan_show(self, plan_id)

    def plan_step(self, plan_id: str, step_ref: str, status: str, **options: Any) -> Receipt:
        """Move a plan step; see :func:`pm_core.tracker.ops.plan.plan_step`."""
        from pm_core.tracker.ops.plan import plan_step

        return plan_step(self, plan_id, step_ref, status, **options)

    def plan_add_step(self, plan_id: str, title: str, **options: Any) -> Receipt:
        """Add a plan step; see :func:`pm_core.tracker.ops.plan.plan_add_step`."""
        from pm_core.tracker.ops.plan import plan_add_step

        return plan_add_step(self, plan_id, title, **options)

    def plan_decision(self, plan_id: str, text: str) -> Receipt:
        """Record a plan decision; see :func:`pm_core.tracker.ops.plan.plan_decision`."""
        from pm_core.tracker.ops.plan import plan_decision

        return plan_decision(self, plan_id, text)

    def test_add(self, item_id: str, command: str, **options: Any) -> Receipt:
        """Link a test command; see :func:`pm_core.tracker.ops.linked_tests.test_add`."""
        from pm_core.tracker.ops.linked_tests import test_add

        return test_add(self, item_id, command, **options)

    def test_remove(self, item_id: str, command: str) -> Receipt:
        """Unlink a test command; see :func:`pm_core.tracker.ops.linked_tests.test_remove`."""
        from pm_core.tracker.ops.linked_tests import test_remove

        return test_remove(self, item_id, command)

    def test_list(self, item_id: str) -> dict[str, Any]:
        """Linked tests and recent runs; see :func:`pm_core.tracker.ops.linked_tests.test_list`."""
        from pm_core.tracker.ops.linked_tests import test_list

        return test_list(self, item_id)

    def test_run(self, item_id: str, **options: Any) -> dict[str, Any]:
        """Run linked tests; see :func:`pm_core.tracker.ops.linked_tests.test_run`."""
        from pm_core.tracker.ops.linked_tests import test_run

        return test_run(self, item_id, **options)

    def config_get(self, key: str) -> dict[str, Any]:
        """One setting; see :func:`pm_core.tracker.ops.admin.config_get`."""
        from pm_core.tracker.ops.admin import config_get

        return config_get(self, key)

    def config_set(self, key: str, value: Any) -> dict[str, Any]:
        """Change one setting; see :func:`pm_core.tracker.ops.admin.config_set`."""
        from pm_core.tracker.ops.admin import config_set

        return config_set(self, key, value)

    def config_list(self) -> dict[str, Any]:
        """Every setting; see :func:`pm_core.tracker.ops.admin.config_list`."""
        from pm_core.tracker.ops.admin import config_list

        return config_list(self)

    def schema_list(self) -> dict[str, Any]:
        """Types, statuses, fields; see :func:`pm_core.tracker.ops.admin.schema_list`."""
        from pm_core.tracker.ops.admin import schema_list

        return schema_list(self)

    def schema_add(self, kind: str, name: str, **options: Any) -> dict[str, Any]:
        """Add a type, status or field; see :func:`pm_core.tracker.ops.admin.schema_add`."""
        from pm_core.tracker.ops.admin import schema_add

        return schema_add(self, kind, name, **options)

    def contracts(self, **options: Any) -> dict[str, Any]:
        """The machine contract; see :func:`pm_core.tracker.ops.admin.contracts`."""
        from pm_core.tracker.ops.admin import contracts

        return contracts(self, **options)

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

    def remember(self, item_id: str) -> None:
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
