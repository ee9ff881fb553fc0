"""Run the official MCP conformance suite against ``pm-mcp --http``.

Run: ``.venv/bin/python tests/conformance/run.py [--url URL] [--jobs 2]``.

Installs (once, into ``PM_CONFORMANCE_CACHE``, default ``~/.cache/pm-conformance``)
Node 22 from the npm package ``node`` and the ``@modelcontextprotocol/conformance``
CLI, both pinned; starts ``pm-mcp --http 127.0.0.1:0`` on a fresh tracker
(unless ``--url`` names a running server); runs the scenarios that apply to a
server without test-only tools, at each protocol version; and compares the
failing checks with ``expected-failures.yml``. Exits 0 when every outcome is the
expected one, 1 on an unexpected failure or an unexpected pass (a stale entry),
2 when the suite cannot be installed or started (the message says what blocks it).

The CLI is the 0.2.0 alpha because the latest stable release (0.1.16) has no
2026-07-28 scenarios; both run the same handshake-era checks. Runs cover
2025-06-18, 2025-11-25 and 2026-07-28 and the Skills extension scenarios, the
server started with ``PM_MCP_SKILLS=open`` (the suite's client declares no
extensions).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

NODE_VERSION = "22.23.3"
CONFORMANCE_VERSION = "0.2.0-alpha.12"
OLDER = "2025-06-18"
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ALL = (OLDER, HANDSHAKE, MODERN)
BOTH_HANDSHAKE = (OLDER, HANDSHAKE)
#: Scenario -> the spec versions it is run at ("" for extension scenarios, which
#: carry no version). Every server scenario of the suite is here except those
#: for capabilities pm does not declare (see the header of expected-failures.yml).
SCENARIOS: dict[str, tuple[str, ...]] = {
    "server-initialize": BOTH_HANDSHAKE,
    "server-session-lifecycle": BOTH_HANDSHAKE,
    "server-stateless": (MODERN,),
    "ping": BOTH_HANDSHAKE,
    "tools-list": ALL,
    "tools-call-simple-text": ALL,
    "tools-call-image": ALL,
    "tools-call-audio": ALL,
    "tools-call-embedded-resource": ALL,
    "tools-call-mixed-content": ALL,
    "tools-call-with-logging": BOTH_HANDSHAKE,
    "tools-call-error": ALL,
    "tools-call-with-progress": ALL,
    "tools-call-sampling": BOTH_HANDSHAKE,
    "tools-call-elicitation": BOTH_HANDSHAKE,
    "json-schema-2020-12": (HANDSHAKE, MODERN),
    "elicitation-sep1034-defaults": (HANDSHAKE,),
    "elicitation-sep1330-enums": (HANDSHAKE,),
    "server-sse-polling": (HANDSHAKE,),
    "server-sse-multiple-streams": (HANDSHAKE, MODERN),
    "resources-list": ALL,
    "resources-read-text": ALL,
    "resources-read-binary": ALL,
    "resources-templates-read": ALL,
    "resources-subscribe": BOTH_HANDSHAKE,
    "resources-unsubscribe": BOTH_HANDSHAKE,
    "sep-2164-resource-not-found": (MODERN,),
    "sep-2640-skills-enumeration": ("",),
    "sep-2640-skills-directory": ("",),
    "sep-2640-skills-manifest": ("",),
    "prompts-list": ALL,
    "prompts-get-simple": ALL,
    "prompts-get-with-args": ALL,
    "prompts-get-embedded-resource": ALL,
    "prompts-get-with-image": ALL,
    "dns-rebinding-protection": (HANDSHAKE, MODERN),
    "caching": (MODERN,),
    "http-header-validation": (MODERN,),
    "http-custom-header-server-validation": (MODERN,),
    **{
        f"input-required-result-{name}": (MODERN,)
        for name in (
            "basic-elicitation",
            "basic-sampling",
            "basic-list-roots",
            "request-state",
            "multiple-input-requests",
            "multi-round",
            "missing-input-response",
            "non-tool-request",
            "result-type",
            "unsupported-methods",
            "tampered-state",
            "capability-check",
            "ignore-extra-params",
            "validate-input",
        )
    },
}
#: (scenario, spec version, forced). Forced runs are scenarios the suite retires at
#: that version; running them pins that pm-mcp refuses what the version removed.
RUNS: tuple[tuple[str, str, bool], ...] = (
    *((s, v, False) for s, versions in SCENARIOS.items() for v in versions),
    ("ping", MODERN, True),
)
#: The server's environment: skills open to clients that declare nothing, as the
#: conformance client does (docs/skills.md).
SERVER_ENV = {"PM_MCP_SKILLS": "open"}


class Blocked(RuntimeError):
    """The suite cannot be installed or started here."""


@dataclass
class Outcome:
    """One scenario run: the checks that failed (empty when it passed)."""

    key: str
    failed: list[str]
    passed: int
    warnings: list[str]
    detail: str


def cache_dir() -> Path:
    """Where Node and the CLI are installed."""
    configured = os.environ.get("PM_CONFORMANCE_CACHE", "").strip()
    return Path(configured) if configured else Path.home() / ".cache" / "pm-conformance"


def ensure_installed(cache: Path) -> tuple[Path, Path]:
    """The node binary and the CLI entry point, installing the pinned versions if needed."""
    node = cache / "node_modules" / "node" / "bin" / "node"
    cli = cache / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    marker = cache / "pm-conformance.json"
    wanted = {"node": NODE_VERSION, "conformance": CONFORMANCE_VERSION}
    if marker.exists() and node.exists() and cli.exists():
        try:
            if json.loads(marker.read_text(encoding="utf-8")) == wanted:
                return node, cli
        except ValueError:
            pass
    npm = shutil.which("npm")
    if npm is None:
        raise Blocked("npm is not on PATH; it installs Node 22 and the conformance CLI")
    cache.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    done = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(cache),
            "--save-exact",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"node@{NODE_VERSION}",
            f"@modelcontextprotocol/conformance@{CONFORMANCE_VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise Blocked(f"npm install failed (exit {done.returncode}): {done.stderr.strip()[-1500:]}")
    try:
        version = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise Blocked(f"the installed node binary does not run: {exc}") from None
    if version != f"v{NODE_VERSION}" or not cli.exists():
        raise Blocked(f"npm installed node {version!r} and CLI present={cli.exists()}")
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    return node, cli


def load_expected(path: Path) -> dict[str, dict[str, Any]]:
    """``{"scenario@version": {"checks": [...], "why": "..."}}``, each entry explained."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: expected a mapping of scenario@version entries")
    for key, entry in data.items():
        if not isinstance(entry, dict) or not entry.get("checks") or not entry.get("why"):
            raise ValueError(f"{path.name}: {key} needs both 'checks' and 'why'")
    return data


def run_scenario(
    node: Path, cli: Path, url: str, scenario: str, version: str, force: bool, out: Path
) -> Outcome:
    """One CLI run; reads its checks.json."""
    key = f"{scenario}@{version or 'extension'}"
    out.mkdir(parents=True)
    command = [str(node), str(cli), "server", "--url", url, "--scenario", scenario]
    if version:
        command += ["--spec-version", version]
    command += ["-o", str(out)]
    if force:
        command.append("--force")
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    found = sorted(out.glob("*/checks.json"))
    if not found:
        tail = (done.stdout + done.stderr).strip()[-800:]
        raise Blocked(f"{key}: the CLI wrote no checks (exit {done.returncode}): {tail}")
    checks = json.loads(found[-1].read_text(encoding="utf-8"))
    failed = [c["id"] for c in checks if c.get("status") in ("FAILURE", "ERROR")]
    warned = [c["id"] for c in checks if c.get("status") == "WARNING"]
    errors = "; ".join(
        f"{c['id']}: {c.get('errorMessage') or c.get('description', '')}"[:300]
        for c in checks
        if c["id"] in failed
    )
    passed = sum(1 for c in checks if c.get("status") == "SUCCESS")
    return Outcome(key, failed, passed, warned, errors)


@contextmanager
def pm_server() -> Iterator[str]:
    """``pm-mcp --http`` on a free loopback port, serving a fresh tracker."""
    from pm_core.tracker.api import Tracker
    from tests.support.mcp_http import HttpServer

    with tempfile.TemporaryDirectory(prefix="pm-conformance-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        tracker = Tracker(repo / ".agents" / "pm", author="conformance", env={})
        tracker.init()
        tracker.create({"title": "An item so listings are not empty"})
        server = HttpServer(repo, env=SERVER_ENV)
        try:
            yield server.url
        finally:
            server.close()


def compare(outcomes: Sequence[Outcome], expected: dict[str, dict[str, Any]]) -> list[str]:
    """Unexpected failures, unexpected passes and stale entries."""
    problems: list[str] = []
    seen = {o.key for o in outcomes}
    for outcome in outcomes:
        entry = expected.get(outcome.key)
        want = sorted(entry["checks"]) if entry else []
        if sorted(outcome.failed) != want:
            problems.append(
                f"{outcome.key}: failed checks {sorted(outcome.failed)}, expected {want}"
                + (f" ({outcome.detail})" if outcome.detail else "")
            )
    problems += [
        f"{key}: listed in expected failures but not run" for key in expected if key not in seen
    ]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Install, serve, run, compare; print one line per scenario."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="test a running server instead of starting pm-mcp")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at once")
    parser.add_argument("--expected", type=Path, default=HERE / "expected-failures.yml")
    args = parser.parse_args(argv)
    expected = load_expected(args.expected)
    try:
        node, cli = ensure_installed(cache_dir())
        with tempfile.TemporaryDirectory(prefix="pm-conformance-out-") as out:
            if args.url:
                outcomes = _run_all(node, cli, args.url, Path(out), args.jobs)
            else:
                with pm_server() as url:
                    outcomes = _run_all(node, cli, url, Path(out), args.jobs)
    except Blocked as exc:
        print(f"conformance: blocked: {exc}", file=sys.stderr)
        return 2
    print(f"conformance CLI {CONFORMANCE_VERSION} on node {NODE_VERSION}")
    for o in outcomes:
        state = "expected failure" if o.key in expected else ("FAILED" if o.failed else "passed")
        extra = f"; warnings: {', '.join(o.warnings)}" if o.warnings else ""
        print(f"  {o.key:42} {state}: {o.passed} checks passed, failed {o.failed or '[]'}{extra}")
    problems = compare(outcomes, expected)
    for problem in problems:
        print(f"UNEXPECTED: {problem}")
    total = sum(o.passed for o in outcomes)
    print(f"{len(outcomes)} scenario runs, {total} checks passed, {len(problems)} unexpected")
    return 1 if problems else 0


def _run_all(node: Path, cli: Path, url: str, out: Path, jobs: int) -> list[Outcome]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            pool.submit(
                run_scenario,
                node,
                cli,
                url,
                s,
                v,
                f,
                out / f"{s}@{v or 'extension'}{'-forced' if f else ''}",
            )
            for s, v, f in RUNS
        ]
        return [f.result() for f in futures]


if __name__ == "__main__":
    raise SystemExit(main())
