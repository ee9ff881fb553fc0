"""Turning a command's result into bytes on stdout: TOON by default, JSON on request.

The CLI prints what the SDK returns and nothing else. Reads and mutations are
held to a token ceiling (:mod:`pm_core.tracker.query.budget`) unless the user asked
for exactly what they want (``--json`` or an explicit ``--limit``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

from pm_core.tracker.query.budget import (
    OMITTED_KEY,
    Elided,
    ceiling,
    estimate_tokens,
    fit,
    json_measure,
    row_cap,
)


def encode_json(payload: Any) -> str:
    """Strict JSON (two-space indent, UTF-8 kept), with a trailing newline."""
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def encode_toon(payload: Any) -> str:
    """TOON, with a trailing newline (an empty mapping prints nothing)."""
    from pm_core.tracker.storage.toon import encode

    text = encode(payload)
    return text + "\n" if text else ""


def render(
    payload: Mapping[str, Any],
    *,
    fmt: str = "toon",
    kind: str = "read",
    bounded: bool = True,
    settings: Mapping[str, Any] | None = None,
    elided: Elided | None = None,
) -> str:
    """The text to print for ``payload``: shrunk to its ceiling when ``bounded``.

    ``elided``: rows missing from the payload's list (see :func:`render_head`).
    """
    return _render(payload, fmt=fmt, kind=kind, bounded=bounded, settings=settings, elided=elided)[
        0
    ]


def _render(
    payload: Mapping[str, Any],
    *,
    fmt: str,
    kind: str,
    bounded: bool,
    settings: Mapping[str, Any] | None,
    elided: Elided | None,
) -> tuple[str, Mapping[str, Any]]:
    """:func:`render`, and the payload as printed (to see how many rows it kept)."""
    encode = encode_json if fmt == "json" else encode_toon
    if not bounded:
        if elided is not None:
            raise ValueError("unbounded output needs every row")
        return encode(payload), payload
    budget = ceiling(kind, fmt, settings)
    rough = _rough(payload, elided)
    if elided is not None and rough <= 3 * budget:
        raise ValueError("a payload this small must be rendered with every row")
    if rough > 3 * budget:
        # TOON is never a third of compact JSON: this cannot fit, so skip
        # encoding the whole (possibly 100,000-row) payload just to learn that.
        full_size = rough
    else:
        text = encode(payload)
        full_size = estimate_tokens(text)
        if full_size <= budget:
            return text, payload
    # Shrinking measures many candidates and encoding each as TOON is slow:
    # measure compact JSON (C-accelerated) scaled by the TOON/JSON size ratio
    # of a sample of the first candidate at each level (its leading rows: a
    # ratio is a property of the row shape, not of how many rows there are),
    # then check the result for real.
    ratios: dict[str, float] = {}

    def measure(candidate: Any) -> int:
        level = str((candidate.get(OMITTED_KEY) or {}).get("level", "full"))
        if level not in ratios:
            sample = _sample(candidate)
            ratios[level] = estimate_tokens(encode(sample)) / max(1, json_measure(sample))
        return math.ceil(json_measure(candidate) * ratios[level])

    shrunk = fit(payload, budget, kind=kind, measure=measure, full_size=full_size, elided=elided)
    out = encode(shrunk)
    for _ in range(RATIO_RETRIES):
        exact = estimate_tokens(out)
        if exact <= budget:
            return out, shrunk
        # The sample's ratio was too low for this payload: take the ratio of the
        # very text that did not fit (it only grows) and shrink again.
        level = str((shrunk.get(OMITTED_KEY) or {}).get("level", "full"))
        ratios[level] = max(ratios.get(level, 0.0), exact / max(1, json_measure(shrunk)))
        shrunk = fit(
            payload, budget, kind=kind, measure=measure, full_size=full_size, elided=elided
        )
        out = encode(shrunk)
    if estimate_tokens(out) > budget:
        shrunk = fit(
            payload,
            budget,
            kind=kind,
            measure=lambda p: estimate_tokens(encode(p)),
            full_size=full_size,
            elided=elided,
        )
        out = encode(shrunk)
    return out, shrunk


#: How often a shrunk text that does not fit is shrunk again with a corrected ratio
#: before every candidate is measured by encoding it.
RATIO_RETRIES = 3

#: Rows a long list is first built with; when all of them fit, it is built to the cap.
FIRST_HEAD = 256

#: Rows of a candidate's longest list that measure the TOON/JSON ratio.
SAMPLE_ROWS = 64


def _sample(candidate: Mapping[str, Any]) -> Mapping[str, Any]:
    """``candidate`` with its longest list of rows cut to :data:`SAMPLE_ROWS`."""
    longest = max(
        (k for k, v in candidate.items() if isinstance(v, list)),
        key=lambda k: len(candidate[k]),
        default=None,
    )
    if longest is None or len(candidate[longest]) <= SAMPLE_ROWS:
        return candidate
    return {**candidate, longest: candidate[longest][:SAMPLE_ROWS]}


def _rough(payload: Mapping[str, Any], elided: Elided | None) -> int:
    """Estimated tokens of the whole payload as compact JSON, elided rows included."""
    if elided is None:
        return json_measure(payload)
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return estimate_tokens(len(text.encode("utf-8")) + elided.size)


#: Builds a payload with at most N rows in its list (None: every row) and what it left out.
Fetch = Callable[[int | None], tuple[Mapping[str, Any], Elided | None]]


def render_head(
    fetch: Fetch,
    *,
    fmt: str = "toon",
    kind: str = "read",
    settings: Mapping[str, Any] | None = None,
) -> str:
    """:func:`render` (bounded) of a long list, building only the rows that can be shown.

    The text is the one the whole payload gives: rows past the ceiling's
    :func:`~pm_core.tracker.query.budget.row_cap` are only counted and sized. When
    the whole payload is small enough to be printed as it is (a few thousand
    tiny rows), every row is fetched after all.
    """
    budget = ceiling(kind, fmt, settings)
    cap = row_cap(budget)
    payload, elided = fetch(min(cap, FIRST_HEAD))
    if elided is not None and (
        len(payload[elided.key]) + elided.rows <= cap or _rough(payload, elided) <= 3 * budget
    ):
        payload, elided = fetch(None)
    while True:
        text, shown = _render(
            payload, fmt=fmt, kind=kind, bounded=True, settings=settings, elided=elided
        )
        built = len(payload[elided.key]) if elided is not None else 0
        if elided is None or built >= cap or len(shown.get(elided.key, ())) < built:
            return text
        # Every row built was shown: more may fit, so build as many as can.
        payload, elided = fetch(cap)


def write(text: str) -> None:
    """Write ``text`` to stdout (a closed pipe is not an error: ``pm list | head``)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that
    # flush cannot raise a second BrokenPipeError.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
