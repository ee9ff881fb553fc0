"""Claim, renew, release and list leases: the flows behind ``Tracker.claim`` and friends.

Local mode decides under the item lock; remote mode wins the lease on the git
remote first, then records the holder in the item file (``docs/claims.md``).
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pm_core.tracker.claims.leases import (
    ClaimsConfig,
    Decision,
    Lease,
    claim_started_at,
    clear_lease,
    decide,
    file_holder,
    lease_from_item,
    put_lease,
    read_cache,
    remember,
    utcnow,
    write_cache,
)
from pm_core.tracker.model.clock import format_iso
from pm_core.tracker.model.errors import ConflictError, NoEffectError, PmError
from pm_core.tracker.model.item import Item

if TYPE_CHECKING:
    from pm_core.tracker.api import Receipt, Tracker


def config_of(tracker: Tracker) -> ClaimsConfig:
    """The tracker's ``claims`` settings."""
    return ClaimsConfig.from_settings(tracker.settings)


def _refuse_terminal(tracker: Tracker, item: Item) -> None:
    if item.status in tracker.schema.terminal_statuses:
        raise ConflictError(
            f"{item.id} is {item.status}", hint=f"reopen it first: `pm reopen {item.id}`"
        )


def _remote(tracker: Tracker, config: ClaimsConfig) -> Any:
    from pm_core.tracker.claims.remote import RemoteLeases

    return RemoteLeases(tracker.root, config.remote)


# ------------------------------------------------------------------ claim


def claim(
    tracker: Tracker,
    item_id: str,
    *,
    force: bool = False,
    if_available: bool = False,
    renew: bool = False,
    local: bool = False,
) -> Receipt:
    """Claim (or renew) ``item_id`` for the tracker's author; see the module docstring."""
    item_id = tracker.normalize_id(item_id)
    config = config_of(tracker)
    try:
        if config.is_remote and not local:
            return _claim_remote(tracker, config, item_id, force=force, renew=renew)
        return _claim_local(
            tracker, config, item_id, force=force, renew=renew, bypassed=config.is_remote
        )
    except ConflictError as exc:
        if if_available:
            out: Receipt = {"id": item_id, "claimed": False, "skipped": True}
            if isinstance(exc.details, dict) and exc.details.get("claimed_by"):
                out["claimed_by"] = exc.details["claimed_by"]
            return out
        raise


def _claim_local(
    tracker: Tracker,
    config: ClaimsConfig,
    item_id: str,
    *,
    force: bool,
    renew: bool,
    bypassed: bool,
) -> Receipt:
    me = tracker.author
    seen: dict[str, Any] = {}

    def change(item: Item) -> None:
        _refuse_terminal(tracker, item)
        now = utcnow()
        decision = decide(lease_from_item(item), me, now, item_id=item.id, force=force, renew=renew)
        lease = decision.grant(item.id, me, now, config.ttl_seconds)
        seen.update(decision=decision, lease=lease, previous=item.assignee)
        put_lease(item, lease, keep_status=renew)

    def message() -> str | None:
        text = seen["decision"].message(seen["lease"])
        if bypassed:
            text += f"; local only: remote {config.remote!r} not consulted (--local)"
        return str(text)

    before, after = tracker.apply_change(
        item_id, "claim", change, message=message, allow_no_effect=True
    )
    decision: Decision = seen["decision"]
    lease: Lease = seen["lease"]
    warnings = decision.warnings(lease)
    if bypassed:
        warnings.append(
            f"local_claim: only this clone knows; other clones can still claim {item_id} "
            f"on remote {config.remote!r}"
        )
    return tracker.receipt(
        before,
        after,
        claimed_by=me,
        previous_assignee=seen.get("previous"),
        lease=lease.to_json(),
        mode="local",
        warnings=warnings,
    )


def _claim_remote(
    tracker: Tracker, config: ClaimsConfig, item_id: str, *, force: bool, renew: bool
) -> Receipt:
    me = tracker.author
    _refuse_terminal(tracker, tracker.get(item_id))
    remote = _remote(tracker, config)
    try:
        acquired = remote.acquire(item_id, me, config.ttl_seconds, force=force, renew=renew)
    except ConflictError as exc:
        if isinstance(exc.details, dict) and exc.details.get("claimed_by"):
            winner = Lease(
                item_id,
                str(exc.details["claimed_by"]),
                str(exc.details.get("principal") or exc.details["claimed_by"]),
                exc.details.get("acquired_at"),
                exc.details.get("expires_at"),
            )
            # The loser now knows who holds it: next/context here skip the item.
            remember(tracker.root, config.remote, item_id, winner)
            exc.details = {**exc.details, "remote": config.remote}
        raise
    lease: Lease = acquired.lease
    decision: Decision = acquired.decision
    previous: dict[str, str | None] = {}

    def change(item: Item) -> None:
        _refuse_terminal(tracker, item)
        previous["assignee"] = item.assignee
        put_lease(item, lease, keep_status=renew or decision.kind == "renew")

    try:
        before, after = tracker.apply_change(
            item_id,
            "claim",
            change,
            message=f"{decision.message(lease)} (remote {config.remote})",
            allow_no_effect=True,
        )
    except BaseException:
        # The file write failed: give the remote lease back so nobody is blocked by it.
        remote.undo(item_id, acquired)
        raise
    remember(tracker.root, config.remote, item_id, lease)
    return tracker.receipt(
        before,
        after,
        claimed_by=me,
        previous_assignee=previous.get("assignee"),
        lease=lease.to_json(),
        mode="remote",
        remote=config.remote,
        warnings=decision.warnings(lease),
    )


# ------------------------------------------------------------------ release


def release(tracker: Tracker, item_id: str, *, force: bool = False, local: bool = False) -> Receipt:
    """End the claim of ``item_id`` (only its holder, unless ``force``)."""
    item_id = tracker.normalize_id(item_id)
    config = config_of(tracker)
    me = tracker.author
    ended: Lease | None = None
    remote_mode = config.is_remote and not local
    if remote_mode:
        tracker.get(item_id)  # a missing item is "not found" before any network use
        ended = _remote(tracker, config).end(item_id, me, force=force)
        remember(tracker.root, config.remote, item_id, None)
    warnings: list[str] = []

    def change(item: Item) -> None:
        holder = file_holder(item)
        if not holder:
            if ended is None:
                raise NoEffectError(f"{item.id} is not claimed", warning="noop_not_claimed")
            return
        if holder != me and not force:
            if ended is None:
                raise ConflictError(
                    f"{item.id} is claimed by {holder}, not {me}",
                    hint="only the holder releases a claim; pass --force to override",
                    details={"claimed_by": holder},
                )
            warnings.append(
                f"item file still names {holder}; left as is (`pm validate` reports it)"
            )
            return
        clear_lease(item)

    message = f"lease of {ended.describe()} ended on remote {config.remote}" if ended else None
    if config.is_remote and local:
        message = f"local only: remote {config.remote!r} not consulted (--local)"
    before, after = tracker.apply_change(
        item_id, "release", change, message=message, allow_no_effect=ended is not None
    )
    return tracker.receipt(
        before,
        after,
        previous_assignee=before.assignee,
        released_lease=ended.to_json() if ended else None,
        mode="remote" if remote_mode else "local",
        warnings=warnings,
    )


# ------------------------------------------------------------------ listing


def claims(
    tracker: Tracker,
    *,
    include_expired: bool = False,
    fetch: bool = True,
    fallback: bool = False,
) -> dict[str, Any]:
    """Live leases: ``{mode, remote?, fetched_at?, now, count, leases}``.

    Remote mode fetches ``refs/pm/claims/*`` (``fetch=False`` reads the last
    fetch instead); ``fetched_at`` says when the leases were read from the
    remote. With ``fallback`` an unreachable remote yields the last fetch and
    a ``fetch_error`` instead of an error. Local mode reads the item files.
    """
    config = config_of(tracker)
    out: dict[str, Any] = {"mode": config.mode}
    if config.is_remote:
        out["remote"] = config.remote
        leases, fetched_at, error = _remote_leases(tracker, config, fetch=fetch, fallback=fallback)
        out["fetched_at"] = fetched_at
        if error:
            out["fetch_error"] = error
    else:
        leases = _local_leases(tracker)
    now = utcnow()
    items = {item.id: item for item in tracker.items()}
    rows = []
    for lease in sorted(leases, key=lambda x: (x.expires_at or "~", x.item_id)):
        live = lease.is_live(now)
        if not live and not include_expired:
            continue
        row = lease.to_json()
        row.pop("format", None)
        row["live"] = live
        known = items.get(lease.item_id)
        if known is not None:
            row["title"] = known.title
            row["status"] = known.status
        rows.append(row)
    out["now"] = format_iso(now)
    out["count"] = len(rows)
    out["leases"] = rows
    return out


def _remote_leases(
    tracker: Tracker, config: ClaimsConfig, *, fetch: bool, fallback: bool
) -> tuple[list[Lease], str | None, str | None]:
    cache = read_cache(tracker.root)
    cached = list(cache.leases.values()) if cache.remote == config.remote else []
    cached_at = cache.fetched_at if cache.remote == config.remote else None
    if not fetch:
        return cached, cached_at, None
    try:
        leases = _remote(tracker, config).fetch_all()
    except PmError as exc:
        if not fallback:
            raise
        return cached, cached_at, exc.message
    fetched_at = format_iso(utcnow())
    # A read-only runtime folder still lets the listing answer; next/context keep the older view.
    with contextlib.suppress(OSError):
        write_cache(tracker.root, config.remote, fetched_at, leases)
    return leases, fetched_at, None


def _local_leases(tracker: Tracker) -> list[Lease]:
    out = []
    for item in tracker.items():
        if item.status in tracker.schema.terminal_statuses or not file_holder(item):
            continue
        lease = lease_from_item(item, claim_started_at(tracker, item.id))
        if lease is not None:
            out.append(lease)
    return out


# ------------------------------------------------------------------ renewal


def renew_on_write(tracker: Tracker, item: Item, op: str) -> None:
    """Extend the holder's local lease in the same write as any of their mutations.

    Only in local mode, only for a lease with an expiry (a claim made by the
    TypeScript ``pm`` has none and keeps none), only when the writer holds it.
    """
    if op in ("claim", "release", "close") or not item.claim_expires_at:
        return
    if file_holder(item) != tracker.author:
        return
    try:
        config = config_of(tracker)
    except PmError:
        return
    if config.is_remote:
        return
    item.claim_expires_at = format_iso(utcnow() + timedelta(seconds=config.ttl_seconds))
