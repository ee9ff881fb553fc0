"""Fixtures: a real tracker in a temporary directory, and a host with this plugin."""

from __future__ import annotations

from pathlib import Path

import pm_standup
import pytest

from pm_core.sdk import Host, Tracker, build_host


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An initialised tracker's ``.agents/pm`` directory."""
    path = tmp_path / "repo" / ".agents" / "pm"
    Tracker(path, author="alice", env={}).init()
    return path


@pytest.fixture
def alice(root: Path) -> Tracker:
    """The tracker as author ``alice`` (no PM_* variables read)."""
    return Tracker(root, author="alice", env={})


@pytest.fixture
def bob(root: Path) -> Tracker:
    """The same tracker as author ``bob``."""
    return Tracker(root, author="bob", env={})


@pytest.fixture
def host() -> Host:
    """pm's built-in plugins plus this one, whether or not pm-standup is installed.

    ``PM_LOAD_PLUGINS`` empty keeps every other installed plugin out; a plugin
    handed to ``build_host`` is always loaded.
    """
    return build_host(env={"PM_LOAD_PLUGINS": ""}, plugins=[("standup", pm_standup)])
