"""``pm eval``: search relevance against golden queries (nDCG, MRR, precision, recall @k).

Declared in :mod:`pm_core.commands.evaluate` (see :mod:`pm_core.cli.argspec`).
"""

from __future__ import annotations

from pm_core.cli.argspec import Spec, specs
from pm_core.cli.state import CliState
from pm_core.commands.evaluate import PARAMS, evaluate
from pm_core.tracker.model.errors import PmError


def run_eval(
    state: CliState,
    queries: str | None,
    golden: str | None,
    mode: str,
    k: int,
    fail_under: float | None,
) -> None:
    """Score search against golden queries: nDCG@k, MRR@k, precision and recall per query."""
    result = evaluate(state.tracker, queries, golden, mode, k, fail_under)
    state.emit(result, exact=True)
    if result.get("passed") is False:
        raise PmError(
            f"nDCG@{k} {result['aggregate']['ndcg']} is below {fail_under}",
            hint="the results above show each query's top hits",
        )


SPECS = specs(Spec("eval", run_eval, params=PARAMS["eval"]))
