"""Turning a command's result into bytes on stdout: TOON by default, JSON on request.

The CLI prints what the SDK returns and nothing else. Reads and mutations are
held to a token ceiling (:mod:`pm_core.tracker.budget`) unless the user asked
for exactly what they want (``--json`` or an explicit ``--limit``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any

from pm_core.tracker.budget import OMITTED_KEY, ceiling, estimate_tokens, fit, json_measure


def encode_json(payload: Any) -> str:
    """Strict JSON (two-space indent, UTF-8 kept), with a trailing newline."""
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def encode_toon(payload: Any) -> str:
    """TOON, with a trailing newline (an empty mapping prints nothing)."""
    from pm_core.tracker.toon import encode

    text = encode(payload)
    return text + "\n" if text else ""


def render(
    payload: Mapping[str, Any],
    *,
    fmt: str = "toon",
    kind: str = "read",
    bounded: bool = True,
    settings: Mapping[str, Any] | None = None,
) -> str:
    """The text to print for ``payload``: shrunk to its ceiling when ``bounded``."""
    encode = encode_json if fmt == "json" else encode_toon
    if not bounded:
        return encode(payload)
    budget = ceiling(kind, fmt, settings)
    rough = json_measure(payload)
    if rough > 3 * budget:
        # TOON is never a third of compact JSON: this cannot fit, so skip
        # encoding the whole (possibly 100,000-row) payload just to learn that.
        full_size = rough
    else:
        text = encode(payload)
        full_size = estimate_tokens(text)
        if full_size <= budget:
            return text
    # Shrinking measures many candidates and encoding each as TOON is slow:
    # measure compact JSON (C-accelerated) scaled by the TOON/JSON size ratio
    # of the first candidate at each level, then check the result for real.
    ratios: dict[str, float] = {}

    def measure(candidate: Any) -> int:
        level = str((candidate.get(OMITTED_KEY) or {}).get("level", "full"))
        if level not in ratios:
            exact = estimate_tokens(encode(candidate))
            ratios[level] = exact / max(1, json_measure(candidate))
            return exact
        return math.ceil(json_measure(candidate) * ratios[level])

    shrunk = fit(payload, budget, kind=kind, measure=measure, full_size=full_size)
    out = encode(shrunk)
    if estimate_tokens(out) > budget:
        shrunk = fit(
            payload,
            budget,
            kind=kind,
            measure=lambda p: estimate_tokens(encode(p)),
            full_size=full_size,
        )
        out = encode(shrunk)
    return out


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
