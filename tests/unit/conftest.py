"""Fixtures shared by the read-index tests: one generated tracker, a fresh copy per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bench.generate import generate


@pytest.fixture(scope="session")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 300-item tracker of every type (hierarchy, blocking links,
    claims, deadlines, comments, tags), written once per test session."""
    out = tmp_path_factory.mktemp("bench300") / "ws"
    return generate(300, out, jobs=1, history=False)


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`pristine` with an empty ``runtime/`` (no index yet)."""
    target = tmp_path / "ws" / ".agents" / "pm"
    shutil.copytree(pristine, target)
    shutil.rmtree(target / "runtime", ignore_errors=True)
    (target / "runtime").mkdir()
    return target
