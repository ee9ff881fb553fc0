"""Collection hooks are called through pluggy, once per plugin: wrappers work or are error rows.

Each plugin's implementations of a collection hook run as one pluggy call, so a
``wrapper=True`` or ``hookwrapper=True`` implementation wraps its own plugin's
implementation, and anything that goes wrong in that call (a raising wrapper, a
result of the wrong shape) is that plugin's ``error`` row, never a crash.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any

import pluggy
import pytest

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, PromptSpec, ToolContext
from pm_core.host import Host, HostSettings, PluginLoadError, PluginSource
from pm_core.testing import make_host


def _handler(ctx: ToolContext, **params: object) -> object:
    return {"ok": True}


def _render(arguments: Mapping[str, str]) -> str:
    return "text"


def prompt(name: str) -> PromptSpec:
    """A prompt named ``name``."""
    return PromptSpec(name, f"The {name} prompt.", (), _render)


def command(name: str) -> CommandSpec:
    """An extension command named ``name``."""
    return CommandSpec(name, f"The {name} command.", handler=_handler)


class WrapperOnly:
    """A new-style wrapper and nothing else: the call it wraps has no implementation."""

    @hookimpl(wrapper=True)
    def pm_register_prompts(self) -> Generator[None, list[Sequence[PromptSpec]], Any]:
        results = yield
        return results


class NewStyle:
    """Contributes a prompt, and renames it in a wrapper around its own implementation."""

    def __init__(self) -> None:
        self.received: list[list[Sequence[PromptSpec]]] = []

    @hookimpl
    def pm_register_prompts(self) -> Sequence[PromptSpec]:
        return [prompt("draft")]

    @hookimpl(wrapper=True, specname="pm_register_prompts")
    def wrap_prompts(self) -> Generator[None, list[Sequence[PromptSpec]], Any]:
        results = yield
        self.received.append(results)
        return [[prompt("final-" + p.name) for p in r] for r in results]


class OldStyle:
    """An old-style ``hookwrapper`` that adds a command to its own plugin's outcome."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [command("old-plain")]

    @hookimpl(hookwrapper=True, specname="pm_register_commands")
    def wrap_commands(self) -> Generator[None, pluggy.Result[Any], None]:
        outcome = yield
        outcome.force_result([*outcome.get_result(), [command("old-added")]])


class RaisesInWrapper:
    """A wrapper that raises after its plugin's implementation ran."""

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [command("never-seen")]

    @hookimpl(wrapper=True, specname="pm_register_commands")
    def wrap_commands(self) -> Generator[None, list[Sequence[CommandSpec]], Any]:
        yield
        raise RuntimeError("the wrapper broke")


class RaisesBeforeYield:
    """An old-style wrapper that raises before yielding."""

    @hookimpl(hookwrapper=True)
    def pm_register_tools(self) -> Generator[None, pluggy.Result[Any], None]:
        raise ValueError("before the yield")
        yield  # pragma: no cover - makes this a generator


class FlatWrapper:
    """A wrapper that returns specs where pluggy expects one result per implementation."""

    @hookimpl(wrapper=True)
    def pm_register_prompts(self) -> Generator[None, list[Sequence[PromptSpec]], Any]:
        yield
        return [prompt("flat")]


class NoneAmongSpecs:
    """A plain implementation whose list holds a ``None``."""

    @hookimpl
    def pm_register_prompts(self) -> Sequence[PromptSpec | None]:
        return [prompt("kept-out"), None]


class Prompts:
    """A plain plugin contributing the prompts it is given."""

    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def pm_register_prompts(self) -> Sequence[PromptSpec]:
        return [prompt(n) for n in self.names]


def installed(name: str, plugin: object) -> PluginSource:
    """``plugin`` as an installed third-party plugin named ``name``."""
    return PluginSource(name, "pm-ext", "1.0", lambda: plugin, module=f"{name}_module")


def host_with(*sources: PluginSource, strict: bool = False) -> Host:
    """A host with the core's defaults and ``sources``, no other built-ins."""
    from pm_core import defaults

    host = Host(HostSettings(strict=strict))
    host.load([PluginSource("core", "builtin", "0", lambda: defaults), *sources])
    return host


def test_wrapper_only_plugin_of_a_collection_hook_is_ok_and_contributes_nothing() -> None:
    # The reported crash: host.prompts() raised AttributeError on a wrapper.
    host = make_host(("wrapper", WrapperOnly()))
    prompts = host.prompts()
    assert {"orient", "claim-and-start", "record-evidence-and-close"} <= set(prompts)
    assert host.records["wrapper"].status == "ok"
    assert host.records["wrapper"].contributions == {}
    assert host.records["wrapper"].hooks == ["pm_register_prompts"]


def test_new_style_wrapper_wraps_its_own_plugins_implementation() -> None:
    plugin = NewStyle()
    host = host_with(installed("new", plugin), installed("other", Prompts("theirs")))
    assert sorted(host.prompts()) == ["final-draft", "theirs"]
    # It wrapped one call, its own plugin's: it never sees another plugin's prompts.
    assert plugin.received == [[[prompt("draft")]]]
    assert host.records["new"].contributions == {"prompts": ["final-draft"]}
    assert host.records["other"].contributions == {"prompts": ["theirs"]}
    assert host.records["new"].status == "ok"


def test_old_style_hookwrapper_can_force_its_plugins_result() -> None:
    host = host_with(installed("old", OldStyle()))
    commands = host.commands()
    assert host.command_owner("old-plain") == "old"
    assert host.command_owner("old-added") == "old"
    assert commands["old-added"].summary == "The old-added command."
    assert host.records["old"].status == "ok"


def test_wrapper_that_raises_is_an_error_row_and_drops_only_its_plugins_contributions() -> None:
    host = host_with(installed("raises", RaisesInWrapper()), installed("good", OldStyle()))
    commands = host.commands()
    assert "never-seen" not in commands
    assert {"list", "old-plain", "old-added"} <= set(commands)
    record = host.records["raises"]
    assert record.status == "error"
    assert record.errors == ["pm_register_commands: RuntimeError('the wrapper broke')"]
    assert host.records["good"].status == "ok"


def test_old_style_wrapper_raising_before_its_yield_is_an_error_row() -> None:
    host = host_with(installed("early", RaisesBeforeYield()))
    assert host.tools() == {}
    assert host.records["early"].errors == ["pm_register_tools: ValueError('before the yield')"]


def test_wrapper_returning_the_wrong_shape_is_an_error_row() -> None:
    host = host_with(installed("flat", FlatWrapper()), installed("good", Prompts("fine")))
    assert sorted(host.prompts()) == ["fine"]
    (error,) = host.records["flat"].errors
    assert error.startswith("pm_register_prompts: TypeError(")
    assert "returned a PromptSpec, not PromptSpecs" in error


def test_a_none_among_a_plugins_specs_is_an_error_row_not_a_crash() -> None:
    host = host_with(installed("holes", NoneAmongSpecs()))
    assert "kept-out" not in host.prompts()
    assert host.records["holes"].status == "error"
    assert "returned a NoneType among PromptSpecs" in host.records["holes"].errors[0]


def test_strict_mode_makes_a_raising_wrapper_fatal() -> None:
    host = host_with(installed("raises", RaisesInWrapper()), strict=True)
    with pytest.raises(PluginLoadError, match="'raises' failed in pm_register_commands"):
        host.commands()


def test_a_wrapper_plugin_keeps_first_come_conflicts_and_attribution() -> None:
    # "final-x" is claimed first by the plain plugin loaded first; the wrapper
    # plugin's renamed prompt and its clash are attributed to it alone.
    class Clashing(NewStyle):
        @hookimpl
        def pm_register_prompts(self) -> Sequence[PromptSpec]:
            return [prompt("draft"), prompt("x")]

    first = installed("a_first", Prompts("final-x"))
    host = host_with(first, installed("b_wrapper", Clashing()))
    assert sorted(host.prompts()) == ["final-draft", "final-x"]
    assert host.records["a_first"].contributions == {"prompts": ["final-x"]}
    assert host.records["b_wrapper"].contributions == {"prompts": ["final-draft"]}
    assert host.records["b_wrapper"].status == "conflict"
    assert host.records["b_wrapper"].errors == [
        "prompt 'final-x' is already provided by 'a_first'; this one was dropped"
    ]


def test_each_plugins_collection_call_is_traced_and_goes_through_pluggy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    host = Host(HostSettings(trace=True))
    host.load([installed("new", NewStyle())])
    host.prompts()
    err = capsys.readouterr().err
    assert "pm-plugins: calling pm_register_prompts on new" in err
    # pluggy's own tracer sees the call: the host did not bypass it.
    assert "pm_register_prompts [hook]" in err
