"""Accepted but suspicious: a warning in ``warnings`` and on stderr, exit 0; a misspelt setting is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import UsageError
from tests.support.pm_cli import PmCli


def test_claiming_a_blocked_item_names_its_open_blocker(tracker: Tracker) -> None:
    blocker = str(tracker.create({"title": "Blocker"})["id"])
    waiting = str(
        tracker.create({"title": "Waits", "dependencies": [f"{blocker}:blocked_by"]})["id"]
    )
    free = str(tracker.create({"title": "Free"})["id"])
    receipt = tracker.claim(waiting)
    assert receipt["claimed_by"] == "tester"
    [warning] = [w for w in receipt["warnings"] if w.startswith("claim_blocked")]
    assert f"{blocker} (open)" in warning
    assert "warnings" not in tracker.claim(free)
    tracker.close(blocker, "done")
    tracker.release(waiting)
    assert "warnings" not in tracker.claim(waiting)


def test_linking_a_missing_path_links_it_and_warns(repo: Path, tracker: Tracker) -> None:
    item = str(tracker.create({"title": "Linker"})["id"])
    (repo / "real.py").write_text("")
    assert "warnings" not in tracker.link("files", item, "real.py")
    receipt = tracker.link("docs", item, "docs/later.md")
    assert receipt["warnings"][0].startswith("path_missing: docs/later.md does not exist")
    assert [d["path"] for d in tracker.get(item).docs] == ["docs/later.md"]


def test_config_set_of_an_unknown_key_is_refused_with_the_known_keys(tracker: Tracker) -> None:
    before = (tracker.root / "settings.json").read_bytes()
    with pytest.raises(UsageError, match=r"locks\.wait_ms") as caught:
        tracker.config_set("locks.wiat_ms", 5)
    assert caught.value.hint and "governance.ownership_enforcement" in caught.value.hint
    assert (tracker.root / "settings.json").read_bytes() == before
    assert tracker.config_set("extensions.kanban.columns", "[1]")["value"] == [1]


def test_the_cli_prints_warnings_on_stderr_and_exits_0(tmp_path: Path) -> None:
    cli = PmCli.init(tmp_path)
    item = cli.create("Linker")
    result = cli("files", item, "--add", "src/nope.py", "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["warnings"][0].startswith("path_missing")
    assert result.err_lines == [json.loads(result.out)["warnings"][0].join(["warning: ", ""])]
    refused = cli("config", "set", "no.such.key", "1")
    assert refused.code == 2 and "known keys:" in refused.err, refused
