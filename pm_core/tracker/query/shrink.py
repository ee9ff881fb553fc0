"""Shrinking ranked read results (next, context) to a token budget, step by step.

Rows lose detail first, then whole rows or sections go; every cut is named in
``omissions``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pm_core.tracker.model.errors import UsageError
from pm_core.tracker.query.budget import json_measure

#: The smallest budget a caller may ask for: below it not even counts fit.
MIN_TOKEN_BUDGET = 64


def check_budget(budget: int | None) -> None:
    """UsageError for a budget too small to hold anything."""

    if budget is not None and budget < MIN_TOKEN_BUDGET:
        raise UsageError(
            f"token budget {budget} is too small",
            hint=f"pass at least {MIN_TOKEN_BUDGET}, or omit it for the default",
        )


#: A shrink step gets the result and how many tokens are over budget, mutates the
#: result and returns how many things it removed (0: nothing left to remove).
ShrinkStep = Callable[[dict[str, Any], int], int]


#: A step: (what, reason, recover, step) or with a fifth element, a mapping merged
#: into the receipt (values may be lists the step fills, e.g. names dropped).
Step = tuple[Any, ...]


def fit_to_budget(
    result: dict[str, Any],
    budget: int | None,
    steps: Sequence[Step],
) -> dict[str, Any]:
    """Apply ``steps`` in order until ``result`` fits ``budget``.

    Each step is applied repeatedly while it still removes something and the
    result is over budget; its removals are summed into one omission entry
    ``{what, count, reason, recover}``. When every step is spent and the
    receipts themselves are what overflows, they are merged into one. Sets
    ``token_cost`` (``estimated_tokens``, ``budget``, ``within_budget``) and
    ``omissions`` on the result and returns it.
    """
    result.setdefault("omissions", [])
    omissions: list[dict[str, Any]] = result["omissions"]
    result["token_cost"] = {"estimated_tokens": 0, "budget": budget}

    def cost() -> int:
        tokens = json_measure(result)
        result["token_cost"]["estimated_tokens"] = tokens
        return tokens

    if budget is None:
        cost()
        return result
    for what, reason, recover, step, *rest in steps:
        if cost() <= budget:
            break
        receipt: dict[str, Any] = {"what": what, "count": 0, "reason": reason, "recover": recover}
        if rest:
            receipt.update(rest[0])
        added = False
        while (tokens := cost()) > budget:
            removed = step(result, tokens - budget)
            if removed <= 0:
                break
            receipt["count"] += removed
            if not added:
                omissions.append(receipt)
                added = True
    if cost() > budget and len(omissions) > 1:
        merged = {
            "what": "detail",
            "count": sum(int(o["count"]) for o in omissions),
            "reason": "token_budget",
            "recover": "raise the token budget",
        }
        omissions[:] = [merged]
    tokens = cost()
    result["token_cost"]["within_budget"] = tokens <= budget
    return result


def pop_last(key: str, keep: int = 0) -> ShrinkStep:
    """A step that removes rows from the end of list ``result[key]`` (keeping ``keep``).

    It removes about as many rows as the excess needs (at least one), so a
    long list shrinks in a few passes rather than one re-measure per row.
    """

    def step(result: dict[str, Any], excess: int) -> int:
        rows = result.get(key)
        if not isinstance(rows, list):
            return 0
        removed = 0
        freed = 0
        while len(rows) > keep and (removed == 0 or freed < excess):
            freed += json_measure(rows.pop())
            removed += 1
        return removed

    return step


def drop_key_in_rows(list_keys: Sequence[str], field: str, skip_first: bool = False) -> ShrinkStep:
    """A step that removes ``field`` from every row of the named lists at once."""

    def step(result: dict[str, Any], _excess: int) -> int:
        removed = 0
        for key in list_keys:
            rows = result.get(key)
            if not isinstance(rows, list):
                continue
            for index, row in enumerate(rows):
                if skip_first and index == 0:
                    continue
                if isinstance(row, dict) and field in row:
                    del row[field]
                    removed += 1
        return removed

    return step
