"""The ``pm`` command group in click: lazy subcommands, global options, usage errors.

Each built-in command's module (:mod:`pm_core.cli.commands`) is imported only
when it runs; other names are looked up among plugin commands
(:mod:`pm_core.cli.extensions`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module

import click

from pm_core import __version__
from pm_core.cli.argspec import COMMANDS, find_spec
from pm_core.cli.clickstate import to_click
from pm_core.cli.failure import EXIT_USAGE, argument_problem, fail, guarded
from pm_core.cli.state import CliState


def builtin_command(name: str) -> click.Command:
    """The click command of built-in ``name`` (declared by a spec, or a ``cmd_<name>``)."""
    spec = find_spec(name)
    if spec is not None:
        return to_click(spec)
    command: click.Command = getattr(import_module(COMMANDS[name]), f"cmd_{name.replace('-', '_')}")
    return command


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Built-in names plus extension commands (only computed for help)."""
        from pm_core.cli.extensions import extension_names

        return sorted(set(COMMANDS) | set(extension_names()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module of a built-in command, else ask the installed plugins."""
        if cmd_name in COMMANDS:
            return builtin_command(cmd_name)
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
    refused = argument_problem(args, wants_json)
    if refused is not None:
        return refused
    return guarded(lambda: _run_click(args, wants_json), wants_json)


def _run_click(args: Sequence[str], wants_json: bool) -> int:
    try:
        result = cli.main(args=list(args), prog_name="pm", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        # `pm` or `pm plan` alone: show what is available, as help does.
        sys.stdout.write(exc.ctx.get_help() + "\n" if exc.ctx else "")
        return 0
    except click.UsageError as exc:
        return fail(_usage_message(exc), _usage_hint(exc), EXIT_USAGE, wants_json)
    except click.Abort:
        return fail("aborted", None, 130, wants_json)
    except click.ClickException as exc:
        return fail(exc.format_message(), None, exc.exit_code or 1, wants_json)
    return result if isinstance(result, int) else 0


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
