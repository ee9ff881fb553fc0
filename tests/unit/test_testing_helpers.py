"""pm_core.testing builds fresh hosts with fake plugins, through the real loading path."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pm_core import hookimpl
from pm_core.contracts import CommandSpec
from pm_core.host import PluginLoadError
from pm_core.testing import broken, installed, make_host


class Hello:
    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [CommandSpec(name="hello", summary="Say hello.", tier="core")]


def test_installed_fake_plugin_contributes_like_an_entry_point() -> None:
    host = make_host(installed("hello", Hello(), dist="pm-hello"))
    assert "hello" in host.commands()
    record = host.records["hello"]
    assert (record.status, record.source) == ("ok", "pm-hello")


def test_broken_fake_plugin_is_an_error_row_and_the_rest_work() -> None:
    host = make_host(broken("bad", ImportError("no module named nowhere")))
    assert host.records["bad"].status == "error"
    assert "nowhere" in host.records["bad"].errors[0]
    assert "get" in host.commands()


def test_broken_fake_plugin_is_fatal_in_strict_mode() -> None:
    with pytest.raises(PluginLoadError, match="bad"):
        make_host(broken("bad", ImportError("x")), env={"PM_PLUGINS_STRICT": "1"})


def test_each_call_builds_an_independent_host() -> None:
    first = make_host(("hello", Hello()), builtins=False)
    second = make_host(builtins=False)
    assert "hello" in first.commands()
    assert "hello" not in second.commands()
