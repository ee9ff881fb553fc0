"""pm: a git-native project tracker for humans and coding agents.

Plugin authors need one name from here: :data:`hookimpl`.
"""

import pluggy

__version__ = "0.1.0"

#: Marks a function as an implementation of a pm hook.
hookimpl = pluggy.HookimplMarker("pm")

__all__ = ["__version__", "hookimpl"]
