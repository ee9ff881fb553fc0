"""Lifecycle commands, declared: close, claim, release, claims, reopen.

``PARAMS`` is the one declaration of their parameters; the CLI
(:mod:`pm_core.cli.commands.lifecycle`) and the tools ``pm_close``,
``pm_claim`` and ``pm_release`` read it, and call the functions here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.params import Arg, Opt, Param

if TYPE_CHECKING:
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
    from pm_core.tracker.model.errors import UsageError

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


def claim(
    tracker: Tracker, item_id: str, force: bool, if_available: bool, renew: bool, local: bool
) -> dict[str, Any]:
    """Claim ``item_id`` from the declared values."""
    options: dict[str, Any] = {"local": True} if local else {}
    return tracker.claim(item_id, force=force, if_available=if_available, renew=renew, **options)


def release(tracker: Tracker, item_id: str, force: bool, local: bool) -> dict[str, Any]:
    """Release ``item_id`` from the declared values."""
    options: dict[str, Any] = {"local": True} if local else {}
    return tracker.release(item_id, force=force, **options)


_ITEM = Arg("item_id", help="The item's id (prefix optional).")
_LOCAL = Opt("--local", dest="local", kind="flag", help="In this clone only (remote mode offline).")


def claims(tracker: Tracker, include_expired: bool, cached: bool) -> dict[str, Any]:
    """Live claim leases (remote mode: fetched from the git remote unless ``cached``)."""
    return tracker.claims(include_expired=include_expired, fetch=not cached)


def reopen(tracker: Tracker, item_id: str, message: str | None) -> dict[str, Any]:
    """Reopen a closed or canceled item."""
    return tracker.reopen(item_id, message=message)


PARAMS: dict[str, tuple[Param, ...]] = {
    "close": (
        _ITEM,
        Arg("reason_arg", required=False, metavar="[REASON]", tool=None, help="The reason."),
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
    "claim": (
        _ITEM,
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
    "release": (
        _ITEM,
        Opt("--force", dest="force", kind="flag", help="Release a claim held by another."),
        _LOCAL,
    ),
    "claims": (
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
    "reopen": (
        _ITEM,
        Opt("--message", "-m", dest="message", help="Why (recorded in history)."),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {"claims": claims, "reopen": reopen}
