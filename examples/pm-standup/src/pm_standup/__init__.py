"""pm-standup: an extension package for pm, written to be copied.

Two commands, contributed through the ``pm_register_commands`` hook:

- ``standup`` (tier ``core``, family ``orientation``): what someone changed and
  finished recently, what they hold in progress and what is blocked. It is
  ``pm standup`` in the CLI and, since ``core`` is in every profile, a
  ``pm_run`` action in every ``pm-mcp`` profile.
- ``standup-digest`` (tier ``internal``): changes per author over a period, for
  scripts and reports. ``pm standup-digest`` and
  ``pm_core.sdk.run_command("standup-digest", tracker)`` run it; no listing
  ever shows it.

The module only declares the commands; the work happens in the handlers
(:mod:`pm_standup.report`), which read the tracker through ``ctx.tracker``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ParamSpec
from pm_standup.report import digest, standup

__version__ = "0.1.0"

SINCE_HELP = "how far back to look: an age such as 12h, 1d, 2w, or an ISO time"


@hookimpl
def pm_register_commands() -> Sequence[CommandSpec]:
    """Declare ``standup`` (core) and ``standup-digest`` (internal)."""
    return [
        CommandSpec(
            name="standup",
            summary="Stand-up report: recently changed and finished items, in progress, blocked.",
            tier="core",
            family="orientation",
            params=(
                ParamSpec("who", help="whose stand-up (default: the current author)"),
                ParamSpec("since", default="1d", help=SINCE_HELP),
            ),
            handler=standup,
            examples=("pm standup", "pm standup --who alice --since 3d"),
        ),
        CommandSpec(
            name="standup-digest",
            summary="Changes per author over a period, for scripts and reports.",
            tier="internal",
            family="history",
            params=(ParamSpec("since", default="1w", help=SINCE_HELP),),
            handler=digest,
            examples=("pm standup-digest --since 2w --json",),
        ),
    ]
