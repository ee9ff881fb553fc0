"""Command parameters, declared once: the CLI and the MCP tools both project from them.

A parameter (:class:`Opt` for ``--options``, :class:`Arg` for positionals)
records its spellings, its value type, its allowed values (a fixed tuple, or
the name of the workspace schema list they come from: :data:`SOURCES`), its
default, its help, its *role* (a ``filter`` narrowing what is read, a
``field`` of the item, a behaviour ``switch``, or ``io``: how the CLI reads
its input, which a tool receives as values instead) and its MCP tool key.

Projections:

- :mod:`pm_core.cli.clickstate` and :mod:`pm_core.cli.fast` build the CLI;
- :func:`tool_properties` gives the JSON-schema properties of the tool;
- :func:`from_tool` turns a tool call's arguments into the same keyword
  values the CLI passes, so a tool honours every option its command has;
- ``pm contracts`` and ``docs/generated/`` list :func:`describe` of each.

This module imports nothing beyond the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

Kind = Literal["text", "int", "float", "flag", "json"]
Role = Literal["filter", "field", "switch", "io"]

#: Allowed-value sources: the workspace schema's lists, and the priority scale.
SOURCES = ("types", "statuses", "priorities")
#: Priorities: 0-4 or their names.
PRIORITIES = ("0", "1", "2", "3", "4", "critical", "high", "medium", "low", "minimal")

_JSON_TYPES: Mapping[str, str] = {
    "text": "string",
    "int": "integer",
    "float": "number",
    "flag": "boolean",
}
#: A ``json`` value: the CLI reads it as JSON text, a tool takes any JSON value.
_ANY_JSON: dict[str, Any] = {
    "anyOf": [{"type": t} for t in ("object", "array", "string", "number", "boolean", "null")]
}


def camel(name: str) -> str:
    """``include_all`` -> ``includeAll`` (a trailing ``_`` is dropped: ``type_`` -> ``type``)."""
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Opt:
    """An option: spellings, where its value goes, how it is read, and its tool key."""

    __slots__ = (
        "choices",
        "compact",
        "decls",
        "default",
        "dest",
        "help",
        "kind",
        "metavar",
        "minimum",
        "multiple",
        "pairs",
        "role",
        "show_default",
        "strict",
        "tool",
        "tool_minimum",
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
        choices: tuple[str, ...] | str | None = None,
        role: Role = "switch",
        tool: str | None = "",
        compact: bool = True,
        tool_minimum: int | None = None,
        strict: bool = False,
        pairs: bool = False,
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
        #: Fixed allowed values, or a :data:`SOURCES` name (the workspace's list).
        self.choices = choices
        self.role: Role = role
        #: The MCP key: ``""`` derives it from ``dest``; ``None`` (and role ``io``) has
        #: none: a person-only switch, or how the CLI reads its input.
        self.tool: str | None = None if role == "io" or tool is None else (tool or camel(dest))
        #: Listed in the compact (core and standard) tool schemas.
        self.compact = compact
        #: A lower bound the SDK checks for both doors (the CLI then gives the
        #: SDK's message, not click's); the tool schema states it.
        self.tool_minimum = tool_minimum
        #: The CLI itself refuses a value outside the fixed ``choices`` (click's
        #: ``[a|b|c]``), where otherwise the SDK checks them.
        self.strict = strict
        #: Repeatable ``KEY=VALUE`` pairs; a tool may pass them as one object
        #: (its values keep their JSON types), read with :func:`assignments`.
        self.pairs = pairs

    @property
    def takes_value(self) -> bool:
        """Whether the option reads a value (every kind but a flag)."""
        return self.kind != "flag"

    @property
    def flag(self) -> str:
        """The main long spelling (``--title``)."""
        return next((d for d in self.decls if d.startswith("--")), self.decls[0])


class Arg:
    """A positional argument: one value, or every remaining one (``variadic``)."""

    __slots__ = (
        "choices",
        "help",
        "kind",
        "metavar",
        "name",
        "required",
        "role",
        "tool",
        "variadic",
    )

    def __init__(
        self,
        name: str,
        *,
        variadic: bool = False,
        required: bool = True,
        metavar: str | None = None,
        tool: str | None = "",
        help: str = "",
        role: Role = "switch",
        choices: tuple[str, ...] | str | None = None,
        kind: Literal["text", "json"] = "text",
    ) -> None:
        self.name = name
        #: ``json``: the CLI reads JSON text (or plain text), a tool passes any JSON value.
        self.kind: Literal["text", "json"] = kind
        self.variadic = variadic
        #: A variadic argument is never required (click's default for ``nargs=-1``).
        self.required = required and not variadic
        self.metavar = metavar
        #: The MCP key (``item_id`` is ``id``); ``None``: the CLI's alias of an option.
        self.tool: str | None = (
            None if tool is None else tool or ("id" if name == "item_id" else camel(name))
        )
        self.help = help
        self.role: Role = role
        self.choices = choices


Param = Opt | Arg


def limit_opt(help: str, minimum: int = 1) -> Opt:
    """``--limit N`` / ``-n N``: an integer of at least ``minimum``."""
    return Opt("--limit", "-n", dest="limit", kind="int", minimum=minimum, help=help, role="filter")


def split_commas(values: Iterable[str]) -> list[str]:
    """Flatten repeated and comma-separated values."""
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def parse_assignments(values: Iterable[str], flag: str) -> dict[str, str]:
    """``key=value`` pairs from a repeatable value; UsageError naming a bad one."""
    from pm_core.tracker.model.errors import UsageError

    out: dict[str, str] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} expects key=value, got {raw!r}", hint=f"{flag} name=value")
        out[key.strip()] = value
    return out


def assignments(values: Mapping[str, Any] | Iterable[str], flag: str) -> dict[str, Any]:
    """A :attr:`Opt.pairs` value as a dict: the CLI's ``key=value`` texts, or a tool's object."""
    if isinstance(values, Mapping):
        return {str(key): value for key, value in values.items()}
    return parse_assignments(values, flag)


def _module(command: str) -> Any:
    """``pm_core.commands.<module>`` of built-in ``command`` (named like its CLI module)."""
    from importlib import import_module

    from pm_core.capabilities import BY_NAME

    return import_module("pm_core.commands." + BY_NAME[command].module.rsplit(".", 1)[1])


def action(command: str) -> Callable[..., Any] | None:
    """The function both doors call for built-in ``command`` (``"group sub"``: a subcommand).

    It takes the tracker and the declared values (by ``dest``) and returns the
    answer; the CLI prints it, ``pm_run`` returns it. ``None`` when the
    command's module declares none.
    """
    try:
        table: dict[str, Callable[..., Any]] = getattr(
            _module(command.split(" ")[0]), "ACTIONS", {}
        )
    except (KeyError, ModuleNotFoundError):
        return None
    return table.get(command)


def declared(command: str) -> tuple[Param, ...]:
    """The declared parameters of built-in ``command`` (``KeyError`` when it has none here).

    A command's declaration lives in ``pm_core.commands.<module>``, the module
    named like its CLI module in the capability table.
    """
    table: dict[str, tuple[Param, ...]] = _module(command).PARAMS
    return table[command]


def declared_subcommands(command: str) -> dict[str, tuple[Param, ...]]:
    """The declared subcommands of built-in group ``command``: name -> parameters.

    A group declares each subcommand under ``"<group> <sub>"`` in its module's
    ``PARAMS``, in the order its tool and docs list them; empty when ``command``
    is no declared group.
    """
    try:
        module = _module(command)
    except ModuleNotFoundError:
        return {}
    table: dict[str, tuple[Param, ...]] = getattr(module, "PARAMS", {})
    prefix = command + " "
    return {key.removeprefix(prefix): v for key, v in table.items() if key.startswith(prefix)}


def allowed(
    choices: tuple[str, ...] | str | None, workspace: Mapping[str, Iterable[str]]
) -> list[str]:
    """The allowed values: fixed, or the workspace list a source names (``types``)."""
    if choices is None:
        return []
    if choices == "priorities":
        return list(PRIORITIES)
    if isinstance(choices, str):
        return list(workspace.get(choices, ()))
    return list(choices)


def json_schema(param: Param, workspace: Mapping[str, Iterable[str]]) -> dict[str, Any]:
    """The JSON schema of one parameter's tool value (lenient readers accept more).

    A repeatable option is an array (one string is accepted as one value); a
    variadic positional is a string of words (a list is accepted); priorities
    are an integer or a name.
    """
    if param.choices == "priorities":
        # anyOf, not a type array: portable to single-type dialects (Inspector --strict).
        one: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    elif param.kind == "json":
        # Any JSON value, spelled out: an empty schema is untyped (Inspector --strict).
        one = {"anyOf": [dict(t) for t in _ANY_JSON["anyOf"]]}
    else:
        kind = "text" if isinstance(param, Arg) else param.kind
        one = {"type": _JSON_TYPES[kind]}
        values = allowed(param.choices, workspace)
        if values:
            one["enum"] = values
    if isinstance(param, Opt):
        if param.minimum is not None or param.tool_minimum is not None:
            one["minimum"] = param.minimum if param.minimum is not None else param.tool_minimum
        if param.multiple:
            return {"type": "array", "items": one}
    return one


def tool_properties(
    params: Iterable[Param],
    workspace: Mapping[str, Iterable[str]],
    *,
    compact: bool = False,
    describe: bool = False,
) -> dict[str, dict[str, Any]]:
    """The tool's properties, one per parameter with a tool key (``compact``: the short set)."""
    out: dict[str, dict[str, Any]] = {}
    for param in params:
        if param.tool is None or param.tool in out:
            continue
        if compact and isinstance(param, Opt) and not param.compact:
            continue
        schema = json_schema(param, workspace)
        if describe and param.help:
            schema["description"] = param.help
        out[param.tool] = schema
    return out


def tool_keys(params: Iterable[Param]) -> dict[str, Param]:
    """Tool key -> parameter, for every parameter a tool accepts."""
    out: dict[str, Param] = {}
    for param in params:
        if param.tool is not None:
            out.setdefault(param.tool, param)
    return out


class ToolArgumentError(ValueError):
    """A tool argument of the wrong type; the message names the key and what it takes."""


def from_tool(params: Iterable[Param], args: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword values the CLI would pass, from a tool call's ``args``.

    Each parameter reads its tool key (or the snake_case spelling of it); an
    absent one gets the CLI's default. Repeatable values become tuples (one
    string is one value); flags become booleans. Parameters without a tool
    key get their CLI default.
    """
    declared = list(params)
    values: dict[str, Any] = {}
    for param in declared:
        dest = param.name if isinstance(param, Arg) else param.dest
        raw = None
        if param.tool is not None:
            raw = args.get(param.tool)
            if raw is None:
                raw = args.get(_snake(param.tool))
        values[dest] = _convert(param, raw)
    return values


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def _convert(param: Param, raw: Any) -> Any:
    key = param.tool or ""
    if isinstance(param, Arg):
        if raw is None and param.required and param.tool is not None:
            raise ToolArgumentError(f"missing required argument {key!r}")
        if raw is None:
            return () if param.variadic else None
        if param.kind == "json":
            return raw  # any JSON value, as the tool was given it
        if param.variadic:
            return tuple(_texts(key, raw))
        return _text(key, raw)
    if raw is None:
        if param.multiple:
            return ()
        return False if param.kind == "flag" else param.default
    if param.kind == "json":
        return raw  # any JSON value, as the tool was given it
    if param.kind == "flag":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise ToolArgumentError(f"{key} must be true or false, got {raw!r}")
    if param.pairs and isinstance(raw, Mapping):
        return dict(raw)
    if param.multiple:
        return tuple(_scalar(param, key, one) for one in _texts(key, raw, scalars=True))
    return _scalar(param, key, raw)


def _texts(key: str, raw: Any, *, scalars: bool = False) -> list[Any]:
    if isinstance(raw, list | tuple):
        return list(raw)
    if isinstance(raw, str) or (scalars and isinstance(raw, int | float)):
        return [raw]
    raise ToolArgumentError(f"{key} must be a string or a list of strings, got {raw!r}")


def _text(key: str, raw: Any) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ToolArgumentError(f"{key} must be a string, got {raw!r}")
    return str(raw)


def _scalar(param: Opt, key: str, raw: Any) -> Any:
    if param.kind in ("int", "float"):
        if isinstance(raw, bool):
            raise ToolArgumentError(f"{key} must be a number, got {raw!r}")
        try:
            number: int | float = int(raw) if param.kind == "int" else float(raw)
        except (TypeError, ValueError):
            raise ToolArgumentError(f"{key} must be a number, got {raw!r}") from None
        if param.minimum is not None and number < param.minimum:
            raise ToolArgumentError(f"{key} must be at least {param.minimum}, got {number}")
        return number
    if param.kind == "text" and isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)  # ids and priorities given as numbers
    return _text(key, raw)


def describe(
    params: Iterable[Param], workspace: Mapping[str, Iterable[str]]
) -> list[dict[str, Any]]:
    """Each parameter as ``pm contracts`` and ``docs/generated/`` list it."""
    out: list[dict[str, Any]] = []
    for param in params:
        if isinstance(param, Arg):
            entry: dict[str, Any] = {
                "name": param.name,
                "cli": (param.metavar or param.name.upper()),
                "positional": True,
                "type": "any" if param.kind == "json" else "string",
                "required": param.required,
                "repeatable": param.variadic,
            }
        else:
            entry = {
                "name": param.dest.rstrip("_"),
                "cli": ", ".join(param.decls),
                "type": _JSON_TYPES.get(param.kind, "any"),
                "repeatable": param.multiple,
            }
            if param.default not in (None, False, ()):
                entry["default"] = param.default
        entry["role"] = param.role
        entry["tool"] = param.tool
        values = allowed(param.choices, workspace)
        if values:
            entry["allowed"] = values
        if isinstance(param.choices, str) and param.choices != "priorities":
            entry["allowed_from"] = f"workspace {param.choices}"
        if param.help:
            entry["help"] = param.help
        out.append(entry)
    return out
