"""Claims that hold across clones: leases on a git remote (a local bare repository).

Each test builds a bare repository as the remote, seeds it from one clone with
an initialised tracker in remote claims mode and one open item, and clones it
again for every agent. Claims run through the SDK or as real ``pm``
subprocesses in their clone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.claims.leases import Lease
from pm_core.tracker.claims.remote import RemoteLeases
from pm_core.tracker.model.clock import parse_iso
from pm_core.tracker.model.errors import ConflictError, PmError
from pm_core.tracker.query.validate import validate

GIT_ID = ["-c", "user.name=seed", "-c", "user.email=seed@example.invalid"]
#: A child that waits for the start signal, then runs ``pm`` with the given arguments.
RACER = (
    "import sys, time, pathlib\n"
    "go = pathlib.Path(sys.argv[1])\n"
    "while not go.exists():\n"
    "    time.sleep(0.002)\n"
    "from pm_core.cli.main import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def remote_refs(clone: Path) -> dict[str, str]:
    listing = git(clone, "ls-remote", "origin", "refs/pm/claims/*")
    return {name: oid for oid, name in (line.split("\t") for line in listing.splitlines())}


def set_claims(clone: Path, **claims: Any) -> None:
    """Change this clone's claims settings (working tree only, like a local config)."""
    path = clone / ".agents" / "pm" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["claims"].update(claims)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def pm_env(author: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PM_PATH", "PM_AUTHOR")}
    env["PM_AUTHOR"] = author
    return env


def pm(clone: Path, author: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real ``pm`` CLI in ``clone`` as ``author``."""
    return subprocess.run(
        [sys.executable, "-m", "pm_core.cli.main", *args],
        cwd=clone,
        env=pm_env(author),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


class World:
    """A bare remote, the seeded item id, and a way to make clones."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.remote = base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True)
        seed = self.clone("seed")
        tracker = Tracker(seed / ".agents" / "pm", author="seed", env={})
        tracker.init()
        set_claims(seed, mode="remote", remote="origin")
        tracker.reload()
        self.item = str(tracker.create({"title": "Contended work"})["id"])
        git(seed, "add", "-A")
        git(seed, "commit", "-q", "-m", "tracker with one item")
        git(seed, "push", "-q", "origin", "HEAD")

    def clone(self, name: str) -> Path:
        target = self.base / name
        subprocess.run(
            ["git", "clone", "-q", str(self.remote), str(target)],
            check=True,
            capture_output=True,
        )
        return target

    def tracker(self, clone: Path, author: str) -> Tracker:
        return Tracker(clone / ".agents" / "pm", author=author, env={})


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def agents(world: World, *names: str) -> list[tuple[Path, Tracker]]:
    out = []
    for name in names:
        clone = world.clone(name)
        out.append((clone, world.tracker(clone, name)))
    return out


# ------------------------------------------------------------------ the race


def test_ten_clones_racing_for_one_item_produce_exactly_one_holder(world: World) -> None:
    names = [f"agent-{n}" for n in range(10)]
    clones = [world.clone(name) for name in names]
    go = world.base / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(go), "claim", world.item, "--json"],
            cwd=clone,
            env=pm_env(name),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, clone in zip(names, clones, strict=True)
    ]
    time.sleep(1.0)  # let every child import and wait at the start line
    go.touch()
    results = [(proc.wait(timeout=120), *proc.communicate()) for proc in racers]
    codes = [code for code, _, _ in results]
    assert sorted(codes) == [0] + [4] * 9, results
    winner = names[codes.index(0)]
    winning_receipt = json.loads(results[codes.index(0)][1])
    assert winning_receipt["claimed_by"] == winner
    expires = winning_receipt["lease"]["expires_at"]
    for code, _, err in results:
        if code == 4:
            failure = json.loads(err.strip().splitlines()[-1])
            assert failure["details"]["claimed_by"] == winner
            assert failure["details"]["expires_at"] == expires
            assert winner in failure["error"] and expires in failure["error"]
    refs = remote_refs(clones[0])
    assert list(refs) == [f"refs/pm/claims/{world.item}"]
    lease = json.loads(git(clones[0], "cat-file", "blob", f"{refs[next(iter(refs))]}:lease.json"))
    assert lease["holder"] == winner


def test_clone_that_never_fetched_cannot_steal_a_live_lease(world: World) -> None:
    stale = world.clone("stale")  # cloned before the claim, never fetches afterwards
    ((_, alice),) = agents(world, "alice")
    alice.claim(world.item)
    held = remote_refs(stale)[f"refs/pm/claims/{world.item}"]
    ours = RemoteLeases(stale / ".agents" / "pm", "origin")
    forged = Lease(world.item, "mallory", "mallory", None, "2099-01-01T00:00:00.000Z")
    # A create (empty expected value) fails because the ref exists on the remote.
    assert ours.swap(world.item, ours.write(forged), None) is False
    with pytest.raises(ConflictError) as caught:
        world.tracker(stale, "mallory").claim(world.item)
    assert caught.value.details["claimed_by"] == "alice"
    assert remote_refs(stale)[f"refs/pm/claims/{world.item}"] == held


# ------------------------------------------------------------------ lifecycle


def test_expired_lease_is_taken_without_force(world: World) -> None:
    (a_clone, alice), (b_clone, bob) = agents(world, "alice", "bob")
    for clone in (a_clone, b_clone):
        set_claims(clone, lease_ttl_seconds=1)
    alice.claim(world.item)
    with pytest.raises(ConflictError):
        bob.claim(world.item)
    time.sleep(1.2)
    receipt = bob.claim(world.item)
    assert receipt["claimed_by"] == "bob"
    assert any(w.startswith("lease_expired") for w in receipt["warnings"])
    assert "expired lease of alice" in (bob.history(world.item)[-1].message or "")


def test_forced_takeover_of_live_lease_is_recorded_in_history(world: World) -> None:
    (_, alice), (b_clone, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    receipt = bob.claim(world.item, force=True)
    assert receipt["warnings"][0].startswith("claim_takeover: took")
    message = bob.history(world.item)[-1].message or ""
    assert message.startswith("claim_takeover:") and "from alice" in message
    with pytest.raises(ConflictError, match="claimed by bob"):
        alice.claim(world.item)
    assert bob.get(world.item).assignee == "bob"
    assert remote_refs(b_clone)


def test_renew_advances_the_ref_and_extends_the_expiry(world: World) -> None:
    (a_clone, alice), (_, bob) = agents(world, "alice", "bob")
    first = alice.claim(world.item)["lease"]
    before = remote_refs(a_clone)
    time.sleep(0.05)
    renewed = alice.claim(world.item, renew=True)["lease"]
    assert parse_iso(renewed["expires_at"]) > parse_iso(first["expires_at"])
    assert renewed["acquired_at"] == first["acquired_at"]
    assert renewed["renewed_at"]
    assert remote_refs(a_clone) != before
    assert alice.get(world.item).claim_expires_at == renewed["expires_at"]
    with pytest.raises(ConflictError, match="only the holder renews"):
        bob.claim(world.item, renew=True)


def test_release_deletes_the_lease_ref(world: World) -> None:
    (a_clone, alice), (_, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    with pytest.raises(ConflictError, match="not bob"):
        bob.release(world.item)
    receipt = alice.release(world.item)
    assert receipt["released_lease"]["holder"] == "alice"
    assert remote_refs(a_clone) == {}
    assert alice.get(world.item).assignee is None
    assert bob.claim(world.item)["claimed_by"] == "bob"


def test_claims_lists_live_leases_from_the_remote_with_fetch_time(world: World) -> None:
    (_, alice), (b_clone, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    done = pm(b_clone, "bob", "claims", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["mode"] == "remote"
    assert listed["fetched_at"]
    assert [(row["item_id"], row["holder"], row["live"]) for row in listed["leases"]] == [
        (world.item, "alice", True)
    ]
    cached = bob.claims(fetch=False)
    assert cached["fetched_at"] == listed["fetched_at"]


def test_next_and_context_skip_items_leased_in_another_clone(world: World) -> None:
    from pm_core.tracker.query.ranking import context, next_items

    (_, alice), (_, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    assert next_items(bob)["recommended"]["id"] == world.item  # nothing fetched yet
    bob.claims()
    result = next_items(bob)
    assert [row["id"] for row in result["held_by_others"]] == [world.item]
    assert "recommended" not in result or result["recommended"] is None
    assert world.item not in json.dumps(context(bob).get("low_level", []))


def test_losing_claimant_remembers_the_winner_without_a_fetch(world: World) -> None:
    from pm_core.tracker.query.ranking import next_items

    (_, alice), (_, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    with pytest.raises(ConflictError):
        bob.claim(world.item)
    assert [row["id"] for row in next_items(bob)["held_by_others"]] == [world.item]


# ------------------------------------------------------------------ failure modes


def test_unreachable_remote_fails_with_exit_1_and_local_claims_in_this_clone(
    world: World,
) -> None:
    ((clone, alice),) = agents(world, "alice")
    git(clone, "remote", "set-url", "origin", str(world.base / "missing.git"))
    done = pm(clone, "alice", "claim", world.item)
    assert done.returncode == 1
    assert "cannot reach the claims remote 'origin'" in done.stderr
    assert "--local" in done.stderr
    assert alice.get(world.item).assignee is None  # never silently downgraded
    local = pm(clone, "alice", "claim", world.item, "--local", "--json")
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout)["warnings"][-1].startswith("local_claim")
    assert alice.get(world.item).assignee == "alice"
    assert "local only" in (alice.history(world.item)[-1].message or "")
    assert pm(clone, "alice", "release", world.item).returncode == 1
    assert pm(clone, "alice", "release", world.item, "--local").returncode == 0


def test_missing_remote_name_is_a_clear_error(world: World) -> None:
    ((clone, alice),) = agents(world, "alice")
    set_claims(clone, remote="upstream")
    with pytest.raises(PmError) as caught:
        alice.claim(world.item)
    assert caught.value.code == 1
    assert "no git remote 'upstream'" in caught.value.message


def test_claims_never_touch_head_index_or_branches(world: World) -> None:
    ((clone, alice),) = agents(world, "alice")
    head = git(clone, "rev-parse", "HEAD")
    branches = git(clone, "for-each-ref", "refs/heads", "refs/remotes")
    alice.claim(world.item)
    alice.claims()
    alice.release(world.item)
    assert git(clone, "rev-parse", "HEAD") == head
    assert git(clone, "for-each-ref", "refs/heads", "refs/remotes") == branches
    assert subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=clone).returncode == 0


# ------------------------------------------------------------------ validate and MCP path


def test_validate_reports_a_file_that_disagrees_with_the_remote_lease(world: World) -> None:
    (_, alice), (_, bob) = agents(world, "alice", "bob")
    alice.claim(world.item)
    assert validate(alice, ["claims"])["ok"] is True
    report = validate(bob, ["claims"])
    failures = report["checks"][0]["failures"]
    assert [f["id"] for f in failures] == [world.item]
    assert "names nobody" in failures[0]["message"] and "alice" in failures[0]["message"]


def test_validate_reports_a_local_only_claim_in_remote_mode(world: World) -> None:
    ((_, alice),) = agents(world, "alice")
    alice.claim(world.item, local=True)
    failures = validate(alice, ["claims"])["checks"][0]["failures"]
    assert [f["id"] for f in failures] == [world.item]
    assert "no live lease" in failures[0]["message"]


def test_claims_fallback_reports_the_last_fetch_when_the_remote_is_gone(world: World) -> None:
    ((clone, alice),) = agents(world, "alice")
    alice.claim(world.item)
    first = alice.claims()
    git(clone, "remote", "set-url", "origin", str(world.base / "missing.git"))
    with pytest.raises(PmError):
        alice.claims()
    fallback = alice.claims(fallback=True)
    assert fallback["fetched_at"] == first["fetched_at"]
    assert "cannot reach" in fallback["fetch_error"]
    assert [row["item_id"] for row in fallback["leases"]] == [world.item]


@pytest.mark.parametrize("argv", [("claim", "--renew"), ("release",)])
def test_cli_conflict_exit_code_is_4(world: World, argv: Sequence[str]) -> None:
    (_, alice), (b_clone, _) = agents(world, "alice", "bob")
    alice.claim(world.item)
    done = pm(b_clone, "bob", argv[0], world.item, *argv[1:])
    assert done.returncode == 4, done.stderr
    assert "alice" in done.stderr


def test_mcp_claim_tool_and_claims_resource_use_the_remote_leases(world: World) -> None:
    from pm_core.contracts import RequestContext, ServeContext
    from tests.support.toolhost import ToolHost, make_host

    (_, alice), (_, bob) = agents(world, "alice", "bob")
    host = make_host()
    claimed = ToolHost(host, alice).value("pm_claim", {"id": world.item})
    assert claimed["mode"] == "remote" and claimed["claimed_by"] == "alice"
    with pytest.raises(ConflictError, match="claimed by alice"):
        ToolHost(host, bob).call("pm_claim", {"id": world.item})
    (provider,) = [p for p in host.resource_providers() if p.prefix == "pm://workspace/"]
    content = provider.read(
        ServeContext(request=RequestContext(), tracker=bob), "pm://workspace/claims"
    )
    leases = json.loads(content.text or "{}")["leases"]
    assert leases["mode"] == "remote" and leases["fetched_at"]
    assert [(row["item_id"], row["holder"]) for row in leases["leases"]] == [(world.item, "alice")]
    released = ToolHost(host, alice).value("pm_release", {"id": world.item})
    assert released["released_lease"]["holder"] == "alice"
