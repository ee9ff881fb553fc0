"""Property-based fuzzing of the ``pm`` argument layer, in process.

Arbitrary argument lists built from real command names, real option names
and hostile values (empty, huge, NUL, path tricks, lone surrogates as a
non-UTF-8 ``argv`` decodes to, numbers out of range) must end in one of pm's
documented exit codes with, on failure, an ``error: ...`` line (and at most a
``hint: ...`` line) on stderr: never a traceback, never the catch-all
"unexpected" error that marks a bug.

Commands that would act outside the temporary tracker are left out: ``init``
and ``--path`` (they choose where to write) and ``test`` (it runs commands).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pm_core.cli.app import COMMANDS, builtin_command
from pm_core.cli.main import main
from pm_core.tracker.api import Tracker

EXIT_CODES = frozenset(range(8))
EXCLUDED_COMMANDS = frozenset({"init", "test"})
EXCLUDED_OPTIONS = frozenset({"--path"})


def _vocabulary() -> tuple[list[str], list[str]]:
    """Every built-in command and subcommand name, and every option they declare."""
    names: set[str] = set()
    options: set[str] = {"--json", "--author", "--help", "--version", "-h", "-V"}

    def walk(command: click.Command) -> None:
        for param in command.params:
            options.update(o for o in param.opts if o.startswith("-"))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                names.add(name)
                walk(sub)

    for name in COMMANDS:
        if name in EXCLUDED_COMMANDS:
            continue
        names.add(name)
        walk(builtin_command(name))
    return sorted(COMMANDS.keys() - EXCLUDED_COMMANDS), sorted(
        (names | options) - EXCLUDED_OPTIONS - EXCLUDED_COMMANDS
    )


COMMAND_NAMES, WORDS = _vocabulary()


def _shapes() -> list[tuple[tuple[str, ...], int, dict[str, bool]]]:
    """Each runnable command path, its positional count and its options (name -> is a flag)."""
    found: list[tuple[tuple[str, ...], int, dict[str, bool]]] = []

    def walk(path: tuple[str, ...], command: click.Command) -> None:
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk((*path, name), sub)
            return
        positional = sum(1 for p in command.params if isinstance(p, click.Argument))
        options = {
            o: bool(getattr(p, "is_flag", False) or getattr(p, "count", False))
            for p in command.params
            if isinstance(p, click.Option)
            for o in p.opts
            if o.startswith("--")
        }
        found.append((path, positional, options))

    for name in COMMANDS:
        if name not in EXCLUDED_COMMANDS:
            walk((name,), builtin_command(name))
    return found


SHAPES = _shapes()


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tracker with a few items the fuzzer can name, shared by every example."""
    repo = tmp_path_factory.mktemp("fuzz") / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tracker = Tracker(repo / ".agents" / "pm", author="fuzz", env={})
    tracker.init()
    for title in ("First", "Second"):
        tracker.create({"title": title})
    yield tracker.root


_hostile = st.sampled_from(
    [
        "",
        " ",
        "0",
        "-1",
        "99999999999999999999999",
        "1e999",
        "nan",
        "true",
        "../../etc/passwd",
        "/etc/passwd",
        "a\x00b",
        "\\..\\x",
        "pm-" + "a" * 300,
        "x" * 5000,
        "\udcff",
        "é中🙂",
        "--",
        "-",
        "=",
        "key=value",
        "a,b,,c",
        "{}",
        "[1,2",
        "open",
        "closed",
        "Task",
        "blocked_by",
        "2026-01-01",
    ]
)
_token = st.one_of(
    st.sampled_from(WORDS),
    _hostile,
    st.text(st.characters(codec="utf-8"), max_size=12),
    st.text(st.characters(blacklist_categories=()), max_size=6),
)


#: Stands for "the n-th item id at run time": items come and go as examples run,
#: and hypothesis needs the same draws to describe the same example.
ID_MARK = "\x00id:"
_id_ref = st.integers(0, 9).map(lambda n: f"{ID_MARK}{n}")


def resolve(args: list[str], root: Path) -> list[str]:
    """Replace id placeholders with ids of items that exist now."""
    ids = sorted(p.stem for p in root.glob("*/pm-*.toon")) or ["pm-none"]
    return [ids[int(a[len(ID_MARK) :]) % len(ids)] if a.startswith(ID_MARK) else a for a in args]


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    """A command name (usually), then words, options, ids and hostile values."""
    head = draw(st.one_of(st.sampled_from(COMMAND_NAMES), _token))
    rest = draw(st.lists(st.one_of(_token, _id_ref), max_size=7))
    return [head, *rest]


_value = st.one_of(
    _hostile,
    st.sampled_from(["1", "2", "high", "in_progress", "Task", "Epic", "tag1", "docs/a.md", "x=1"]),
    st.text(st.characters(codec="utf-8"), max_size=20),
)


@st.composite
def shaped_argv(draw: st.DrawFn) -> list[str]:
    """A real command with ids or values in its positional slots and its own options.

    Mostly well formed, so the fuzzing reaches the SDK's checks instead of
    stopping at click's usage errors.
    """
    path, positional, options = draw(st.sampled_from(SHAPES))
    args = list(path)
    targets = _id_ref
    for _ in range(positional):
        args.append(draw(st.one_of(targets, targets, _value)))
    chosen = draw(st.lists(st.sampled_from(sorted(options)), max_size=4)) if options else []
    for option in chosen:
        if option in EXCLUDED_OPTIONS:
            continue
        args.append(option)
        if not options[option]:
            args.append(draw(st.one_of(_value, targets)))
    if draw(st.booleans()):
        args.append("--json")
    return args


def run_pm(root: Path, args: list[str]) -> tuple[int, str, str]:
    """``main(["--path", root, *args])`` with stdin, stdout, stderr and env isolated."""
    runner = CliRunner()
    with runner.isolation(
        input="", env={"PM_PATH": None, "PM_AUTHOR": "fuzz", "PM_DEBUG": None}
    ) as (out, err, _):
        code = main(["--path", str(root), *args])
        sys.stdout.flush()
        sys.stderr.flush()
        streams = (out.getvalue(), err.getvalue())
    return code, *(s.decode("utf-8", "backslashreplace") for s in streams)


def assert_clean(args: list[str], code: int, err: str) -> None:
    """A documented exit code; a failure is one error line plus an optional hint (or one JSON line)."""
    assert code in EXIT_CODES, (args, code, err)
    assert "Traceback" not in err, (args, err)
    assert "rerun with PM_DEBUG=1" not in err, (args, err)  # the catch-all for bugs
    if code == 0:
        return
    lines = [line for line in err.splitlines() if line.strip()]
    if "--json" in args:  # one JSON object: {error, code, hint?, details?}
        assert len(lines) == 1, (args, err)
        body = json.loads(lines[0])
        assert body["code"] == code and body["error"], (args, err)
        return
    assert lines and lines[0].startswith("error: "), (args, err)
    assert all(line.startswith(("error: ", "hint: ")) for line in lines), (args, err)
    assert len(lines) <= 2, (args, err)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_real_commands_with_hostile_values_end_in_a_documented_exit_code(
    fuzz_root: Path, data: st.DataObject
) -> None:
    args = resolve(data.draw(shaped_argv()), fuzz_root)
    code, _out, err = run_pm(fuzz_root, args)
    event(f"exit {code}")
    assert_clean(args, code, err)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_argument_list_ends_in_a_documented_exit_code_with_a_one_line_error(
    fuzz_root: Path, data: st.DataObject
) -> None:
    args = resolve(data.draw(argv()), fuzz_root)
    code, _out, err = run_pm(fuzz_root, args)
    event(f"exit {code}")  # shown by --hypothesis-show-statistics
    assert_clean(args, code, err)


@pytest.mark.parametrize(
    "args",
    [
        ["create", "--title", "bad \udcff byte"],
        ["get", "pm-\udcff"],
        ["search", "\udcff"],
        ["comments", "pm-x", "--add", "\udcff"],
    ],
    ids=["create", "get", "search", "comment"],
)
def test_arguments_that_are_not_utf8_are_a_usage_error(fuzz_root: Path, args: list[str]) -> None:
    code, out, err = run_pm(fuzz_root, args)
    assert (code, out) == (2, ""), err
    assert err.startswith("error: argument "), err
    assert "not valid UTF-8" in err


def test_json_errors_are_one_json_line(fuzz_root: Path) -> None:
    code, _out, err = run_pm(fuzz_root, ["get", "../../etc/passwd", "--json"])
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith('{"error": "invalid item id')
