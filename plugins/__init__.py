"""pm's built-in plugins, installed as ``pm_plugins`` and named in ``pm_core.host.BUILTIN_PLUGINS``."""
