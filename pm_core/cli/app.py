"""The ``pm`` command group in click: lazy subcommands, global options, usage errors.

Each built-in command's module (:mod:`pm_core.cli.commands`) is imported only
when it runs; other names are looked up among plugin commands
(:mod:`pm_core.cli.extensions`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from pm_core import __version__
from pm_core.capabilities import ROWS
from pm_core.cli.argspec import COMMANDS, Spec, find_declared
from pm_core.cli.clickstate import to_click, to_click_group
from pm_core.cli.failure import EXIT_USAGE, argument_problem, fail, guarded
from pm_core.cli.state import CliState


def builtin_command(name: str) -> click.Command:
    """The click command of built-in ``name``, built from its declaration (a spec or a group)."""
    spec = find_declared(name)
    if spec is None:  # a row of the capability table whose module declares no such command
        raise LookupError(f"built-in command {name!r} is not declared in {COMMANDS[name]}")
    return to_click(spec) if isinstance(spec, Spec) else to_click_group(spec)


#: Help sections of built-in commands, by tier; ``pm --help`` shows the first two.
_SECTIONS = (
    ("core", "Core commands"),
    ("standard", "Standard commands"),
    ("full", "Full commands"),
)


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Built-in names (tier order, as the capability table lists them), then extensions."""
        from pm_core.cli.extensions import extension_names

        listed = [row.name for row in ROWS if row.tier != "internal"]
        return listed + [name for name in extension_names() if name not in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module of a built-in command, else ask the installed plugins."""
        if cmd_name in COMMANDS:
            return builtin_command(cmd_name)
        from pm_core.cli.extensions import extension_command

        return extension_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands by tier from the capability table, without importing their modules.

        ``pm --help`` shows the core and standard tiers; ``pm help --all``
        adds the full tier and every extension command. Plugins that failed
        (``error``/``conflict``) are named so a missing command can be explained.
        """
        from pm_core.cli.extensions import extension_rows, installed_host

        show_all = bool(ctx.meta.get("pm.help_all"))
        shown = {"core", "standard", "full"} if show_all else {"core", "standard"}
        extensions = extension_rows()
        for tier, title in _SECTIONS:
            if tier not in shown:
                continue
            rows = [(r.name, r.summary) for r in ROWS if r.tier == tier]
            rows += [
                (name, f"{summary} [extension]") for name, t, summary in extensions if t == tier
            ]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        hidden = [r.name for r in ROWS if r.tier not in shown and r.tier != "internal"]
        hidden += [name for name, t, _ in extensions if t not in shown]
        if hidden:
            with formatter.section("More"):
                formatter.write_text(
                    f"{len(hidden)} more commands ({', '.join(hidden)}): `pm help --all` lists them."
                )
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
    help="Tracker root (.agents/pm); also PM_PATH.",
)
@click.option(
    "--pm-path",
    metavar="DIR",
    help="The same as --path (preferred when both are given).",
)
@click.option("--author", metavar="NAME", help="Author recorded on changes (else PM_AUTHOR).")
@click.option("--json", "json_output", is_flag=True, help="Print strict JSON (never shrunk).")
@click.option("--lean", is_flag=True, help="Leave out nulls and empty lists and objects.")
@click.option("--id-only", is_flag=True, help="Mutations print only id and status.")
@click.option("--quiet", is_flag=True, help="Print nothing on stdout (errors still on stderr).")
@click.option(
    "--no-changed-fields", is_flag=True, help="Mutations leave out the changed_fields list."
)
@click.option("--full-changed-fields", is_flag=True, help="Mutations also print the whole item.")
@click.version_option(
    __version__, "-V", "--version", prog_name="pm", message="%(prog)s %(version)s"
)
@click.pass_context
def cli(
    ctx: click.Context,
    /,
    path: str | None,
    pm_path: str | None,
    author: str | None,
    json_output: bool,
    **output: bool,
) -> None:
    """pm: a git-native project tracker for humans and coding agents."""
    ctx.obj = CliState(pm_path if pm_path is not None else path, author, json_output, output=output)


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
