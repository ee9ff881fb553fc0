"""A TOON encoder for JSON-shaped values, free of the reference package's import cost.

Produces the same text as ``toon_format.encode`` with its defaults; the tests check it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["encode"]

_UNQUOTED_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
# Strings that look numeric are quoted; wider than the number grammar on
# purpose ("05" and "+1" are quoted too), as the reference encoder does.
_NUMERIC_LIKE = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRUCTURAL = re.compile(r'[:"\\\[\]{}\x00-\x1f,]')
_NEEDS_ESCAPE = re.compile(r'[\\"\x00-\x1f]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_INDENT = "  "

# A field list: each field is a leaf (None) or a nested field list.
Shape = tuple[tuple[str, "Shape | None"], ...]


def encode(value: Any) -> str:
    """``value`` (dicts, lists, tuples, str, int, float, bool, None) as a TOON document."""
    lines: list[str] = []
    _root(_normalize(value), lines)
    return "\n".join(lines)


def _normalize(value: Any) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise ValueError(f"String contains an unpaired surrogate: {value!r}")
        return value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"keys must be strings, not {type(key).__name__}")
            out[key] = _normalize(item)
        return out
    if isinstance(value, list | tuple):
        return [_normalize(item) for item in value]
    raise TypeError(f"Object of type {type(value).__name__} is not TOON serializable")


def _quote(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group()
        return _ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _string(text: str) -> str:
    if (
        not text
        or text[0] in " \t-#"
        or text[-1] in " \t"
        or text in ("true", "false", "null")
        or _STRUCTURAL.search(text) is not None
        or _NUMERIC_LIKE.fullmatch(text) is not None
    ):
        return _quote(text)
    return text


def _key(key: str) -> str:
    return key if _UNQUOTED_KEY.fullmatch(key) else _quote(key)


def _float(number: float) -> str:
    if number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    text = repr(number)
    if "e" not in text:
        return text  # shortest round-trip digits, already without an exponent
    from decimal import Decimal  # rare: magnitudes outside [1e-6, 1e21)

    exact = Decimal(text)
    if Decimal("1e-6") <= abs(exact) < Decimal("1e21"):
        plain = f"{exact:f}"
        return plain.rstrip("0").rstrip(".") if "." in plain else plain
    sign, digits, exponent = exact.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - 1
    if len(mantissa) > 1:
        mantissa = f"{mantissa[0]}.{mantissa[1:]}"
    return f"{'-' if sign else ''}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def _primitive(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    return _string(value)


def _join(values: Any) -> str:
    return ",".join(_primitive(v) for v in values)


def _is_primitive(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _shape(objects: list[Any]) -> Shape | None:
    """The shared field list of ``objects``, or None when they are not uniform."""
    first = objects[0]
    if not isinstance(first, dict) or not first:
        return None
    keys = first.keys()
    for obj in objects:
        if not isinstance(obj, dict) or len(obj) != len(keys) or obj.keys() != keys:
            return None
    fields: list[tuple[str, Shape | None]] = []
    for key in keys:
        column = [obj[key] for obj in objects]
        if all(_is_primitive(v) for v in column):
            fields.append((key, None))
            continue
        nested = _shape(column)
        if nested is None:
            return None
        fields.append((key, nested))
    return tuple(fields)


def _keyed_shape(obj: dict[str, Any]) -> Shape | None:
    return _shape(list(obj.values())) if len(obj) >= 2 else None


def _leaves(obj: dict[str, Any], shape: Shape) -> list[Any]:
    out: list[Any] = []
    for key, nested in shape:
        if nested is None:
            out.append(obj[key])
        else:
            out.extend(_leaves(obj[key], nested))
    return out


def _field_list(shape: Shape) -> str:
    parts = (_key(k) + ("" if nested is None else _field_list(nested)) for k, nested in shape)
    return "{" + ",".join(parts) + "}"


def _root(value: Any, lines: list[str]) -> None:
    if isinstance(value, dict):
        shape = _keyed_shape(value)
        if shape is not None:
            _keyed("", value, shape, 0, lines)
        else:
            _fields(value, 0, lines)
    elif isinstance(value, list):
        if value:
            _array("", value, 0, lines, tabular=True)
        else:
            lines.append("[]")
    else:
        text = _primitive(value)
        lines.append(_quote(value) if isinstance(value, str) and value[:1] == "\ufeff" else text)


def _fields(obj: dict[str, Any], depth: int, lines: list[str]) -> None:
    for key, value in obj.items():
        _field(_key(key), value, depth, lines)


def _field(key: str, value: Any, depth: int, lines: list[str]) -> None:
    indent = _INDENT * depth
    if isinstance(value, dict):
        shape = _keyed_shape(value)
        if shape is not None:
            _keyed(key, value, shape, depth, lines)
        else:
            lines.append(f"{indent}{key}:")
            _fields(value, depth + 1, lines)
    elif isinstance(value, list):
        if value:
            _array(key, value, depth, lines, tabular=True)
        else:
            lines.append(f"{indent}{key}: []")
    else:
        lines.append(f"{indent}{key}: {_primitive(value)}")


def _array(prefix: str, array: list[Any], depth: int, lines: list[str], *, tabular: bool) -> None:
    indent = _INDENT * depth
    head = f"{prefix}[{len(array)}]"
    if all(_is_primitive(v) for v in array):
        lines.append(f"{indent}{head}: {_join(array)}")
        return
    shape = _shape(array) if tabular else None
    if shape is not None:
        lines.append(f"{indent}{head}{_field_list(shape)}:")
        row_indent = _INDENT * (depth + 1)
        for element in array:
            lines.append(row_indent + _join(_leaves(element, shape)))
        return
    lines.append(f"{indent}{head}:")
    for element in array:
        _item(element, depth + 1, lines)


def _keyed(key: str, obj: dict[str, Any], shape: Shape, depth: int, lines: list[str]) -> None:
    lines.append(f"{_INDENT * depth}{key}[{len(obj)}:]{_field_list(shape)}:")
    row_indent = _INDENT * (depth + 1)
    for entry, value in obj.items():
        lines.append(f"{row_indent}{_key(entry)}: {_join(_leaves(value, shape))}")


def _item(value: Any, depth: int, lines: list[str]) -> None:
    indent = _INDENT * depth
    if isinstance(value, dict):
        if not value:
            lines.append(f"{indent}-")
            return
        # The fields stand at depth + 1; the first moves onto the hyphen line,
        # so a scope it opens (rows, nested fields) lands at depth + 2.
        first = len(lines)
        _fields(value, depth + 1, lines)
        lines[first] = indent + "- " + lines[first][len(indent) + len(_INDENT) :]
    elif isinstance(value, list):
        if value:
            _array("- ", value, depth, lines, tabular=False)
        else:
            lines.append(f"{indent}- [0]:")
    else:
        lines.append(f"{indent}- {_primitive(value)}")
