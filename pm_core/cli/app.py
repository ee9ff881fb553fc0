"""The ``pm`` command group: lazy subcommands, global options, errors and exit codes.

Each built-in command lives in a ``cmd_*`` module imported only when that
command runs, so ``pm get`` never pays for the code of ``pm graph``. A name
that is not built in is looked up among the extension commands installed
plugins contribute (:mod:`pm_core.cli.extensions`).

Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 conflict, 5 dependency
failed, 6 no effect, 7 partial. Errors print ``error: <problem>`` and
``hint: <fix>`` on stderr (one JSON line instead under ``--json``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import click

from pm_core import __version__
from pm_core.cli.state import CliState
from pm_core.tracker.errors import PmError

#: Built-in command name -> module that defines it (attribute ``cmd_<name>``).
COMMANDS: dict[str, str] = {
    "init": "pm_core.cli.cmd_items",
    "create": "pm_core.cli.cmd_items",
    "get": "pm_core.cli.cmd_read",
    "update": "pm_core.cli.cmd_items",
    "delete": "pm_core.cli.cmd_items",
    "copy": "pm_core.cli.cmd_items",
    "append": "pm_core.cli.cmd_items",
    "close": "pm_core.cli.cmd_lifecycle",
    "claim": "pm_core.cli.cmd_lifecycle",
    "release": "pm_core.cli.cmd_lifecycle",
    "claims": "pm_core.cli.cmd_lifecycle",
    "reopen": "pm_core.cli.cmd_lifecycle",
    "comments": "pm_core.cli.cmd_evidence",
    "notes": "pm_core.cli.cmd_evidence",
    "learnings": "pm_core.cli.cmd_evidence",
    "files": "pm_core.cli.cmd_evidence",
    "docs": "pm_core.cli.cmd_evidence",
    "history": "pm_core.cli.cmd_history",
    "restore": "pm_core.cli.cmd_history",
    "mutate": "pm_core.cli.cmd_history",
    "list": "pm_core.cli.cmd_read",
    "search": "pm_core.cli.cmd_read",
    "focus": "pm_core.cli.cmd_read",
    "next": "pm_core.cli.cmd_work",
    "context": "pm_core.cli.cmd_work",
    "deps": "pm_core.cli.cmd_graph",
    "graph": "pm_core.cli.cmd_graph",
    "plan": "pm_core.cli.cmd_graph",
    "validate": "pm_core.cli.cmd_assurance",
    "health": "pm_core.cli.cmd_assurance",
    "test": "pm_core.cli.cmd_assurance",
    "config": "pm_core.cli.cmd_admin",
    "schema": "pm_core.cli.cmd_admin",
    "contracts": "pm_core.cli.cmd_admin",
    "events": "pm_core.cli.cmd_admin",
    "index": "pm_core.cli.cmd_index",
}

EXIT_USAGE = 2


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Built-in names plus extension commands (only computed for help)."""
        from pm_core.cli.extensions import extension_names

        return sorted(set(COMMANDS) | set(extension_names()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module of a built-in command, else ask the installed plugins."""
        module_name = COMMANDS.get(cmd_name)
        if module_name is not None:
            command: click.Command = getattr(import_module(module_name), f"cmd_{cmd_name}")
            return command
        from pm_core.cli.extensions import extension_command

        return extension_command(cmd_name)

    def _short_help(self, ctx: click.Context, name: str) -> str:
        command = self.get_command(ctx, name) if name in COMMANDS else None
        return "" if command is None else command.get_short_help_str(limit=80)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands from their summaries without importing every module.

        Extension commands get a section of their own, and plugins that failed
        (``error``/``conflict``) are named so a missing command can be explained.
        """
        from pm_core.cli.extensions import command_summaries, installed_host

        rows = [
            # A built-in outside the agent capability table (``index``) has its own help line.
            (name, summary or self._short_help(ctx, name))
            for name, summary in sorted(command_summaries(set(COMMANDS)).items())
        ]
        sections = (
            ("Commands", [row for row in rows if row[0] in COMMANDS]),
            ("Extension commands", [row for row in rows if row[0] not in COMMANDS]),
        )
        for title, section in sections:
            if section:
                with formatter.section(title):
                    formatter.write_dl(section)
        records = installed_host().records.values()
        broken = sorted(r.name for r in records if r.status in ("error", "conflict"))
        if broken:
            with formatter.section("Plugins not working"):
                formatter.write_text(f"{', '.join(broken)}: run `pm-plugins list -v` for why.")


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--path",
    envvar="PM_PATH",
    metavar="DIR",
    help="Tracker root (the .agents/pm directory); also PM_PATH.",
)
@click.option("--author", metavar="NAME", help="Author recorded on changes (else PM_AUTHOR).")
@click.option("--json", "json_output", is_flag=True, help="Print strict JSON (never shrunk).")
@click.version_option(
    __version__, "-V", "--version", prog_name="pm", message="%(prog)s %(version)s"
)
@click.pass_context
def cli(ctx: click.Context, path: str | None, author: str | None, json_output: bool) -> None:
    """pm: a git-native project tracker for humans and coding agents.

    Output is TOON by default; pass --json for strict JSON.
    """
    ctx.obj = CliState(path, author, json_output)


def run(args: Sequence[str]) -> int:
    """Run the group with ``args``; map every failure to an exit code and a clear message."""
    wants_json = "--json" in args
    for number, arg in enumerate(args, start=1):
        # A non-UTF-8 byte in argv decodes to a lone surrogate, which no file,
        # JSON output or terminal can hold; a NUL (only possible through
        # main(argv)) would reach the OS in a path. Refuse both up front.
        problem = "contains a NUL byte" if "\x00" in arg else None
        if problem is None and not arg.isascii() and not _utf8(arg):
            problem = "is not valid UTF-8"
        if problem is not None:
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
            return _fail(
                f"argument {number} {problem}: {shown[:80]!r}",
                "pass text in UTF-8 without NUL bytes",
                EXIT_USAGE,
                wants_json,
            )
    try:
        result = cli.main(args=list(args), prog_name="pm", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        # `pm` or `pm plan` alone: show what is available, as help does.
        sys.stdout.write(exc.ctx.get_help() + "\n" if exc.ctx else "")
        return 0
    except click.UsageError as exc:
        return _fail(_usage_message(exc), _usage_hint(exc), EXIT_USAGE, wants_json)
    except click.Abort:
        return _fail("aborted", None, 130, wants_json)
    except click.ClickException as exc:
        return _fail(exc.format_message(), None, exc.exit_code or 1, wants_json)
    except PmError as exc:
        return _fail(exc.message, exc.hint, exc.code, wants_json, exc.details)
    except KeyboardInterrupt:
        return _fail("interrupted", None, 130, wants_json)
    except Exception as exc:  # a bug, not bad input: one line unless PM_DEBUG asks for more
        if os.environ.get("PM_DEBUG", "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        message = f"unexpected {type(exc).__name__}: {exc}"
        return _fail(message, "rerun with PM_DEBUG=1 for a traceback", 1, wants_json)
    return result if isinstance(result, int) else 0


def _utf8(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _usage_message(exc: click.UsageError) -> str:
    message = exc.format_message()
    if isinstance(exc, click.NoSuchOption) and exc.possibilities:
        message = f"no such option: {exc.option_name}"
        message += f" (did you mean {', '.join(sorted(exc.possibilities))}?)"
    return message


def _usage_hint(exc: click.UsageError) -> str:
    ctx = exc.ctx
    if ctx is None or ctx.command is cli or ctx.parent is None:
        return "run `pm --help` to list commands and global options"
    return f"run `{ctx.command_path} --help` for its arguments and options"


def _fail(message: str, hint: str | None, code: int, as_json: bool, details: Any = None) -> int:
    one_line = " ".join(message.split())
    if as_json:
        import json

        body: dict[str, Any] = {"error": one_line, "code": code}
        if hint:
            body["hint"] = hint
        if details is not None:
            body["details"] = details
        sys.stderr.write(json.dumps(body, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stderr.write(f"error: {one_line}\n")
        if hint:
            sys.stderr.write(f"hint: {' '.join(hint.split())}\n")
    return code
