"""The one door from the query layer to the read index: :class:`IndexedReads`.

Query code never imports the index. The :class:`~pm_core.tracker.api.Tracker`
hands it an implementation (:attr:`Tracker.index_reads`); each method answers
from the index or returns ``None``, and the caller then reads the files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pm_core.tracker.query.search import Query, Scored

#: A ``pm list`` page: rows, total, skipped corrupt files, and the head counts.
ListPage = tuple[list[dict[str, Any]], int, list[str], tuple[int, int] | None]
#: A ``pm search`` page: best scored rows, total matches, matched-field details.
SearchPage = tuple[list["Scored"], int, dict[str, tuple[str, str, str]]]


class IndexedReads(Protocol):
    """Reads the index can answer for one tracker; ``None`` means "scan the files"."""

    def list_page(
        self,
        *,
        statuses: set[str],
        types: set[str],
        priorities: set[int],
        tags: set[str],
        assignee: str | None,
        parent_id: str | None,
        with_terminal: bool,
        sort: str,
        offset: int,
        limit: int | None,
        row_fields: tuple[str, ...] | None,
        head: int | None = None,
    ) -> ListPage | None:
        """One page of ``pm list``."""

    def search_page(
        self,
        parsed: Query,
        filters: Mapping[str, Sequence[str]],
        *,
        include_terminal: bool,
        mode: str,
        match: str,
        weights: Mapping[str, float],
        min_score: float,
        limit: int,
    ) -> SearchPage | None:
        """The best matches of ``pm search``."""

    def next_items(
        self,
        *,
        limit: int,
        parent: str | None,
        ready_only: bool,
        include_decisions: bool,
        token_budget: int | None,
        now: datetime,
    ) -> dict[str, Any] | None:
        """The whole ``pm next`` result."""

    def context(
        self,
        *,
        depth: str,
        limit: int,
        parent: str | None,
        token_budget: int | None,
        section: str | None,
        now: datetime,
    ) -> dict[str, Any] | None:
        """The whole ``pm context`` result (brief depth)."""
