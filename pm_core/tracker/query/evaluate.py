"""``pm eval``: search relevance against a set of golden queries.

The query set is a JSON list of ``{query, relevant_ids, mode?, description?}``
(the TypeScript pm's ``search/eval-queries.json`` format; the default path is
that file in the tracker). Each query runs through :func:`search` as ``pm
search`` would, and is scored at cutoff ``k`` with binary relevance:

* nDCG@k: the ranking's DCG (a relevant hit at 1-based rank ``i`` adds
  ``1 / log2(i + 1)``) over the ideal ranking's;
* MRR@k: ``1 / rank`` of the first relevant hit in the top ``k`` (else 0);
* precision@k: relevant hits in the top ``k`` over ``k``;
* recall@k: relevant hits in the top ``k`` over the relevant ids.

The aggregate is the macro mean over queries; ``fail_under`` compares it
(nDCG@k) for a CI gate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pm_core.tracker.model.errors import UsageError

if TYPE_CHECKING:
    from pm_core.tracker.api import Tracker

EXAMPLE = '[{"query": "login timeout", "relevant_ids": ["pm-a1b2"]}]'


def dcg(gains: Sequence[int], k: int) -> float:
    """Discounted cumulative gain of the first ``k`` gains."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def metrics(ranked: Sequence[str], relevant: set[str], k: int) -> dict[str, float]:
    """nDCG@k, MRR@k, precision@k and recall@k of one ranking."""
    top = list(ranked[:k])
    gains = [1 if i in relevant else 0 for i in top]
    ideal = dcg([1] * len(relevant), k)
    first = next((n for n, i in enumerate(top, start=1) if i in relevant), None)
    found = sum(gains)
    return {
        "ndcg": dcg(gains, k) / ideal if ideal else 0.0,
        "mrr": 1.0 / first if first else 0.0,
        "precision": found / k,
        "recall": found / len(relevant) if relevant else 0.0,
    }


def load_queries(path: Path) -> list[dict[str, Any]]:
    """The golden queries of ``path``; UsageError naming the problem and an example."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(
            f"cannot read the query set {path}: {exc.strerror or exc}",
            hint=f"write one (JSON): {EXAMPLE}, or pass --queries FILE",
        ) from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON ({exc})", hint=f"expected: {EXAMPLE}") from None
    return check_queries(data, str(path))


def check_queries(data: Any, where: str) -> list[dict[str, Any]]:
    """``data`` as golden queries; UsageError naming ``where`` and the bad entry."""
    if not isinstance(data, list) or not data:
        raise UsageError(f"{where} must hold a non-empty JSON list", hint=f"expected: {EXAMPLE}")
    out = []
    for number, entry in enumerate(data, start=1):
        ok = isinstance(entry, Mapping) and isinstance(entry.get("query"), str)
        ids = entry.get("relevant_ids") if isinstance(entry, Mapping) else None
        if not ok or not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise UsageError(
                f"{where}: entry {number} needs a query (text) and relevant_ids (a list of ids)",
                hint=f"expected: {EXAMPLE}",
            )
        out.append(dict(entry))
    return out


def evaluate(
    tracker: Tracker,
    queries: Sequence[Mapping[str, Any]] | None = None,
    *,
    path: Path | None = None,
    mode: str = "keyword",
    k: int = 10,
    fail_under: float | None = None,
) -> dict[str, Any]:
    """Run every golden query; per-query metrics, the macro means and the gate's verdict."""
    from pm_core.tracker.query.search import search

    if k < 1:
        raise UsageError(f"k must be at least 1, got {k}")
    if fail_under is not None and not 0 <= fail_under <= 1:
        raise UsageError(f"fail-under must be within 0..1, got {fail_under}")
    source = path or tracker.root / "search" / "eval-queries.json"
    golden = list(queries) if queries is not None else load_queries(source)
    rows = []
    for entry in golden:
        relevant = {tracker.normalize_id(i) for i in entry["relevant_ids"]}
        used = str(entry.get("mode") or mode)
        hits = search(tracker, str(entry["query"]), mode=used, limit=max(k, 1))["hits"]
        ranked = [str(h["id"]) for h in hits]
        scores = metrics(ranked, relevant, k)
        rows.append(
            {
                "query": entry["query"],
                "mode": used,
                **{name: round(value, 4) for name, value in scores.items()},
                "relevant": sorted(relevant),
                "top": ranked[:k],
            }
        )
    means = {
        name: round(sum(r[name] for r in rows) / len(rows), 4)
        for name in ("ndcg", "mrr", "precision", "recall")
    }
    out: dict[str, Any] = {
        "k": k,
        "queries": len(rows),
        "aggregate": means,
        "results": rows,
    }
    if fail_under is not None:
        out["fail_under"] = fail_under
        out["passed"] = means["ndcg"] >= fail_under
    return out
