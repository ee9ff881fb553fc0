"""Lifecycle commands: close, claim, release, claims, reopen.

Declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`): the MCP tools
``pm_close``, ``pm_claim`` and ``pm_release`` read the same declarations, so
every option here is a tool key there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import Arg, Opt, Spec, specs
from pm_core.tracker.model.errors import UsageError

if TYPE_CHECKING:
    from pm_core.cli.state import CliState
    from pm_core.tracker.api import Tracker


def close(
    tracker: Tracker,
    item_id: str,
    reason_arg: str | None,
    reason: str | None,
    message: str | None,
    duplicate_of: str | None,
    resolution: str | None,
    canceled: bool,
    completed_at: str | None,
) -> dict[str, Any]:
    """Close ``item_id`` from the declared values (the CLI's and ``pm_close``'s)."""
    if reason_arg and reason and reason_arg != reason:
        raise UsageError("two different reasons given", hint="pass REASON or --reason")
    return tracker.close(
        item_id,
        reason_arg or reason or message or "",
        duplicate_of=duplicate_of,
        resolution=resolution,
        canceled=canceled,
        completed_at=completed_at,
    )


def run_close(state: CliState, **values: Any) -> None:
    """Close an item with a reason; dependents whose blockers are all done unblock."""
    state.emit(close(state.tracker, **values), kind="mutation")


def claim(
    tracker: Tracker, item_id: str, force: bool, if_available: bool, renew: bool, local: bool
) -> dict[str, Any]:
    """Claim ``item_id`` from the declared values."""
    options: dict[str, Any] = {"local": True} if local else {}
    return tracker.claim(item_id, force=force, if_available=if_available, renew=renew, **options)


def run_claim(state: CliState, **values: Any) -> None:
    """Claim an item for the current author: a lease (test-and-set; remote CAS in remote mode)."""
    state.emit(claim(state.tracker, **values), kind="mutation")


def release(tracker: Tracker, item_id: str, force: bool, local: bool) -> dict[str, Any]:
    """Release ``item_id`` from the declared values."""
    options: dict[str, Any] = {"local": True} if local else {}
    return tracker.release(item_id, force=force, **options)


def run_release(state: CliState, **values: Any) -> None:
    """Release a claim (only its holder, unless --force)."""
    state.emit(release(state.tracker, **values), kind="mutation")


def run_claims(state: CliState, include_expired: bool, cached: bool) -> None:
    """List live claim leases (remote mode: fetched from the git remote)."""
    state.emit(state.tracker.claims(include_expired=include_expired, fetch=not cached))


def run_reopen(state: CliState, item_id: str, message: str | None) -> None:
    """Reopen a closed or canceled item (clears the close reason and stamps)."""
    state.emit(state.tracker.reopen(item_id, message=message), kind="mutation")


_ITEM = Arg("item_id", help="The item's id (prefix optional).")
_LOCAL = Opt("--local", dest="local", kind="flag", help="In this clone only (remote mode offline).")

SPECS = specs(
    Spec(
        "close",
        run_close,
        args=(
            _ITEM,
            Arg("reason_arg", required=False, metavar="[REASON]", tool=None, help="The reason."),
        ),
        opts=(
            Opt("--reason", "-r", dest="reason", help="What was done, and the evidence."),
            Opt("--message", "-m", dest="message", help="The reason when no other is given."),
            Opt("--duplicate-of", "-d", dest="duplicate_of", metavar="ID", help="Duplicate of ID."),
            Opt("--resolution", dest="resolution", help="Resolution text (also a reason)."),
            Opt("--canceled", dest="canceled", kind="flag", help="Cancel instead of completing."),
            Opt(
                "--completed-at",
                dest="completed_at",
                metavar="TIME",
                help="When the work really finished (ISO time or -2h).",
                compact=False,
            ),
        ),
    ),
    Spec(
        "claim",
        run_claim,
        args=(_ITEM,),
        opts=(
            Opt("--force", dest="force", kind="flag", help="Take the item over from its holder."),
            Opt(
                "--if-available",
                dest="if_available",
                kind="flag",
                help="Skip (exit 0) when someone else holds it.",
            ),
            Opt("--renew", dest="renew", kind="flag", help="Extend your own lease."),
            _LOCAL,
        ),
    ),
    Spec(
        "release",
        run_release,
        args=(_ITEM,),
        opts=(
            Opt("--force", dest="force", kind="flag", help="Release a claim held by another."),
            _LOCAL,
        ),
    ),
    Spec(
        "claims",
        run_claims,
        opts=(
            Opt(
                "--all",
                dest="include_expired",
                kind="flag",
                tool="all",
                role="filter",
                help="Include expired leases.",
            ),
            Opt("--cached", dest="cached", kind="flag", help="Remote mode: the last fetch."),
        ),
    ),
    Spec(
        "reopen",
        run_reopen,
        args=(_ITEM,),
        opts=(Opt("--message", "-m", dest="message", help="Why (recorded in history)."),),
    ),
)
