"""Six worktrees, six authors, random mutations over shared items, merged in random order."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.support.gitrepo import GitRepo

WORKTREES = 6
MUTATIONS = 30
SHARED = 20


class Agent:
    """One worktree's author and what its ``pm`` acknowledged."""

    def __init__(self, repo: GitRepo, seed: int, shared: list[str]) -> None:
        self.repo = repo
        self.rng = random.Random(seed)
        self.shared = shared
        self.comments: list[tuple[str, str]] = []
        self.created: list[str] = []

    def step(self, number: int) -> None:
        pm = self.repo.pm
        target = self.rng.choice(self.shared + self.created)
        kind = self.rng.choice(["comment", "comment", "update", "create", "claim", "close", "tag"])
        if kind == "comment":
            text = f"{self.repo.author} note {number}"
            if pm("comments", target, "--add", text).code == 0:
                self.comments.append((target, text))
        elif kind == "update":
            pm(
                "update",
                target,
                "--priority",
                str(self.rng.randint(0, 4)),
                "--description",
                f"by {self.repo.author} {number}",
            )
        elif kind == "tag":
            pm("update", target, "--add-tag", f"t{self.rng.randint(0, 5)}")
        elif kind == "create":
            result = pm("create", "--title", f"{self.repo.author} item {number}", "--json")
            if result.code == 0:
                self.created.append(str(result.json()["id"]))
        elif kind == "claim":
            pm("claim", target)
        else:
            pm("close", target, "done by " + self.repo.author)

    def run(self) -> None:
        for number in range(MUTATIONS):
            self.step(number)
            if number % 10 == 9:
                self.repo.commit(f"{self.repo.author} step {number}")


def test_six_worktrees_of_random_mutations_merge_without_loss(tmp_path: Path) -> None:
    main = GitRepo.create(tmp_path, "lead")
    shared = [main.pm.create(f"shared {n}") for n in range(SHARED)]
    main.commit("shared items")
    agents = [
        Agent(main.worktree(tmp_path / f"wt{n}", f"w{n}", f"agent{n}"), 1000 + n, shared)
        for n in range(WORKTREES)
    ]
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(Agent.run, agents))
    order = list(range(WORKTREES))
    random.Random(7).shuffle(order)
    conflicted_merges = 0
    for n in order:
        merged = main.git("merge", f"w{n}", "-m", f"merge w{n}", check=False)
        if merged.returncode != 0:
            conflicted_merges += 1
            conflicted = main.conflicted()
            assert conflicted and all(p.startswith(".agents/pm/") for p in conflicted), merged
            for path in conflicted:
                assert b"<<<<<<<" not in (main.path / path).read_bytes(), path
            main.git("add", "-A")
            main.git("commit", "-q", "--no-edit")
    assert conflicted_merges > 0  # scalar decisions were reviewed, not only clean unions
    reconcile = main.pm("merge", "reconcile", "--force", "--json")
    assert reconcile.code == 0, reconcile
    report = json.loads(main.pm("validate", "--json").out)
    assert report["ok"] is True, [c for c in report["checks"] if not c["ok"]]
    items = {i["id"]: i for i in json.loads(main.pm("list", "--all", "--json").out)["items"]}
    for agent in agents:
        assert set(agent.created) <= set(items)
        for item_id, text in agent.comments:
            got = json.loads(main.pm("get", item_id, "--json").out)["item"]
            assert text in [c["text"] for c in got.get("comments", [])], (item_id, text)
    assert sum(len(a.comments) for a in agents) > 20  # the run exercised what it claims to
    for item_id in items:
        verified = main.pm("history", item_id, "--verify", "--json")
        assert verified.code == 0, verified
