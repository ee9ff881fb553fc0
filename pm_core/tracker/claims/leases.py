"""Claim leases shared by both claim modes: the record, the decision, the cache.

Holds :class:`Lease`, the claim decision (:func:`decide`), the per-clone cache of
fetched remote leases, the live-holder rules of the read side and
:func:`lease_disagreements` for ``validate``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pm_core.tracker.model.clock import format_iso, parse_iso
from pm_core.tracker.model.errors import ConflictError, NoEffectError, PmError, UsageError
from pm_core.tracker.model.item import Item

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

LEASE_FORMAT = 1
MODES = ("local", "remote")
CACHE_FILE = "leases.json"
#: Holder shown for a lease ref whose record cannot be read (only --force takes it).
UNREADABLE = "(unreadable lease)"


def utcnow() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


class Lease(NamedTuple):
    """One claim lease on one item.

    ``expires_at`` is None for a claim written without a lease (by the
    TypeScript ``pm`` or before leases existed): it never expires and only its
    holder's release or a ``--force`` ends it. ``acquired_at`` is None when it
    cannot be known (such a claim, read from an item file).
    """

    item_id: str
    holder: str
    principal: str
    acquired_at: str | None
    expires_at: str | None
    renewed_at: str | None = None

    def is_live(self, now: datetime) -> bool:
        """Whether the lease still holds at ``now`` (no expiry means it does)."""
        if self.expires_at is None:
            return True
        moment = _moment(self.expires_at)
        # An expiry that cannot be parsed is treated as live: only --force breaks it.
        return moment is None or moment > now

    def to_json(self) -> dict[str, Any]:
        """The record stored in a lease ref (``lease.json``) and shown by ``pm claims``."""
        out: dict[str, Any] = {
            "format": LEASE_FORMAT,
            "item_id": self.item_id,
            "holder": self.holder,
            "principal": self.principal,
            "acquired_at": self.acquired_at,
            "expires_at": self.expires_at,
        }
        if self.renewed_at:
            out["renewed_at"] = self.renewed_at
        return out

    @classmethod
    def from_json(cls, data: Any, *, item_id: str | None = None) -> Lease:
        """Parse a lease record; ValueError names what is wrong with it."""
        if not isinstance(data, Mapping):
            raise ValueError("a lease record must be a JSON object")
        version = data.get("format", LEASE_FORMAT)
        if version != LEASE_FORMAT:
            raise ValueError(f"unsupported lease format {version!r} (this pm reads {LEASE_FORMAT})")
        values: dict[str, str | None] = {}
        for key in ("item_id", "holder", "principal", "acquired_at", "expires_at", "renewed_at"):
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"lease field {key} must be a string, got {type(value).__name__}")
            values[key] = value
        for key in ("item_id", "holder"):
            if not values[key]:
                raise ValueError(f"lease field {key} is missing")
        for key in ("acquired_at", "expires_at", "renewed_at"):
            if values[key] is not None and _moment(values[key]) is None:
                raise ValueError(f"lease field {key} is not an ISO time: {values[key]!r}")
        if item_id is not None and values["item_id"] != item_id:
            raise ValueError(f"lease names item {values['item_id']}, not {item_id}")
        holder = str(values["holder"])
        return cls(
            item_id=str(values["item_id"]),
            holder=holder,
            principal=values["principal"] or holder,
            acquired_at=values["acquired_at"],
            expires_at=values["expires_at"],
            renewed_at=values["renewed_at"],
        )

    @classmethod
    def unreadable(cls, item_id: str) -> Lease:
        """Stand-in for a lease ref whose record is missing or corrupt."""
        return cls(item_id, UNREADABLE, UNREADABLE, None, None)

    def describe(self) -> str:
        """``alice until 2026-01-31T12:00:00.000Z`` (or ``alice (no expiry)``)."""
        if self.expires_at is None:
            return f"{self.holder} (no expiry)"
        return f"{self.holder} until {self.expires_at}"

    def conflict_details(self) -> dict[str, Any]:
        """What a losing claimant is told about the winner."""
        return {
            "claimed_by": self.holder,
            "principal": self.principal,
            "acquired_at": self.acquired_at,
            "expires_at": self.expires_at,
        }


class ClaimsConfig(NamedTuple):
    """The ``claims`` settings: mode, remote name, lease length."""

    mode: str = "local"
    remote: str = "origin"
    ttl_seconds: int = 7200

    @property
    def is_remote(self) -> bool:
        """Whether leases live on the git remote."""
        return self.mode == "remote"

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ClaimsConfig:
        """Read and check ``settings["claims"]``; UsageError names a bad value."""
        raw = settings.get("claims") or {}
        if not isinstance(raw, Mapping):
            raise UsageError("settings claims must be an object", hint="fix settings.json")
        mode = str(raw.get("mode") or "local").strip().lower()
        if mode not in MODES:
            raise UsageError(
                f"unknown claims.mode {raw.get('mode')!r}",
                hint="set claims.mode to local or remote in settings.json",
            )
        remote = str(raw.get("remote") or "origin").strip()
        if not remote or remote.startswith("-"):
            raise UsageError(
                f"invalid claims.remote {raw.get('remote')!r}",
                hint="name a git remote, e.g. origin",
            )
        ttl = raw.get("lease_ttl_seconds", 7200)
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
            raise UsageError(
                f"claims.lease_ttl_seconds must be a positive number, got {ttl!r}",
                hint="e.g. 7200 for two hours",
            )
        return cls(mode=mode, remote=remote, ttl_seconds=max(1, int(ttl)))


class Decision(NamedTuple):
    """What a claim does to the current lease.

    ``kind``: ``acquire`` (free, or the claimant's own expired lease),
    ``renew`` (the claimant's live lease), ``expired`` (someone else's expired
    lease, taken without force) or ``takeover`` (someone else's live lease,
    taken with ``--force``).
    """

    kind: str
    previous: Lease | None

    def grant(self, item_id: str, me: str, now: datetime, ttl_seconds: int) -> Lease:
        """The lease the claimant holds after this decision."""
        expires = format_iso(now + timedelta(seconds=ttl_seconds))
        if self.kind == "renew" and self.previous is not None:
            return Lease(
                item_id,
                me,
                me,
                self.previous.acquired_at or format_iso(now),
                expires,
                renewed_at=format_iso(now),
            )
        return Lease(item_id, me, me, format_iso(now), expires)

    def message(self, lease: Lease) -> str:
        """The history message of the claim."""
        until = f"lease until {lease.expires_at}"
        previous = self.previous
        if self.kind == "takeover" and previous is not None:
            return f"claim_takeover: took {lease.item_id} over from {previous.describe()}; {until}"
        if self.kind == "expired" and previous is not None:
            return f"took over the expired lease of {previous.describe()}; {until}"
        if self.kind == "renew":
            return f"renew: {until}"
        return until

    def warnings(self, lease: Lease) -> list[str]:
        """Receipt warnings: a takeover of a live lease is always called out."""
        previous = self.previous
        if self.kind == "takeover" and previous is not None:
            return [f"claim_takeover: took {lease.item_id} over from {previous.describe()}"]
        if self.kind == "expired" and previous is not None:
            return [f"lease_expired: the lease of {previous.describe()} had expired"]
        return []


def decide(
    current: Lease | None,
    me: str,
    now: datetime,
    *,
    item_id: str,
    force: bool = False,
    renew: bool = False,
) -> Decision:
    """Decide a claim by ``me`` against ``current``; raise when it must not happen.

    A live lease of someone else is a ConflictError naming the holder and the
    expiry unless ``force``; ``renew`` demands that ``me`` already holds it.
    """
    if current is None:
        if renew:
            raise NoEffectError(
                f"{item_id} is not claimed; there is no lease to renew",
                hint=f"claim it: `pm claim {item_id}`",
                warning="noop_not_claimed",
            )
        return Decision("acquire", None)
    if current.principal == me:
        return Decision("renew" if current.is_live(now) else "acquire", current)
    if renew:
        raise ConflictError(
            f"{item_id} is claimed by {current.describe()}; only the holder renews a lease",
            hint="claim it instead (with --force while the lease is live)",
            details=current.conflict_details(),
        )
    if not current.is_live(now):
        return Decision("expired", current)
    if not force:
        raise ConflictError(
            f"{item_id} is claimed by {current.describe()}",
            hint="ask them to release it, wait for the lease to expire, "
            "or pass --force to take it over",
            details=current.conflict_details(),
        )
    return Decision("takeover", current)


# ------------------------------------------------------------------ item files


def file_holder(item: Item) -> str | None:
    """Who the item file says holds the claim (principal first, then assignee)."""
    return item.claim_principal or item.assignee or None


def lease_from_item(item: Item, acquired_at: str | None = None) -> Lease | None:
    """The lease an item file records, or None when it is unclaimed."""
    principal = file_holder(item)
    if principal is None:
        return None
    return Lease(
        item.id,
        item.assignee or principal,
        principal,
        acquired_at,
        item.claim_expires_at,
    )


def put_lease(item: Item, lease: Lease, *, keep_status: bool) -> None:
    """Record ``lease`` in the item file (an unclaimed open item starts progress)."""
    item.assignee = lease.holder
    item.claim_principal = lease.principal
    item.claim_expires_at = lease.expires_at
    if item.status in ("open", "draft", "blocked") and not keep_status:
        item.status = "in_progress"


def clear_lease(item: Item) -> None:
    """Remove the claim from the item file (an item in progress goes back to open)."""
    item.assignee = None
    item.claim_principal = None
    item.claim_expires_at = None
    if item.status == "in_progress":
        item.status = "open"


def claim_started_at(tracker: Tracker, item_id: str) -> str | None:
    """When the current claim of a local lease began: its last non-renewal claim entry."""
    # Imported here: the reads that load this module (list, next, context) need no history.
    from pm_core.tracker.storage import history as hist

    try:
        entries = hist.read_entries(tracker.store.history_dir, item_id)
    except PmError:
        return None
    for entry in entries[::-1]:
        if entry.op == "claim" and not (entry.message or "").startswith("renew:"):
            return entry.ts
    return None


# ------------------------------------------------------------------ fetched leases


class LeaseCache(NamedTuple):
    """The remote leases this clone saw last (``runtime/leases.json``)."""

    remote: str | None
    fetched_at: str | None
    leases: Mapping[str, Lease]


def cache_path(root: Path) -> Path:
    """Where the last fetched remote leases are kept (gitignored runtime folder)."""
    return root / "runtime" / CACHE_FILE


def read_cache(root: Path) -> LeaseCache:
    """The cache, or an empty one when missing or unreadable (it is rebuildable)."""
    try:
        raw = json.loads(cache_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return LeaseCache(None, None, {})
    if not isinstance(raw, Mapping):
        return LeaseCache(None, None, {})
    leases: dict[str, Lease] = {}
    for record in raw.get("leases") or []:
        try:
            lease = Lease.from_json(record)
        except ValueError:
            continue
        leases[lease.item_id] = lease
    fetched = raw.get("fetched_at")
    remote = raw.get("remote")
    return LeaseCache(str(remote) if remote else None, str(fetched) if fetched else None, leases)


def write_cache(root: Path, remote: str, fetched_at: str | None, leases: Iterable[Lease]) -> None:
    """Replace the cache (atomic rename, so readers see the old or the new file)."""
    from pm_core.tracker.storage.store import atomic_write

    body = {
        "remote": remote,
        "fetched_at": fetched_at,
        "leases": [lease.to_json() for lease in sorted(leases, key=lambda x: x.item_id)],
    }
    atomic_write(cache_path(root), (json.dumps(body, indent=2) + "\n").encode("utf-8"))


def remember(root: Path, remote: str, item_id: str, lease: Lease | None) -> None:
    """Record what a claim or release just saw of one item's remote lease.

    Concurrent writers may drop each other's entry; the next full fetch
    (``pm claims``) puts it right, which is all a cache owes.
    """
    cache = read_cache(root)
    leases = dict(cache.leases) if cache.remote in (None, remote) else {}
    if lease is None:
        leases.pop(item_id, None)
    else:
        leases[item_id] = lease
    # A read-only runtime folder must not fail a claim that already succeeded.
    with contextlib.suppress(OSError):
        write_cache(
            root, remote, cache.fetched_at if cache.remote == remote else None, leases.values()
        )


def holder_overrides(tracker: Tracker, items: Iterable[Item]) -> dict[str, str | None]:
    """Live holders that differ from what the item files say, for ``next``/``context``.

    Two things change who really holds an item: a claim whose
    ``claim_expires_at`` has passed holds nothing, and in remote mode a live
    lease from the last fetch (``pm claims``, or any claim or release made in
    this clone) names its holder even before their item file reaches this
    clone. No network is used here: reads stay fast and work offline.
    """
    now = utcnow()
    try:
        config = ClaimsConfig.from_settings(tracker.settings)
    except PmError:
        config = ClaimsConfig()
    cached: Mapping[str, Lease] = {}
    if config.is_remote:
        cache = read_cache(tracker.root)
        if cache.remote == config.remote:
            cached = cache.leases
    out: dict[str, str | None] = {}
    for item in items:
        holder = file_holder(item)
        lease = cached.get(item.id)
        if lease is not None and lease.is_live(now):
            if lease.principal != holder:
                out[item.id] = lease.principal
            continue
        expires = _moment(item.claim_expires_at)
        if holder and expires is not None and expires <= now:
            out[item.id] = None
    return out


# ------------------------------------------------------------------ validate


def lease_disagreements(tracker: Tracker) -> list[dict[str, Any]]:
    """Items whose file and remote lease disagree about the holder (remote mode only).

    Each failure is ``{id, message, fix}`` like every ``validate`` failure. An
    unreachable remote is one failure saying so; items this clone does not have
    are skipped, since their lease has nothing here to disagree with.
    """
    config = ClaimsConfig.from_settings(tracker.settings)
    if not config.is_remote:
        return []
    from pm_core.tracker.claims.remote import RemoteLeases

    try:
        leases = {lease.item_id: lease for lease in RemoteLeases.for_tracker(tracker).fetch_all()}
    except PmError as exc:
        return [
            {
                "id": f"remote {config.remote}",
                "message": f"cannot compare claims with the remote leases: {exc.message}",
                "fix": exc.hint or "check the remote, then rerun `pm validate`",
            }
        ]
    now = utcnow()
    out: list[dict[str, Any]] = []
    for item in tracker.items():
        holder = file_holder(item)
        lease = leases.get(item.id)
        live = lease if lease is not None and lease.is_live(now) else None
        if live is not None:
            if holder != live.principal:
                named = holder or "nobody"
                out.append(
                    {
                        "id": item.id,
                        "message": f"item file names {named} but the remote lease is held by "
                        f"{live.describe()}",
                        "fix": "merge the holder's branch, or have them `pm claim "
                        f"{item.id} --renew` to rewrite the file",
                    }
                )
            continue
        if not holder or item.status in tracker.schema.terminal_statuses:
            continue
        expires = _moment(item.claim_expires_at)
        if expires is not None and expires <= now:
            continue  # both sides agree that nobody holds it any more
        out.append(
            {
                "id": item.id,
                "message": f"item file names {holder} as holder but the remote "
                f"{config.remote} has no live lease for it",
                "fix": f"claim it again (`pm claim {item.id}`) or release it "
                f"(`pm release {item.id} --local`)",
            }
        )
    return out
