"""A workspace's ``extensions`` settings narrow the installed plugins its host loads."""

from __future__ import annotations

import json
from pathlib import Path

from pm_core.host import Host, HostSettings, workspace_extensions
from pm_core.testing import installed


class Nothing:
    """A plugin without hooks: only its status matters here."""


def _root(tmp_path: Path, extensions: object) -> Path:
    root = tmp_path / ".agents" / "pm"
    root.mkdir(parents=True)
    (root / "settings.json").write_text(json.dumps({"extensions": extensions}), encoding="utf-8")
    return root


def _statuses(settings: HostSettings) -> dict[str, str]:
    host = Host(settings)
    host.load([installed("one", Nothing()), installed("two", Nothing())])
    return {name: record.status for name, record in host.records.items()}


def test_lists_and_comma_strings_name_the_enabled_and_disabled_plugins(tmp_path: Path) -> None:
    root = _root(tmp_path, {"enabled": ["one", " two "], "disabled": "three, four"})
    assert workspace_extensions(root) == (
        frozenset({"one", "two"}),
        frozenset({"three", "four"}),
    )


def test_missing_or_unreadable_settings_narrow_nothing(tmp_path: Path) -> None:
    assert workspace_extensions(None) == (frozenset(), frozenset())
    assert workspace_extensions(tmp_path / "nowhere") == (frozenset(), frozenset())
    root = _root(tmp_path, {})
    (root / "settings.json").write_text("{not json", encoding="utf-8")
    assert workspace_extensions(root) == (frozenset(), frozenset())


def test_a_disabled_plugin_is_blocked_in_that_workspace_only(tmp_path: Path) -> None:
    root = _root(tmp_path, {"enabled": [], "disabled": ["one"]})
    assert _statuses(HostSettings().with_workspace(root)) == {"one": "blocked", "two": "ok"}
    assert _statuses(HostSettings()) == {"one": "ok", "two": "ok"}


def test_enabled_names_are_the_only_installed_plugins_that_load(tmp_path: Path) -> None:
    root = _root(tmp_path, {"enabled": ["two"], "disabled": []})
    assert _statuses(HostSettings().with_workspace(root)) == {"one": "blocked", "two": "ok"}


def test_the_workspace_narrows_the_environment_and_never_widens_it(tmp_path: Path) -> None:
    root = _root(tmp_path, {"enabled": ["one", "two"], "disabled": []})
    narrowed = HostSettings(allowlist=frozenset({"one"})).with_workspace(root)
    assert _statuses(narrowed) == {"one": "ok", "two": "blocked"}
