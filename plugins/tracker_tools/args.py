"""Reading tool arguments: type checks with errors that name the argument.

A wrong type is a ``UsageError`` naming the argument; an unknown option of a read
tool is dropped and named in a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pm_core.contracts import ToolResult
from pm_core.tracker.model.errors import UsageError

#: Spellings that mean "not given" (JSON null).
_ABSENT = (None,)


def snake(key: str) -> str:
    """``includeTerminal``/``include-terminal`` -> ``include_terminal``."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key).replace("-", "_")


def text(args: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    """A string argument; numbers are accepted as their text (ids, keys)."""
    value = args.get(key)
    if value in _ABSENT:
        if required:
            raise UsageError(f"missing required argument {key!r}", hint=f"pass {key}")
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise UsageError(f"{key} must be a string, got {value!r}")
    out = str(value)
    if required and not out.strip():
        raise UsageError(f"{key} must not be empty", hint=f"pass {key}")
    return out


def required_text(args: Mapping[str, Any], key: str) -> str:
    """A string argument that must be present and non-empty."""
    value = text(args, key, required=True)
    assert value is not None  # text() raised otherwise
    return value


def integer(
    args: Mapping[str, Any],
    key: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """An integer argument within bounds; digit strings are accepted."""
    value = args.get(key)
    if value in _ABSENT:
        return None
    if isinstance(value, bool):
        raise UsageError(f"{key} must be an integer, got {value!r}")
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise UsageError(f"{key} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise UsageError(f"{key} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{key} must be at most {maximum}, got {value}")
    return value


def flag(args: Mapping[str, Any], key: str) -> bool:
    """A boolean argument (absent means false)."""
    value = args.get(key)
    if value in _ABSENT:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise UsageError(f"{key} must be true or false, got {value!r}")


def text_list(args: Mapping[str, Any], key: str) -> list[str]:
    """A list of strings; one string is a list of one (comma lists are not split)."""
    value = args.get(key)
    if value in _ABSENT:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"{key} must be a string or a list of strings, got {value!r}")


def one_or_many(args: Mapping[str, Any], key: str) -> str | list[str] | None:
    """A string or a list of strings, kept as given (filters that take several values)."""
    value = args.get(key)
    if value in _ABSENT:
        return None
    if isinstance(value, str):
        return value
    return text_list(args, key)


def bag(args: Mapping[str, Any], key: str = "options") -> dict[str, Any]:
    """The option bag (an object; absent means empty)."""
    value = args.get(key)
    if value in _ABSENT:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"{key} must be an object, got {value!r}")
    return dict(value)


def known_options(
    options: Mapping[str, Any], known: Iterable[str], tool: str
) -> tuple[dict[str, Any], list[str]]:
    """Split a read tool's options into the known ones (snake_case keys) and warnings.

    ``known`` holds snake_case names; camelCase and dashed spellings match
    them. An unknown option is dropped and named in a warning.
    """
    wanted = set(known)
    out: dict[str, Any] = {}
    warnings: list[str] = []
    for key, value in options.items():
        name = snake(key)
        if name in wanted:
            out[name] = value
        else:
            warnings.append(
                f"option {key!r} is not known to {tool}; it was ignored "
                f"(known: {', '.join(sorted(wanted))})"
            )
    return out, warnings


def result(value: Any, warnings: Iterable[str] = ()) -> Any:
    """``value``, wrapped in a :class:`ToolResult` only when there are warnings."""
    found = tuple(warnings)
    return ToolResult(value, found) if found else value
