"""What the operator of ``pm-mcp`` lets agents do: read-only mode, a deny list, commands.

Three switches, read once at start-up (bad values exit 64, like every other
setting of ``pm-mcp``):

- ``--read-only`` / ``PM_MCP_READ_ONLY=1``: only tools whose command changes
  nothing (``CommandEffects.read_only``) are listed and callable;
- ``PM_MCP_DENY=name,...``: these tools are removed after any profile,
  ``custom`` included; an unknown name is a start-up error;
- ``--allow-commands`` / ``PM_MCP_ALLOW_COMMANDS=1``: running processes
  (linked tests, extension actions that spawn) and linking commands. Off by
  default; off, the server runs under a ``deny`` command policy for the whole
  process (:mod:`pm_core.tracker.gate.execution`).

There is deliberately no ``settings.json`` key for the commands switch:
``settings.json`` is committed, and a switch that a pull can flip protects
nothing. See docs/security.md.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import attrs

from pm_core.contracts import UNDECLARED_EFFECTS, CommandSpec, ConfigurationError, ToolDescriptor
from pm_core.tracker.gate.execution import CommandPolicy

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
COMMANDS_HINT = (
    "the operator allows it by starting pm-mcp with PM_MCP_ALLOW_COMMANDS=1 "
    "(or --allow-commands); or run it yourself on the CLI: `pm test <id> --run`"
)


def switch(env: Mapping[str, str], name: str) -> bool:
    """A boolean environment switch; ConfigurationError for a value that is neither."""
    raw = env.get(name, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigurationError(
        f"{name} must be 1 or 0 (true/false, yes/no, on/off), got {env.get(name)!r}"
    )


@attrs.frozen(slots=True)
class OperatorPolicy:
    """The operator's switches for one ``pm-mcp`` process."""

    read_only: bool = False
    deny: frozenset[str] = frozenset()
    allow_commands: bool = False

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str],
        *,
        read_only: bool = False,
        allow_commands: bool = False,
    ) -> OperatorPolicy:
        """The switches from flags and ``PM_MCP_READ_ONLY``/``PM_MCP_DENY``/``PM_MCP_ALLOW_COMMANDS``."""
        deny = frozenset(n.strip() for n in env.get("PM_MCP_DENY", "").split(",") if n.strip())
        return cls(
            read_only=read_only or switch(env, "PM_MCP_READ_ONLY"),
            deny=deny,
            allow_commands=allow_commands or switch(env, "PM_MCP_ALLOW_COMMANDS"),
        )

    def check(self, known_tools: Collection[str]) -> None:
        """ConfigurationError naming deny-list entries that are no tool."""
        unknown = sorted(self.deny - set(known_tools))
        if unknown:
            raise ConfigurationError(
                f"PM_MCP_DENY names unknown tool(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known_tools))}"
            )

    def withheld(self, tool: ToolDescriptor) -> str | None:
        """Why the operator removed ``tool`` (None when it stays)."""
        if tool.name in self.deny:
            return f"tool {tool.name} is denied by the operator (PM_MCP_DENY)"
        if self.read_only and not tool.effects.read_only:
            return (
                f"tool {tool.name} changes the tracker and this server runs in read-only "
                "mode (pm-mcp --read-only / PM_MCP_READ_ONLY)"
            )
        return None

    def select(self, tools: Iterable[ToolDescriptor]) -> list[ToolDescriptor]:
        """``tools`` without the ones the operator removed.

        In read-only mode a read that could also write (``writes_with``) is
        served as the pure read it then is: those writes are refused.
        """
        kept = [t for t in tools if self.withheld(t) is None]
        if not self.read_only:
            return kept
        return [
            attrs.evolve(t, effects=attrs.evolve(t.effects, writes_with=()))
            if t.effects.writes_with
            else t
            for t in kept
        ]

    def commands_withheld(
        self, commands: Mapping[str, CommandSpec], tool_commands: Mapping[str, str]
    ) -> frozenset[str]:
        """Commands no door may reach: those of denied tools and, read-only, every write.

        ``tool_commands`` maps each tool name to its backing command, so that
        denying ``pm_test`` also keeps ``pm_run`` from running ``test``.
        """
        out = {tool_commands[name] for name in self.deny if name in tool_commands}
        if self.read_only:
            out |= {
                name
                for name, command in commands.items()
                if not (command.effects or UNDECLARED_EFFECTS).read_only
            }
        return frozenset(out)

    def command_policy(self) -> CommandPolicy:
        """The process policy: linked commands need approval, or nothing runs."""
        if self.allow_commands:
            return CommandPolicy(mode="approved", via="pm-mcp (PM_MCP_ALLOW_COMMANDS)")
        return CommandPolicy(
            mode="deny",
            reason="command execution through pm-mcp is off (PM_MCP_ALLOW_COMMANDS is not set)",
            hint=COMMANDS_HINT,
        )

    def prompt_note(self, mutates: bool) -> str | None:
        """The note a mutating prompt carries on a read-only server."""
        if self.read_only and mutates:
            return (
                "Note: this server runs in read-only mode (pm-mcp --read-only): the steps "
                "below that change the tracker will be refused; do only the reading steps "
                "and report what you would change."
            )
        return None
