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

from pm_core.capabilities import ROWS
from pm_core.params import Arg, Opt, Param, limit_opt

__all__ = [
    "COMMANDS",
    "Arg",
    "Group",
    "Opt",
    "Spec",
    "find_declared",
    "find_spec",
    "limit_opt",
    "specs",
]

#: Built-in command name -> the module whose ``SPECS`` declares it (a
#: :class:`Spec` or a :class:`Group`). Projected from
#: the capability table (:data:`pm_core.capabilities.ROWS`), the one list of commands.
COMMANDS: dict[str, str] = {row.name: row.module for row in ROWS}


class Spec:
    """A command: its name, arguments, options, and the function that runs it.

    ``run`` receives the :class:`pm_core.cli.state.CliState` and one keyword
    per argument and option (named by ``dest``); its docstring is the help.
    It may return an exit code (the bulk commands' 6 and 7), after saying why
    on stderr. Every spec command also takes ``--json``, unless ``json`` is
    false (``help``, whose output is text whatever is asked).
    """

    __slots__ = ("args", "json", "name", "opts", "run")

    def __init__(
        self,
        name: str,
        run: Callable[..., int | None],
        *,
        args: tuple[Arg, ...] = (),
        opts: tuple[Opt, ...] = (),
        params: tuple[Param, ...] = (),
        json: bool = True,
    ) -> None:
        self.name = name
        self.run = run
        self.json = json
        #: ``params`` (a declaration from :mod:`pm_core.commands`) split into both kinds.
        self.args = args + tuple(p for p in params if isinstance(p, Arg))
        self.opts = opts + tuple(p for p in params if isinstance(p, Opt))

    @property
    def help(self) -> str:
        """The help text: the docstring of ``run``."""
        return self.run.__doc__ or ""

    @property
    def params(self) -> tuple[Param, ...]:
        """Positionals, then options: the declaration tools and docs project from."""
        return (*self.args, *self.opts)


class Group:
    """A command group: its name, help, and a :class:`Spec` (or a nested group) per subcommand.

    Click builds it (:func:`pm_core.cli.clickstate.to_click_group`); the fast
    path leaves groups to click.
    """

    __slots__ = ("help", "name", "subcommands")

    def __init__(self, name: str, help: str, *subcommands: Spec | Group) -> None:
        self.name = name
        self.help = help
        self.subcommands = subcommands


def specs(*declared: Spec | Group) -> dict[str, Spec | Group]:
    """A module's ``SPECS`` table, by command name."""
    return {spec.name: spec for spec in declared}


def find_declared(name: str) -> Spec | Group | None:
    """The declaration of built-in command ``name`` (a command or a group), if its module has one."""
    module_name = COMMANDS.get(name)
    if module_name is None:
        return None
    declared: dict[str, Spec | Group] = getattr(import_module(module_name), "SPECS", {})
    return declared.get(name)


def find_spec(name: str) -> Spec | None:
    """The declaration of built-in command ``name``, if its module declares it (not a group)."""
    found = find_declared(name)
    return found if isinstance(found, Spec) else None
