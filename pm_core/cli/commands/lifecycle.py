"""Lifecycle commands: close, claim, release, claims, reopen.

Declared in :data:`SPECS` (see :mod:`pm_core.cli.argspec`): the MCP tools
``pm_close``, ``pm_claim`` and ``pm_release`` read the same declarations, so
every option here is a tool key there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import Spec, specs
from pm_core.commands.lifecycle import PARAMS, claim, claims, close, release, reopen

if TYPE_CHECKING:
    from pm_core.cli.state import CliState


def run_close(state: CliState, **values: Any) -> None:
    """Close an item with a reason; dependents whose blockers are all done unblock."""
    state.emit(close(state.tracker, **values), kind="mutation")


def run_claim(state: CliState, **values: Any) -> None:
    """Claim an item for the current author: a lease (test-and-set; remote CAS in remote mode)."""
    state.emit(claim(state.tracker, **values), kind="mutation")


def run_release(state: CliState, **values: Any) -> None:
    """Release a claim (only its holder, unless --force)."""
    state.emit(release(state.tracker, **values), kind="mutation")


def run_claims(state: CliState, include_expired: bool, cached: bool) -> None:
    """List live claim leases (remote mode: fetched from the git remote)."""
    state.emit(claims(state.tracker, include_expired, cached))


def run_reopen(state: CliState, item_id: str, message: str | None) -> None:
    """Reopen a closed or canceled item (clears the close reason and stamps)."""
    state.emit(reopen(state.tracker, item_id, message), kind="mutation")


SPECS = specs(
    Spec("close", run_close, params=PARAMS["close"]),
    Spec("claim", run_claim, params=PARAMS["claim"]),
    Spec("release", run_release, params=PARAMS["release"]),
    Spec("claims", run_claims, params=PARAMS["claims"]),
    Spec("reopen", run_reopen, params=PARAMS["reopen"]),
)
