"""Item hashes in every epoch a tracker's history can hold: :func:`item_hash`.

History entries record ``before_hash`` and ``after_hash``: SHA-256 of an item
document in a canonical form. Which canonical form is the entry's *epoch*:

- epoch 2 (``item_hash_version: 2``, what ``pm`` writes): the TypeScript
  pm's canonical item (its normalisation of every known field: collections
  sorted, text trimmed, empty values dropped) as ``{front_matter, body}``,
  keys sorted, JSON without spaces;
- epoch 1 (entries without ``item_hash_version`` written by the TypeScript pm
  before epoch 2): the same, except that linked tests are sorted by their
  fields first;
- epoch 0 (entries without ``item_hash_version`` written by earlier versions
  of this program): the sorted-key JSON of the document as stored. Read and
  verified, never written.

A replayed state the canonical form cannot describe (no ``tags`` list, or a
field of the wrong shape) hashes as ``{replay_fallback, metadata, body}``, as
the TypeScript pm does, so such chains verify too. Where the canonical form
sorts text the TypeScript pm compares with the ICU root collation
(``localeCompare``); :func:`locale_compare` follows it for ASCII and for
accented Latin letters, which is what tracker data holds.
"""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from functools import cmp_to_key, lru_cache
from itertools import pairwise
from typing import Any

#: The epoch every new history entry is written in.
CURRENT_EPOCH = 2
#: Epochs an entry may declare in ``item_hash_version``.
DECLARED_EPOCHS: tuple[int, ...] = (1, 2)
#: Epochs tried, in order, for an entry that declares none.
UNDECLARED_EPOCHS: tuple[int, ...] = (1, 2, 0)


class UnsupportedEpochError(ValueError):
    """An ``item_hash_version`` this program does not know (written by a newer pm)."""

    def __init__(self, epoch: object) -> None:
        super().__init__(f"unsupported item_hash_version {epoch!r}")
        self.epoch = epoch


class _NotCanonical(Exception):
    """The document cannot be put in canonical form (the TypeScript pm throws here)."""


def item_hash(document: Mapping[str, Any], epoch: int = CURRENT_EPOCH) -> str:
    """SHA-256 hex of an item document ``{metadata, body}`` in the given epoch.

    The one hash function for history: writers, ``history --verify``,
    ``validate``, replay and merge all call it (a chain walk calls it through
    :class:`DocumentHasher`, which gives the same hashes faster). Raises
    :class:`UnsupportedEpochError` for an epoch it does not know.
    """
    return DocumentHasher().hash(document, epoch)


class DocumentHasher:
    """:func:`item_hash` for one document that changes a few keys at a time.

    A history replay changes one or two top-level keys per entry; the hasher
    keeps each key's canonical JSON and rebuilds only the keys named by
    :meth:`changed`, so a chain of N entries costs N small encodings and N
    SHA-256 passes, not N whole-document normalisations. The hashes are the
    ones :func:`item_hash` defines (it is this class, used once).
    """

    __slots__ = ("_body", "_elements", "_fragments", "_hashes", "_joins", "_legacy")

    def __init__(self) -> None:
        # key -> {epoch: fragment bytes, or b"" when the canonical form drops the key}
        self._fragments: dict[str, dict[int, bytes]] = {}
        # epoch -> the metadata's fragments in key order, and the keys changed since
        self._joins: dict[int, _Join] = {}
        # key -> {id(element): (element, JSON)} for the elements of a stored list value
        self._elements: dict[str, dict[int, tuple[Any, str]]] = {}
        self._body: dict[int, bytes] = {}
        # Whole-document hashes of the current state: per epoch, and -1 for the stored form.
        self._hashes: dict[int, str] = {}
        # Whether the stored linked tests are in epoch 1's order (None: not known yet).
        self._legacy: bool | None = None

    def changed(self, keys: Any = None, elements: Any = None) -> None:
        """Forget the named top-level metadata keys (``"body"`` for the body; None: all).

        ``elements`` holds the ids of the list elements changed in place (None:
        any element of those keys may have been); the other elements were at
        most added, removed, replaced or moved, so their JSON still holds.
        """
        self._hashes.clear()
        if keys is None or "tests" in keys:
            self._legacy = None
        if keys is None:
            self._fragments.clear()
            self._body.clear()
            self._joins.clear()
            self._elements.clear()
            return
        for key in keys:
            known = self._elements.get(key)
            if known is None:
                continue
            if elements is None:
                del self._elements[key]
            else:
                for ident in elements:
                    known.pop(ident, None)
        for key in keys:
            if key == "body":
                self._body.clear()
            else:
                self._fragments.pop(key, None)
                for join in self._joins.values():
                    join.dirty.add(key)

    def derived(self, keys: set[str], recorded: str, epoch: int) -> DocumentHasher:
        """A hasher for a document that differs from this one's only in ``keys``.

        The other keys' JSON is taken over. When this document's stored form
        is what ``recorded`` names in ``epoch`` (so stored and canonical form
        are the same bytes, key by key), the canonical form is taken over
        too, and the other document's canonical hash costs only ``keys``.
        """
        other = DocumentHasher()
        other._fragments = {k: dict(v) for k, v in self._fragments.items() if k not in keys}
        if "body" not in keys:
            other._body = dict(self._body)
        if "tests" not in keys:
            other._legacy = self._legacy
        dirty = keys - {"body"}
        for variant, join in self._joins.items():
            other._joins[variant] = join.copy(dirty)
        stored = self._joins.get(0)
        canonical = self._hashes.get(-1) == recorded and (
            epoch == 2 or (epoch == 1 and self._legacy is True)
        )
        if canonical and stored is not None and not stored.dirty and epoch not in self._joins:
            other._joins[epoch] = stored.copy(dirty)
            if "body" not in keys and 0 in self._body:
                other._body[1] = self._body[0]
        return other

    def hash(self, document: Mapping[str, Any], epoch: int = CURRENT_EPOCH) -> str:
        """The document's hash in ``epoch`` (it must be the document the cache describes)."""
        got = self._hashes.get(epoch)
        if got is None:
            got = self._hashes[epoch] = self._hash(document, epoch)
        return got

    def _hash(self, document: Mapping[str, Any], epoch: int) -> str:
        if epoch not in DECLARED_EPOCHS and epoch != 0:
            raise UnsupportedEpochError(epoch)
        metadata = document.get("metadata")
        body = document.get("body")
        if epoch == 0:
            if isinstance(metadata, dict) and isinstance(body, str) and len(document) == 2:
                return _sha256_bytes(
                    b'{"body":'
                    + self._body_bytes(body, 0)
                    + b',"metadata":{'
                    + self._join(metadata, 0)
                    + b"}}"
                )
            return _sha256(_dumps(document))
        if not metadata:
            return _sha256(_dumps({"front_matter": {}, "body": body if body is not None else ""}))
        if isinstance(metadata, Mapping) and isinstance(metadata.get("tags"), list):
            try:
                text = body if isinstance(body, str) else ""
                return _sha256_bytes(
                    b'{"body":'
                    + self._body_bytes(text, 1)
                    + b',"front_matter":{'
                    + self._join(metadata, epoch)
                    + b"}}"
                )
            except (_NotCanonical, AttributeError, TypeError, KeyError, ValueError):
                self.changed()  # a half-built cache must not outlive the failure
        return _sha256(_dumps({"replay_fallback": True, "metadata": metadata, "body": body}))

    def matches(self, document: Mapping[str, Any], recorded: str, epoch: int) -> bool:
        """Whether ``recorded`` is the document's hash in ``epoch``; usually without normalising.

        A document a canonical writer produced is its own canonical form, so
        its stored JSON hashes to the recorded value directly; only when that
        fails is the document normalised (:meth:`hash`). A match of the stored
        form is a match of the canonical form: SHA-256 does not collide, so
        the two serialisations are the same bytes. (Epoch 1 also needs the
        linked tests in its order, which is checked.)
        """
        if epoch == 0:
            return self.hash(document, 0) == recorded
        if epoch not in DECLARED_EPOCHS:
            raise UnsupportedEpochError(epoch)
        metadata = document.get("metadata")
        body = document.get("body")
        if isinstance(metadata, dict) and isinstance(body, str) and metadata:
            stored = self._hashes.get(-1)
            if stored is None:
                stored = self._hashes[-1] = _sha256_bytes(
                    b'{"body":'
                    + self._body_bytes(body, 0)
                    + b',"front_matter":{'
                    + self._join(metadata, 0)
                    + b"}}"
                )
            if stored == recorded:
                if epoch == 2:
                    return True
                if self._legacy is None:
                    self._legacy = _in_legacy_order(metadata.get("tests"))
                if self._legacy:
                    return True
        return self.hash(document, epoch) == recorded

    def _body_bytes(self, body: str, epoch: int) -> bytes:
        key = 0 if epoch == 0 else 1
        got = self._body.get(key)
        if got is None:
            text = body if epoch == 0 else normalize_body(body)
            got = self._body[key] = _dumps(text).encode("utf-8", "surrogatepass")
        return got

    def _join(self, metadata: Mapping[str, Any], epoch: int) -> bytes:
        join = self._joins.get(epoch)
        if join is not None and join.dirty:
            self._refresh(join, metadata, epoch)
        if join is None:
            keys = set(metadata)
            if epoch:
                keys.add("tags")
                keys.difference_update(_UNSAFE_KEYS)
            order = sorted(keys)
            join = _Join(order, [self._part(key, metadata, epoch) for key in order])
            self._joins[epoch] = join
        return b",".join(filter(None, join.parts))

    def _refresh(self, join: _Join, metadata: Mapping[str, Any], epoch: int) -> None:
        """Re-encode the changed keys in place (inserting new keys, dropping removed ones)."""
        for key in join.dirty:
            at = join.index.get(key)
            present = key in metadata or (epoch != 0 and key == "tags")
            if at is None:
                if present and not (epoch and key in _UNSAFE_KEYS):
                    join.insert(key, self._part(key, metadata, epoch))
                continue
            if not present:
                join.remove(key)
                continue
            join.parts[at] = self._part(key, metadata, epoch)
        join.dirty.clear()

    def _part(self, key: str, metadata: Mapping[str, Any], epoch: int) -> bytes:
        cached = self._fragments.get(key)
        if cached is None:
            cached = self._fragments[key] = {}
        # Epochs 1 and 2 differ in the linked tests only.
        slot = epoch if epoch == 0 or key == "tests" else 1
        fragment = cached.get(slot)
        if fragment is None:
            value = metadata.get(key)
            if epoch == 0 and type(value) is list and len(value) > 1:
                text = _quote(key) + ":" + self._list_json(key, value)
                fragment = text.encode("utf-8", "surrogatepass")
            else:
                fragment = _fragment(key, metadata, epoch)
            cached[slot] = fragment
        return fragment

    def _list_json(self, key: str, values: list[Any]) -> str:
        """``_dumps(values)``, re-encoding only the elements not seen before.

        An element is known by identity, and the cache holds a reference to
        it, so an id is never reused for another object while cached.
        """
        known = self._elements.get(key) or {}
        seen: dict[int, tuple[Any, str]] = {}
        parts = []
        for value in values:
            hit = known.get(id(value))
            text = hit[1] if hit is not None and hit[0] is value else _encode(value)
            if type(value) in (dict, list):
                seen[id(value)] = (value, text)
            parts.append(text)
        self._elements[key] = seen
        return "[" + ",".join(parts) + "]"


class _Join:
    """One epoch's metadata fragments in key order (b"" where the key is dropped)."""

    __slots__ = ("dirty", "index", "order", "parts")

    def __init__(self, order: list[str], parts: list[bytes]) -> None:
        self.order = order
        self.parts = parts
        self.index = {key: at for at, key in enumerate(order)}
        self.dirty: set[str] = set()

    def copy(self, dirty: set[str]) -> _Join:
        other = _Join(list(self.order), list(self.parts))
        other.dirty = self.dirty | dirty
        return other

    def insert(self, key: str, part: bytes) -> None:
        at = bisect.bisect(self.order, key)
        self.order.insert(at, key)
        self.parts.insert(at, part)
        self.index = {key: at for at, key in enumerate(self.order)}

    def remove(self, key: str) -> None:
        at = self.index[key]
        del self.order[at], self.parts[at]
        self.index = {key: at for at, key in enumerate(self.order)}


def _in_legacy_order(tests: Any) -> bool:
    if not isinstance(tests, list) or len(tests) < 2:
        return True
    try:
        return all(_legacy_test_compare(a, b) <= 0 for a, b in pairwise(tests))
    except (_NotCanonical, AttributeError, TypeError):
        return False


def _fragment(key: str, metadata: Mapping[str, Any], epoch: int) -> bytes:
    """``"key":value`` of one key's canonical value in ``epoch`` (b"": the key is dropped)."""
    if epoch == 0 or key not in _NORMALISED:
        value = metadata[key]
    elif key not in metadata:
        if key != "tags":
            return b""
        value = []
    else:
        raw = metadata[key]
        if key in _VERBATIM:
            value = raw
        else:
            if key in ("confidence", "severity") and raw is None:
                raise _NotCanonical(f"{key} is null")
            value = _NORMALISED[key](raw)
            if value is None:
                return b""
            if key == "tests" and epoch == 1:
                value = sorted(value, key=_LEGACY_TEST_KEY)
    return (_quote(key) + ":" + _encode(value)).encode("utf-8", "surrogatepass")


def _encode(value: Any) -> str:
    """``_dumps(value)``, without the encoder's set-up for the common scalars."""
    kind = type(value)
    if kind is str:
        return _quote(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return _ENCODER.encode(value)


def _sha256_bytes(data: bytes) -> str:
    if _has_surrogates(data):
        return _sha256(data.decode("utf-8", "surrogatepass"))
    return _digest(data)


def _has_surrogates(data: bytes) -> bool:
    # UTF-8 of U+D800..U+DFFF (only "surrogatepass" writes them) starts with 0xED 0xA0-0xBF.
    index = data.find(b"\xed")
    while index >= 0:
        if index + 1 < len(data) and 0xA0 <= data[index + 1] <= 0xBF:
            return True
        index = data.find(b"\xed", index + 1)
    return False


def epochs_agree(document: Mapping[str, Any]) -> bool:
    """True when epochs 1 and 2 give the same hash (no linked tests to reorder)."""
    metadata = document.get("metadata") or {}
    tests = metadata.get("tests") if isinstance(metadata, Mapping) else None
    return not isinstance(tests, list) or len(tests) < 2


# ------------------------------------------------------------------ JSON


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
#: How that encoder writes a string (``ensure_ascii=False``): quoted, with JSON's escapes.
_quote: Callable[[str], str] = json.encoder.encode_basestring


def _dumps(value: Any) -> str:
    return _ENCODER.encode(value)


def _sha256(text: str) -> str:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON.stringify writes it escaped
        data = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")
    return _digest(data)


#: Above this size OpenSSL's SHA-256 (several times faster) is worth loading ``hashlib``.
_LARGE = 4096


def _digest(data: bytes) -> str:
    if len(data) > _LARGE:
        import hashlib

        return hashlib.sha256(data).hexdigest()
    # The builtin module for small inputs: a write that hashes two small
    # documents should not pay for loading OpenSSL.
    # Kept for its figure: OpenSSL would add ~3.5 ms (11%) to each history-file merge (bench_merge.py).
    try:
        import _sha256  # type: ignore[import-not-found]

        return str(_sha256.sha256(data).hexdigest())
    except ImportError:  # pragma: no cover - Python 3.12 names it _sha2
        import hashlib

        return hashlib.sha256(data).hexdigest()


def js_number(value: float) -> Any:
    """A float as JavaScript holds it: integral values become ints (``1.0`` is ``1``)."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def parse_json(text: str) -> Any:
    """``json.loads`` with JavaScript's numbers (``1.0`` reads as ``1``)."""
    return json.loads(text, parse_float=lambda s: js_number(float(s)))


# ------------------------------------------------------------ collation

#: ICU root collation's order of the ASCII punctuation and symbols, before digits.
_PUNCTUATION = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY: dict[str, int] = {c: i + 1 for i, c in enumerate(_PUNCTUATION)}
for _i, _c in enumerate("0123456789"):
    _PRIMARY[_c] = 100 + _i
for _i, _c in enumerate("abcdefghijklmnopqrstuvwxyz"):
    _PRIMARY[_c] = 200 + _i


#: Primary weights of the printable ASCII characters that are not ignorable.
_ASCII_PRIMARY: dict[str, int] = {
    **_PRIMARY,
    **{c.upper(): w for c, w in _PRIMARY.items() if c.isalpha()},
}


@lru_cache(maxsize=65536)
def _collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for char in unicodedata.normalize("NFD", text) if not text.isascii() else text:
        if unicodedata.combining(char):
            if secondary:
                secondary[-1] = secondary[-1] * 1000 + ord(char)
            continue
        lower = char.lower() if len(char.lower()) == 1 else char
        weight = _PRIMARY.get(lower)
        if weight is None:
            code = ord(lower)
            if code < 0x20 or code == 0x7F:
                continue  # controls are ignorable
            weight = 1000 + code
        primary.append(weight)
        secondary.append(0)
        tertiary.append(0 if lower == char else 1)
    return tuple(primary), tuple(secondary), tuple(tertiary)


def locale_compare(left: str, right: str) -> int:
    """``left.localeCompare(right)`` under the ICU root collation: -1, 0 or 1."""
    if left == right:
        return 0
    if left.isascii() and right.isascii():
        # Most text differs early: compare primary weights up to the first difference.
        for x, y in zip(left, right, strict=False):
            if x != y:
                wx, wy = _ASCII_PRIMARY.get(x, 0), _ASCII_PRIMARY.get(y, 0)
                if wx and wy and wx != wy:
                    return -1 if wx < wy else 1
                break
    a, b = _collation_key(left), _collation_key(right)
    return -1 if a < b else (1 if a > b else 0)


def _lc(left: Any, right: Any) -> int:
    if not isinstance(left, str):
        raise _NotCanonical("localeCompare on a non-string")
    return locale_compare(left, right if isinstance(right, str) else _js_string(right))


def _nz(value: Any) -> Any:
    """``value ?? ""``."""
    return "" if value is None or value is _U else value


_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d\d)(?:-(\d\d))?)?"
    r"(?:T(\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?(Z|[+-]\d\d:?\d\d)?)?",
    re.IGNORECASE,
)


@lru_cache(maxsize=65536)
def timestamp_ms(text: str) -> float | None:
    """``Date.parse`` for ISO 8601 text: milliseconds since the epoch, None when invalid."""
    match = _ISO.fullmatch(text.strip())
    if not match:
        return None
    year_s, month_s, day_s, hour_s, minute_s, second_s, frac_s, zone = match.groups()
    try:
        year, month, day = int(year_s), int(month_s or 1), int(day_s or 1)
        hour, minute, second = int(hour_s or 0), int(minute_s or 0), int(second_s or 0)
        if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 24 and minute < 60):
            return None
        if second > 59 or (hour == 24 and (minute or second)):
            return None
        if not 1 <= year <= 9999:
            return None
        # Day 31 of any month is accepted and rolls over, as V8's Date.parse does.
        days = days_from_civil(year, month, day)
    except (ValueError, OverflowError):
        return None
    millis = int((frac_s or "0")[:3].ljust(3, "0"))
    offset = 0
    if zone and zone.upper() != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = sign * (int(digits[:2]) * 60 + int(digits[2:]))
    return float((days * 86400 + hour * 3600 + (minute - offset) * 60 + second) * 1000 + millis)


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (``calendar.timegm`` // 86400).

    Worked out here rather than with ``calendar``, which pulls in ``datetime``
    and ``locale``: a merge driver process starts for every merged file.
    """
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month - 3 if month > 2 else month + 9) + 2) // 5 + day - 1
    of_cycle = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return era * 146097 + of_cycle - 719468


def compare_timestamps(left: Any, right: Any) -> int:
    """The TypeScript pm's timestamp order: by instant, then by text."""
    lt = timestamp_ms(left) if isinstance(left, str) else None
    rt = timestamp_ms(right) if isinstance(right, str) else None
    if lt is not None and rt is not None and lt != rt:
        return -1 if lt < rt else 1
    return _lc(left, right)


def _first(*comparisons: Callable[[], int]) -> int:
    for comparison in comparisons:
        result = comparison()
        if result:
            return result
    return 0


def _sorted(values: list[Any], compare: Callable[[Any, Any], int]) -> list[Any]:
    return sorted(values, key=cmp_to_key(compare)) if len(values) > 1 else list(values)


# ------------------------------------------------------------ normalising

#: JavaScript's ``String.prototype.trim`` whitespace (Python's ``strip`` differs).
_JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _trim(value: str) -> str:
    return value.strip(_JS_SPACE)


def _text(value: Any) -> str | None:
    """``trimStringOrUndefined``: trimmed text, None for empty or non-text."""
    if not isinstance(value, str):
        return None
    trimmed = value.strip(_JS_SPACE)
    return trimmed or None


class _Undefined:
    """JavaScript's ``undefined``: a key that JSON leaves out (``null`` is kept)."""


_U: Any = _Undefined()


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if v is not _U}


def _opt_trim(value: Any) -> Any:
    """``value?.trim() || undefined``: a non-text value other than null throws."""
    if value is None or value is _U:
        return _U
    if not isinstance(value, str):
        raise _NotCanonical("trim on a non-string")
    return value.strip(_JS_SPACE) or _U


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str):
        return value != ""
    return value is not None


def _list_of(value: Any) -> list[Any] | None:
    """A collection as the TypeScript sorters take it: None when empty or unset."""
    if not _truthy(value):
        return None
    if not isinstance(value, list):
        raise _NotCanonical("collection is not a list")
    return value or None


def _obj(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _NotCanonical("entry is not an object")
    return value


def _path(value: Any) -> str:
    if not isinstance(value, str):
        raise _NotCanonical("path is not text")
    return value.replace("\\", "/")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _dependencies(value: Any) -> list[dict[str, Any]] | None:
    values = _list_of(value)
    if values is None:
        return None
    out = []
    for raw in values:
        dep = _obj(raw)
        ident = dep.get("id")
        if not isinstance(ident, str):
            raise _NotCanonical("dependency id is not text")
        out.append(
            {
                "id": _trim(ident).lower(),
                "kind": dep.get("kind", _U),
                "created_at": dep.get("created_at", _U),
                "author": _opt_trim(dep.get("author")),
                "source_kind": _opt_trim(dep.get("source_kind")),
                "author_source": dep.get("author_source", _U),
            }
        )
    return [
        _clean(d)
        for d in _sorted(
            out,
            lambda a, b: _first(
                lambda: compare_timestamps(a["created_at"], b["created_at"]),
                lambda: _lc(a["id"], b["id"]),
                lambda: _lc(a["kind"], b["kind"]),
                lambda: _lc(_nz(a["source_kind"]), _nz(b["source_kind"])),
            ),
        )
    ]


def _log(value: Any) -> list[Any] | None:
    values = _list_of(value)
    if values is None:
        return None
    for raw in values:
        _obj(raw)
    return _sorted(
        values,
        lambda a, b: _first(
            lambda: compare_timestamps(a.get("created_at"), b.get("created_at")),
            lambda: _lc(a.get("text"), b.get("text")),
            lambda: _lc(a.get("author"), b.get("author")),
        ),
    )


def _reminders(value: Any) -> list[dict[str, Any]] | None:
    values = _list_of(value)
    if values is None:
        return None
    out = []
    for raw in values:
        entry = _obj(raw)
        text = entry.get("text")
        if not isinstance(text, str):
            raise _NotCanonical("reminder text is not text")
        if _trim(text):
            out.append({"at": entry.get("at", _U), "text": _trim(text)})
    out = _sorted(
        out,
        lambda a, b: _first(
            lambda: compare_timestamps(a["at"], b["at"]), lambda: _lc(a["text"], b["text"])
        ),
    )
    return [_clean(r) for r in out] or None


_FREQUENCIES = ("daily", "weekly", "monthly", "yearly")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _recurrence(value: Any) -> dict[str, Any] | None:
    if not _truthy(value):
        return None
    rule = _obj(value)
    freq = rule.get("freq")
    if not isinstance(freq, str):
        raise _NotCanonical("recurrence freq is not text")
    freq = _trim(freq).lower()
    if freq not in _FREQUENCIES:
        return None
    weekdays = list(
        dict.fromkeys(
            w
            for w in (_trim(d).lower() for d in _strings(rule.get("by_weekday")))
            if w in _WEEKDAYS
        )
    )
    weekdays.sort(key=_WEEKDAYS.index)
    month_days = sorted(
        {
            int(d)
            for d in rule.get("by_month_day") or []
            if _is_number(d) and float(d).is_integer() and 1 <= d <= 31
        }
    )
    exdates = list(
        dict.fromkeys(
            t
            for t in (_trim(x) for x in _strings(rule.get("exdates")))
            if timestamp_ms(t) is not None
        )
    )
    exdates = _sorted(exdates, compare_timestamps)
    interval = rule.get("interval", _U)
    out = {
        "freq": freq,
        "interval": interval if _is_number(interval) and interval > 1 else _U,
        "count": rule.get("count", _U),
        "until": _opt_trim(rule.get("until")),
        "by_weekday": weekdays or _U,
        "by_month_day": month_days or _U,
        "exdates": exdates or _U,
    }
    return _clean(out)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _NotCanonical("expected a list of text")
    return value


def _events(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or not value:
        return None
    out = []
    for raw in value:
        event = _obj(raw)
        end_at = event.get("end_at")
        recurrence = _recurrence(event.get("recurrence"))
        out.append(
            _clean(
                {
                    "start_at": event.get("start_at", _U),
                    "end_at": end_at if _truthy(end_at) else _U,
                    "title": _opt_trim(event.get("title")),
                    "description": _opt_trim(event.get("description")),
                    "location": _opt_trim(event.get("location")),
                    "all_day": event.get("all_day", _U),
                    "timezone": _opt_trim(event.get("timezone")),
                    "recurrence": _U if recurrence is None else recurrence,
                }
            )
        )

    def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
        return _first(
            lambda: compare_timestamps(a.get("start_at", _U), b.get("start_at", _U)),
            lambda: _lc(_nz(a.get("end_at")), _nz(b.get("end_at"))),
            lambda: _lc(_nz(a.get("title")), _nz(b.get("title"))),
            lambda: int(_truthy(a.get("all_day"))) - int(_truthy(b.get("all_day"))),
            lambda: _lc(_nz(a.get("timezone")), _nz(b.get("timezone"))),
            lambda: _lc(_nz(a.get("location")), _nz(b.get("location"))),
            lambda: _lc(_nz(a.get("description")), _nz(b.get("description"))),
            lambda: _lc(_js_json(a.get("recurrence", {})), _js_json(b.get("recurrence", {}))),
        )

    return _sorted(out, compare)


def _js_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _files(value: Any) -> list[dict[str, Any]] | None:
    values = _list_of(value)
    if values is None:
        return None
    return [
        _clean(
            {
                "path": _path(_obj(f).get("path")),
                "scope": f.get("scope", _U),
                "note": _opt_trim(f.get("note")),
            }
        )
        for f in values
    ]


def _docs(value: Any) -> list[dict[str, Any]] | None:
    files = _files(value)
    if files is None:
        return None
    return _sorted(
        files,
        lambda a, b: _first(
            lambda: _lc(a.get("scope", _U), b.get("scope", _U)),
            lambda: _lc(a["path"], b["path"]),
            lambda: _lc(a.get("note", ""), b.get("note", "")),
        ),
    )


def _string_list(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out = list(dict.fromkeys(t for t in (_trim(v) for v in value if isinstance(v, str)) if t))
    return _sorted(out, locale_compare) or None


_UNSAFE_KEYS = frozenset({"__proto__", "constructor", "prototype"})


def _string_record(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    entries = [(_trim(k), _trim(_js_string(v))) for k, v in value.items()]
    entries = [(k, v) for k, v in entries if k and k not in _UNSAFE_KEYS and v]
    entries = _sorted(entries, lambda a, b: locale_compare(a[0], b[0]))
    return dict(entries) or None


def _js_string(value: Any) -> str:
    """``String(value)`` for JSON values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    if isinstance(value, float):
        return str(js_number(value))
    return str(value)


def _numeric_record(value: Any) -> dict[str, float] | None:
    if not isinstance(value, dict):
        return None
    entries = []
    for key, raw in value.items():
        number = _js_to_number(raw)
        name = _trim(key)
        if name and name not in _UNSAFE_KEYS and number is not None:
            entries.append((name, number))
    entries = _sorted(entries, lambda a, b: locale_compare(a[0], b[0]))
    return dict(entries) or None


def _js_to_number(value: Any) -> Any:
    """``Number(value)`` when finite, else None."""
    if isinstance(value, bool):
        return int(value)
    if _is_number(value):
        return value
    if value is None:
        return 0
    if isinstance(value, str):
        text = _trim(value)
        if not text:
            return 0
        try:
            number = float(text)
        except ValueError:
            return None
        return js_number(number) if number == number and abs(number) != float("inf") else None
    return None


def _non_negative(value: Any) -> int | None:
    if _is_number(value) and value >= 0 and value != float("inf"):
        return int(value // 1)
    return None


def _positive(value: Any) -> int | None:
    if _is_number(value) and value >= 1 and value != float("inf"):
        return int(value // 1)
    return None


_CONTEXT_MODES = ("schema", "tracker", "auto")


def _positive_number(value: Any) -> bool:
    return _is_number(value) and 0 < value < float("inf")


def _test(raw: Any) -> dict[str, Any]:
    test = _obj(raw)
    path = test.get("path")
    timeout = test.get("timeout_seconds")
    mode = test.get("pm_context_mode")
    if mode is not None and not isinstance(mode, str):
        raise _NotCanonical("pm_context_mode is not text")
    mode = _trim(mode).lower() if mode else None
    out = {
        "command": _opt_trim(test.get("command")),
        "path": _path(path) if _truthy(path) else None,
        "timeout_seconds": timeout if _positive_number(timeout) else None,
        "pm_context_mode": mode if mode in _CONTEXT_MODES else None,
        "env_set": _string_record(test.get("env_set")),
        "env_clear": _string_list(test.get("env_clear")),
        "shared_host_safe": True if test.get("shared_host_safe") is True else None,
        "assert_stdout_contains": _string_list(test.get("assert_stdout_contains")),
        "assert_stdout_regex": _string_list(test.get("assert_stdout_regex")),
        "assert_stderr_contains": _string_list(test.get("assert_stderr_contains")),
        "assert_stderr_regex": _string_list(test.get("assert_stderr_regex")),
        "assert_stdout_min_lines": _non_negative(test.get("assert_stdout_min_lines")),
        "assert_json_field_equals": _string_record(test.get("assert_json_field_equals")),
        "assert_json_field_gte": _numeric_record(test.get("assert_json_field_gte")),
    }
    kept = {k: v for k, v in out.items() if v is not None and v is not _U}
    if "scope" in test:
        kept["scope"] = test["scope"]
    note = _opt_trim(test.get("note"))
    if note is not _U:
        kept["note"] = note
    return kept


def _tests(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list) or not value:
        return None
    return [_test(t) for t in value]


def _legacy_test_compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    """Epoch 1's order of linked tests (a ``JSON.stringify`` per list/record field)."""

    def text(key: str) -> Callable[[], int]:
        return lambda: _lc(a.get(key, ""), b.get(key, ""))

    def number(key: str) -> Callable[[], int]:
        def compare() -> int:
            diff = (a.get(key) or 0) - (b.get(key) or 0)
            return -1 if diff < 0 else (1 if diff > 0 else 0)

        return compare

    def as_json(key: str, fallback: Any) -> Callable[[], int]:
        return lambda: _lc(_js_json(a.get(key, fallback)), _js_json(b.get(key, fallback)))

    # Scope and path decide nearly every pair: compared before any closure is made.
    decided = _lc(a.get("scope"), b.get("scope")) or _lc(a.get("path", ""), b.get("path", ""))
    if decided:
        return decided
    return _first(
        text("command"),
        number("timeout_seconds"),
        text("pm_context_mode"),
        lambda: int(bool(a.get("shared_host_safe"))) - int(bool(b.get("shared_host_safe"))),
        as_json("env_clear", []),
        as_json("env_set", {}),
        as_json("assert_stdout_contains", []),
        as_json("assert_stdout_regex", []),
        as_json("assert_stderr_contains", []),
        as_json("assert_stderr_regex", []),
        number("assert_stdout_min_lines"),
        as_json("assert_json_field_equals", {}),
        as_json("assert_json_field_gte", {}),
        text("note"),
    )


_LEGACY_TEST_KEY = cmp_to_key(_legacy_test_compare)

_RUN_STATUSES = ("passed", "failed", "stopped", "canceled")


def _measurements(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    kept: dict[str, dict[str, Any]] = {}
    for m in value:
        if not (
            isinstance(m, dict)
            and isinstance(m.get("name"), str)
            and _trim(m["name"])
            and _is_number(m.get("value"))
            and isinstance(m.get("recorded_at"), str)
            and _trim(m["recorded_at"])
        ):
            continue
        unit = m.get("unit")
        threshold = m.get("threshold")
        name = _trim(m["name"])
        kept[name] = _clean(
            {
                "name": name,
                "value": m["value"],
                "unit": (_trim(unit) or _U) if isinstance(unit, str) else _U,
                "threshold": threshold if _is_number(threshold) else _U,
                "recorded_at": _trim(m["recorded_at"]),
            }
        )
    out = _sorted(list(kept.values()), lambda a, b: locale_compare(a["name"], b["name"]))[:32]
    return out or None


def _executions(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    kept = [
        e
        for e in value
        if _truthy(e)
        and isinstance(e, dict)
        and isinstance(e.get("command"), str)
        and _trim(e["command"])
    ][:32]
    out = [
        _clean(
            {
                "command": _trim(e["command"]),
                "requested_pm_context_mode": e.get("requested_pm_context_mode")
                if e.get("requested_pm_context_mode") in _CONTEXT_MODES
                else _U,
                "pm_context_mode": e.get("pm_context_mode")
                if e.get("pm_context_mode") in _CONTEXT_MODES
                else _U,
            }
        )
        for e in kept
    ]
    return out or None


def _test_runs(value: Any) -> list[dict[str, Any]] | None:
    values = _list_of(value)
    if values is None:
        return None
    out = []
    for raw in values:
        run = _obj(raw)
        run_id = run.get("run_id")
        kind = run.get("kind")
        status = run.get("status")
        resumed = run.get("resumed_from")
        summary = {
            "run_id": _trim(run_id) if isinstance(run_id, str) else "",
            "kind": kind if kind in ("test", "test-all") else "test",
            "status": status if status in _RUN_STATUSES else "failed",
            "started_at": _str_or_empty(run.get("started_at")),
            "finished_at": _str_or_empty(run.get("finished_at")),
            "recorded_at": _str_or_empty(run.get("recorded_at")),
            "attempt": _opt(_positive(run.get("attempt"))),
            "resumed_from": _opt_trim(resumed),
            "passed": _zero(_non_negative(run.get("passed"))),
            "failed": _zero(_non_negative(run.get("failed"))),
            "skipped": _zero(_non_negative(run.get("skipped"))),
            "items": _opt(_non_negative(run.get("items"))),
            "linked_tests": _opt(_non_negative(run.get("linked_tests"))),
            "fail_on_skipped_triggered": True
            if run.get("fail_on_skipped_triggered") is True
            else _U,
            "measurements": _opt(_measurements(run.get("measurements"))),
            "executions": _opt(_executions(run.get("executions"))),
        }
        if (
            summary["run_id"]
            and summary["started_at"]
            and summary["finished_at"]
            and summary["recorded_at"]
        ):
            out.append(_clean(summary))
    out = _sorted(
        out,
        lambda a, b: _first(
            lambda: compare_timestamps(a["recorded_at"], b["recorded_at"]),
            lambda: _lc(a["run_id"], b["run_id"]),
            lambda: _lc(a["kind"], b["kind"]),
        ),
    )
    return out or None


def _opt(value: Any) -> Any:
    return _U if value is None else value


def _zero(value: int | None) -> int:
    return 0 if value is None else value


def _str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


_STEP_STATUSES = frozenset(
    {"pending", "in_progress", "completed", "blocked", "skipped", "superseded"}
)


def _step_links(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for e in value:
        if not isinstance(e, dict):
            continue
        ident, kind = _text(e.get("id")), _text(e.get("kind"))
        if not ident or not kind:
            continue
        link: dict[str, Any] = {"id": ident, "kind": kind}
        if _text(e.get("note")):
            link["note"] = _text(e.get("note"))
        if e.get("required_before_step") is True:
            link["required_before_step"] = True
        out.append(link)
    return out or None


def _step_paths(value: Any, with_command: bool = False) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for e in value:
        if not isinstance(e, dict):
            continue
        path = _text(e.get("path"))
        entry: dict[str, Any] = {}
        if with_command:
            command = _text(e.get("command"))
            if not command and not path:
                continue
            if command:
                entry["command"] = command
            if path:
                entry["path"] = path.replace("\\", "/")
        else:
            if not path:
                continue
            entry["path"] = path.replace("\\", "/")
            if e.get("scope") in ("project", "global"):
                entry["scope"] = e["scope"]
        if _text(e.get("note")):
            entry["note"] = _text(e.get("note"))
        out.append(entry)
    return out or None


def _plan_steps(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for e in value:
        if not isinstance(e, dict):
            continue
        ident, title, status = _text(e.get("id")), _text(e.get("title")), _text(e.get("status"))
        order = _js_to_number(e.get("order")) if e.get("order") is not None else None
        created, updated = e.get("created_at"), e.get("updated_at")
        if not (ident and title and status in _STEP_STATUSES and order is not None):
            continue
        if not (isinstance(created, str) and created and isinstance(updated, str) and updated):
            continue
        step: dict[str, Any] = {
            "id": ident,
            "order": order,
            "title": title,
            "status": status,
            "created_at": created,
            "updated_at": updated,
        }
        for key in ("body", "owner", "evidence", "blocked_reason", "superseded_by"):
            if _text(e.get(key)):
                step[key] = _text(e.get(key))
        if isinstance(e.get("completed_at"), str) and e["completed_at"]:
            step["completed_at"] = e["completed_at"]
        for key, normalise in (
            ("linked_items", _step_links),
            ("files", _step_paths),
            ("tests", lambda v: _step_paths(v, with_command=True)),
            ("docs", _step_paths),
        ):
            got = normalise(e.get(key))
            if got:
                step[key] = got
        out.append(step)
    out.sort(key=lambda s: s["order"])
    return out or None


def _plan_records(
    value: Any, required: tuple[str, ...], optional: tuple[str, ...]
) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for e in value:
        if not isinstance(e, dict):
            continue
        record: dict[str, Any] = {}
        for key in required:
            got = (
                (e.get(key) if isinstance(e.get(key), str) else "")
                if key in ("ts", "author")
                else _text(e.get(key))
            )
            if not got:
                break
            record[key] = got
        else:
            for key in optional:
                if _text(e.get(key)):
                    record[key] = _text(e.get(key))
            out.append(record)
    return out or None


def _type_options(value: Any) -> dict[str, str] | None:
    if not _truthy(value):
        return None
    if isinstance(value, list):
        value = {str(i): v for i, v in enumerate(value)}
    elif isinstance(value, str):
        value = dict(enumerate(value))  # Object.entries of a string: its characters
        value = {str(k): v for k, v in value.items()}
    elif not isinstance(value, dict):
        return None
    entries = []
    for key, raw in value.items():
        if not isinstance(raw, str):
            raise _NotCanonical("type option is not text")
        entries.append((_trim(key), _trim(raw)))
    entries = [(k, v) for k, v in entries if k and v]
    entries = _sorted(entries, lambda a, b: locale_compare(a[0], b[0]))
    return dict(entries) or None


_STATUS_VALUES = ("draft", "open", "in_progress", "blocked", "closed", "canceled")
_STATUS_ALIASES = {"in-progress": "in_progress", "cancelled": "canceled"}


def _status(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    key = _trim(value).lower()
    key = _STATUS_ALIASES.get(key, key)
    return key if key in _STATUS_VALUES else value


def _levels(value: Any, levels: tuple[str, ...], numbers: bool) -> Any:
    if numbers and _is_number(value):
        return value
    if not isinstance(value, str):
        raise _NotCanonical("level is not text")
    key = _trim(value).lower()
    key = "medium" if key == "med" else key
    return key if key in levels else None


def _tags(value: Any) -> list[str]:
    tags = (
        [t for t in (_trim(v).lower() for v in value if isinstance(v, str)) if t]
        if isinstance(value, list)
        else []
    )
    return _sorted(list(dict.fromkeys(tags)), locale_compare)


def _format_version(value: Any) -> Any:
    if _is_number(value) and float(value).is_integer() and value > 1:
        return value
    return None


def _nullish(value: Any) -> Any:
    return value  # ``value ?? undefined``: null is dropped with the other unset keys


def _falsy_unset(value: Any) -> Any:
    return value if _truthy(value) else None


_TRIMMED = (
    "source_type",
    "assignee",
    "claim_principal",
    "source_owner",
    "definition_of_ready",
    "goal",
    "objective",
    "value",
    "impact",
    "outcome",
    "why_now",
    "parent",
    "reviewer",
    "sprint",
    "release",
    "blocked_by",
    "blocked_reason",
    "unblock_note",
    "reporter",
    "environment",
    "repro_steps",
    "resolution",
    "expected_result",
    "actual_result",
    "affected_version",
    "fixed_version",
    "component",
    "customer_impact",
    "plan_mode",
    "plan_scope",
    "plan_harness",
    "plan_resume_context",
)

#: Every key the TypeScript pm's normaliser writes; other keys are copied as they are.
_NORMALISED: dict[str, Callable[[Any], Any]] = {
    "id": lambda v: v,
    "title": lambda v: v,
    "description": lambda v: v,
    "type": lambda v: v,
    "pm_format_version": _format_version,
    "type_options": _type_options,
    "status": _status,
    "priority": lambda v: v,
    "tags": _tags,
    "created_at": lambda v: v,
    "updated_at": lambda v: v,
    "dependencies": _dependencies,
    "comments": _log,
    "notes": _log,
    "learnings": _log,
    "files": _files,
    "tests": _tests,
    "test_runs": _test_runs,
    "docs": _docs,
    "deadline": _falsy_unset,
    "reminders": _reminders,
    "events": _events,
    "closed_at": _falsy_unset,
    "completed_at": _falsy_unset,
    "author": _falsy_unset,
    "estimated_minutes": lambda v: v,
    "acceptance_criteria": _nullish,
    "design": _nullish,
    "external_ref": _nullish,
    "order": lambda v: v,
    "risk": _nullish,
    "confidence": lambda v: _levels(v, ("low", "medium", "high"), numbers=True),
    "severity": lambda v: _levels(v, ("low", "medium", "high", "critical"), numbers=False),
    "regression": lambda v: v,
    "close_reason": _falsy_unset,
    "plan_steps": _plan_steps,
    "plan_decisions": lambda v: _plan_records(
        v, ("ts", "author", "decision"), ("rationale", "evidence", "step_id")
    ),
    "plan_discoveries": lambda v: _plan_records(v, ("ts", "author", "text"), ("step_id",)),
    "plan_validation": lambda v: _plan_records(v, ("text",), ("command", "expected")),
}
for _key in _TRIMMED:
    _NORMALISED[_key] = _text

#: Keys kept as they are, ``null`` included (the normaliser passes them through).
_VERBATIM = frozenset(
    {
        "id",
        "title",
        "description",
        "type",
        "priority",
        "created_at",
        "updated_at",
        "estimated_minutes",
        "order",
        "regression",
    }
)


def canonical_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The TypeScript pm's canonical form of an item's metadata (its ``normalizeItemMetadata``).

    Raises ``_NotCanonical`` (or a ``TypeError``) where that implementation throws.
    """
    out: dict[str, Any] = {}
    for key, normalise in _NORMALISED.items():
        if key not in metadata:
            if key == "tags":
                out["tags"] = []
            continue
        raw = metadata[key]
        if key in _VERBATIM:
            out[key] = raw
            continue
        if key in ("confidence", "severity") and raw is None:
            raise _NotCanonical(f"{key} is null")
        value = normalise(raw)
        if value is not None:
            out[key] = value
    for key, value in metadata.items():
        if key not in _NORMALISED and key not in _UNSAFE_KEYS:
            out[key] = value
    return out


def normalize_body(body: str) -> str:
    """Leading blank lines and trailing whitespace removed, as the TypeScript pm stores a body."""
    return body.lstrip("\n").rstrip(_JS_SPACE)
