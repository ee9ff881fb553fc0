"""The fast path reads a command line exactly as click does, or hands it to click.

Each command declared in a ``SPECS`` table runs through two parsers: click
(``pm_core.cli.app.run``, built from the declaration) and
:mod:`pm_core.cli.fast`. Both call the command's function; here that function
is replaced by a recorder, so the test compares what each parser would have
run the command with.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pm_core.cli import app, fast
from pm_core.cli.argspec import COMMANDS, Opt, Spec, find_spec
from pm_core.cli.state import CliState

SPEC_NAMES = sorted(name for name in COMMANDS if find_spec(name) is not None)


def _specs() -> list[Spec]:
    found = [find_spec(name) for name in SPEC_NAMES]
    return [spec for spec in found if spec is not None]


def _record_into(calls: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every spec command records (path, author, json, values) instead of running."""
    for spec in _specs():

        def record(state: CliState, /, **values: Any) -> None:
            calls.append((state.path, state.author, state.json, values))

        record.__doc__ = spec.run.__doc__
        monkeypatch.setattr(spec, "run", record)
    monkeypatch.delenv("PM_PATH", raising=False)
    monkeypatch.delenv("_PM_COMPLETE", raising=False)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[Any, ...]]]:
    """The calls the spec commands would have run."""
    calls: list[tuple[Any, ...]] = []
    _record_into(calls, monkeypatch)
    yield calls


def _both(args: list[str], calls: list[tuple[Any, ...]]) -> tuple[Any, Any]:
    """(fast's call or None if it handed over, click's call or its exit code)."""
    calls.clear()
    code = fast.run(args)
    fast_call = calls.pop() if code is not None else None
    assert code in (None, 0), (args, code)
    assert not calls
    click_code = app.run(args)
    click_call = calls.pop() if calls else click_code
    return fast_call, click_call


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


EVERYDAY = [
    ["list"],
    ["list", "--status", "open", "--type=Task", "-s", "blocked", "--limit", "5"],
    ["list", "-n5", "--all", "--sort", "updated", "--field", "team=core", "--field=x=y"],
    ["list", "--offset=0", "--priority", "1", "-p", "high", "--json"],
    ["--json", "list", "--assignee", "me", "--parent", "pm-a1b2", "--fields", "id,title"],
    ["--path", "/tmp/x", "--author=bot", "get", "pm-a1b2"],
    ["get", "pm-a1b2", "--fields", "id,title", "--at", "3"],
    ["search", "deadlock", "replica", "--limit", "3", "--match", "and", "-s", "open"],
    ["search", "--mode=bm25", "crash", "--min-score", "0.5", "--open", "--tag", "ux"],
    ["search"],
    ["search", "-", "x"],
    ["next"],
    ["next", "--limit", "3", "--ready-only", "--include-decisions", "--token-budget", "900"],
    ["next", "--parent", "pm-a1b2", "--json"],
    ["context"],
    ["context", "--depth", "deep", "-n", "4", "--section", "activity", "--token-budget=0"],
    ["focus"],
    ["focus", "pm-a1b2"],
    ["focus", "--clear"],
    ["list", "--limit", "1_0"],
    ["list", "--limit", "-1"],
    ["list", "--limit=-1", "--all"],
    ["create", "A title", "--type", "Task", "--tags", "a,b", "-p", "1", "--json"],
    ["create", "--title=x", "--dep", "pm-a1b2:blocks", "--ac", "one", "--ac", "two", "-m", "why"],
    ["create", "-t", "x", "--estimate", "30", "--field", "k=v", "--allow-unresolved-deps"],
    ["update", "pm-a1b2", "--status", "closed", "-r", "done", "--add-tag", "x", "--unset", "risk"],
    ["append", "pm-a1b2", "more text"],
    ["append", "pm-a1b2", "--stdin"],
    ["copy", "pm-a1b2", "-t", "Copy"],
    ["delete", "pm-a1b2"],
    ["init"],
    ["init", "abc-"],
    ["list", "--sort", "x", "--sort", "priority"],
]


@pytest.mark.parametrize("args", EVERYDAY, ids=[" ".join(a) for a in EVERYDAY])
def test_everyday_command_lines_run_fast_with_what_click_would_pass(
    recorded: list[tuple[Any, ...]], args: list[str]
) -> None:
    fast_call, click_call = _both(args, recorded)
    assert fast_call is not None, f"the fast path handed {args} to click"
    assert _same(fast_call, click_call), (fast_call, click_call)


HANDED_OVER = [
    ["list", "--help"],
    ["list", "-h"],
    ["--help"],
    ["--version"],
    ["list", "--limit", "x"],
    ["list", "--bogus"],
    ["list", "--all=1"],
    ["list", "--status"],
    ["list", "extra"],
    ["get"],
    ["get", "a", "b"],
    ["search", "--", "--open"],
    ["search", "-5"],
    ["search", "--limit", "0"],
    ["--bogus", "list"],
    ["--json=1", "list"],
    ["list", "--status", "-x"],
    ["list", "--status=-x"],
    ["list", "-s-x"],
    ["get", "--fields=-1", "pm-a1b2"],
    ["--path=-p", "list"],
    ["plan", "show", "x"],
    ["nonesuch"],
    [],
]


@pytest.mark.parametrize("args", HANDED_OVER, ids=[" ".join(a) or "(none)" for a in HANDED_OVER])
def test_help_errors_and_other_commands_are_left_to_click(args: list[str]) -> None:
    assert fast.parse(args) is None


def test_shell_completion_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_PM_COMPLETE", "bash_complete")
    assert fast.run(["list"]) is None


def test_a_bad_argument_is_refused_the_same_way(capsys: pytest.CaptureFixture[str]) -> None:
    bad = ["search", "a\x00b"]
    assert fast.run(bad) == 2
    fast_err = capsys.readouterr().err
    assert app.run(bad) == 2
    assert capsys.readouterr().err == fast_err
    assert "NUL" in fast_err


def test_pm_path_from_the_environment_as_click_reads_it(
    recorded: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for env, args in [("/from/env", ["list"]), ("", ["list"]), ("/env", ["--path=", "list"])]:
        monkeypatch.setenv("PM_PATH", env)
        fast_call, click_call = _both(args, recorded)
        assert fast_call is not None and _same(fast_call, click_call), (env, args)


# ----------------------------------------------------------- generated lines

_WORDS = st.sampled_from(
    ["", "5", "0", "1", "-1", "1_0", " 3", "abc", "-x", "=", "a=b", "1.5", "nan", "1e3", "ünï", "-"]
)


def _option_tokens(opt: Opt, value: str) -> list[list[str]]:
    forms: list[list[str]] = []
    for decl in opt.decls:
        if not opt.takes_value:
            forms.append([decl])
        elif decl.startswith("--"):
            forms += [[decl, value], [f"{decl}={value}"]]
        else:
            forms += [[decl, value], [decl + value]]
    return forms


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    spec = draw(st.sampled_from(_specs()))
    args: list[str] = []
    for _ in range(draw(st.integers(0, 2))):
        args += draw(
            st.sampled_from(
                [["--json"], ["--path", "p"], ["--path=q"], ["--author", "a"], ["--bogus"]]
            )
        )
    args.append(spec.name)
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 9))
        if kind < 6 and spec.opts:
            opt = draw(st.sampled_from(spec.opts))
            args += draw(st.sampled_from(_option_tokens(opt, draw(_WORDS))))
        elif kind < 8:
            args.append(draw(st.sampled_from(["pm-a1b2", "word", "-", "two words"])))
        else:
            args.append(draw(st.sampled_from(["--json", "--", "-5", "--nope", "-h", "--all=1"])))
    return args


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=command_lines())
def test_generated_command_lines_parse_alike_or_go_to_click(args: list[str]) -> None:
    calls: list[tuple[Any, ...]] = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        _record_into(calls, monkeypatch)
        fast_call, click_call = _both(args, calls)
    if fast_call is not None:
        # Whatever the fast path runs, click runs with the same values.
        assert _same(fast_call, click_call), (args, fast_call, click_call)
