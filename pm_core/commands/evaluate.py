"""``pm eval``, declared: search relevance against golden queries.

``PARAMS`` is the one declaration of its parameters; the CLI
(:mod:`pm_core.cli.commands.evaluate`), ``pm contracts`` and
``docs/generated/`` read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pm_core.commands.read import SEARCH_MODES
from pm_core.params import Opt, Param

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker


def evaluate(
    tracker: Tracker,
    queries: str | None,
    golden: Any,
    mode: str,
    k: int,
    fail_under: float | None,
) -> dict[str, Any]:
    """nDCG, MRR, precision and recall @k per golden query; ``passed`` against ``fail_under``.

    The golden queries come from the file ``queries``, or given inline
    (``golden``: the JSON list itself, or its text), else from the tracker's
    ``search/eval-queries.json``.
    """
    from pathlib import Path

    from pm_core.tracker.model.errors import UsageError
    from pm_core.tracker.query.evaluate import EXAMPLE, check_queries
    from pm_core.tracker.query.evaluate import evaluate as score

    inline = None
    if golden is not None:
        if queries:
            raise UsageError("two query sets given", hint="pass --queries FILE or --queries-json")
        if isinstance(golden, str):
            import json

            try:
                golden = json.loads(golden)
            except ValueError as exc:
                raise UsageError(
                    f"the inline query set is not JSON ({exc})",
                    hint=f"expected: {EXAMPLE}",
                ) from None
        inline = check_queries(golden, "the inline query set")
    return score(
        tracker,
        inline,
        path=Path(queries) if queries else None,
        mode=mode,
        k=k,
        fail_under=fail_under,
    )


PARAMS: dict[str, tuple[Param, ...]] = {
    "eval": (
        Opt(
            "--queries",
            dest="queries",
            metavar="FILE",
            # A file to read: a tool is given the query set itself (queries-json's
            # key), never a path to read on the server's machine.
            role="io",
            help="Query set (default search/eval-queries.json).",
        ),
        Opt(
            "--queries-json",
            dest="golden",
            kind="json",
            metavar="JSON",
            tool="queries",
            help="The query set itself: a JSON list of {query, relevant_ids}.",
        ),
        Opt(
            "--mode",
            dest="mode",
            default="keyword",
            show_default=True,
            choices=SEARCH_MODES,
            help="keyword, bm25 or hybrid.",
        ),
        Opt("--k", dest="k", kind="int", minimum=1, default=10, show_default=True),
        Opt(
            "--fail-under",
            dest="fail_under",
            kind="float",
            metavar="NDCG",
            help="Exit 1 when nDCG@k is below.",
        ),
    ),
}

#: Command -> the function both doors call with its declared values (``pm_run`` runs these).
ACTIONS = {"eval": evaluate}
