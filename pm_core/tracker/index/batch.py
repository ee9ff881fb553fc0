"""Batches of values for ``IN (...)`` lists: SQLite caps the parameters of one statement."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def chunks(values: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    """``values`` in consecutive slices of at most ``size``."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
