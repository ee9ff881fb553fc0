"""Leases held on the git remote: one ref ``refs/pm/claims/<id>`` per claimed item.

A claim pushes a lease commit with ``--force-with-lease`` so exactly one clone
wins; nothing touches the working tree, index, HEAD or branches.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from pm_core.tracker.claims.leases import ClaimsConfig, Decision, Lease, decide, utcnow
from pm_core.tracker.model.errors import ConflictError, PmError

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

CLAIMS_REFS = "refs/pm/claims/"
MIRROR_REFS = "refs/pm/remote-claims/"
LEASE_FILE = "lease.json"
GIT_TIMEOUT_SECONDS = 20.0
#: Compare-and-swap rounds before a claim gives up on a ref that keeps changing.
MAX_ROUNDS = 8
_SAFE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
#: Remote rejections that mean "someone else moved the ref first" (retry), not "forbidden".
_RACE_WORDS = (
    "stale info",
    "fetch first",
    "atomic transaction failed",
    "lock",
    "failed to update",
    "expected",
    "already exists",
)
#: Rejections against an unchanged ref before a "race" is called a refusal.
MAX_STUCK = 3


@attrs.frozen(slots=True)
class Acquired:
    """A lease this clone now holds on the remote, and what it replaced."""

    lease: Lease
    oid: str
    decision: Decision
    replaced_oid: str | None


class RemoteLeases:
    """Claim, renew, release and list leases on one git remote of one repository."""

    def __init__(
        self, repo_dir: Path, remote: str, *, timeout: float = GIT_TIMEOUT_SECONDS
    ) -> None:
        self.repo_dir = repo_dir
        self.remote = remote
        self.timeout = timeout
        #: Why the last compare-and-swap was rejected (for the error when it persists).
        self.last_rejection = ""

    @classmethod
    def for_tracker(cls, tracker: Tracker) -> RemoteLeases:
        """Leases on the remote named by the tracker's ``claims.remote``."""
        config = ClaimsConfig.from_settings(tracker.settings)
        return cls(tracker.root, config.remote)

    # ------------------------------------------------------------ git plumbing

    def _run(
        self, args: Sequence[str], *, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = dict(os.environ)
        # Never wait for a password prompt, and keep messages parseable.
        environ.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANGUAGE": "C"})
        environ.update(env or {})
        command = ["git", "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args]
        from pm_core.tracker.gate.execution import internal_process

        try:
            with internal_process():  # pm's own git plumbing, not a caller's command
                return subprocess.run(
                    command,
                    cwd=self.repo_dir,
                    input=stdin,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    env=environ,
                    check=False,
                )
        except FileNotFoundError:
            raise PmError(
                "git is not installed (claims.mode remote needs it)",
                hint="install git, or set claims.mode to local in settings.json",
            ) from None
        except subprocess.TimeoutExpired:
            raise self._unreachable(f"no answer within {self.timeout:g} s") from None

    def _local(self, args: Sequence[str], *, stdin: str | None = None, **env: str) -> str:
        """A local plumbing command that must succeed; its stdout, stripped."""
        proc = self._run(args, stdin=stdin, env=env)
        if proc.returncode != 0:
            raise self._git_error(args[0], proc.stderr)
        return proc.stdout.strip()

    def _git_error(self, what: str, stderr: str) -> PmError:
        text = _first_error(stderr)
        if "not a git repository" in text:
            return PmError(
                f"claims.mode is remote but {self.repo_dir} is not inside a git repository",
                hint="run `git init` and add a remote, or set claims.mode to local",
            )
        return PmError(f"git {what} failed: {text}", hint="check the repository with `git status`")

    def _unreachable(self, reason: str) -> PmError:
        return PmError(
            f"cannot reach the claims remote {self.remote!r}: {reason}",
            hint=f"check the network and `git remote get-url {self.remote}`, or claim in "
            "this clone only with --local (other clones will not see that claim)",
            details={"remote": self.remote},
        )

    def _network_error(self, stderr: str) -> PmError:
        text = _first_error(stderr)
        if "not a git repository" in text and "does not appear" not in text:
            return self._git_error("remote", stderr)
        configured = self._run(["remote", "get-url", self.remote])
        looks_like_url = any(c in self.remote for c in "/:\\") or self.remote.startswith(".")
        if configured.returncode != 0 and not looks_like_url:
            return PmError(
                f"claims.mode is remote but this repository has no git remote {self.remote!r}",
                hint=f"add it (`git remote add {self.remote} URL`), set claims.remote, "
                "set claims.mode to local, or claim and release with --local",
                details={"remote": self.remote},
            )
        return self._unreachable(text)

    @staticmethod
    def ref(item_id: str) -> str:
        """The remote ref of an item's lease; PmError for ids unfit for a ref name."""
        if not _SAFE_ID.match(item_id):
            raise PmError(
                f"item id {item_id!r} cannot name a lease ref",
                hint="ids are lowercase letters, digits and dashes",
            )
        return CLAIMS_REFS + item_id

    # ------------------------------------------------------------ reading

    def read(self, item_id: str) -> tuple[str | None, Lease | None]:
        """The remote's current lease ref value and lease (``(None, None)`` when free)."""
        ref = self.ref(item_id)
        proc = self._run(["ls-remote", self.remote, ref])
        if proc.returncode != 0:
            raise self._network_error(proc.stderr)
        oid = _oid_of(proc.stdout, ref)
        if oid is None:
            return None, None
        lease = self._load(oid, item_id)
        if lease is not None:
            return oid, lease
        # The object is not here yet: fetch it into the private namespace.
        mirror = MIRROR_REFS + item_id
        fetched = self._run(
            [
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                self.remote,
                f"+{ref}:{mirror}",
            ]
        )
        if fetched.returncode != 0:
            # Released between the two calls, or the remote went away: ask again.
            again = self._run(["ls-remote", self.remote, ref])
            if again.returncode != 0:
                raise self._network_error(again.stderr)
            if _oid_of(again.stdout, ref) is None:
                return None, None
            raise self._network_error(fetched.stderr)
        current = self._local(["rev-parse", "--verify", "--quiet", mirror])
        return current, self._load(current, item_id) or Lease.unreadable(item_id)

    def _load(self, oid: str, item_id: str) -> Lease | None:
        """The lease in commit ``oid``; None if the object is not in this clone."""
        if self._run(["cat-file", "-e", f"{oid}^{{commit}}"]).returncode != 0:
            return None
        proc = self._run(["cat-file", "blob", f"{oid}:{LEASE_FILE}"])
        if proc.returncode != 0:
            return Lease.unreadable(item_id)
        try:
            return Lease.from_json(json.loads(proc.stdout), item_id=item_id)
        except ValueError:
            return Lease.unreadable(item_id)

    def fetch_all(self) -> list[Lease]:
        """Every lease on the remote (expired ones too), mirrored under ``refs/pm/remote-claims``."""
        proc = self._run(
            [
                "fetch",
                "--quiet",
                "--prune",
                "--no-tags",
                "--no-write-fetch-head",
                self.remote,
                f"+{CLAIMS_REFS}*:{MIRROR_REFS}*",
            ]
        )
        if proc.returncode != 0:
            raise self._network_error(proc.stderr)
        listing = self._local(["for-each-ref", "--format=%(objectname) %(refname)", MIRROR_REFS])
        out: list[Lease] = []
        for line in listing.splitlines():
            oid, _, refname = line.partition(" ")
            item_id = refname[len(MIRROR_REFS) :]
            out.append(self._load(oid, item_id) or Lease.unreadable(item_id))
        return out

    # ------------------------------------------------------------ writing

    def write(self, lease: Lease) -> str:
        """Store ``lease`` as a parentless commit in this clone; returns its id."""
        record = json.dumps(lease.to_json(), indent=2, sort_keys=True) + "\n"
        blob = self._local(["hash-object", "-w", "--stdin"], stdin=record)
        tree = self._local(["mktree"], stdin=f"100644 blob {blob}\t{LEASE_FILE}\n")
        name = re.sub(r"[<>\n]", "", lease.holder).strip() or "pm"
        return self._local(
            [
                "commit-tree",
                "--no-gpg-sign",
                tree,
                "-m",
                f"pm lease {lease.item_id}: {lease.describe()}",
            ],
            GIT_AUTHOR_NAME=name,
            GIT_AUTHOR_EMAIL="",
            GIT_COMMITTER_NAME=name,
            GIT_COMMITTER_EMAIL="",
        )

    def swap(self, item_id: str, new: str | None, expected: str | None) -> bool:
        """Compare-and-swap the remote ref: set it to ``new`` (None deletes it) if it is
        still ``expected`` (None: it must not exist). False when someone else moved it."""
        ref = self.ref(item_id)
        spec = f"{new}:{ref}" if new else f":{ref}"
        proc = self._run(
            [
                "push",
                "--atomic",
                "--porcelain",
                "--no-verify",
                f"--force-with-lease={ref}:{expected or ''}",
                self.remote,
                spec,
            ]
        )
        status = _push_status(proc.stdout, ref)
        if status is None:
            if proc.returncode == 0:
                return True
            raise self._network_error(proc.stderr)
        flag, summary = status
        if flag != "!":
            return True
        self.last_rejection = summary
        if any(word in summary for word in _RACE_WORDS):
            return False
        raise self._refused(ref)

    def _refused(self, ref: str) -> PmError:
        return PmError(
            f"the claims remote {self.remote!r} refused to update {ref}: {self.last_rejection}",
            hint="the remote must accept pushes to refs/pm/claims/*; check its hooks and "
            "permissions, or use --local",
        )

    def _rounds(self, item_id: str) -> Iterator[tuple[str | None, Lease | None]]:
        """Fresh reads of the lease, one per compare-and-swap round.

        Stops with a ConflictError when the ref keeps changing, and with the
        remote's refusal when pushes keep failing against a ref that does not
        move (a hook or permission, not a race).
        """
        stuck = 0
        last: str | None = ""
        for _ in range(MAX_ROUNDS):
            observed, current = self.read(item_id)
            stuck = stuck + 1 if observed == last else 0
            if stuck >= MAX_STUCK:
                raise self._refused(self.ref(item_id))
            last = observed
            yield observed, current
        raise ConflictError(
            f"the lease ref of {item_id} kept changing under {MAX_ROUNDS} attempts",
            hint="other clones are claiming it right now; retry in a moment",
        )

    # ------------------------------------------------------------ operations

    def acquire(
        self,
        item_id: str,
        me: str,
        ttl_seconds: int,
        *,
        force: bool = False,
        renew: bool = False,
        now: datetime | None = None,
    ) -> Acquired:
        """Take (or renew) the lease for ``me``; ConflictError names a live holder.

        The first round assumes the item is free and pushes a create, so an
        uncontended claim costs one push. A rejected push reads the lease that
        won and decides again (expired: take it; live: conflict unless forced).
        """
        if not renew:
            moment = now or utcnow()
            decision = Decision("acquire", None)
            lease = decision.grant(item_id, me, moment, ttl_seconds)
            oid = self.write(lease)
            if self.swap(item_id, oid, None):
                return Acquired(lease, oid, decision, None)
        for observed, current in self._rounds(item_id):
            moment = now or utcnow()
            decision = decide(current, me, moment, item_id=item_id, force=force, renew=renew)
            lease = decision.grant(item_id, me, moment, ttl_seconds)
            oid = self.write(lease)
            if self.swap(item_id, oid, observed):
                return Acquired(lease, oid, decision, observed)
        raise AssertionError("unreachable: _rounds ends by raising")

    def end(self, item_id: str, me: str, *, force: bool = False) -> Lease | None:
        """Delete the lease (only its holder, unless ``force``); returns it, None if free."""
        for observed, current in self._rounds(item_id):
            if observed is None or current is None:
                return None
            if current.principal != me and not force:
                raise ConflictError(
                    f"{item_id} is claimed by {current.describe()}, not {me}",
                    hint="only the holder releases a lease; pass --force to override",
                    details=current.conflict_details(),
                )
            if self.swap(item_id, None, observed):
                return current
        raise AssertionError("unreachable: _rounds ends by raising")

    def undo(self, item_id: str, acquired: Acquired) -> bool:
        """Put the ref back to what ``acquired`` replaced, if it still holds our lease."""
        try:
            return self.swap(item_id, acquired.replaced_oid, acquired.oid)
        except PmError:
            return False


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line.split(":", 1)[1].strip()
    return lines[0] if lines else "git failed without a message"


def _oid_of(ls_remote: str, ref: str) -> str | None:
    for line in ls_remote.splitlines():
        oid, _, name = line.partition("\t")
        if name.strip() == ref:
            return oid.strip()
    return None


def _push_status(porcelain: str, ref: str) -> tuple[str, str] | None:
    """``(flag, summary)`` of ``ref`` in ``git push --porcelain`` output, if reported."""
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(f":{ref}"):
            return parts[0][:1], parts[2]
    return None
