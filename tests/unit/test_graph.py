"""pm graph / pm deps: hierarchy from fields and links, blocking both ways, paths, cycles, bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import NotFoundError, UsageError
from pm_core.tracker.query.graph import deps_tree, find_cycles, graph, shortest_path
from pm_core.tracker.query.view import Edge
from tests.support.trackers import add, make_tracker


@pytest.fixture
def t(tmp_path: Path) -> Tracker:
    return make_tracker(tmp_path)


def node_ids(result: dict[str, object]) -> set[str]:
    return {n["id"] for n in result["nodes"]}  # type: ignore[attr-defined,index]


def test_ancestors_follow_parent_fields_and_parent_links(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    feature = add(t, "Feature", type="Feature", dependencies=[f"{epic}:parent"])
    task = add(t, "Task", parent=feature)
    result = graph(t, "ancestors", task)
    assert node_ids(result) == {task, feature, epic}
    assert {(e["from"], e["to"], e["kind"]) for e in result["edges"]} == {
        (task, feature, "parent"),
        (feature, epic, "parent"),
    }


def test_child_link_on_the_parent_makes_a_descendant(t: Tracker) -> None:
    task = add(t, "Task")
    epic = add(t, "Epic", type="Epic", dependencies=[f"{task}:child"])
    result = graph(t, "descendants", epic)
    assert node_ids(result) == {epic, task}
    assert result["edges"] == [{"from": task, "to": epic, "kind": "parent"}]


def test_blockers_are_transitive_and_blocks_equals_blocked_by(t: Tracker) -> None:
    base = add(t, "Base")
    middle = add(t, "Middle", dependencies=[f"{base}:blocked_by"])
    top = add(t, "Top")
    t.add_dependency(middle, top, "blocks")  # middle blocks top == top blocked_by middle
    result = graph(t, "blockers", top)
    assert node_ids(result) == {top, middle, base}
    assert {(e["from"], e["to"]) for e in result["edges"]} == {(top, middle), (middle, base)}
    assert node_ids(graph(t, "dependents", base)) == {base, middle, top}


def test_path_explains_how_two_items_connect(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    a = add(t, "A", parent=epic)
    b = add(t, "B", parent=epic)
    c = add(t, "C", dependencies=[f"{b}:related"])
    result = graph(t, "path", a, c)
    assert result["paths"] == [[a, epic, b, c]]
    assert [e["kind"] for e in result["edges"]] == ["parent", "parent", "related"]


def test_path_between_unconnected_items_is_empty(t: Tracker) -> None:
    a = add(t, "A")
    b = add(t, "B")
    assert graph(t, "path", a, b)["paths"] == []


def test_cycles_are_found_in_blocking_and_hierarchy_links() -> None:
    edges = [
        Edge("a", "b", "blocked_by"),
        Edge("b", "c", "blocked_by"),
        Edge("c", "a", "blocked_by"),
        Edge("x", "y", "parent"),
        Edge("y", "x", "parent"),
        Edge("p", "q", "related"),
        Edge("q", "p", "related"),
    ]
    assert find_cycles(edges) == [(["a", "b", "c"], "blocked_by"), (["x", "y"], "parent")]


def test_cycles_in_a_hand_edited_tracker_are_reported(t: Tracker) -> None:
    a = add(t, "A")
    b = add(t, "B", dependencies=[f"{a}:blocked_by"])
    # The SDK refuses cycles; a merge or a hand edit can still make one.
    item, path = t.store.read(a)
    item.dependencies.append({"id": b, "kind": "blocked_by"})
    t.store.write(item, path)
    result = graph(t, "cycles")
    assert result["cycles"] == [[min(a, b), max(a, b)]]
    assert result["counts"] == {"nodes": 2, "edges": 2}


def test_long_chain_cycle_detection_does_not_recurse() -> None:
    edges = [Edge(f"n{i:05d}", f"n{i + 1:05d}", "blocked_by") for i in range(5000)]
    edges.append(Edge("n05000", "n00000", "blocked_by"))
    ((cycle, kind),) = find_cycles(edges)
    assert kind == "blocked_by" and len(cycle) == 5001 and cycle[0] == "n00000"


def test_shortest_path_prefers_fewer_hops() -> None:
    edges = [Edge("a", "b", "related"), Edge("b", "c", "related"), Edge("a", "c", "implements")]
    path, used = shortest_path(edges, "a", "c")
    assert path == ["a", "c"] and used == [Edge("a", "c", "implements")]


def test_node_bound_truncates_and_says_so(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    for n in range(5):
        add(t, f"Child {n}", parent=epic)
    result = graph(t, "descendants", epic, max_nodes=3)
    assert result["truncated"] is True
    assert result["counts"]["nodes"] == 3


def test_depth_bound_stops_the_walk(t: Tracker) -> None:
    top = add(t, "Top", type="Epic")
    mid = add(t, "Mid", type="Feature", parent=top)
    low = add(t, "Low", parent=mid)
    result = graph(t, "descendants", top, depth=1)
    assert node_ids(result) == {top, mid}
    assert low not in node_ids(result) and result["truncated"] is True


def test_bad_graph_requests_name_the_problem(t: Tracker) -> None:
    with pytest.raises(UsageError, match="unknown graph subcommand"):
        graph(t, "centrality")
    with pytest.raises(UsageError, match="needs an item id"):
        graph(t, "ancestors")
    with pytest.raises(NotFoundError):
        graph(t, "ancestors", "pm-nope")


def test_deps_packet_shows_links_blockers_and_the_child_tree(t: Tracker) -> None:
    epic = add(t, "Epic", type="Epic")
    blocker = add(t, "Blocker")
    done = add(t, "Done blocker")
    t.close(done, "finished")
    feature = add(
        t,
        "Feature",
        type="Feature",
        parent=epic,
        dependencies=[f"{blocker}:blocked_by", f"{done}:blocked_by"],
    )
    leaf = add(t, "Leaf", parent=feature)
    packet = deps_tree(t, feature)
    assert packet["ancestors"] == [{"id": epic, "title": "Epic", "type": "Epic", "status": "open"}]
    assert {(b["id"], b["resolved"]) for b in packet["blocked_by"]} == {
        (blocker, False),
        (done, True),
    }
    assert packet["counts"]["unresolved_blockers"] == 1
    assert [c["id"] for c in packet["tree"]["children"]] == [leaf]
    kinds = {(link["id"], link["kind"], link["direction"]) for link in packet["links"]}
    assert (epic, "parent", "out") in kinds and (leaf, "child", "in") in kinds
    assert packet["token_cost"]["estimated_tokens"] < 16000
    assert deps_tree(t, blocker)["blocks"][0]["id"] == feature


def test_the_same_blocking_pair_written_three_ways_counts_once(t: Tracker) -> None:
    hub = add(t, "Hub")
    waiter = add(t, "Waiter", dependencies=[f"{hub}:blocked_by"], blocked_by=hub)
    t.add_dependency(hub, waiter, "blocks")
    packet = deps_tree(t, hub)
    assert [b["id"] for b in packet["blocks"]] == [waiter]
    assert [b["id"] for b in deps_tree(t, waiter)["blocked_by"]] == [hub]
