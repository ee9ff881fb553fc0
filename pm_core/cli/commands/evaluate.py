"""``pm eval``: search relevance against golden queries (nDCG, MRR, precision, recall @k)."""

from __future__ import annotations

from pathlib import Path

import click

from pm_core.cli.clickstate import json_option, pass_state
from pm_core.cli.state import CliState
from pm_core.tracker.model.errors import PmError


@click.command("eval")
@click.option(
    "--queries", "queries", metavar="FILE", help="Query set (default search/eval-queries.json)."
)
@click.option("--mode", default="keyword", show_default=True, help="keyword, bm25 or hybrid.")
@click.option("--k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--fail-under", type=float, metavar="NDCG", help="Exit 1 when nDCG@k is below.")
@json_option
@pass_state
def cmd_eval(
    state: CliState, queries: str | None, mode: str, k: int, fail_under: float | None
) -> None:
    """Score search against golden queries: nDCG@k, MRR@k, precision and recall per query."""
    from pm_core.tracker.query.evaluate import evaluate

    result = evaluate(
        state.tracker,
        path=Path(queries) if queries else None,
        mode=mode,
        k=k,
        fail_under=fail_under,
    )
    state.emit(result, exact=True)
    if result.get("passed") is False:
        raise PmError(
            f"nDCG@{k} {result['aggregate']['ndcg']} is below {fail_under}",
            hint="the results above show each query's top hits",
        )
