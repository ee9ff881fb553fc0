"""Lifecycle commands: close, claim, release, claims, reopen."""

from __future__ import annotations

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState
from pm_core.tracker.model.errors import UsageError


@click.command("close")
@click.argument("item_id")
@click.argument("reason_arg", metavar="[REASON]", required=False)
@click.option("-r", "--reason", help="What was done, and the evidence.")
@click.option("-m", "--message", help="Used as the reason when no other is given.")
@click.option("-d", "--duplicate-of", metavar="ID", help="Close as a duplicate of ID.")
@click.option("--resolution", help="Resolution text (also a reason).")
@click.option("--canceled", is_flag=True, help="Cancel instead of completing.")
@click.option("--completed-at", metavar="TIME", help="When the work really finished.")
@json_option
@pass_state
def cmd_close(
    state: CliState,
    item_id: str,
    reason_arg: str | None,
    reason: str | None,
    message: str | None,
    duplicate_of: str | None,
    resolution: str | None,
    canceled: bool,
    completed_at: str | None,
) -> None:
    """Close an item with a reason; dependents whose blockers are all done unblock."""
    if reason_arg and reason and reason_arg != reason:
        raise UsageError("two different reasons given", hint="pass REASON or --reason")
    receipt = state.tracker.close(
        item_id,
        reason_arg or reason or message or "",
        duplicate_of=duplicate_of,
        resolution=resolution,
        canceled=canceled,
        completed_at=completed_at,
    )
    state.emit(receipt, kind="mutation")


@click.command("claim")
@click.argument("item_id")
@click.option("--force", is_flag=True, help="Take the item over from its holder.")
@click.option("--if-available", is_flag=True, help="Skip (exit 0) when someone else holds it.")
@click.option("--renew", is_flag=True, help="Extend your own lease (status unchanged).")
@click.option("--local", is_flag=True, help="Claim in this clone only (remote mode offline).")
@json_option
@pass_state
def cmd_claim(
    state: CliState, item_id: str, force: bool, if_available: bool, renew: bool, local: bool
) -> None:
    """Claim an item for the current author: a lease (test-and-set; remote CAS in remote mode)."""
    receipt = state.tracker.claim(
        item_id, force=force, if_available=if_available, renew=renew, local=local
    )
    state.emit(receipt, kind="mutation")


@click.command("release")
@click.argument("item_id")
@click.option("--force", is_flag=True, help="Release a claim held by someone else.")
@click.option("--local", is_flag=True, help="Release in this clone only (remote mode offline).")
@json_option
@pass_state
def cmd_release(state: CliState, item_id: str, force: bool, local: bool) -> None:
    """Release a claim (only its holder, unless --force)."""
    state.emit(state.tracker.release(item_id, force=force, local=local), kind="mutation")


@click.command("claims")
@click.option("--all", "include_expired", is_flag=True, help="Include expired leases.")
@click.option("--cached", is_flag=True, help="Remote mode: show the last fetch, no network.")
@json_option
@pass_state
def cmd_claims(state: CliState, include_expired: bool, cached: bool) -> None:
    """List live claim leases (remote mode: fetched from the git remote)."""
    state.emit(state.tracker.claims(include_expired=include_expired, fetch=not cached))


@click.command("reopen")
@click.argument("item_id")
@click.option("-m", "--message", help="Why it is reopened (recorded in history).")
@json_option
@pass_state
def cmd_reopen(state: CliState, item_id: str, message: str | None) -> None:
    """Reopen a closed or canceled item (clears the close reason and stamps)."""
    state.emit(state.tracker.reopen(item_id, message=message), kind="mutation")
