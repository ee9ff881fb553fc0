"""pm_discover ranking: intent queries find the right tools, by a public formula."""

from __future__ import annotations

import pytest

from pm_core.contracts import ToolDescriptor
from pm_core.sdk import DiscoveryError
from tests.support.discovery import discover, names, real_catalog, standin_catalog, tool


@pytest.fixture(params=["standin", "real"])
def catalog(request: pytest.FixtureRequest) -> list[ToolDescriptor]:
    """The 32-tool catalog, with stand-in and with shipped descriptions."""
    return standin_catalog() if request.param == "standin" else real_catalog()


def top(catalog: list[ToolDescriptor], query: str, n: int = 3) -> list[str]:
    return names(discover(catalog, query=query, limit=n, output_budget=None))


def test_catalogs_have_the_32_tools(catalog: list[ToolDescriptor]) -> None:
    assert len(catalog) == 32
    assert {"pm_discover", "pm_close", "pm_run"} <= {t.name for t in catalog}


def test_close_an_item_with_evidence_puts_pm_close_in_top_three(
    catalog: list[ToolDescriptor],
) -> None:
    assert "pm_close" in top(catalog, "close an item with evidence")


def test_who_is_working_on_what_finds_claims_and_context(catalog: list[ToolDescriptor]) -> None:
    found = top(catalog, "who is working on what")
    assert {"pm_claim", "pm_context"} <= set(found), found


def test_what_should_i_do_next_ranks_pm_next_first(catalog: list[ToolDescriptor]) -> None:
    assert top(catalog, "what should I do next")[0] == "pm_next"


def test_linking_a_test_ranks_pm_test_first(catalog: list[ToolDescriptor]) -> None:
    assert top(catalog, "link a test to an item")[0] == "pm_test"


def test_adding_a_dependency_ranks_pm_deps_first(catalog: list[ToolDescriptor]) -> None:
    assert top(catalog, "add a dependency")[0] == "pm_deps"


def test_asking_what_blocks_an_item_ranks_graph_tools_first(
    catalog: list[ToolDescriptor],
) -> None:
    assert set(top(catalog, "what blocks this item", 2)) == {"pm_graph", "pm_deps"}


def test_recording_a_lesson_ranks_pm_learnings_first(catalog: list[ToolDescriptor]) -> None:
    assert top(catalog, "record a lesson learned")[0] == "pm_learnings"


def test_asking_for_history_ranks_pm_events_in_top_two(catalog: list[ToolDescriptor]) -> None:
    assert "pm_events" in top(catalog, "show the history of changes", 2)


def test_rows_are_ordered_by_score_then_name(catalog: list[ToolDescriptor]) -> None:
    rows = discover(catalog, query="update the item", limit=100, output_budget=None).tools
    keys = [(-row.score, row.name) for row in rows]
    assert keys == sorted(keys)
    assert len(rows) > 3


def test_equal_scores_are_ordered_by_name() -> None:
    twins = [tool("zeta_sync", "Sync the board."), tool("alpha_sync", "Sync the board.")]
    result = discover(twins, query="sync board")
    assert names(result) == ["alpha_sync", "zeta_sync"]
    assert result.tools[0].score == result.tools[1].score


def test_score_follows_the_published_formula(catalog: list[ToolDescriptor]) -> None:
    result = discover(catalog, query="claim an item", limit=5)
    weights = result.ranking_policy.weights
    for row in result.tools:
        live = [s for s in row.signals.values() if s.available]
        expected = sum(s.value * s.weight for s in live) / sum(s.weight for s in live)
        assert row.score == pytest.approx(expected, abs=2e-4)
        assert {k: s.weight for k, s in row.signals.items()} == dict(weights)


def test_ranking_policy_publishes_weights_and_formula() -> None:
    policy = discover([tool("pm_get")], query="get").ranking_policy
    assert dict(policy.weights) == {
        "lexical": 0.4,
        "semantic": 0.2,
        "permission": 0.15,
        "graph": 0.1,
        "usage": 0.1,
        "freshness": 0.05,
    }
    assert "sum(value*weight" in policy.formula and "ties by name" in policy.formula


def test_synonym_only_match_comes_from_the_semantic_signal() -> None:
    tools = [tool("x_finish", "Finish a ticket."), tool("x_paint", "Paint a wall.")]
    row = discover(tools, query="complete").tools[0]
    assert row.name == "x_finish"
    assert row.signals["lexical"].value == 0
    assert row.signals["semantic"].value > 0
    assert row.signals["semantic"].source == "thesaurus"


def test_inflected_query_words_match_by_stem() -> None:
    tools = [tool("x_close", "Close a ticket."), tool("x_paint", "Paint a wall.")]
    result = discover(tools, query="closing")
    assert names(result) == ["x_close"]
    assert result.tools[0].signals["semantic"].value == 1.0


def test_query_naming_a_family_raises_the_graph_signal() -> None:
    tools = [
        tool("x_attach", "Attach a thing.", family="evidence"),
        tool("x_move", "Move a thing.", family="authoring"),
    ]
    row = discover(tools, query="evidence things").tools[0]
    assert row.name == "x_attach"
    assert row.signals["graph"].value == 0.6


def test_query_naming_a_command_gives_it_full_graph_credit() -> None:
    tools = [
        tool("pm_close", "Close it.", family="lifecycle"),
        tool("pm_claim", family="lifecycle"),
    ]
    rows = {r.name: r for r in discover(tools, query="close").tools}
    assert rows["pm_close"].signals["graph"].value == 1.0


def test_query_matching_nothing_returns_no_rows_and_says_so() -> None:
    result = discover(standin_catalog(), query="xylophone quartz")
    assert result.tools == () and result.total == 0
    reasons = [o.reason for o in result.omission_receipt.omitted]
    assert reasons == ["no_match"]


def test_without_a_query_the_entry_tools_lead_and_query_signals_are_unavailable() -> None:
    result = discover(standin_catalog(), limit=5, output_budget=None)
    assert names(result) == ["pm_context", "pm_discover", "pm_get", "pm_next", "pm_search"]
    signals = result.tools[0].signals
    assert not signals["lexical"].available and signals["lexical"].source == "no-query"
    assert signals["usage"].source == "entry-catalog"
    assert result.total == 32


def test_host_values_replace_fallbacks_and_name_the_host() -> None:
    tools = [tool("x_a", "Sync the board."), tool("x_b", "Sync the board.")]
    result = discover(tools, query="sync", signals={"usage": {"x_b": 1.0, "x_a": 0.0}})
    assert names(result) == ["x_b", "x_a"]
    usage = {r.name: r.signals["usage"] for r in result.tools}
    assert usage["x_b"].source == "host" and usage["x_a"].value == 0.0


def test_tools_without_a_host_value_keep_the_fallback() -> None:
    tools = [tool("x_a", "Sync the board."), tool("x_b", "Sync the board.")]
    rows = {
        r.name: r for r in discover(tools, query="sync", signals={"freshness": {"x_a": 0.5}}).tools
    }
    assert rows["x_a"].signals["freshness"].source == "host"
    assert rows["x_b"].signals["freshness"].source == "static"


def test_host_semantic_value_can_surface_a_tool_the_words_miss() -> None:
    tools = [tool("x_a", "Sync the board."), tool("x_b", "Paint a wall.")]
    result = discover(tools, query="sync", signals={"semantic": {"x_b": 0.9}})
    assert set(names(result)) == {"x_a", "x_b"}


@pytest.mark.parametrize("signal", ["lexical", "permission", "mood"])
def test_host_cannot_supply_other_signals(signal: str) -> None:
    with pytest.raises(DiscoveryError, match=signal) as caught:
        discover([tool("x_a")], query="a", signals={signal: {"x_a": 1.0}})
    assert caught.value.code == 64 and caught.value.details["field"] == "signals"


@pytest.mark.parametrize("value", [1.5, -0.1, True, "high"])
def test_host_values_must_be_normalized(value: object) -> None:
    with pytest.raises(DiscoveryError, match="from 0 to 1"):
        discover([tool("x_a")], query="a", signals={"usage": {"x_a": value}})
