"""``pm-mcp`` entry point: stdio by default, Streamable HTTP with ``--http``.

Nothing but protocol bytes goes to stdout; logs are structlog lines on stderr
(JSON when stderr is not a terminal).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping, Sequence

EXIT_USAGE = 64
PROFILES_HELP = "core (default), standard, full, or custom (with PM_MCP_TOOLS)"


def configure_logging(env: Mapping[str, str]) -> None:
    """structlog to stderr: JSON lines unless stderr is a terminal."""
    import structlog

    level = getattr(logging, env.get("PM_LOG_LEVEL", "INFO").upper(), logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=level, format="%(message)s")
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer()
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="pm-mcp", description="Serve this repository's pm tracker over MCP."
    )
    parser.add_argument("--path", help="tracker root (default: PM_PATH, else found from the cwd)")
    parser.add_argument("--author", help="author recorded on mutations (default: PM_AUTHOR)")
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        nargs="?",
        const="127.0.0.1:8765",
        help="serve Streamable HTTP instead of stdio (default 127.0.0.1:8765)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback address (requires PM_MCP_TOKEN)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="list and serve only tools that change nothing (also PM_MCP_READ_ONLY=1)",
    )
    parser.add_argument(
        "--allow-commands",
        action="store_true",
        help="allow running and linking commands (linked tests, extension processes; "
        "also PM_MCP_ALLOW_COMMANDS=1); off by default",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    return parser.parse_args(argv)


def server_config(args: argparse.Namespace, env: Mapping[str, str]) -> object:
    """The ServerConfig from options and environment."""
    from pathlib import Path

    from pm_core.mcp.config import ServerConfig
    from pm_core.operator import OperatorPolicy
    from pm_core.tracker.storage.workspace import find_root

    root = Path(args.path).resolve() if args.path else find_root(None, env)
    if root.name != "pm" and (root / ".agents" / "pm").exists():
        root = root / ".agents" / "pm"
    profile = env.get("PM_MCP_PROFILE", "core").strip() or "core"
    tools_env = env.get("PM_MCP_TOOLS")
    allowlist = (
        tuple(n.strip() for n in tools_env.split(",") if n.strip())
        if tools_env is not None
        else None
    )
    operator = OperatorPolicy.from_env(
        env,
        read_only=bool(getattr(args, "read_only", False)),
        allow_commands=bool(getattr(args, "allow_commands", False)),
    )
    return ServerConfig(
        root=root,
        profile=profile,
        tool_allowlist=allowlist,
        author=args.author,
        env=dict(env),
        operator=operator,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pm-mcp``; returns the process exit code."""
    args = parse_args(argv)
    if args.version:
        from pm_core import __version__

        print(f"pm-mcp {__version__}")
        return 0
    env = dict(os.environ)
    configure_logging(env)
    from pm_core.contracts import ConfigurationError
    from pm_core.host import PluginLoadError, build_host
    from pm_core.mcp.config import ServerConfig, check_startup

    try:
        config = server_config(args, env)
    except ConfigurationError as exc:
        print(f"pm-mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    assert isinstance(config, ServerConfig)
    try:
        # The workspace's extension settings narrow the installed plugins.
        host = build_host(env, workspace=config.root)
    except PluginLoadError as exc:
        print(f"pm-mcp: {exc}", file=sys.stderr)
        return 1
    try:
        check_startup(host, config)
    except ConfigurationError as exc:
        print(f"pm-mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a broken workspace should not hide behind a traceback
        print(f"pm-mcp: cannot start: {exc}", file=sys.stderr)
        return 1
    # Commands off: no thread of this process starts a program but pm's own.
    from pm_core.tracker.gate.execution import set_process_policy

    set_process_policy(config.operator.command_policy())
    if args.http is not None:
        from pm_core.mcp.http import serve_http
        from pm_core.mcp.server import PmMcp

        return serve_http(PmMcp(host, config), args.http, allow_remote=args.allow_remote, env=env)
    return serve_stdio(host, config)


def serve_stdio(host: object, config: object) -> int:
    """Serve one stdio connection until end of input.

    The fast start (:mod:`pm_core.mcp.fast_start`) answers the handshake and
    the first ``tools/list`` before the SDK is imported, then hands over.
    """
    from pm_core.host import Host
    from pm_core.mcp import fast_start
    from pm_core.mcp.config import ServerConfig, byte_limit
    from pm_core.mcp.stdio import DEFAULT_MAX_LINE_BYTES, StdioPipes

    assert isinstance(host, Host) and isinstance(config, ServerConfig)
    limit = byte_limit(config.env, "PM_MCP_MAX_REQUEST_BYTES", DEFAULT_MAX_LINE_BYTES)
    pipes = StdioPipes(limit)
    replay: fast_start.Replay = []
    if fast_start.enabled(config.env):
        try:
            replay = fast_start.FastStart(host, config, pipes).run()
        except KeyboardInterrupt:
            return 0
    drop = frozenset((fast_start.REPLAY_INITIALIZE, fast_start.REPLAY_TOOLS_LIST))

    import anyio

    from pm_core.mcp.server import PmMcp
    from pm_core.mcp.stdio import stdio_transport

    app = PmMcp(host, config)

    async def run() -> None:
        async with stdio_transport(limit, pipes=pipes, replay=replay, drop=drop) as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
