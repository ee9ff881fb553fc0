"""Fixtures shared by every test layer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository with an initialised tracker; returns the repository root."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    Tracker(root / ".agents" / "pm", author="tester", env={}).init()
    return root


@pytest.fixture
def tracker(repo: Path) -> Tracker:
    """The SDK bound to ``repo``'s tracker as author ``tester``."""
    return Tracker(repo / ".agents" / "pm", author="tester", env={})
