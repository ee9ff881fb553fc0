"""``pm eval``, declared: search relevance against golden queries.

``PARAMS`` is the one declaration of its parameters; the CLI
(:mod:`pm_core.cli.commands.evaluate`), ``pm contracts`` and
``docs/generated/`` read it.
"""

from __future__ import annotations

from pm_core.commands.read import SEARCH_MODES
from pm_core.params import Opt, Param

PARAMS: dict[str, tuple[Param, ...]] = {
    "eval": (
        Opt(
            "--queries",
            dest="queries",
            metavar="FILE",
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
