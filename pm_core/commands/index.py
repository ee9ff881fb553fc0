"""The index group, declared: status and stop (neither takes a parameter).

``PARAMS`` declares each subcommand under ``"index <sub>"``; the CLI
(:mod:`pm_core.cli.commands.index`), ``pm contracts`` and ``docs/generated/``
read it, and ``pm_run``'s ``index`` action takes the same ``subcommand``.
"""

from __future__ import annotations

from pm_core.params import Param

PARAMS: dict[str, tuple[Param, ...]] = {"index status": (), "index stop": ()}
