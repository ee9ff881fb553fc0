"""pm: a git-native project tracker for humans and coding agents.

Plugin authors need one name from here: :data:`hookimpl`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    import pluggy

    #: Marks a function as an implementation of a pm hook.
    hookimpl: pluggy.HookimplMarker


def __getattr__(name: str) -> Any:
    # pluggy (and the importlib.metadata it pulls in) is built on first use so
    # that `pm --version` and the plain CLI commands never pay for it.
    if name == "hookimpl":
        import pluggy

        marker = pluggy.HookimplMarker("pm")
        globals()["hookimpl"] = marker
        return marker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__", "hookimpl"]
