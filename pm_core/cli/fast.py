"""The fast path: everyday read commands without importing click.

Importing click is a large share of a warm ``pm list``. For the commands
declared in a ``SPECS`` table (:mod:`pm_core.cli.argspec`) this module reads
the spellings people and agents type every day: long options with a separate
or ``=`` value, short options with a separate or attached value, flags,
positionals in any order, ``--path``/``--author``/``--json`` before the
command. It then runs the command's function with the values click would have
passed.

Anything else (help, ``--version``, ``--``, an unknown or malformed option, a
value that looks like an option, a bad number, a missing or extra argument,
shell completion) returns ``None`` and :mod:`pm_core.cli.app` runs click, which
gives the same result or the usual error. ``tests/unit/test_cli_fast.py``
checks the two parsers against each other on generated command lines.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pm_core.cli.argspec import COMMANDS, Opt, Spec, find_spec
from pm_core.cli.failure import argument_problem, fail, guarded
from pm_core.cli.state import OUTPUT_FLAGS

if TYPE_CHECKING:
    from pm_core.cli.state import CliState

#: Global options (before the command name) the fast path reads: name -> takes a value.
_GLOBAL = {
    "--path": True,
    "--pm-path": True,
    "--author": True,
    "--json": False,
    **{"--" + name.replace("_", "-"): False for name in OUTPUT_FLAGS},
}
_JSON = Opt("--json", dest="json_flag", kind="flag")


class _Unsure(Exception):
    """The command line is outside what this reader is sure of: click decides."""


def run(args: Sequence[str]) -> int | None:
    """Run ``args`` if every part is read with certainty; ``None`` hands them to click."""
    if "_PM_COMPLETE" in os.environ:  # click's shell completion
        return None
    wants_json = "--json" in args
    refused = argument_problem(args, wants_json)
    if refused is not None:
        return refused
    parsed = parse(args)
    if parsed is None:
        return None
    spec, options, values = parsed
    from pm_core.cli.state import CliState

    # As click reads --path: given (even empty) wins, else a non-empty PM_PATH.
    # --pm-path (the TypeScript pm's name) is preferred over --path.
    given = options.get("--pm-path", options.get("--path"))
    path = given if given is not None else os.environ.get("PM_PATH") or None
    json_flag = values.pop("json_flag", False)
    as_json = bool(options.get("--json")) or json_flag
    output = {name: bool(options.get("--" + name.replace("_", "-"))) for name in OUTPUT_FLAGS}
    state = CliState(path, options.get("--author"), as_json, output=output)
    return guarded(lambda: _call(spec, state, values, wants_json), wants_json)


def _call(spec: Spec, state: CliState, values: dict[str, Any], wants_json: bool) -> int:
    try:
        code = spec.run(state, **values)
    except KeyboardInterrupt:
        # As click does: end the line, then "aborted".
        sys.stderr.write("\n")
        return fail("aborted", None, 130, wants_json)
    return code or 0


def parse(args: Sequence[str]) -> tuple[Spec, dict[str, Any], dict[str, Any]] | None:
    """``(spec, global options, values by dest)``, or ``None`` when click must decide."""
    try:
        position, options = _globals(args)
        name = args[position] if position < len(args) else None
        if name is None or name not in COMMANDS:
            return None
        spec = find_spec(name)
        if spec is None:
            return None
        return spec, options, _command(spec, args[position + 1 :])
    except _Unsure:
        return None


def _globals(args: Sequence[str]) -> tuple[int, dict[str, Any]]:
    options: dict[str, Any] = {}
    position = 0
    while position < len(args) and args[position].startswith("-"):
        name, eq, value = args[position].partition("=")
        takes_value = _GLOBAL.get(name)
        if takes_value is None or (eq and not takes_value):
            raise _Unsure
        if takes_value and not eq:
            position += 1
            value = _separate_value(args, position)
        options[name] = _plain(value) if takes_value else True
        position += 1
    return position, options


def _separate_value(args: Sequence[str], position: int, *, numeric: bool = False) -> str:
    """The value given as the next argument (a negative number, for a numeric option)."""
    if position >= len(args):
        raise _Unsure
    value = args[position]
    if numeric and value.startswith("-") and value[1:].replace(".", "", 1).isdigit():
        return value
    return _plain(value)


def _plain(value: str) -> str:
    """``value``, unless it starts with ``-``: click refuses such values (even after ``=``)."""
    if value.startswith("-"):
        raise _Unsure
    return value


def _command(spec: Spec, args: Sequence[str]) -> dict[str, Any]:
    declared = (*spec.opts, _JSON) if spec.json else spec.opts
    longs: dict[str, Opt] = {}
    shorts: dict[str, Opt] = {}
    for opt in declared:
        for decl in opt.decls:
            (longs if decl.startswith("--") else shorts)[decl] = opt
    given: dict[str, list[Any]] = {}
    positionals: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            found = longs.get(name)
            if found is None or (eq and not found.takes_value):
                raise _Unsure  # includes "--" itself and --help
            opt = found
            if opt.takes_value and not eq:
                position += 1
                value = _separate_value(args, position, numeric=opt.kind in ("int", "float"))
        elif arg.startswith("-") and arg != "-":
            found = shorts.get(arg[:2])
            if found is None or not found.takes_value:
                raise _Unsure  # -h, a number like -5, grouped flags
            opt = found
            value = arg[2:]
            if not value:
                position += 1
                value = _separate_value(args, position)
        else:
            positionals.append(arg)
            position += 1
            continue
        numeric = opt.kind in ("int", "float") and value[1:].replace(".", "", 1).isdigit()
        given.setdefault(opt.dest, []).append(
            _convert(opt, value if numeric else _plain(value)) if opt.takes_value else True
        )
        position += 1
    values = {opt.dest: _value(opt, given.get(opt.dest)) for opt in declared}
    for wanted in spec.args:
        if wanted.variadic:
            values[wanted.name] = tuple(positionals)
            positionals = []
        elif positionals:
            values[wanted.name] = positionals.pop(0)
        elif wanted.required:
            raise _Unsure
        else:
            values[wanted.name] = None
    if positionals:
        raise _Unsure
    return values


def _value(opt: Opt, given: list[Any] | None) -> Any:
    if opt.multiple:
        return tuple(given or ())
    if given:
        return given[-1]  # a repeated single-value option: the last one counts
    return False if opt.kind == "flag" else opt.default


def _convert(opt: Opt, raw: str) -> Any:
    if opt.strict and isinstance(opt.choices, tuple) and raw not in opt.choices:
        raise _Unsure  # click names the allowed values
    try:
        if opt.kind == "int":
            number = int(raw)
            if opt.minimum is not None and number < opt.minimum:
                raise _Unsure
            return number
        if opt.kind == "float":
            return float(raw)
    except ValueError:
        raise _Unsure from None
    return raw
