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
    tracker: Tracker, queries: str | None, mode: str, k: int, fail_under: float | None
) -> dict[str, Any]:
    """nDCG, MRR, precision and recall @k per golden query; ``passed`` against ``fail_under``."""
    from pathlib import Path

    from pm_core.tracker.query.evaluate import evaluate as score

    return score(
        tracker, path=Path(queries) if queries else None, mode=mode, k=k, fail_under=fail_under
    )


PARAMS: dict[str, tuple[Param, ...]] = {
    "eval": (
        Opt(
            "--queries",
            dest="queries",
            metavar="FILE",
            # A path to read: a tool gets the tracker's own query set, never a
            # file a client names (pm_run's eval reads search/eval-queries.json).
            tool=None,
            help="Query set (default search/eval-queries.json).",
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
