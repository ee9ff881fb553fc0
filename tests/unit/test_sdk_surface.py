"""``pm_core.sdk`` is the public Python surface: its names are pinned and documented."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

import pm_core.sdk as sdk

ROOT = Path(__file__).resolve().parents[2]

#: Adding or removing a name is an API change: update docs/sdk.md with it.
EXPECTED = [
    "APP_CONTRACTS",
    "ConfigurationError",
    "ConflictError",
    "CorruptItemError",
    "DependencyError",
    "DiscoveryError",
    "DiscoveryResult",
    "Host",
    "Item",
    "NoEffectError",
    "NotFoundError",
    "PartialError",
    "PluginLoadError",
    "PmError",
    "RequestContext",
    "SKILLS_SERVER_CAPABILITY",
    "SkillRegistry",
    "ToolDescriptor",
    "Tracker",
    "UsageError",
    "assert_skills_capability",
    "build_host",
    "decorate_tools_with_apps",
    "discover_tools",
    "has_apps_capability",
    "list_tools",
    "render_app_html",
    "run_command",
    "skills_health",
    "with_skills_check",
]


def test_sdk_exports_exactly_the_pinned_names() -> None:
    assert sorted(sdk.__all__) == EXPECTED


def test_every_exported_name_resolves_and_callables_have_docstrings() -> None:
    for name in sdk.__all__:
        value = getattr(sdk, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_star_import_gives_the_pinned_names_and_nothing_public_leaks() -> None:
    namespace: dict[str, object] = {}
    exec("from pm_core.sdk import *", namespace)
    assert sorted(n for n in namespace if n != "__builtins__") == EXPECTED
    extra = [
        n
        for n, v in vars(sdk).items()
        if not n.startswith("_") and n not in sdk.__all__ and not isinstance(v, ModuleType)
    ]
    assert extra == ["annotations"]  # the __future__ feature, not an API


def test_tracker_errors_carry_their_cli_exit_codes() -> None:
    codes = {
        cls.__name__: cls.code
        for cls in (
            sdk.PmError,
            sdk.UsageError,
            sdk.NotFoundError,
            sdk.ConflictError,
            sdk.DependencyError,
            sdk.NoEffectError,
            sdk.PartialError,
        )
    }
    assert codes == {
        "PmError": 1,
        "UsageError": 2,
        "NotFoundError": 3,
        "ConflictError": 4,
        "DependencyError": 5,
        "NoEffectError": 6,
        "PartialError": 7,
    }
    assert all(issubclass(getattr(sdk, n), sdk.PmError) for n in codes)


def test_every_exported_name_has_a_row_in_docs_sdk_md() -> None:
    text = (ROOT / "docs" / "sdk.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([A-Za-z_]+)[`(]", text, flags=re.MULTILINE))
    assert rows == set(EXPECTED), (
        f"undocumented: {sorted(set(EXPECTED) - rows)}; stale: {sorted(rows - set(EXPECTED))}"
    )
