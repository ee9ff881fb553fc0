"""Click's side of the CLI state: ``pass_state``, ``--json``, and commands built from specs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from pm_core.cli.argspec import Opt, Spec
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
    if opt.kind == "int":
        return click.INT if opt.minimum is None else click.IntRange(min=opt.minimum)
    if opt.kind == "float":
        return click.FLOAT
    return None


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
            click.Option(
                [*opt.decls, opt.dest],
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
    def callback(state: CliState, /, **values: Any) -> None:
        spec.run(state, **values)

    return json_option(click.Command(spec.name, callback=callback, params=params, help=spec.help))
