"""Claim leases: the record, the claim decision, local-mode expiry, renewal and listing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.claims.leases import (
    ClaimsConfig,
    Decision,
    Lease,
    decide,
    holder_overrides,
    read_cache,
    remember,
)
from pm_core.tracker.model.clock import format_iso, parse_iso
from pm_core.tracker.model.errors import ConflictError, NoEffectError, UsageError
from pm_core.tracker.query.ranking import next_items
from tests.support.trackers import add, as_author, hand_edit, make_tracker

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
PAST = "2020-01-01T00:00:00.000Z"
PAST_DT = NOW - timedelta(days=1)


def lease(holder: str = "bob", *, expires: datetime | None = NOW + timedelta(hours=1)) -> Lease:
    return Lease(
        "pm-abcd",
        holder,
        holder,
        format_iso(NOW - timedelta(minutes=5)),
        format_iso(expires) if expires else None,
    )


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


# ------------------------------------------------------------------ the record


def test_lease_round_trips_through_its_json_record() -> None:
    original = Lease("pm-abcd", "alice", "alice", PAST, PAST, renewed_at=PAST)
    record = json.loads(json.dumps(original.to_json()))
    assert Lease.from_json(record, item_id="pm-abcd") == original


def test_lease_record_without_renewal_omits_the_key() -> None:
    assert "renewed_at" not in lease().to_json()


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ([], "JSON object"),
        ({"item_id": "pm-abcd"}, "holder is missing"),
        ({"item_id": "pm-abcd", "holder": 7}, "must be a string"),
        ({"item_id": "pm-abcd", "holder": "a", "expires_at": "soon"}, "not an ISO time"),
        ({"item_id": "pm-zzzz", "holder": "a"}, "not pm-abcd"),
        ({"format": 9, "item_id": "pm-abcd", "holder": "a"}, "unsupported lease format"),
    ],
)
def test_bad_lease_record_is_rejected_naming_the_problem(record: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Lease.from_json(record, item_id="pm-abcd")


def test_lease_is_live_until_its_expiry() -> None:
    held = lease(expires=NOW + timedelta(seconds=1))
    assert held.is_live(NOW)
    assert not held.is_live(NOW + timedelta(seconds=1))


def test_lease_without_expiry_never_expires() -> None:
    assert lease(expires=None).is_live(NOW + timedelta(days=3650))


# ------------------------------------------------------------------ settings


def test_claims_settings_default_to_local_mode_with_two_hour_leases() -> None:
    assert ClaimsConfig.from_settings({}) == ClaimsConfig("local", "origin", 7200)


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        ({"mode": "cloud"}, "unknown claims.mode"),
        ({"lease_ttl_seconds": 0}, "positive number"),
        ({"lease_ttl_seconds": "2h"}, "positive number"),
        ({"remote": "--upload-pack=x"}, "invalid claims.remote"),
    ],
)
def test_bad_claims_settings_are_usage_errors(claims: dict[str, object], problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        ClaimsConfig.from_settings({"claims": claims})


# ------------------------------------------------------------------ the decision


def test_claim_of_free_item_acquires() -> None:
    assert decide(None, "alice", NOW, item_id="pm-abcd") == Decision("acquire", None)


def test_claim_of_own_live_lease_renews_and_keeps_acquired_at() -> None:
    mine = lease("alice")
    decision = decide(mine, "alice", NOW, item_id="pm-abcd")
    assert decision.kind == "renew"
    granted = decision.grant("pm-abcd", "alice", NOW, 60)
    assert granted.acquired_at == mine.acquired_at
    assert granted.renewed_at == format_iso(NOW)
    assert granted.expires_at == format_iso(NOW + timedelta(seconds=60))


def test_claim_of_item_held_by_other_is_conflict_naming_holder_and_expiry() -> None:
    theirs = lease("bob")
    with pytest.raises(ConflictError) as caught:
        decide(theirs, "alice", NOW, item_id="pm-abcd")
    assert "bob" in caught.value.message
    assert str(theirs.expires_at) in caught.value.message
    assert caught.value.details["claimed_by"] == "bob"
    assert caught.value.details["expires_at"] == theirs.expires_at
    assert caught.value.code == 4


def test_forced_claim_of_live_lease_is_a_recorded_takeover() -> None:
    decision = decide(lease("bob"), "alice", NOW, item_id="pm-abcd", force=True)
    assert decision.kind == "takeover"
    granted = decision.grant("pm-abcd", "alice", NOW, 60)
    assert decision.message(granted).startswith("claim_takeover: took pm-abcd over from bob")
    assert decision.warnings(granted)[0].startswith("claim_takeover")


def test_expired_lease_of_other_is_taken_without_force() -> None:
    expired = lease("bob", expires=NOW - timedelta(seconds=1))
    decision = decide(expired, "alice", NOW, item_id="pm-abcd")
    assert decision.kind == "expired"
    assert "expired lease of bob" in decision.message(decision.grant("pm-abcd", "alice", NOW, 60))


def test_renew_of_unclaimed_item_has_no_effect() -> None:
    with pytest.raises(NoEffectError, match="no lease to renew"):
        decide(None, "alice", NOW, item_id="pm-abcd", renew=True)


def test_renew_of_lease_held_by_other_is_conflict_even_when_expired() -> None:
    with pytest.raises(ConflictError, match="only the holder renews"):
        decide(lease("bob", expires=PAST_DT), "alice", NOW, item_id="pm-abcd", renew=True)


# ------------------------------------------------------------------ local mode


def test_local_claim_records_expiry_from_the_lease_ttl(t: Tracker) -> None:
    item = add(t, "Work")
    before = datetime.now(UTC)
    receipt = t.claim(item)
    expires = parse_iso(t.get(item).claim_expires_at or "")
    assert receipt["mode"] == "local"
    assert receipt["lease"]["expires_at"] == t.get(item).claim_expires_at
    assert before + timedelta(seconds=7199) <= expires <= datetime.now(UTC) + timedelta(hours=2)


def test_local_claim_of_item_held_by_other_is_conflict_naming_the_expiry(t: Tracker) -> None:
    item = add(t, "Work")
    as_author(t, "bob").claim(item)
    with pytest.raises(ConflictError) as caught:
        t.claim(item)
    assert caught.value.details["claimed_by"] == "bob"
    assert caught.value.details["expires_at"] == t.get(item).claim_expires_at


def test_local_expired_claim_is_taken_without_force_and_history_says_so(t: Tracker) -> None:
    item = add(t, "Work")
    as_author(t, "bob").claim(item)
    hand_edit(t, item, claim_expires_at=PAST)
    receipt = t.claim(item)
    assert receipt["claimed_by"] == "alice"
    assert any(w.startswith("lease_expired") for w in receipt["warnings"])
    assert "expired lease of bob" in (t.history(item)[-1].message or "")


def test_local_forced_takeover_is_recorded_in_history(t: Tracker) -> None:
    item = add(t, "Work")
    as_author(t, "bob").claim(item)
    t.claim(item, force=True)
    last = t.history(item)[-1]
    assert last.op == "claim"
    assert (last.message or "").startswith("claim_takeover: took")
    assert "from bob" in (last.message or "")


def test_any_mutation_by_the_holder_renews_a_local_lease(t: Tracker) -> None:
    item = add(t, "Work")
    t.claim(item)
    soon = format_iso(datetime.now(UTC) + timedelta(minutes=1))
    hand_edit(t, item, claim_expires_at=soon)
    t.add_log("comments", item, "progress")
    renewed = parse_iso(t.get(item).claim_expires_at or "")
    assert renewed > datetime.now(UTC) + timedelta(hours=1)


def test_mutation_by_someone_else_does_not_renew_the_lease(t: Tracker) -> None:
    item = add(t, "Work")
    t.claim(item)
    soon = format_iso(datetime.now(UTC) + timedelta(minutes=1))
    hand_edit(t, item, claim_expires_at=soon)
    as_author(t, "bob").add_log("comments", item, "drive-by")
    assert t.get(item).claim_expires_at == soon


def test_renew_keeps_status_and_extends_expiry(t: Tracker) -> None:
    item = add(t, "Work")
    t.claim(item)
    t.update(item, {"status": "blocked"})
    soon = format_iso(datetime.now(UTC) + timedelta(minutes=1))
    hand_edit(t, item, claim_expires_at=soon)
    receipt = t.claim(item, renew=True)
    assert t.get(item).status == "blocked"
    assert receipt["lease"]["renewed_at"]
    assert (t.history(item)[-1].message or "").startswith("renew:")


def test_release_clears_the_lease_expiry(t: Tracker) -> None:
    item = add(t, "Work")
    t.claim(item)
    t.release(item)
    got = t.get(item)
    assert (got.assignee, got.claim_principal, got.claim_expires_at) == (None, None, None)


def test_if_available_skips_a_live_lease_and_names_its_holder(t: Tracker) -> None:
    item = add(t, "Work")
    as_author(t, "bob").claim(item)
    assert t.claim(item, if_available=True) == {
        "id": item,
        "claimed": False,
        "skipped": True,
        "claimed_by": "bob",
    }


def test_local_claims_list_live_leases_with_acquired_time(t: Tracker) -> None:
    mine = add(t, "Mine")
    stale = add(t, "Stale")
    add(t, "Free")
    t.claim(mine)
    as_author(t, "bob").claim(stale)
    hand_edit(t, stale, claim_expires_at=PAST)
    listed = t.claims()
    assert listed["mode"] == "local"
    assert [row["item_id"] for row in listed["leases"]] == [mine]
    assert listed["leases"][0]["acquired_at"] == t.history(mine)[-1].ts
    everything = t.claims(include_expired=True)
    assert {row["item_id"]: row["live"] for row in everything["leases"]} == {
        mine: True,
        stale: False,
    }


def test_claim_written_without_expiry_stays_live(t: Tracker) -> None:
    item = add(t, "Claimed by the TypeScript pm")
    hand_edit(t, item, assignee="bob", claim_principal="bob")
    with pytest.raises(ConflictError, match="no expiry"):
        t.claim(item)
    assert [row["item_id"] for row in t.claims()["leases"]] == [item]


# ------------------------------------------------------------------ next/context view


def test_next_offers_an_item_whose_claim_expired(t: Tracker) -> None:
    item = add(t, "Abandoned")
    as_author(t, "bob").claim(item)
    assert [row["id"] for row in next_items(t)["held_by_others"]] == [item]
    hand_edit(t, item, claim_expires_at=PAST)
    result = next_items(t)
    assert result["held_by_others"] == []
    assert result["recommended"]["id"] == item


def test_remote_mode_view_applies_the_last_fetched_leases(t: Tracker) -> None:
    item = add(t, "Leased elsewhere")
    settings_path = t.root / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["claims"] = {"mode": "remote", "remote": "origin"}
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    t.reload()
    far = format_iso(datetime.now(UTC) + timedelta(hours=1))
    remember(t.root, "origin", item, Lease(item, "carol", "carol", PAST, far))
    assert read_cache(t.root).leases[item].holder == "carol"
    assert holder_overrides(t, t.items()) == {item: "carol"}
    assert [row["id"] for row in next_items(t)["held_by_others"]] == [item]


def test_local_mode_ignores_a_cache_of_remote_leases(t: Tracker) -> None:
    item = add(t, "Local")
    far = format_iso(datetime.now(UTC) + timedelta(hours=1))
    remember(t.root, "origin", item, Lease(item, "carol", "carol", PAST, far))
    assert holder_overrides(t, t.items()) == {}


def test_lease_disagreements_are_empty_in_local_mode(t: Tracker) -> None:
    from pm_core.tracker.query.validate import validate

    item = add(t, "Work")
    as_author(t, "bob").claim(item)
    report = validate(t, ["claims"])
    assert report["ok"] is True
    assert report["checks"][0]["name"] == "claims"
