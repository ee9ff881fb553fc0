"""Click's side of the CLI state: ``pass_state``, ``--json``, and commands built from specs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from pm_core.cli.argspec import Group, Opt, Spec
from pm_core.cli.state import CliState

F = TypeVar("F", bound=Callable[..., Any])

pass_state = click.make_pass_decorator(CliState)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.ensure_object(CliState).json = True


def json_option(func: F) -> F:
    """``--json`` on a command: the same as the global flag."""
    option = click.option(
        "--json",
        "json_flag",
        is_flag=True,
        expose_value=False,
        callback=_set_json,
        help="Print strict JSON (never shrunk).",
    )
    return option(func)


def _param_type(opt: Opt) -> click.ParamType[Any] | None:
    if opt.strict and isinstance(opt.choices, tuple):
        return click.Choice(opt.choices)
    if opt.kind == "int":
        return click.INT if opt.minimum is None else click.IntRange(min=opt.minimum)
    if opt.kind == "float":
        return click.FLOAT
    return None


def _workspace_values(ctx: click.Context) -> dict[str, tuple[str, ...]]:
    """The workspace's types and statuses for help (the built-in ones without a tracker)."""
    state = ctx.find_object(CliState)
    try:
        if state is None:
            raise LookupError("no state")
        contracts = state.tracker.schema.contracts()
        return {"types": contracts.types, "statuses": contracts.statuses}
    except Exception:  # no tracker here (help works anywhere): the built-in lists
        from pm_core.tracker.model.item import BUILTIN_TYPES, STATUSES

        return {"types": BUILTIN_TYPES, "statuses": STATUSES}


class DeclaredOption(click.Option):
    """An option whose help ends with its allowed values (read from the workspace when they can change)."""

    def __init__(self, *args: Any, choices: tuple[str, ...] | str | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.declared_choices = choices

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[Any]:
        """Shell completion offers the allowed values (the workspace's types and statuses)."""
        from click.shell_completion import CompletionItem

        from pm_core.params import allowed

        if self.declared_choices is None:
            return list(super().shell_complete(ctx, incomplete))
        values = allowed(self.declared_choices, _workspace_values(ctx))
        return [CompletionItem(v) for v in values if v.startswith(incomplete)]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """Click's record, with ``One of: ...`` appended."""
        record = super().get_help_record(ctx)
        if record is None or self.declared_choices is None:
            return record
        from pm_core.params import allowed

        values = allowed(self.declared_choices, _workspace_values(ctx))
        if not values:
            return record
        where = " (this workspace's)" if self.declared_choices in ("types", "statuses") else ""
        return record[0], f"{record[1]}  One of{where}: {', '.join(values)}."


def to_click(spec: Spec) -> click.Command:
    """The click command for ``spec``: the same arguments, help and errors as the fast path's."""
    params: list[click.Parameter] = [
        click.Argument(
            [arg.name],
            nargs=-1 if arg.variadic else 1,
            required=arg.required,
            metavar=arg.metavar,
        )
        for arg in spec.args
    ]
    for opt in spec.opts:
        # An unset default is left out: click then gives a flag False and a
        # repeatable option (), where an explicit None would pass None.
        extra: dict[str, Any] = {} if opt.default is None else {"default": opt.default}
        params.append(
            DeclaredOption(
                [*opt.decls, opt.dest],
                # click's Choice already shows and completes a strict option's values.
                choices=None if opt.strict else opt.choices,
                type=_param_type(opt),
                # is_flag=False would make click 8.3+ refuse a value starting with "-"
                # (``--limit -1``); left unset, click infers it.
                is_flag=True if opt.kind == "flag" else None,
                multiple=opt.multiple,
                metavar=opt.metavar,
                help=opt.help,
                show_default=opt.show_default,
                **extra,
            )
        )

    @pass_state
    def callback(state: CliState, /, **values: Any) -> int | None:
        return spec.run(state, **values)

    command = click.Command(spec.name, callback=callback, params=params, help=spec.help)
    return json_option(command) if spec.json else command


def to_click_group(group: Group) -> click.Group:
    """The click group for ``group``: each subcommand built by :func:`to_click`."""
    return click.Group(
        group.name,
        commands={
            sub.name: to_click(sub) if isinstance(sub, Spec) else to_click_group(sub)
            for sub in group.subcommands
        },
        help=group.help,
    )
