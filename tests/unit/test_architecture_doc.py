"""Every module, function and file ``docs/architecture.md`` names exists.

The walks in that document are for a newcomer to follow in the code; a name
that was renamed or removed would send them nowhere, so this test resolves each
dotted name (``pm_core.x.y.name``, ``Tracker.method``) and each file path.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TICKED = re.findall(r"`([^`\n]+)`", DOC.read_text(encoding="utf-8"))
DOTTED = sorted({t for t in TICKED if re.fullmatch(r"(pm_core|pm_plugins)(\.\w+)+", t)})
METHODS = sorted({t for t in TICKED if re.fullmatch(r"Tracker\.\w+", t)})
FILES = sorted({t for t in TICKED if re.fullmatch(r"[\w./-]+\.(py|toml|md)", t) and "/" in t})


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            target = getattr(target, attr)
        return target
    raise ModuleNotFoundError(dotted)


def test_the_document_names_enough_to_check() -> None:
    assert len(DOTTED) >= 30 and METHODS and FILES


@pytest.mark.parametrize("name", DOTTED)
def test_named_module_or_function_exists(name: str) -> None:
    resolve(name)


@pytest.mark.parametrize("name", METHODS)
def test_named_tracker_method_exists(name: str) -> None:
    from pm_core.tracker.api import Tracker

    assert hasattr(Tracker, name.split(".")[1]), name


@pytest.mark.parametrize("path", FILES)
def test_named_file_exists(path: str) -> None:
    assert (ROOT / path).exists(), path


def test_resolve_fails_on_a_missing_name() -> None:
    with pytest.raises(AttributeError):
        resolve("pm_core.tracker.query.ranking.no_such_function")
