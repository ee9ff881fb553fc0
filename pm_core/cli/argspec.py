"""Argument declarations of the hot read commands, written once for two parsers.

``get``, ``list``, ``search``, ``focus``, ``next`` and ``context`` declare
their arguments here instead of with click decorators. Click builds its command
from the declaration (:func:`pm_core.cli.clickstate.to_click`: help, every
error message, every accepted spelling), and :mod:`pm_core.cli.fast` reads the
everyday spellings from the same declaration without importing click, which
costs about a fifth of a warm read. Anything the fast reader is not sure of goes
to click, so the two can only differ in speed.

This module imports nothing beyond the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, Literal

#: Built-in command name -> the module that defines it: a ``SPECS`` entry
#: (:class:`Spec`), else a click command named ``cmd_<name>``.
COMMANDS: dict[str, str] = {
    "init": "pm_core.cli.commands.items",
    "create": "pm_core.cli.commands.items",
    "get": "pm_core.cli.commands.read",
    "update": "pm_core.cli.commands.items",
    "delete": "pm_core.cli.commands.items",
    "copy": "pm_core.cli.commands.items",
    "append": "pm_core.cli.commands.items",
    "close": "pm_core.cli.commands.lifecycle",
    "claim": "pm_core.cli.commands.lifecycle",
    "release": "pm_core.cli.commands.lifecycle",
    "claims": "pm_core.cli.commands.lifecycle",
    "reopen": "pm_core.cli.commands.lifecycle",
    "comments": "pm_core.cli.commands.evidence",
    "notes": "pm_core.cli.commands.evidence",
    "learnings": "pm_core.cli.commands.evidence",
    "files": "pm_core.cli.commands.evidence",
    "docs": "pm_core.cli.commands.evidence",
    "history": "pm_core.cli.commands.history",
    "restore": "pm_core.cli.commands.history",
    "mutate": "pm_core.cli.commands.history",
    "list": "pm_core.cli.commands.read",
    "search": "pm_core.cli.commands.read",
    "focus": "pm_core.cli.commands.read",
    "next": "pm_core.cli.commands.work",
    "context": "pm_core.cli.commands.work",
    "deps": "pm_core.cli.commands.graph",
    "graph": "pm_core.cli.commands.graph",
    "plan": "pm_core.cli.commands.graph",
    "validate": "pm_core.cli.commands.assurance",
    "health": "pm_core.cli.commands.assurance",
    "test": "pm_core.cli.commands.assurance",
    "config": "pm_core.cli.commands.admin",
    "schema": "pm_core.cli.commands.admin",
    "contracts": "pm_core.cli.commands.admin",
    "events": "pm_core.cli.commands.admin",
    "index": "pm_core.cli.commands.index",
    "merge": "pm_core.cli.commands.merge",
    "history-repair": "pm_core.cli.commands.merge",
}

Kind = Literal["text", "int", "float", "flag"]


class Opt:
    """An option: its spellings, where its value goes, and how it is read."""

    __slots__ = (
        "decls",
        "default",
        "dest",
        "help",
        "kind",
        "metavar",
        "minimum",
        "multiple",
        "show_default",
    )

    def __init__(
        self,
        *decls: str,
        dest: str,
        kind: Kind = "text",
        multiple: bool = False,
        minimum: int | None = None,
        default: Any = None,
        metavar: str | None = None,
        help: str = "",
        show_default: bool = False,
    ) -> None:
        self.decls = decls
        self.dest = dest
        self.kind: Kind = kind
        self.multiple = multiple
        self.minimum = minimum
        self.default = default
        self.metavar = metavar
        self.help = help
        self.show_default = show_default

    @property
    def takes_value(self) -> bool:
        """Whether the option reads a value (every kind but a flag)."""
        return self.kind != "flag"


class Arg:
    """A positional argument: one value, or every remaining one (``variadic``)."""

    __slots__ = ("metavar", "name", "required", "variadic")

    def __init__(
        self,
        name: str,
        *,
        variadic: bool = False,
        required: bool = True,
        metavar: str | None = None,
    ) -> None:
        self.name = name
        self.variadic = variadic
        #: A variadic argument is never required (click's default for ``nargs=-1``).
        self.required = required and not variadic
        self.metavar = metavar


class Spec:
    """A command: its name, arguments, options, and the function that runs it.

    ``run`` receives the :class:`pm_core.cli.state.CliState` and one keyword
    per argument and option (named by ``dest``); its docstring is the help.
    Every spec command also takes ``--json``.
    """

    __slots__ = ("args", "name", "opts", "run")

    def __init__(
        self,
        name: str,
        run: Callable[..., None],
        *,
        args: tuple[Arg, ...] = (),
        opts: tuple[Opt, ...] = (),
    ) -> None:
        self.name = name
        self.run = run
        self.args = args
        self.opts = opts

    @property
    def help(self) -> str:
        """The help text: the docstring of ``run``."""
        return self.run.__doc__ or ""


def limit_opt(help: str, minimum: int = 1) -> Opt:
    """``--limit N`` / ``-n N``: an integer of at least ``minimum``."""
    return Opt("--limit", "-n", dest="limit", kind="int", minimum=minimum, help=help)


def specs(*declared: Spec) -> dict[str, Spec]:
    """A module's ``SPECS`` table, by command name."""
    return {spec.name: spec for spec in declared}


def find_spec(name: str) -> Spec | None:
    """The declaration of built-in command ``name``, if its module declares it."""
    module_name = COMMANDS.get(name)
    if module_name is None:
        return None
    declared: dict[str, Spec] = getattr(import_module(module_name), "SPECS", {})
    return declared.get(name)
