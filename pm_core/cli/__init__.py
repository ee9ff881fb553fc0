"""The ``pm`` command line: an adapter from argv to the tracker SDK and the plugin host.

Holds no business rules: commands parse arguments, call :class:`~pm_core.tracker.api.Tracker`
or the host, and print what they return.
"""
