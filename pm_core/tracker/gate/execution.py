"""The one gate every process pm starts on a caller's behalf passes through.

Two kinds of process are gated:

- *linked commands*: the shell text of an item's ``tests`` entries. That text
  comes from whoever committed to the repository, so it runs only under a
  policy that allows it: ``approved`` (the default: this clone approved the
  exact text, :mod:`pm_core.tracker.gate.approvals`) or ``allow`` (an embedding
  program that vouches for its tracker);
- *any process an extension command starts* while a ``deny`` policy is in
  force (``pm-mcp`` with command execution off): every extension handler runs
  inside :func:`extension_call` (from :func:`pm_core.hosting.call_command`, the
  one path to a handler), and a Python audit hook refuses ``subprocess``,
  ``os.system``, ``os.exec*`` and ``os.posix_spawn`` there, so a plugin cannot
  step around the switch by starting the process itself.

pm's own code is not gated beyond linked commands: the libraries it imports
start helper programs of their own (``ctypes.util`` runs ``ldconfig``), and
its housekeeping (git for remote claims, the index watcher) is marked with
:func:`internal_process`. The policy is set by the door (``pm-mcp`` per call,
and for the whole process) with :func:`policy` / :func:`set_process_policy`.
An in-process plugin could start a thread of its own, or use the internal
marker, which is why docs/security.md says installing a plugin is trusting its
code: the gate holds the doors pm offers, it is not a sandbox.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import attrs

from pm_core.tracker.model.errors import USAGE, PmError

Mode = Literal["approved", "allow", "deny"]

#: Audit events that start a program (``os.fork`` alone runs no new code).
SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"}
)


class CommandRefusedError(PmError):
    """A process was not started: the policy in force forbids it (exit code 2)."""

    code = USAGE


@attrs.frozen(slots=True)
class CommandPolicy:
    """What may run: ``approved`` linked commands, everything (``allow``), or nothing.

    ``reason`` and ``hint`` word a ``deny`` refusal: what is off and how the
    operator turns it on.
    """

    mode: Mode = "approved"
    reason: str = ""
    hint: str = ""
    #: Recorded in approvals made by linking under this policy.
    via: str = "pm test --add"


APPROVED = CommandPolicy()

_current: contextvars.ContextVar[CommandPolicy | None] = contextvars.ContextVar(
    "pm_command_policy", default=None
)
_internal: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pm_internal_process", default=False
)
_extension: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pm_extension_call", default=None
)


class _ProcessFloor:
    """The policy for threads with no policy of their own (set once by ``pm-mcp``)."""

    policy: CommandPolicy | None = None
    hooked: bool = False


def current_policy() -> CommandPolicy:
    """The policy of this context, else the process's, else :data:`APPROVED`."""
    return _current.get() or _ProcessFloor.policy or APPROVED


@contextmanager
def policy(value: CommandPolicy) -> Iterator[None]:
    """Run the body under ``value`` (this thread and the contexts it copies)."""
    if value.mode == "deny":
        _install_hook()
    token = _current.set(value)
    try:
        yield
    finally:
        _current.reset(token)


def set_process_policy(value: CommandPolicy) -> None:
    """The policy of every thread that sets none (``pm-mcp`` with commands off)."""
    if value.mode == "deny":
        _install_hook()
    _ProcessFloor.policy = value


@contextmanager
def internal_process() -> Iterator[None]:
    """Mark pm's own housekeeping processes (git, the index watcher) as not gated."""
    token = _internal.set(True)
    try:
        yield
    finally:
        _internal.reset(token)


@contextmanager
def extension_call(command: str) -> Iterator[None]:
    """Run an extension command's handler: under ``deny`` it may start no process."""
    if current_policy().mode == "deny":
        _install_hook()
    token = _extension.set(command)
    try:
        yield
    finally:
        _extension.reset(token)


def refusal(active: CommandPolicy, what: str) -> CommandRefusedError:
    """The error for a refused ``what`` under a ``deny`` policy."""
    return CommandRefusedError(
        f"{what} refused: {active.reason or 'command execution is off'}",
        hint=active.hint or None,
    )


def check_spawn(what: str) -> None:
    """Raise :class:`CommandRefusedError` when the policy in force denies processes."""
    active = current_policy()
    if active.mode == "deny" and not _internal.get():
        raise refusal(active, what)


def check_linking(command: str) -> CommandPolicy:
    """Whether ``command`` may be linked now; returns the policy to approve it under."""
    active = current_policy()
    if active.mode == "deny":
        raise refusal(active, f"linking the command {command!r}")
    return active


def approve_linked(repo_root: Path, command: str, active: CommandPolicy) -> None:
    """After linking under ``active``: an ``approved`` policy approves the text it linked."""
    if active.mode == "approved":
        from pm_core.tracker.gate.approvals import approve

        approve(repo_root, command, via=active.via)


def check_linked(repo_root: Path, rows: Sequence[dict[str, str]], hint: str) -> None:
    """Refuse to run linked commands the policy does not allow (none of them runs).

    ``rows`` are ``{id, command}``; under ``approved`` every command must be
    approved by this clone, and the error lists those that are not.
    """
    active = current_policy()
    if active.mode == "deny":
        names = ", ".join(repr(r["command"]) for r in rows[:3])
        raise refusal(active, f"running {names}{' ...' if len(rows) > 3 else ''}")
    if active.mode == "allow":
        return
    from pm_core.tracker.gate.approvals import command_hash, is_approved

    missing = [r for r in rows if not is_approved(repo_root, r["command"])]
    if missing:
        listed = "; ".join(repr(r["command"]) for r in missing)
        raise CommandRefusedError(
            f"{len(missing)} linked command(s) are not approved on this clone: {listed}",
            hint=hint,
            details={
                "unapproved": [
                    {"id": r["id"], "command": r["command"], "sha256": command_hash(r["command"])}
                    for r in missing
                ]
            },
        )


def _install_hook() -> None:
    if not _ProcessFloor.hooked:
        sys.addaudithook(_audit)
        _ProcessFloor.hooked = True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Refuse program starts by an extension handler while a ``deny`` policy is in force."""
    if event not in SPAWN_EVENTS:
        return
    command = _extension.get()
    if command is None or _internal.get():
        return
    active = _current.get() or _ProcessFloor.policy
    if active is None or active.mode != "deny":
        return
    program = args[0] if args else "?"
    raise refusal(active, f"extension command {command} starting the process {program!r}")
