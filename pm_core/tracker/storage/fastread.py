"""A fast reader for item files in the canonical subset of TOON ``pm`` writes.

:func:`read_record` gives what ``toon_format.decode`` gives, or ``None`` for
anything outside that subset (the caller then uses the full decoder).
"""

from __future__ import annotations

import json
import re
from typing import Any

_HEADER = re.compile(
    r"([A-Za-z_][A-Za-z0-9_.]*)\[(0|[1-9][0-9]*)\](?:\{([A-Za-z0-9_.,]*)\})?:(.*)\Z"
)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}\Z")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
#: A backslash before anything but \\ " n r t (JSON would accept \/ \b \f \u and
#: surrogates the decoder rejects), or a raw control character JSON rejects.
_JSON_UNSAFE = re.compile(r'\\[^\\"nrt]|[\x00-\x1f]')
_json_string = json.JSONDecoder(strict=True).decode


class _Unsure(Exception):
    """The line is outside the subset this reader decodes exactly."""


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    parts: list[str] = []
    i = 0
    while (j := body.find("\\", i)) >= 0:
        parts.append(body[i:j])
        c = body[j + 1 : j + 2]
        if c in _ESCAPES and c:
            parts.append(_ESCAPES[c])
            i = j + 2
        elif c == "u" and _HEX4.match(body[j + 2 : j + 6]):
            code = int(body[j + 2 : j + 6], 16)
            if 0xD800 <= code <= 0xDFFF:
                raise _Unsure
            parts.append(chr(code))
            i = j + 6
        else:
            raise _Unsure
    parts.append(body[i:])
    return "".join(parts)


def _primitive(token: str) -> Any:
    if not token:
        return ""
    first = token[0]
    if first == '"':
        if "\\" not in token:
            if token[-1] != '"' or len(token) < 2 or '"' in token[1:-1]:
                raise _Unsure
            return token[1:-1]
        if not _JSON_UNSAFE.search(token):
            # Only \\ \" \n \r \t escapes: JSON reads them the same way, in C.
            try:
                value = _json_string(token)
            except ValueError:
                raise _Unsure from None
            if isinstance(value, str):
                return value
            raise _Unsure
        match = _QUOTED.match(token)
        if match is None or match.end() != len(token):
            raise _Unsure
        return _unescape(token[1:-1])
    if first in "-0123456789":
        if _NUMBER.match(token):
            if "." in token or "e" in token or "E" in token:
                value = float(token)
                if value in (float("inf"), float("-inf")):
                    raise _Unsure
                return value or 0.0
            return int(token)
        return token
    if first in "tfn":
        if token == "true":
            return True
        if token == "false":
            return False
        if token == "null":
            return None
    return token


_CELL = r' *"(?:[^"\\]|\\.)*" *|[^,"]*'
_ROW = re.compile(rf"(?:{_CELL})(?:,(?:{_CELL}))*\Z", re.DOTALL)
_CELLS = re.compile(rf"(?:\A|,)({_CELL})", re.DOTALL)


def _cells(text: str) -> list[Any]:
    """Comma-separated cells, quotes respected, each trimmed of spaces."""
    if not text:
        return []
    if '"' not in text:
        return [_primitive(cell.strip(" ")) for cell in text.split(",")]
    if _ROW.match(text) is None:
        raise _Unsure
    return [_primitive(cell.strip(" ")) for cell in _CELLS.findall(text)]


def _row_cells(text: str) -> list[Any]:
    """The cells of a tabular row; a bare colon (a key line) is left to the full decoder."""
    if '"' not in text:
        if ":" in text:
            raise _Unsure
        return [_primitive(cell.strip(" ")) for cell in text.split(",")]
    if "\\" not in text:
        # With no escapes, every quote opens or closes a quoted cell: split on
        # them, and the text between quoted cells is separators and plain cells.
        parts = text.split('"')
        if len(parts) % 2 == 0:
            raise _Unsure
        out: list[Any] = []
        last = len(parts) - 1
        for at in range(0, last + 1, 2):
            pieces = parts[at].split(",")
            if 0 < at < last and len(pieces) < 2:
                raise _Unsure  # two quoted cells with no comma between
            if at and pieces[0].strip(" "):
                raise _Unsure  # text right after a closing quote
            if at < last and pieces[-1].strip(" "):
                raise _Unsure  # text right before an opening quote
            first = 1 if at else 0
            for cell in pieces[first : len(pieces) - (at < last)]:
                if ":" in cell:
                    raise _Unsure
                out.append(_primitive(cell.strip(" ")))
            if at < last:
                out.append(parts[at + 1])
        return out
    if _ROW.match(text) is None:
        raise _Unsure
    cells = _CELLS.findall(text)
    if any(":" in cell and not cell.lstrip(" ").startswith('"') for cell in cells):
        raise _Unsure
    return [_primitive(cell.strip(" ")) for cell in cells]


#: A bare key; a ``key: value`` line is one, one space, and a value that does not start with one.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
#: Keys already checked against :data:`_KEY` (item files share a few dozen keys).
_KEYS_SEEN: dict[str, bool] = {}


def _plain_key(key: str) -> bool:
    """Whether ``key`` is a bare key (cached: a dict lookup is cheaper than the match)."""
    known = _KEYS_SEEN.get(key)
    if known is None:
        known = _KEY.match(key) is not None
        if len(_KEYS_SEEN) < 4096:
            _KEYS_SEEN[key] = known
    return known


#: First characters :func:`_primitive` looks past (quotes, numbers, true/false/null, ``[]``).
_SPECIAL_FIRST = frozenset('"-0123456789tfn[')


def read_record(text: str) -> dict[str, Any] | None:
    """The decoded item mapping, or ``None`` when the full decoder must decide."""
    try:
        return _read(text)
    except (_Unsure, ValueError, IndexError):
        return None


def _field(line: str) -> tuple[str, Any] | None:
    """A ``key: value`` line with a bare key and a primitive value, else ``None``."""
    key, sep, rest = line.partition(": ")
    if not sep or not rest or rest[0] == " " or not (_KEYS_SEEN.get(key) or _plain_key(key)):
        return None
    if rest[0] not in _SPECIAL_FIRST:
        return key, rest
    return key, [] if rest == "[]" else _primitive(rest)


def _array(
    match: re.Match[str], lines: list[str], k: int, count: int, indent: str
) -> tuple[int, list[Any] | None]:
    """The value of the array header ``match``: ``(next line, value)``, None when unsure.

    Inline arrays are on the header's line; tabular rows and list-form items
    follow it at ``indent`` (list form only at the top level).
    """
    _, length_text, fields_text, rest = match.groups()
    length = int(length_text)
    rest = rest.strip(" ")
    if fields_text is None:
        if rest:
            cells = _cells(rest)
            return k, cells if len(cells) == length else None
        if length == 0:
            return k, []
        if indent != "  ":
            return k, None  # a list nested in a list item: left to the full decoder
        k, listed = _list_form(lines, k, count)
        return k, listed if listed is not None and len(listed) == length else None
    fields = fields_text.split(",")
    if rest or not all(fields) or len(set(fields)) != len(fields):
        return k, None
    width = len(fields)
    cut = len(indent)
    rows: list[dict[str, Any]] = []
    while k < count and lines[k].startswith(indent):
        body = lines[k][cut:]
        if not body or body[0] in " #" or body[-1] == " ":
            return k, None
        cells = _row_cells(body)
        if len(cells) != width:
            return k, None
        rows.append(dict(zip(fields, cells, strict=True)))
        k += 1
    return k, rows if len(rows) == length else None


def _list_form(lines: list[str], k: int, count: int) -> tuple[int, list[Any] | None]:
    """The list-form array whose items start at ``lines[k]``: ``(next line, items)``.

    Only flat items: ``- key: value`` with more ``key: value`` lines below it,
    or ``- value``. Anything nested gives ``None`` for the full decoder.
    """
    items: list[Any] = []
    current: dict[str, Any] | None = None
    while k < count and lines[k].startswith("  "):
        line = lines[k]
        k += 1
        if line[-1] == " ":
            return k, None
        if line.startswith("  - "):
            body = line[4:]
            if not body or body[0] == " ":
                return k, None
            field = _field(body)
            if field is not None:
                current = {field[0]: field[1]}
                items.append(current)
                continue
            if body[0] != '"' and (":" in body or "," in body or body[0] in "[{#"):
                return k, None  # a header, a quoted key, a nested object...
            current = None
            items.append(_primitive(body))
        elif line.startswith("    ") and current is not None:
            body = line[4:]
            if not body or body[0] == " ":
                return k, None
            field = _field(body)
            if field is None:
                match = _HEADER.match(body)
                if match is None:
                    return k, None
                # A tabular array's rows sit two spaces deeper than its header (six in all).
                k, value = _array(match, lines, k, count, "      ")
                if value is None:
                    return k, None
                field = match.group(1), value
            if field[0] in current:
                return k, None
            current[field[0]] = field[1]
        else:
            return k, None
    return k, items


def _read(text: str) -> dict[str, Any] | None:
    if not text or text[0] in " \ufeff" or "\t" in text or "\r" in text:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    out: dict[str, Any] = {}
    count = len(lines)
    header = _HEADER.match
    k = 0
    while k < count:
        line = lines[k]
        k += 1
        # An indented line here is outside a table: a nested object or a list item.
        if not line or line[0] == " " or line[-1] == " ":
            return None
        field = _field(line)
        if field is not None:
            key, value = field
        else:
            match = header(line)
            if match is None:
                return None  # a nested object, a quoted key, a comment...
            key = match.group(1)
            k, listed = _array(match, lines, k, count, "  ")
            if listed is None:
                return None
            value = listed
        if key in out:
            return None
        out[key] = value
    return out
