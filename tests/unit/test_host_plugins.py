"""The host loads each plugin on its own: errors, conflicts and the PM_* switches become rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ToolContext, ToolSpec, WorkspaceContracts
from pm_core.host import Host, HostSettings, PluginLoadError, PluginSource, build_host


def _handler(ctx: ToolContext, **params: object) -> object:
    return {"ok": True}


class Commands:
    """A fake extension declaring the commands it is given."""

    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [CommandSpec(n, f"The {n} command.", handler=_handler) for n in self.names]


class Tools:
    """A fake plugin contributing one tool."""

    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def pm_register_tools(self) -> Sequence[ToolSpec]:
        return [ToolSpec(self.name, "A tool.", "get", lambda _c: {}, lambda _ctx, _a: None)]


class Misspelt:
    """A plugin with one good hook and one that is not a pm hook."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [CommandSpec("fine", "Still works.", handler=_handler)]

    @hookimpl
    def pm_register_command(self) -> Sequence[CommandSpec]:  # missing the final "s"
        return []


class Raises:
    """A plugin whose hook raises when called."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        raise RuntimeError("the hook broke")


def _raise_import() -> object:
    raise ImportError("No module named 'pm_gone'")


def source(name: str, obj: object | None = None, dist: str = "pm-ext") -> PluginSource:
    """An installed (third-party) plugin; ``obj=None`` fails to import."""
    load: Callable[[], object] = _raise_import if obj is None else (lambda: obj)
    return PluginSource(name, dist, "1.0", load, module=f"{name}_module")


def host_with(*sources: PluginSource, **settings: object) -> Host:
    host = Host(HostSettings(**settings))  # type: ignore[arg-type]
    host.load([PluginSource("core", "builtin", "0", _core), *sources])
    return host


def _core() -> object:
    from pm_core import defaults

    return defaults


def test_plugin_that_fails_to_import_is_an_error_row_and_the_rest_load() -> None:
    host = host_with(source("broken"), source("good", Commands("hello")))
    broken = host.records["broken"]
    assert broken.status == "error" and broken.hooks == []
    assert broken.errors == ["ImportError: No module named 'pm_gone'"]
    assert broken.module == "broken_module"
    assert host.records["good"].status == "ok"
    assert "hello" in host.commands()


def test_strict_mode_makes_a_broken_plugin_fatal() -> None:
    with pytest.raises(PluginLoadError, match="'broken' failed to load"):
        host_with(source("broken"), strict=True)


def test_disabled_plugin_is_blocked_and_contributes_nothing() -> None:
    host = host_with(source("hello", Commands("hello")), disabled=frozenset({"hello"}))
    assert host.records["hello"].status == "blocked"
    assert "hello" not in host.commands()


def test_empty_allowlist_blocks_installed_plugins_but_not_built_ins_or_local_ones() -> None:
    host = build_host(
        env={"PM_LOAD_PLUGINS": ""}, entry_points=False, plugins=[("mine", Commands("mine"))]
    )
    host.load([source("installed", Commands("installed"))])
    assert host.records["core"].status == "ok"
    assert host.records["mine"].status == "ok"
    assert host.records["installed"].status == "blocked"
    assert "mine" in host.commands() and "installed" not in host.commands()


def test_allowlist_loads_only_the_named_installed_plugins() -> None:
    host = host_with(
        source("wanted", Commands("wanted")),
        source("other", Commands("other")),
        allowlist=frozenset({"wanted"}),
    )
    assert (host.records["wanted"].status, host.records["other"].status) == ("ok", "blocked")


def test_env_switches_are_read_from_the_environment() -> None:
    settings = HostSettings.from_env(
        {
            "PM_DISABLE_PLUGINS": "a, b",
            "PM_LOAD_PLUGINS": "c",
            "PM_PLUGINS_STRICT": "1",
            "PM_TRACE_PLUGINS": "1",
        }
    )
    assert settings == HostSettings(frozenset({"a", "b"}), frozenset({"c"}), True, True)
    assert HostSettings.from_env({"PM_LOAD_PLUGINS": ""}).allowlist == frozenset()
    assert HostSettings.from_env({}) == HostSettings()


def test_plugin_named_like_a_built_in_is_a_conflict_and_is_not_loaded() -> None:
    host = Host(HostSettings())
    host.load(
        [
            PluginSource("profiles", "builtin", "0", lambda: object()),
            source("profiles", Commands("sneaky")),
        ]
    )
    assert host.records["profiles"].status == "conflict"
    assert "taken by a built-in" in host.records["profiles"].errors[0]


def test_command_named_like_a_built_in_is_dropped_as_a_conflict_and_the_rest_works() -> None:
    host = host_with(source("clash", Commands("list", "clash-ok")))
    commands = host.commands()
    assert commands["list"].builtin and host.command_owner("list") == "core"
    assert host.command_owner("clash-ok") == "clash"
    record = host.records["clash"]
    assert record.status == "conflict"
    assert record.errors == ["command 'list' is already provided by 'core'; this one was dropped"]


def test_second_plugin_with_the_same_command_is_the_conflict() -> None:
    host = host_with(source("first", Commands("shared")), source("second", Commands("shared")))
    assert host.command_owner("shared") == "first"
    assert (host.records["first"].status, host.records["second"].status) == ("ok", "conflict")


def test_strict_mode_makes_a_command_conflict_fatal() -> None:
    host = host_with(source("clash", Commands("list")), strict=True)
    with pytest.raises(PluginLoadError, match="command 'list' is already provided"):
        host.commands()


def test_tool_name_conflict_is_reported_on_the_later_plugin() -> None:
    host = host_with(source("a", Tools("pm_extra")), source("b", Tools("pm_extra")))
    host.tools()
    assert host.records["b"].status == "conflict"
    assert host.catalog(WorkspaceContracts(types=("Task",), statuses=("open",)))


def test_misspelt_hook_makes_the_plugin_an_error_but_its_good_hooks_run() -> None:
    host = host_with(source("typo", Misspelt()))
    record = host.records["typo"]
    assert record.status == "error"
    assert "'pm_register_command' is not a pm hook" in record.errors[0]
    assert "fine" in host.commands()


def test_hook_that_raises_is_an_error_row_and_other_plugins_still_contribute() -> None:
    host = host_with(source("raises", Raises()), source("good", Commands("hello")))
    commands = host.commands()
    assert "hello" in commands and "list" in commands
    assert host.records["raises"].status == "error"
    assert "pm_register_commands: RuntimeError('the hook broke')" in host.records["raises"].errors


def test_trace_writes_each_collection_hook_call_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    host = host_with(source("good", Commands("hello")), trace=True)
    host.commands()
    err = capsys.readouterr().err
    assert "pm-plugins: calling pm_register_commands on good" in err
    assert "pm-plugins: calling pm_register_commands on core" in err


def test_records_list_hooks_and_contributions_with_tiers() -> None:
    host = host_with(source("good", Commands("hello")))
    host.describe_contributions()
    record = host.records["good"]
    assert (record.source, record.version, record.hooks) == (
        "pm-ext",
        "1.0",
        ["pm_register_commands"],
    )
    assert record.contributions == {"commands": ["hello (standard)"]}
